"""The first screen of the review: the verdict, what the PR changes and the one next step.

Both languages show it, English then Chinese, above everything else (DESIGN.md §3): a reader of
either language learns within a few lines whether the PR is safe and what to do. It is built here
as typed records from the report; `bot/output/render.py` renders them through the catalog
(`templates/messages/screen.yaml`).

- The verdict counts what was not checked: a review with a check that could not run is never
  shown as clean without saying so (`✅` only when every check ran).
- What changed: one line per config key (more than `KEY_LINES` keys: one line for all, each fact
  counted over the keys it holds for) made of facts: a new or removed key, the published set's
  change (`+C20 C30 −C4`), a setting changed at every run (`image v0.21.0 → v0.25.0`), a setting
  changed at some runs (`kv-offloading none → dram at 6 runs`), runs added or removed.
- The next step: the first of fixing the blocking findings, what keeps the sweep from starting
  (a label), a sign-off, the warnings, waiting for the sweep.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.catalog import Msg, msg
from bot.checks.changes_view import KeyChanges, RunChange, Setting
from bot.findings import Finding, Severity
from bot.model import schema
from bot.model.runs import SCRIPT, same
from bot.output import changelog_draft

#: Up to this many changed keys get a line each; more share one line.
KEY_LINES = 2
#: Facts one line shows at most (the others are counted).
FACTS = 6
#: Characters of a value shown on the first screen.
VALUE_CHARS = 32
#: Concurrencies a published set's change names at most on each side.
SET_SHOWN = 8
#: Findings about the refs themselves: said on the first screen, above what changes, and the next step.
REF_NOTES = ("refs-swapped", "layout-no-masters")
#: The finding whose message is the next step, in the order they are looked for.
NEXT_FINDINGS = (
    "labels-no-primary",
    "labels-typo",
    "labels-not-yet-gate",
    "labels-not-yet-skip",
    "labels-not-yet-draft",
    "labels-not-yet-fork",
    "codeowners-signoff-needed",
    "codeowners-signoff-author-only",
    "codeowners-signoff-teams-unreadable",
    "codeowners-signoff-email-owners",
    "codeowners-signoff-local",
)
_IMAGE = re.compile(r"(?P<repo>[\w.-]+(?::\d+)?(?:/[\w.-]+)+)[:@](?P<tag>[\w.:-]+)")


#: Facts whose message names the number of keys itself (the others get "on N keys").
SAYS_KEYS = ("screen-key-new", "screen-key-removed")


@dataclass(frozen=True)
class Fact:
    """One thing the PR changes about a key: a catalog message and its parameters."""

    message_id: str
    params: tuple[tuple[str, Any], ...] = ()

    def msg(self, keys: int = 1) -> Msg:
        """The fact as a message; `keys` the number of keys it holds for (its numbers are sums)."""
        return msg(self.message_id, **{"keys": keys, "bases": 0, "keys_changed": False, **dict(self.params)})


@dataclass(frozen=True)
class ChangeLine:
    """What the PR changes about one key (`key`), or about `keys` keys at once (`key` None): the
    facts, each with the number of keys it holds for, and how many facts are not shown."""

    key: str | None
    keys: int
    facts: tuple[tuple[Fact, int], ...]
    more: int = 0


@dataclass(frozen=True)
class FirstScreen:
    """The verdict (`state`, counts, the checks not run), the change lines and the next step."""

    state: str  # "blocking", "warnings", "clean", "error"
    blocking: int
    warnings: int
    unchecked: int
    unchecked_checks: tuple[str, ...]
    lines: tuple[ChangeLine, ...]
    next_step: Msg
    notes: tuple[Msg, ...] = field(default=())  # about the refs themselves (swapped, no master config)

    @property
    def mark(self) -> str:
        if self.state in ("blocking", "error"):
            return "❌"
        if self.state == "warnings":
            return "⚠️"
        return "❔" if self.unchecked else "✅"

    def title(self) -> Msg:
        return msg(
            "screen-title",
            mark=self.mark,
            state=self.state,
            blocking=self.blocking,
            warnings=self.warnings,
            unchecked=self.unchecked,
            checks=list(self.unchecked_checks),
        )


def short(value: Any) -> str:
    """A value as the first screen shows it: at most VALUE_CHARS characters."""
    shown = value if isinstance(value, str) else schema.text(value).replace("'", '"')
    return shown if len(shown) <= VALUE_CHARS else shown[: VALUE_CHARS - 1] + "…"


def _values(base: Any, head: Any) -> tuple[str | None, str | None]:
    """Two values side by side; two images of one repository as their tags."""
    if isinstance(base, str) and isinstance(head, str):
        found = [_IMAGE.fullmatch(v) for v in (base, head)]
        if found[0] and found[1] and found[0]["repo"] == found[1]["repo"]:
            tags = [m["tag"] for m in found]
            if all(tag.startswith("sha256:") for tag in tags):  # a digest: its first 12 hex digits
                return tags[0][:19] + "…", tags[1][:19] + "…"
            return short(tags[0]), short(tags[1])
    return (None if base is None else short(base)), (None if head is None else short(head))


def _name(path: str) -> str:
    """A setting's name: the last part of its path; for the runner's record, its place in it."""
    field = changelog_draft.runner_field(path)
    if field is not None:
        return field
    parts = path.removeprefix("recipe:").split(".")
    return ".".join(parts) if parts[0] in changelog_draft.POINT_FIELDS else parts[-1]


def _runner(path: str) -> bool:
    return changelog_draft.runner_field(path) is not None


#: The point fields that identify a run: a change of one is shown with its values wherever it is.
IDENTITY = ("tp", "ep", "pp", "dp-attn", "dcp-size", "pcp-size", "spec-decoding", "kv-offloading")
#: Names a fact about settings changed at some runs lists at most.
NAMES = 4


def _setting_fact(setting: Setting, runs: int | None = None) -> Fact:
    """One setting's change; a list or mapping by its name alone (the table below has the rest)."""
    path = setting.path
    if path == SCRIPT:
        return Fact("screen-script", (("runs", runs),))
    named = (("name", _name(path)), ("runner", _runner(path)))
    if any(isinstance(side, list | dict) for side in (setting.base, setting.head)):
        return Fact("screen-setting-varied", (*named, ("runs", runs)))
    base, head = _values(setting.base, setting.head)
    return Fact("screen-setting", (*named, ("base", base), ("head", head), ("runs", runs)))


