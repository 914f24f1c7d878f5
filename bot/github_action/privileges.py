"""Run as the user that owns the runner's folders, not as root.

GitHub runs a Docker action as the image's default user, root: its documentation asks a Docker
action not to set `USER`, because the workspace and the step's files belong to the runner's user,
whose id differs between runners (1001 on GitHub-hosted runners, anything on a self-hosted one).
Started as root, the action takes the id of the workspace's owner when that owner also owns every
file the step appends to (`$GITHUB_OUTPUT`, `$GITHUB_STEP_SUMMARY`): the review of hostile PR content
then does not run as root, and the JSON report it leaves in the workspace belongs to the runner's
user (a root-owned file there can break a self-hosted runner's next checkout). Otherwise it stays
root, which can write to them whoever owns them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from bot.catalog import Msg, msg

#: The files of the step the action appends to; they must belong to the user it becomes.
STEP_FILES = ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")


def runner_user(env: Mapping[str, str]) -> tuple[int, int] | None:
    """(uid, gid) of the workspace's owner, when the action runs as root, that owner is another
    user and owns each step file that exists; None when the action should stay as it is."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    try:
        workspace = os.stat(env.get("GITHUB_WORKSPACE") or "")
    except OSError:
        return None
    if workspace.st_uid == 0:
        return None
    for name in STEP_FILES:
        path = env.get(name)
        if not path:
            continue
        try:
            if os.stat(path).st_uid != workspace.st_uid:
                return None
        except OSError:
            return None
    return workspace.st_uid, workspace.st_gid


def become_runner_user(env: Mapping[str, str]) -> Msg | None:
    """Take the id of `runner_user`, when there is one; the log line that says so."""
    user = runner_user(env)
    if user is None:
        return None
    uid, gid = user
    try:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    except OSError as exc:  # a container without CAP_SETUID: root it stays
        return msg("action-user-kept", uid=uid, detail=exc.strerror or type(exc).__name__)
    return msg("action-user-changed", uid=uid, gid=gid)
