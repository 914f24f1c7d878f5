"""What the workflow asked for: the action's inputs and whether the event should start a review.

A review starts on a pull request event (`PR_ACTIONS`), on a review a person submitted, edited or
dismissed (`REVIEW_ACTIONS`: it may add or withdraw a CODEOWNER's sign-off) and on a `/review`
comment by an owner, member or collaborator; every other event is skipped with a log line.

Only the standard environment is read: `GITHUB_EVENT_NAME`, `GITHUB_EVENT_PATH` and the inputs,
which a Docker action receives as `INPUT_<NAME>` with the name upper-cased and its dashes kept
(`INPUT_FAIL-ON`); the underscore form (`INPUT_FAIL_ON`) is accepted as well.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.catalog import Msg, msg

PR_EVENTS = frozenset(("pull_request", "pull_request_target"))
PR_ACTIONS = frozenset(
    ("opened", "synchronize", "reopened", "ready_for_review", "labeled", "unlabeled", "edited")
)
#: A review submitted, edited or dismissed may add or withdraw a CODEOWNER's sign-off.
REVIEW_EVENT = "pull_request_review"
REVIEW_ACTIONS = frozenset(("submitted", "edited", "dismissed"))
TRUSTED_ASSOCIATIONS = frozenset(("OWNER", "MEMBER", "COLLABORATOR"))
#: The command a comment starts with to ask for a review, compared ignoring case.
COMMAND = "/review"
#: What may follow the command: nothing, a space or a line break (`/reviewed` is not `/review`).
AFTER_COMMAND = ("", " ", "\n", "\r")
FAIL_ON = ("blocking", "warning", "never")
LANGS = ("both", "en", "zh")
BOOLEANS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
DEFAULT_CONFIG = ".github/prbot.yml"
#: Who writes the review comment with the workflow's `GITHUB_TOKEN`.
DEFAULT_BOT_LOGIN = "github-actions[bot]"
#: A GitHub login: a user's, or an app's bot (`<app-slug>[bot]`).
LOGIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,99}(?:\[bot\])?")


class ActionError(Exception):
    """The action cannot run as configured; `message` is one line, in both languages."""

    def __init__(self, message: Msg) -> None:
        super().__init__(message.id)
        self.message = message


def input_value(env: Mapping[str, str], name: str, default: str = "") -> str:
    """An input as a Docker action receives it (dashes kept) or with dashes as underscores."""
    upper = name.upper()
    for key in (f"INPUT_{upper}", f"INPUT_{upper.replace('-', '_')}"):
        value = env.get(key, "").strip()
        if value:
            return value
    return default


def _choice(env: Mapping[str, str], name: str, allowed: tuple[str, ...], default: str) -> str:
    value = input_value(env, name, default).lower()
    if value not in allowed:
        raise ActionError(msg("action-input-invalid", name=name, allowed=list(allowed), value=value))
    return value


def _login(env: Mapping[str, str], name: str, default: str) -> str:
    value = input_value(env, name, default)
    if not LOGIN.fullmatch(value):
        raise ActionError(msg("action-input-login", name=name, value=value))
    return value


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = input_value(env, name, str(default).lower()).lower()
    if value not in BOOLEANS:
        raise ActionError(msg("action-input-invalid", name=name, allowed=["true", "false"], value=value))
    return BOOLEANS[value]


@dataclass(frozen=True)
class Inputs:
    token: str
    config: str
    fail_on: str
    comment: bool
    lang: str
    registry_credentials: str
    offline: bool = False
    bot_login: str = DEFAULT_BOT_LOGIN
    inline_review: bool = True

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Inputs:
        token = input_value(env, "github-token") or env.get("GITHUB_TOKEN", "").strip()
        if not token:
            raise ActionError(msg("action-no-token"))
        return cls(
            token=token,
            config=input_value(env, "config", DEFAULT_CONFIG),
            fail_on=_choice(env, "fail-on", FAIL_ON, "blocking"),
            comment=_flag(env, "comment", True),
            lang=_choice(env, "lang", LANGS, "both"),
            registry_credentials=input_value(env, "registry-credentials"),
            offline=_flag(env, "offline", False),
            bot_login=_login(env, "bot-login", DEFAULT_BOT_LOGIN),
            inline_review=_flag(env, "inline-review", True),
        )


def exit_code(verdict: str, fail_on: str) -> int:
    """1 when the verdict fails the job under `fail-on`, else 0."""
    if fail_on == "never":
        return 0
    if verdict == "blocking":
        return 1
    return 1 if verdict == "warnings" and fail_on == "warning" else 0


def load_event(env: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """The event name and its JSON payload."""
    for name in ("GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_REPOSITORY"):
        if not env.get(name):
            raise ActionError(msg("action-env-missing", name=name))
    path = env["GITHUB_EVENT_PATH"]
    try:
        with open(path, encoding="utf-8") as handle:
            payload = json.load(handle)
    except OSError as exc:
        detail = exc.strerror or type(exc).__name__
        raise ActionError(msg("action-event-unreadable", path=path, detail=detail)) from None
    except ValueError as exc:
        raise ActionError(msg("action-event-unreadable", path=path, detail=str(exc))) from None
    if not isinstance(payload, dict):
        raise ActionError(msg("action-event-unreadable", path=path, detail="not a JSON object"))
    return env["GITHUB_EVENT_NAME"], payload


@dataclass(frozen=True)
class Trigger:
    """Review pull request `number`; `comment_id` is the `/review` comment to acknowledge, if any."""

    number: int
    manual: bool = False
    comment_id: int | None = None


@dataclass(frozen=True)
class Skip:
    """No review: say why in one log line and exit 0."""

    reason: Msg


def _mapping(value: object) -> Mapping[str, Any]:
    """`value` if it is a JSON object, else an empty one: a malformed payload must not crash."""
    return value if isinstance(value, Mapping) else {}


def _number(value: object) -> int | None:
    """A pull request or issue number, or None when `value` is not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _is_bot(user: Mapping[str, Any]) -> bool:
    return user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]")


