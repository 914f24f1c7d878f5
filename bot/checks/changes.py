"""`changes` (info): what every run of a changed key really serves at base and at head.

A run's settings are the resolved model's (`bot.model.runs`): the entry's fields (image, model,
runner, …), its scenario group's, its point's own (all but the concurrencies), its runner's
record in runners.yaml (`hardware.…`) and the variant it selects, resolved (`base` merged with
the override, anchors and `<<:` resolved by then), flattened to dotted paths
(`benchmark.env.ATOM_MONO_ENABLE`); lists are values of their own, compared as lists, and every
value by value and type (`true` is not `1.0`). A serving argument written as a JSON string is
compared as what it holds (`roles.agg.args.online_quant_config.exclude_layer`: a list). A setting
that changed the same way at every run that exists at both refs is shown once, as common; a run
whose only changes are the common ones is "as before". A removed run and an added run of the same
concurrency and sequence lengths whose topologies differ in one setting only (`kv-offloading`
`none` → `dram`, `tp` 4 → 8) are one run whose setting changed: it is paired with its base run and
reported as changed, with `topology_base` beside its `topology`. An override that replaces a list of
`base` and leaves out items `base` had is a warning: deep merge replaces lists, so those items
are gone from that variant (DESIGN.md §2 `changes`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from bot.checks.changes_view import KeyChanges, NewEntry, RunChange, Setting, Status, Topology
from bot.checks.context import CheckContext
from bot.diff import KeyChange, Run
from bot.findings import Finding, Severity, finding
from bot.model import schema
from bot.model.master import Point
from bot.model.recipe import Variant
from bot.model.runs import VARIANT, same, segment, structure
from bot.yamlsafe import frozen

CHECK = "changes"
_COMMON_SHOWN = 4  # settings a finding names; the JSON report has them all
# The JSON report's budget for `changes`: settings are shared by the runs of a key and by keys that
# alias one entry, but the report writes them out at each. The whole InferenceX matrix takes about
# 1 MB. A run without settings of its own takes about 300 bytes.
MAX_CHANGES_BYTES = 32_000_000
RUN_JSON_BYTES = 300


def settings_of(run: Run) -> dict[str, Any]:
    """Everything one run is started with, as dotted path → value (the model's, worked out once)."""
    return run.settings


def _apart_from_variant(run: Run) -> dict[str, Any]:
    """A run's settings less those of the variant it selects."""
    variant = run.parts[VARIANT]
    return {
        path: value
        for path, value in run.settings.items()
        if path not in variant and path.removeprefix("recipe:") not in variant
    }


def _differ(old: Run, new: Run, seen: Compared) -> list[Setting]:
    """How a run's settings changed; when only one side selects a variant (the other selects none:
    a `recipe-selection` finding says why), the variant's settings are not listed as set or removed."""
    if (old.variant is None) != (new.variant is None):
        return compare(_apart_from_variant(old), _apart_from_variant(new), seen)
    return compare(settings_of(old), settings_of(new), seen)


def compare(base: dict[str, Any], head: dict[str, Any], seen: Compared | None = None) -> list[Setting]:
    """The settings that differ, in the order a run's settings are built (the entry's fields, its
    group's, its point's, its runner's hardware, its variant's; then what only the base had):
    `base`/`head` values (None where absent) and, for lists, the items added and removed."""
    seen = Compared() if seen is None else seen
    differ = []
    for path in [*head, *(p for p in base if p not in head)]:
        setting = seen.setting(path, base, head)
        if setting is not None:
            differ.append(setting)
    return differ


class Compared:
    """Settings compared once per review: the runs of a key, and keys that alias one entry, share
    their parsed values, so each (path, base value, head value) is compared, made into its report
    form and measured only once (by the values' ids: the model keeps every value alive)."""

    def __init__(self) -> None:
        self._settings: dict[tuple[Any, ...], tuple[Setting | None, Any, Any]] = {}
        self._frozen: dict[int, tuple[Setting, Any]] = {}
        self._sizes: dict[int, int] = {}

    def setting(self, path: str, base: dict[str, Any], head: dict[str, Any]) -> Setting | None:
        """The change of one setting between two runs (None: the same by value and type)."""
        old, new = base.get(path), head.get(path)
        slot = (path, id(old), id(new), path in base, path in head)
        known = self._settings.get(slot)
        if known is not None and known[1] is old and known[2] is new:
            return known[0]
        setting: Setting | None = None
        if (path in base) != (path in head) or not same(old, new):
            if isinstance(old, list) and isinstance(new, list):
                setting = Setting(path, old, new, _missing(new, old), _missing(old, new))
            else:
                setting = Setting(path, old, new)
        self._settings[slot] = (setting, old, new)
        return setting

    def frozen(self, setting: Setting) -> Any:
        """A change as something hashable, equal exactly when two changes are (`Setting.key`)."""
        known = self._frozen.get(id(setting))
        if known is None:
            known = self._frozen[id(setting)] = (setting, setting.key())
        return known[1]

    def size(self, setting: Setting) -> int:
        """About how many bytes a change takes in the JSON report."""
        if id(setting) not in self._sizes:
            self._sizes[id(setting)] = _json_size(setting.as_json())
        return self._sizes[id(setting)]


def _json_size(value: Any) -> int:
    """About how many bytes `value` takes as JSON (a string its length, any other scalar 8)."""
    size, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            size += len(item) + 3
        elif isinstance(item, dict):
            size += 2 + 4 * len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            size += 2 + len(item)
            stack.extend(item)
        else:
            size += 8
    return size


def _missing(items: list[Any], other: list[Any]) -> list[Any]:
    """The items of `items` that `other` does not hold (by value and type), in linear time."""
    held = {frozen(item) for item in other}
    return [item for item in items if frozen(item) not in held]


def _topology(point: Point) -> Topology:
    return Topology(
        scenario=point.scenario,
        isl=point.isl,  # the sequence lengths (None for agentic points): runs are named `1k1k TP8`
        osl=point.osl,
        tp=point.tp,
        ep=point.ep,
        pp=point.pp,
        dcp=point.dcp,
        pcp=point.pcp,
        dp_attn=point.dp_attn,
        spec_decoding=point.spec_decoding,
        kv_offloading=point.kv_offloading,
    )


def _run(
    status: Status,
    run: Run,
    base: Variant | None,
    head: Variant | None,
    settings: list[Setting],
    topologies: dict[int, Topology],
    before: Run | None = None,
) -> RunChange:
    """One run of the report: `run` gives its concurrency and topology, `base`/`head` the variant
    it selects at each ref (None where it does not exist or selects none). The runs of one point
    share its topology (`topologies`, by the point's id)."""
    point = run.point
    topology = topologies.get(id(point))
    if topology is None:
        topology = topologies[id(point)] = _topology(point)
    topology_base = None
    if before is not None and before.point is not point:
        old = _topology(before.point)
        topology_base = old if old != topology else None
    return RunChange(
        concurrency=run.concurrency,
        topology=topology,
        variant_base=base.name if base else None,
        variant_head=head.name if head else None,
        status=status,
        settings=tuple(settings),
        topology_base=topology_base,
    )


#: The topology fields whose sameness makes an added and a removed run one run that changed.
_SAME_SCENARIO = ("scenario", "isl", "osl")


def paired(added: list[Run], removed: list[Run]) -> dict[int, Run]:
    """For each added run (by id) the removed run it replaces: the one of its concurrency and
    sequence lengths whose topology differs from it in exactly one field, when there is exactly one
    such run and it pairs with no other added run. Found through an index of each removed run's
    topology with one field left out, so the work grows with the runs, not with their product."""
    if not added or not removed:
        return {}
    index: dict[tuple[Any, ...], list[tuple[Run, Any]]] = {}
    for old in removed:
        theirs = _topology(old.point).as_json()
        for field in theirs.keys() - set(_SAME_SCENARIO):
            index.setdefault(_masked(old.concurrency, theirs, field), []).append((old, frozen(theirs[field])))
    candidates: dict[int, list[Run]] = {}
    for new in added:
        mine = _topology(new.point).as_json()
        for field in mine.keys() - set(_SAME_SCENARIO):
            value = frozen(mine[field])
            for old, theirs in index.get(_masked(new.concurrency, mine, field), ()):
                if theirs != value:  # equal in every other field, different in this one
                    candidates.setdefault(id(new), []).append(old)
    claimed = Counter(id(old) for olds in candidates.values() for old in olds)
    return {new: olds[0] for new, olds in candidates.items() if len(olds) == 1 and claimed[id(olds[0])] == 1}


def _masked(concurrency: int, topology: dict[str, Any], field: str) -> tuple[Any, ...]:
    """A run's concurrency and topology with `field` left out, as something hashable."""
    return (concurrency, field, frozen({f: v for f, v in topology.items() if f != field}))


def key_changes(change: KeyChange, seen: Compared | None = None) -> KeyChanges:
    """One key's runs, base against head (DESIGN.md §3 `changes`)."""
    seen = Compared() if seen is None else seen
    pairs = paired(change.added, change.removed)
    before = {id(run): change.base_of(run) for run in change.changed + change.unchanged}
    before.update((id(run), old) for run in change.added if (old := pairs.get(id(run))) is not None)
    matched = [*change.changed, *change.unchanged, *(run for run in change.added if id(run) in pairs)]
    differ: dict[int, list[Setting]] = {}
    if change.base is not None and change.head is not None:
        differ.update((id(run), []) for run in change.unchanged)  # the same settings: nothing to list
        for run in matched:
            if id(run) not in differ:
                differ[id(run)] = _differ(before[id(run)], run, seen)
    common = _common(list(differ.values()), seen)
    shared = {seen.frozen(setting) for setting in common}
    runs = []
    topologies: dict[int, Topology] = {}
    for run in sorted(matched, key=lambda r: (r.concurrency, r.ident)):
        old = before[id(run)]
        own = [s for s in differ.get(id(run), []) if seen.frozen(s) not in shared]
        status: Status = "changed" if own or id(run) in pairs else "as-before"
        runs.append(_run(status, run, old.variant, run.variant, own, topologies, old))
    gone = {id(old) for old in pairs.values()}
    runs += [
        _run("added", run, None, run.variant, [], topologies) for run in change.added if id(run) not in pairs
    ]
    runs += [
        _run("removed", run, run.variant, None, [], topologies)
        for run in change.removed
        if id(run) not in gone
    ]
    runs.sort(key=lambda run: (run.concurrency, run.status))
    entry = None
    if change.base is None and change.head is not None:  # a new key: what it runs, to name it by
        entry = _entry(change.head.raw)
    return KeyChanges(tuple(common), tuple(runs), entry)


def _entry(raw: Any) -> NewEntry:
    """A new key's entry as its model, precision, runner, framework and image (those that are text)."""
    fields = raw if isinstance(raw, dict) else {}

    def text(name: str) -> str | None:
        value = fields.get(name)
        return value if isinstance(value, str) else None

    return NewEntry(text("model"), text("precision"), text("runner"), text("framework"), text("image"))


def _common(diffs: list[list[Setting]], seen: Compared) -> list[Setting]:
    """The settings that changed the same way (by value and type) at every run (none when fewer
    than two runs), in linear time."""
    if len(diffs) < 2:
        return []
    common = {seen.frozen(setting): setting for setting in diffs[0]}
    for other in diffs[1:]:
        if not common:
            break
        held = {seen.frozen(setting) for setting in other}
        common = {key: setting for key, setting in common.items() if key in held}
    return list(common.values())


def _view_size(view: KeyChanges, seen: Compared) -> int:
    """About how many bytes a key's `changes` take in the JSON report."""
    size = sum(seen.size(s) for s in view.common)
    return size + sum(RUN_JSON_BYTES + sum(seen.size(s) for s in run.settings) for run in view.runs)


def plan(ctx: CheckContext) -> dict[str, KeyChanges]:
    """`changes` of the JSON report: every changed key, worked out once per review, while the
    report's budget lasts (`MAX_CHANGES_BYTES`); the keys left out are `omitted`."""
    if "changes" not in ctx.memo:
        seen, views, omitted, spent = Compared(), {}, [], 0
        for change in ctx.diff.keys.values():
            view = key_changes(change, seen)
            size = _view_size(view, seen)
            if spent + size > MAX_CHANGES_BYTES:
                omitted.append(change)
                continue
            spent += size
            views[change.key] = view
        ctx.memo["changes"], ctx.memo["changes-omitted"] = views, omitted
    return ctx.memo["changes"]


def _omitted(ctx: CheckContext) -> list[Finding]:
    """A blocking finding when keys' changes were left out of the report (too large to list)."""
    plan(ctx)
    omitted: list[KeyChange] = ctx.memo["changes-omitted"]
    if not omitted:
        return []
    first = omitted[0]
    return [
        finding(
            CHECK,
            Severity.BLOCKING,
            "changes-too-large",
            file=first.file,
            line=first.line,
            path=first.file,
            count=len(omitted),
            keys=[c.key for c in omitted[:10]],
            megabytes=MAX_CHANGES_BYTES // 10**6,
        )
    ]


def _dropped(
    override: Any, base: Any, path: tuple[Any, ...] = (), written: tuple[Any, ...] | None = None
) -> list[tuple[tuple[Any, ...], tuple[Any, ...], list[Any]]]:
    """Lists of `base` that the override replaces, with the items it leaves out (by value and
    type, in linear time): (the path of keys to the list, the path of the value the override
    writes, the items). A list inside a JSON-valued argument (`online_quant_config:
    '{"exclude_layer": [...]}'`) is replaced whole too: the override writes the whole string
    (`written` is then that string's path)."""
    if not isinstance(override, dict) or not isinstance(base, dict):
        return []
    found = []
    for key, value in override.items():
        where = (*path, key)
        old = base.get(key)
        at = written
        if written is None and isinstance(value, str) and isinstance(old, str):
            value, old, at = structure(value), structure(old), where
            if isinstance(value, str) or isinstance(old, str):
                continue  # plain text, not JSON on both sides
        if isinstance(value, list) and isinstance(old, list):
            gone = _missing(old, value)
            if gone:
                found.append((where, at or where, gone))
        else:
            found += _dropped(value, old, where, at)
    return found


def _list_warnings(ctx: CheckContext) -> list[Finding]:
    """Each variant a changed run selects at the head that drops items of a `base` list."""
    variants: dict[tuple[str, str], tuple[Variant, str]] = {}
    for change in ctx.live_keys():
        for run in change.head_runs:
            if run.variant is not None and len(run.variant.layers) == 2 and run.point.recipe:
                variants.setdefault((run.point.recipe, run.variant.name), (run.variant, change.key))
    out = []
    for (recipe, name), (variant, key) in sorted(variants.items()):
        override, base = variant.layers
        for keys, written, gone in _dropped(override, base):
            line = variant.line_of(written)
            out.append(
                finding(
                    CHECK,
                    Severity.WARNING,
                    "changes-list-dropped",
                    config_key=key,
                    file=recipe,
                    line=line,
                    variant=name,
                    path=".".join(map(segment, keys)),
                    items=[schema.text(item) for item in gone],
                )
            )
    return out


def check(ctx: CheckContext) -> list[Finding]:
    """The list warnings, and one line counting the runs of all changed keys by status (the
    settings themselves are in the JSON report's `changes`)."""
    runs = [run for change in plan(ctx).values() for run in change.runs]
    if not runs:
        return [*_omitted(ctx), *_list_warnings(ctx)]
    statuses = [run.status for run in runs]
    common = {s.path for change in plan(ctx).values() for s in change.common}
    summary = finding(
        CHECK,
        Severity.INFO,
        "changes-runs",
        keys=len(plan(ctx)),
        common=sorted(common)[:_COMMON_SHOWN],
        more=max(0, len(common) - _COMMON_SHOWN),
        changed=statuses.count("changed"),
        same=statuses.count("as-before"),
        added=statuses.count("added"),
        removed=statuses.count("removed"),
    )
    return [*_omitted(ctx), *_list_warnings(ctx), summary]