def _own_facts(runs: Sequence[RunChange]) -> list[Fact]:
    """The settings changed at some runs only: an identity setting each with its values, the
    others by name in one fact with the number of runs they changed at."""
    identity: dict[str, list[tuple[Any, Any]]] = {}
    others: dict[str, None] = {}
    changed = 0
    for run in runs:
        changed += bool(run.settings)
        for setting in run.settings:
            path = setting.path
            if path in IDENTITY:
                identity.setdefault(path, []).append((setting.base, setting.head))
            else:
                others[_name(path)] = None
    facts = []
    for path, changes in identity.items():
        if all(same(change, changes[0]) for change in changes):
            base, head = changes[0]
            facts.append(_setting_fact(Setting(path, base, head), len(changes)))
        else:
            facts.append(
                Fact("screen-setting-varied", (("name", path), ("runner", False), ("runs", len(changes))))
            )
    if others:
        names = tuple(list(others)[:NAMES])
        more = max(0, len(others) - NAMES)
        facts.append(Fact("screen-settings-at", (("names", names), ("more", more), ("runs", changed))))
    return facts


def _delta(base: Sequence[int], head: Sequence[int]) -> Fact | None:
    added = [c for c in head if c not in base]
    removed = [c for c in base if c not in head]
    if not added and not removed:
        return None
    more = max(0, len(added) - SET_SHOWN) + max(0, len(removed) - SET_SHOWN)
    return Fact(
        "screen-set",
        (("added", tuple(added[:SET_SHOWN])), ("removed", tuple(removed[:SET_SHOWN])), ("more", more)),
    )


def key_facts(sets: Mapping[str, Any], view: KeyChanges | None) -> list[Fact]:
    """What the PR changes about one key, from its published sets and its `changes` view (None:
    the review has none, as when its checks did not run)."""
    base, head = list(sets.get("base") or []), list(sets.get("head") or [])
    runs = view.runs if view is not None else ()
    statuses = Counter(run.status for run in runs)
    if not base and head and not statuses["changed"] + statuses["as-before"]:
        return [Fact("screen-key-new", (("count", len(head)),))]
    if base and not head:
        return [Fact("screen-key-removed", (("count", len(base)),))]
    facts = [_setting_fact(s) for s in (view.common if view is not None else ())]
    delta = _delta(base, head)
    if delta is not None:
        facts.insert(0, delta)
    facts += _own_facts(runs)
    if statuses["added"]:
        facts.append(Fact("screen-runs-added", (("count", statuses["added"]),)))
    if statuses["removed"]:
        facts.append(Fact("screen-runs-removed", (("count", statuses["removed"]),)))
    return facts or [Fact("screen-no-run-changed")]


def _rank(fact: Fact) -> int:
    """Where a fact stands in a line for many keys: the image first, then the published sets,
    the identity settings, runs added or removed, then the other settings."""
    name = dict(fact.params).get("name")
    if name == "image":
        return 0
    if fact.message_id in ("screen-set", "screen-key-new", "screen-key-removed"):
        return 1
    if name in IDENTITY:
        return 2
    return 3 if fact.message_id in ("screen-runs-added", "screen-runs-removed") else 4