def is_review_command(body: object) -> bool:
    """Whether a comment asks for a review: it starts with `/review`, in any case, followed by
    nothing, a space or a line break; no leading space. The example workflow's `if:` applies the
    same rule (`docs/prbot-workflow.yml`; GitHub's `==` and `startsWith` ignore case), so that
    no container starts for a comment prbot then skips, and none is held back that prbot would take."""
    if not isinstance(body, str):
        return False
    return (
        body[: len(COMMAND)].upper() == COMMAND.upper()
        and body[len(COMMAND) : len(COMMAND) + 1] in AFTER_COMMAND
    )


def classify(event: str, payload: Mapping[str, Any]) -> Trigger | Skip:
    """Decide from the event alone (drafts are decided again once the PR is read)."""
    action = str(payload.get("action", ""))
    if event in PR_EVENTS:
        if action not in PR_ACTIONS:
            return Skip(msg("action-skip-action", event=event, action=action))
        pull = _mapping(payload.get("pull_request"))
        return _open_pull(event, pull, _number(payload.get("number")) or _number(pull.get("number")))
    if event == REVIEW_EVENT:
        return _review(payload, action)
    if event == "issue_comment":
        return _comment(payload, action)
    return Skip(msg("action-skip-event", event=event))


def _open_pull(event: str, pull: Mapping[str, Any], number: int | None) -> Trigger | Skip:
    """Review pull request `number` unless the event shows it closed or a draft."""
    if number is None:
        return Skip(msg("action-skip-no-number", event=event))
    if pull.get("state") == "closed":
        return Skip(msg("action-skip-closed", number=number))
    if pull.get("draft"):
        return Skip(msg("action-skip-draft", number=number))
    return Trigger(number)


def _review(payload: Mapping[str, Any], action: str) -> Trigger | Skip:
    """A person's review, which may sign off or withdraw a sign-off, refreshes the comment; a
    bot's review (prbot's own inline review among them) does not."""
    if action not in REVIEW_ACTIONS:
        return Skip(msg("action-skip-action", event=REVIEW_EVENT, action=action))
    user = _mapping(_mapping(payload.get("review")).get("user"))
    if _is_bot(user):
        return Skip(msg("action-skip-review-bot", login=str(user.get("login", ""))))
    pull = _mapping(payload.get("pull_request"))
    return _open_pull(REVIEW_EVENT, pull, _number(pull.get("number")))


def _comment(payload: Mapping[str, Any], action: str) -> Trigger | Skip:
    issue = _mapping(payload.get("issue"))
    comment = _mapping(payload.get("comment"))
    user = _mapping(comment.get("user"))
    login = str(user.get("login", ""))
    if not issue.get("pull_request"):
        return Skip(msg("action-skip-not-pr"))
    if action != "created":
        return Skip(msg("action-skip-comment-action", action=action))
    if _is_bot(user):
        return Skip(msg("action-skip-bot", login=login))
    if not is_review_command(comment.get("body")):
        return Skip(msg("action-skip-not-command"))
    association = str(comment.get("author_association") or "NONE")
    if association not in TRUSTED_ASSOCIATIONS:
        return Skip(msg("action-skip-association", login=login, association=association))
    number = _number(issue.get("number"))
    if number is None:
        return Skip(msg("action-skip-not-pr"))
    return Trigger(number, manual=True, comment_id=_number(comment.get("id")))
