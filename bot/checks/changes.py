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

from operator import itemgetter
from typing import Any

from bot.checks.context import CheckContext
from bot.diff import KeyChange, Run
from bot.findings import Finding, Severity, finding
from bot.model import schema
from bot.model.master import Point
from bot.model.recipe import Variant
from bot.model.runs import same

CHECK = "changes"
_COMMON_SHOWN = 4  # settings a finding names; the JSON report has them all


def settings_of(run: Run) -> dict[str, Any]:
    """Everything one run is started with, as dotted path → value (the model's, worked out once)."""
    return run.settings


def _apart_from_variant(run: Run) -> dict[str, Any]:
    """A run's settings less those of the variant it selects."""
    variant = run.parts[-1]
    return {
        path: value
        for path, value in run.settings.items()
        if path not in variant and path.removeprefix("recipe:") not in variant
    }


def _differ(old: Run, new: Run) -> list[dict[str, Any]]:
    """How a run's settings changed; when only one side selects a variant (the other selects none:
    a `recipe-selection` finding says why), the variant's settings are not listed as set or removed."""
    if (old.variant is None) != (new.variant is None):
        return compare(_apart_from_variant(old), _apart_from_variant(new))
    return compare(settings_of(old), settings_of(new))


def compare(base: dict[str, Any], head: dict[str, Any]) -> list[dict[str, Any]]:
    """The settings that differ, in the order a run's settings are built (the entry's fields, its
    group's, its point's, its runner's hardware, its variant's; then what only the base had):
    `base`/`head` values (None where absent) and, for lists, the items added and removed."""
    differ = []
    for path in [*head, *(p for p in base if p not in head)]:
        old, new = base.get(path), head.get(path)
        if (path in base) == (path in head) and same(old, new):
            continue
        setting: dict[str, Any] = {"path": path, "base": old, "head": new}
        if isinstance(old, list) and isinstance(new, list):
            setting["added"] = [item for item in new if not any(same(item, o) for o in old)]
            setting["removed"] = [item for item in old if not any(same(item, n) for n in new)]
        differ.append(setting)
    return differ


def _topology(point: Point) -> dict[str, Any]:
    return {
        "scenario": point.scenario,
        "isl": point.isl,  # the sequence lengths (None for agentic points): runs are named `1k1k TP8`
        "osl": point.osl,
        "tp": point.tp,
        "ep": point.ep,
        "pp": point.pp,
        "dcp": point.dcp,
        "pcp": point.pcp,
        "dp_attn": point.dp_attn,
        "spec_decoding": point.spec_decoding,
        "kv_offloading": point.kv_offloading,
    }


def _run(
    status: str,
    run: Run,
    base: Variant | None,
    head: Variant | None,
    settings: list[dict[str, Any]],
    topologies: dict[int, dict[str, Any]],
    before: Run | None = None,
) -> dict[str, Any]:
    """One run of the report: `run` gives its concurrency and topology, `base`/`head` the variant
    it selects at each ref (None where it does not exist or selects none). The runs of one point
    share its topology's mapping (`topologies`, by the point's id): the report is never changed."""
    point = run.point
    topology = topologies.get(id(point))
    if topology is None:
        topology = topologies[id(point)] = _topology(point)
    shown = {
        "concurrency": run.concurrency,
        "topology": topology,
        "variant_base": base.name if base else None,
        "variant_head": head.name if head else None,
        "status": status,
        "settings": settings,
    }
    if before is not None and before.point is not point and _topology(before.point) != topology:
        shown["topology_base"] = _topology(before.point)
    return shown


#: The topology fields whose sameness makes an added and a removed run one run that changed.
_SAME_SCENARIO = ("scenario", "isl", "osl")


def paired(added: list[Run], removed: list[Run]) -> dict[int, Run]:
    """For each added run (by id) the removed run it replaces: the one of its concurrency and
    sequence lengths whose topology differs from it in exactly one field, when there is exactly one
    such run and it pairs with no other added run."""
    candidates: dict[int, list[Run]] = {}
    for new in added:
        mine = _topology(new.point)
        for old in removed:
            theirs = _topology(old.point)
            if old.concurrency != new.concurrency or any(mine[f] != theirs[f] for f in _SAME_SCENARIO):
                continue
            if sum(mine[f] != theirs[f] for f in mine) == 1:
                candidates.setdefault(id(new), []).append(old)
    claimed = [id(old) for olds in candidates.values() for old in olds]
    return {
        new: olds[0] for new, olds in candidates.items() if len(olds) == 1 and claimed.count(id(olds[0])) == 1
    }