def _merged(facts: Sequence[Fact]) -> Fact:
    """Facts of several keys that differ only in their numbers (or, for a setting, its old value)
    as one: numbers added up, old values counted."""
    first = dict(facts[0].params)
    if first.get("base") is not None and len({dict(f.params).get("base") for f in facts}) > 1:
        first["base"] = None
        first["bases"] = len({dict(f.params).get("base") for f in facts})
    for number in ("count", "runs"):
        if isinstance(first.get(number), int):
            first[number] = sum(dict(f.params)[number] for f in facts)
    if facts[0].message_id == "screen-set":
        first = {"added": (), "removed": (), "more": 0, "keys_changed": True}
    return Fact(facts[0].message_id, tuple(first.items()))


def _coarse(fact: Fact) -> tuple[Any, ...]:
    """What facts of several keys share to be merged: for a setting its name and new value."""
    params = dict(fact.params)
    if fact.message_id in ("screen-setting", "screen-setting-varied"):
        return (fact.message_id, params.get("name"), params.get("head"))
    if fact.message_id == "screen-settings-at":
        return (fact.message_id, params.get("names"))
    return (fact.message_id,)


def change_lines(
    published_sets: Mapping[str, Any], changes: Mapping[str, KeyChanges], keys: Sequence[str]
) -> tuple[ChangeLine, ...]:
    """One line per key, or (more than KEY_LINES keys) one line for all of them, each fact with
    the number of keys it holds for."""
    facts = {key: key_facts(published_sets.get(key) or {}, changes.get(key)) for key in keys}
    if len(keys) <= KEY_LINES:
        return tuple(
            ChangeLine(key, 1, tuple((f, 1) for f in facts[key][:FACTS]), max(0, len(facts[key]) - FACTS))
            for key in keys
        )
    groups: dict[tuple[Any, ...], list[Fact]] = {}
    holders: dict[tuple[Any, ...], set[str]] = {}
    for key in keys:
        for fact in facts[key]:
            groups.setdefault(_coarse(fact), []).append(fact)
            holders.setdefault(_coarse(fact), set()).add(key)
    merged = [(_merged(group), len(holders[coarse])) for coarse, group in groups.items()]
    merged.sort(key=lambda pair: (_rank(pair[0]), -pair[1]))
    return (ChangeLine(None, len(keys), tuple(merged[:FACTS]), max(0, len(merged) - FACTS)),)


def next_step(findings: Sequence[Finding], reviewed: bool, keys: int, drafted: bool) -> Msg:
    """The one thing to do next (see the module's docstring for the order)."""
    if not reviewed:
        return msg("screen-next-error")
    blocking = [f for f in findings if f.severity is Severity.BLOCKING]
    refs = [f for f in findings if f.message_id in REF_NOTES]
    if refs and not blocking:
        return msg("screen-next-refs")
    if blocking:
        first = blocking[0]
        where = f"{first.file}:{first.line}" if first.file and first.line else first.file
        return msg(
            "screen-next-blocking", count=len(blocking), check=first.check, where=where, drafted=drafted
        )
    by_id = {f.message_id: f for f in reversed(findings)}
    for message_id in NEXT_FINDINGS:
        if message_id in by_id:
            found = by_id[message_id]
            return Msg(found.message_id, found.params)
    warnings = sum(f.severity is Severity.WARNING for f in findings)
    if warnings:
        return msg("screen-next-warnings", count=warnings)
    if "labels-ok" in by_id:
        return msg("screen-next-sweep", **by_id["labels-ok"].params)
    return msg("screen-next-none", keys=keys)


def first_screen(
    *,
    findings: Sequence[Finding],
    shown: Mapping[str, int],
    unchecked_checks: Sequence[str],
    reviewed: bool,
    published_sets: Mapping[str, Any],
    changes: Mapping[str, KeyChanges],
    keys: Sequence[str],
    drafted: bool,
    notes: Sequence[Msg] = (),
) -> FirstScreen:
    """The first screen of a review whose sections hold `shown` findings per severity."""
    if not reviewed:
        state = "error"
    elif shown.get("blocking"):
        state = "blocking"
    else:
        state = "warnings" if shown.get("warning") else "clean"
    return FirstScreen(
        state=state,
        blocking=shown.get("blocking", 0),
        warnings=shown.get("warning", 0),
        unchecked=shown.get("unverified", 0),
        unchecked_checks=tuple(dict.fromkeys(unchecked_checks)),
        lines=change_lines(published_sets, changes, keys),
        next_step=next_step(findings, reviewed, len(keys), drafted),
        notes=(*notes, *(Msg(f.message_id, f.params) for f in findings if f.message_id in REF_NOTES)),
    )
