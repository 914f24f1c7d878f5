"""`launch`: what the runs of the changed keys execute (DESIGN.md §1 "what a run executes").

Every head run of a changed key starts, through each launcher of its runner, a benchmark script
that exists at the head (else blocking, naming the names the launcher tries); a missing launcher
blocks too. The per-key benchmark scripts the PR changed are named with their size in lines and
the keys whose runs start them (those keys are changed keys: `bot.diff`), or said to change no
run when only their comments, layout or eval-only branches changed; a changed shared file
(a runner launcher, `benchmark_lib.sh`) is named once, with the runs it reaches, and asks for a
changelog entry only as a warning (docs/checks.md#launch says which rule and why).
"""

from __future__ import annotations

import difflib

from bot.checks import images, sweep_rules
from bot.checks.context import CheckContext
from bot.diff import ScriptChanges
from bot.findings import Finding, Severity, finding
from bot.model.script_code import code_id

CHECK = "launch"
_MAX_LINES = 20_000  # files longer than this are counted, not compared line by line


def check(ctx: CheckContext) -> list[Finding]:
    if not ctx.diff.launchers:
        return [finding(CHECK, Severity.UNVERIFIED, "launch-no-launchers")]
    found = _missing(ctx) + _containers(ctx)
    runs = sum(len(c.head_runs) for c in ctx.live_keys())
    scripts = ctx.diff.scripts
    if scripts is not None:
        found += _changed(scripts, ctx)
    if not found and runs:
        found.append(finding(CHECK, Severity.VERIFIED, "launch-verified", runs=runs))
    if not found:
        found.append(finding(CHECK, Severity.VERIFIED, "launch-nothing"))
    return found


def _missing(ctx: CheckContext) -> list[Finding]:
    """A head run whose launcher or benchmark script does not exist (or whose launcher exits when
    the script it looks for is missing): one finding per key and name; a launcher prbot cannot
    follow is not checked."""
    found = []
    for change in ctx.live_keys():
        seen: set[tuple[str, str | None]] = set()
        for run in change.head_runs:
            for launch in run.launches:
                slot = (launch.launcher, launch.script)
                starts = launch.exists or (launch.script is None and not launch.fails)
                if slot in seen or (launch.launcher_exists and starts and not launch.unresolved):
                    continue
                seen.add(slot)
                if launch.unresolved:
                    params = {"key": change.key, "launcher": launch.launcher}
                    found.append(
                        finding(CHECK, Severity.UNVERIFIED, "launch-unresolved", **change.where, **params)
                    )
                elif not launch.launcher_exists:
                    params = {
                        "key": change.key,
                        "launcher": launch.launcher,
                        "runner": change.head.runner or "",
                    }
                    found.append(
                        finding(CHECK, Severity.BLOCKING, "launch-launcher-missing", **change.where, **params)
                    )
                else:
                    params = {"key": change.key, "launcher": launch.launcher, "tried": list(launch.tried)}
                    found.append(
                        finding(CHECK, Severity.BLOCKING, "launch-script-missing", **change.where, **params)
                    )
    return found


def _containers(ctx: CheckContext) -> list[Finding]:
    """AGENTS.md: for image bumps a multi-node recipe's `model.container` equals the entry's
    `image`. Blocking for each recipe the PR changed that a multi-node key runs with another image
    (a cluster-side alias such as `dynamo-sglang` names no image here: `images.is_alias`)."""
    changed = set(ctx.diff.changed_recipes)
    found = []
    for change in ctx.live_keys():
        if not change.head.multinode:
            continue
        for path in sorted({p.recipe for p in change.head.points if p.recipe in changed}):
            recipe = ctx.diff.recipes_head.get(path)
            containers = sorted(
                {
                    v.data["model"]["container"]
                    for v in (recipe.candidates(None) if recipe else ())
                    if isinstance(v.data, dict)
                    and isinstance(v.data.get("model"), dict)
                    and isinstance(v.data["model"].get("container"), str)
                    and not images.is_alias(v.data["model"]["container"])
                }
            )
            for container in containers:
                if container != change.head.image:
                    params = {"key": change.key, "path": path, "container": container}
                    params["image"] = str(change.head.image)
                    found.append(
                        finding(CHECK, Severity.BLOCKING, "launch-container-image", **change.where, **params)
                    )
    return found


def _runs_differ(scripts: ScriptChanges, path: str) -> bool:
    """Whether a shell file runs something else in a throughput run at the head: not only its
    comments, layout or eval-only branches changed (`script_code.code_id`)."""
    old, new = (snapshot.read(scripts.root + path) for snapshot in (scripts.base, scripts.head))
    return old is None or new is None or code_id(old) != code_id(new)


def _size(scripts: ScriptChanges, path: str) -> tuple[int, int]:
    """Lines added and removed between the base and the head of a file."""
    texts = []
    for snapshot in (scripts.base, scripts.head):
        data = snapshot.read(scripts.root + path)
        texts.append(bytes(data).decode("utf-8", "replace").splitlines() if data is not None else [])
    old, new = texts
    if len(old) + len(new) > _MAX_LINES:
        return len(new), len(old)
    added = removed = 0
    for line in difflib.unified_diff(old, new, lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def _changed(scripts: ScriptChanges, ctx: CheckContext) -> list[Finding]:
    found = []
    for path, keys in sorted(scripts.per_key.items()):
        added, removed = _size(scripts, path)
        params = {"path": path, "added": added, "removed": removed, "keys": keys}
        message = "launch-script-changed" if _runs_differ(scripts, path) else "launch-script-same-code"
        found.append(finding(CHECK, Severity.INFO, message, file=scripts.root + path, **params))
    for path in scripts.unused:
        added, removed = _size(scripts, path)
        params = {"path": path, "added": added, "removed": removed}
        found.append(
            finding(CHECK, Severity.INFO, "launch-script-unused", file=scripts.root + path, **params)
        )
    entries = bool(sweep_rules.appended(ctx.diff)) if ctx.diff.changelog is not None else False
    for path in scripts.shared:
        added, removed = _size(scripts, path)
        reach = scripts.reach.get(path) or _reach(path)
        params = {"path": path, "added": added, "removed": removed, "reach": reach}
        differs = _runs_differ(scripts, path)
        message = "launch-shared-changed" if differs else "launch-shared-same-code"
        found.append(finding(CHECK, Severity.INFO, message, file=scripts.root + path, **params))
        if differs and not entries:
            found.append(
                finding(
                    CHECK, Severity.WARNING, "launch-shared-no-entry", file=scripts.root + path, path=path
                )
            )
    return found


def _reach(path: str) -> list[str]:
    """Whose runs a shared file reaches: a launcher's machines (`mi355x-amds`), else every run."""
    name = path.rsplit("/", 1)[-1]
    if path.startswith("runners/launch_") and name.endswith(".sh"):
        return [name.removeprefix("launch_").removesuffix(".sh")]
    return []
