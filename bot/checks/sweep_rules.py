"""What decides InferenceX's sweep, as its `run-sweep.yml` and `process_changelog.py` do: the
entries a PR appends, the keys they name, the labels, and the PR's state. The `changelog`,
`labels` and `sweep-plan` checks all read these facts from here, so they never contradict
each other."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, NamedTuple

from bot.checks.context import CheckContext
from bot.diff import ReviewDiff, run_ident
from bot.model.changelog import SCENARIO_TYPES, Entry, pattern_matches
from bot.model.generated import ENTRY_NULL_ABSENT, entry_fields
from bot.model.master import ConfigEntry, Point
from bot.yamlsafe import frozen

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
    """Whether InferenceX's PR-time changelog check refuses this change (then no sweep starts):
    `validate_perf_changelog.py`'s `main`, which runs `process_changelog.py`. What only the merge
    step refuses (the byte, order and link rules) does not stop the sweep."""
    entries = appended(diff)
    if diff.changelog is None:
        return False
    return (
        diff.changelog.pr_gate_fails()
        or mixes_append_only(entries)
        or any(unknown_patterns(diff, entry) for entry in entries)
        or bool(append_only_refusals(diff))
    )


class Refusal(NamedTuple):
    """Why `process_changelog.py` refuses an append-only sweep: a reason (a message suffix), the
    key, and the concurrencies of existing runs removed or changed (reason `lost`)."""

    reason: str
    key: str
    concurrencies: tuple[int, ...] = ()


def _top_level(raw: Any) -> Any:
    return {k: v for k, v in raw.items() if k != "scenarios"} if isinstance(raw, dict) else raw


def _scenarios(raw: Any) -> dict[Any, Any]:
    scenarios = raw.get("scenarios") if isinstance(raw, dict) else None
    return scenarios if isinstance(scenarios, dict) else {}


def generated(entry: ConfigEntry | None, scenarios: set[str]) -> set[tuple[Any, ...]]:
    """The runs the generator makes of a key in some scenario types, each by its whole identity
    (`generated_ident`): two points at one concurrency that differ in any field are two runs."""
    runs: set[tuple[Any, ...]] = set()
    for point in entry.points if entry is not None else ():
        if point.scenario in scenarios:
            row = generated_row(entry, point)
            runs.update(generated_ident(row, point, conc) for conc in point.concurrencies)
    return runs


def generated_row(entry: ConfigEntry, point: Point) -> tuple[Any, ...]:
    """Everything the generator's row of a point holds but its concurrency: the key's own fields
    and the point's, with the defaults the generator fills in (`pp: 1` written out is `pp` left
    out), merged (so moving a field from the key into its points changes no run; a point's null
    `router` leaves the row without one), its scenario group's and its recipe."""
    top, own = entry_fields(entry.raw), point.fields
    merged = {**(top if isinstance(top, dict) else {}), **(own if isinstance(own, dict) else {})}
    fields = {k: v for k, v in merged.items() if v is not None or k not in ENTRY_NULL_ABSENT}
    return (frozen(fields), point.utilization, point.recipe, point.selector)


def generated_ident(row: tuple[Any, ...], point: Point, concurrency: int) -> tuple[Any, ...]:
    """A run's whole identity, as `process_changelog.py`'s append-only check tells runs apart (every
    field of the generated row but `conc` and `exp-name`): its row, topology and concurrency
    (last)."""
    return (row, *run_ident(point, concurrency))


def append_only_scope(diff: ReviewDiff) -> dict[str, set[str]]:
    """The keys the PR's append-only entries select, each with the scenario types it may change."""
    selected: dict[str, set[str]] = defaultdict(set)
    for entry in appended(diff):
        if entry.flag("append-only"):
            wanted = entry.get("scenario-type")
            scenarios = set(wanted) if isinstance(wanted, list) and wanted else set(SCENARIO_TYPES)
            for key in keys_named(diff, entry):
                selected[key] |= scenarios
    return selected


def append_only_refusals(diff: ReviewDiff) -> list[Refusal]:
    """What `process_changelog.py` refuses in an append-only sweep, as its tests pin it down:
    another key's config changed; a selected key new, or a scenario added, removed or changed
    outside the entry's `scenario-type`, or key-wide fields changed while such a scenario exists;
    an existing run removed or changed (an image change changes them all); no run added."""
    selected = append_only_scope(diff)
    if not selected:
        return []
    out: list[Refusal] = []
    for key, change in diff.keys.items():
        before = change.base.raw if change.base else None
        after = change.head.raw if change.head else None
        if key not in selected and change.entry_changed and before != after:
            out.append(Refusal("unselected", key))
    for key, scenarios in selected.items():
        change = diff.keys.get(key)
        if change is None:
            out.append(Refusal("nothing", key))
            continue
        if change.base is None:
            out.append(Refusal("new-key", key))
            continue
        base, head = change.base.raw, change.head.raw if change.head else None
        outside = set(_scenarios(base)) - scenarios
        if set(_scenarios(base)) != set(_scenarios(head)):
            out.append(Refusal("scenario-set", key))
        elif outside and _top_level(base) != _top_level(head):
            out.append(Refusal("key-wide", key))
        elif any(_scenarios(base)[s] != _scenarios(head)[s] for s in outside):
            out.append(Refusal("outside-scope", key))
        old, new = generated(change.base, scenarios), generated(change.head, scenarios)
        lost = sorted({ident[-1] for ident in old - new})
        if lost:
            reason = "image" if change.image_changed else "lost"
            out.append(Refusal(reason, key, tuple(lost)))
        elif not new - old:
            out.append(Refusal("nothing", key))
    return out


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