def key_changes(change: KeyChange) -> dict[str, Any]:
    """One key's runs, base against head (DESIGN.md §3 `changes`)."""
    pairs = paired(change.added, change.removed)
    before = {id(run): change.base_of(run) for run in change.changed + change.unchanged}
    before.update((id(run), old) for run in change.added if (old := pairs.get(id(run))) is not None)
    matched = [*change.changed, *change.unchanged, *(run for run in change.added if id(run) in pairs)]
    differ: dict[int, list[dict[str, Any]]] = {}
    if change.base is not None and change.head is not None:
        differ.update((id(run), []) for run in change.unchanged)  # the same settings: nothing to list
        for run in matched:
            if id(run) not in differ:
                differ[id(run)] = _differ(before[id(run)], run)
    common = _common(list(differ.values()))
    runs = []
    topologies: dict[int, dict[str, Any]] = {}
    for run in sorted(matched, key=lambda r: (r.concurrency, r.ident)):
        old = before[id(run)]
        own = [s for s in differ.get(id(run), []) if not _within(s, common)]
        status = "changed" if own or id(run) in pairs else "as-before"
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
    runs.sort(key=itemgetter("concurrency", "status"))
    view: dict[str, Any] = {"common": common, "runs": runs}
    if change.base is None and change.head is not None:  # a new key: what it runs, to name it by
        view["entry"] = _entry(change.head.raw)
    return view


#: The fields of a new key's entry the `changes` view names it by.
ENTRY_FIELDS = ("model", "precision", "runner", "framework", "image")


def _entry(raw: Any) -> dict[str, str]:
    """A new key's entry as its model, precision, runner, framework and image (those that are text)."""
    fields = raw if isinstance(raw, dict) else {}
    return {name: fields[name] for name in ENTRY_FIELDS if isinstance(fields.get(name), str)}


def _common(diffs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The settings that changed the same way at every run (none when fewer than two runs)."""
    if len(diffs) < 2:
        return []
    return [setting for setting in diffs[0] if all(_within(setting, other) for other in diffs[1:])]


def _within(setting: dict[str, Any], settings: list[dict[str, Any]]) -> bool:
    """Whether the same change (by value and type) is among `settings`."""
    return any(same(setting, other) for other in settings)


def plan(ctx: CheckContext) -> dict[str, Any]:
    """`changes` of the JSON report: every changed key, worked out once per review."""
    if "changes" not in ctx.memo:
        ctx.memo["changes"] = {c.key: key_changes(c) for c in ctx.diff.keys.values()}
    return ctx.memo["changes"]


def _dropped(override: Any, base: Any, path: str = "") -> list[tuple[str, list[Any]]]:
    """Lists of `base` that the override replaces, with the items it leaves out."""
    if not isinstance(override, dict) or not isinstance(base, dict):
        return []
    found = []
    for key, value in override.items():
        where = f"{path}.{key}" if path else str(key)
        old = base.get(key)
        if isinstance(value, list) and isinstance(old, list):
            gone = [item for item in old if item not in value]
            if gone:
                found.append((where, gone))
        else:
            found += _dropped(value, old, where)
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
        for path, gone in _dropped(override, base):
            line = variant.line_of(tuple(path.split(".")))
            out.append(
                finding(
                    CHECK,
                    Severity.WARNING,
                    "changes-list-dropped",
                    config_key=key,
                    file=recipe,
                    line=line,
                    variant=name,
                    path=path,
                    items=[schema.text(item) for item in gone],
                )
            )
    return out


def check(ctx: CheckContext) -> list[Finding]:
    """The list warnings, and one line counting the runs of all changed keys by status (the
    settings themselves are in the JSON report's `changes`)."""
    runs = [run for change in plan(ctx).values() for run in change["runs"]]
    if not runs:
        return _list_warnings(ctx)
    statuses = [run["status"] for run in runs]
    common = {s["path"] for change in plan(ctx).values() for s in change["common"]}
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
    return [*_list_warnings(ctx), summary]
