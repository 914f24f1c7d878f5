"""What decides InferenceX's sweep, as its `run-sweep.yml` and `process_changelog.py` do: the
entries a PR appends, the keys they name, the labels, and the PR's state. The `changelog`,
`labels` and `sweep-plan` checks all read these facts from here, so they never contradict
each other."""

from __future__ import annotations

from typing import NamedTuple

from bot.checks.context import CheckContext
from bot.diff import ReviewDiff
from bot.model.changelog import Entry, pattern_matches

SKIP_MARKER = "[skip-sweep]"


def appended(diff: ReviewDiff) -> list[Entry]:
    """The entries the PR adds to the changelog, in file order: what the sweep reads (it takes the
    lines the diff adds; one written above the end fails the gate, but would still be swept)."""
    if diff.changelog is None:
        return []
    return sorted(diff.changelog.inserted + diff.changelog.appended, key=lambda e: e.index)


def keys_known(diff: ReviewDiff) -> bool:
    """Whether the head's keys are known (its master configs were found and read)."""
    return bool(diff.head_keys) and not diff.unreadable_masters


def keys_matching(diff: ReviewDiff, pattern: str) -> list[str]:
    """The head keys one `config-keys` item names, in master-config order (a plain item by
    lookup: a long changelog's items are not each compared with every key)."""
    if "*" not in pattern:
        return [pattern] if pattern in diff.head_keys else []
    return [key for key in diff.head_keys if pattern_matches(pattern, key)]


def keys_named(diff: ReviewDiff, entry: Entry) -> list[str]:
    """The head keys an entry names, in the sweep's order: its patterns in turn, a wildcard's
    matches in master-config order, each key once."""
    return list(dict.fromkeys(key for pattern in entry.config_keys for key in keys_matching(diff, pattern)))


def unknown_patterns(diff: ReviewDiff, entry: Entry) -> list[str]:
    """`config-keys` items that name no head key: the sweep refuses the whole changelog change."""
    if not keys_known(diff):
        return []
    return [pattern for pattern in entry.config_keys if not keys_matching(diff, pattern)]


def mixes_append_only(entries: list[Entry]) -> bool:
    """Append-only and regular entries in one PR: the sweep refuses to combine them."""
    flags = {entry.flag("append-only") for entry in entries}
    return len(flags) > 1


def gate_fails(diff: ReviewDiff) -> bool:
    """Whether InferenceX's changelog gate refuses this change (then no sweep starts)."""
    entries = appended(diff)
    if diff.changelog is None:
        return False
    return (
        bool(diff.changelog.problems)
        or mixes_append_only(entries)
        or any(unknown_patterns(diff, entry) for entry in entries)
    )


class Start(NamedTuple):
    """Whether the sweep starts for this PR, and if not, why (a message id suffix)."""

    runs: bool
    reason: str = ""
    label: str | None = None


def primary_labels(ctx: CheckContext) -> list[str]:
    return [label for label in dict.fromkeys(ctx.pr.labels) if label in ctx.settings.primary_labels]


def sweep_start(ctx: CheckContext) -> Start:
    """The same decision as the sweep workflow, in the order a reader needs to hear it."""
    if not appended(ctx.diff):
        return Start(False, "no-entry")
    eval_labels = set(ctx.pr.labels) & set(ctx.settings.eval_modifiers)
    if gate_fails(ctx.diff) or (eval_labels and any(e.flag("append-only") for e in appended(ctx.diff))):
        return Start(False, "gate")  # the gate runs the sweep's own processor, with the label flags
    primaries = primary_labels(ctx)
    if len(primaries) != 1:
        return Start(False, "no-label" if not primaries else "several-labels")
    label = primaries[0]
    if SKIP_MARKER in ctx.pr.head_message:
        return Start(False, "skip", label)
    if ctx.pr.draft:
        return Start(False, "draft", label)
    if ctx.pr.from_fork:
        return Start(False, "fork", label)
    return Start(True, "", label)
