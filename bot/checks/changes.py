"""`changes` (info): what every run of a changed key really serves at base and at head.

A run's settings are the key's image, its point's own fields (the utilization block, the recipe
and the search-space fields other than the concurrencies) and the variant it selects, resolved
(`base` merged with the override, anchors and `<<:` resolved by then), flattened to dotted paths
(`benchmark.env.ATOM_MONO_ENABLE`); lists are values of their own, compared as lists. A serving
argument written as a JSON string is compared as what it holds
(`roles.agg.args.online_quant_config.exclude_layer`: a list). A setting
that changed the same way at every run that exists at both refs is shown once, as common; a run
whose only changes are the common ones is "as before". An override that replaces a list of
`base` and leaves out items `base` had is a warning: deep merge replaces lists, so those items
are gone from that variant (DESIGN.md §2 `changes`).
"""

from __future__ import annotations

import json
from typing import Any

from bot.checks.context import CheckContext
from bot.diff import KeyChange, Run
from bot.findings import Finding, Severity, finding
from bot.model.master import ConfigEntry, Point
from bot.model.recipe import Variant

CHECK = "changes"
_CONCURRENCY_FIELDS = ("conc-list", "conc-start", "conc-end")
_COMMON_SHOWN = 4  # settings a finding names; the JSON report has them all


_MAX_DEPTH = 32  # deeper mappings are compared whole
_MAX_JSON_CHARS = 4096  # longer JSON-looking strings are compared as text


def _structure(value: str) -> Any:
    """A serving argument written as JSON (`online_quant_config: '{"exclude_layer": [...]}'`,
    `cudagraph-capture-sizes: '[1,2]'`) as the mapping or list it holds, so that its parts and
    items are compared; the string itself when it is not one."""
    text = value.strip()
    if text[:1] not in ("{", "[") or len(text) > _MAX_JSON_CHARS:
        return value
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return value
    return parsed if isinstance(parsed, dict | list) else value


def _flatten(node: Any, path: str, into: dict[str, Any], depth: int = 0) -> None:
    if isinstance(node, str) and path:
        node = _structure(node)
    if isinstance(node, dict) and node and depth < _MAX_DEPTH:
        for key, value in node.items():
            _flatten(value, f"{path}.{key}" if path else str(key), into, depth + 1)
    elif path:
        into[path] = node


def settings_of(run: Run, entry: ConfigEntry) -> dict[str, Any]:
    """Everything one run is started with, as dotted path → value."""
    point = run.point
    found: dict[str, Any] = {"image": entry.image}
    if point.utilization is not None:
        found["dram-utilization"] = str(point.utilization)
    raw = point.raw if isinstance(point.raw, dict) else {}
    _flatten({k: v for k, v in raw.items() if k not in _CONCURRENCY_FIELDS}, "", found)
    if run.variant is not None:
        _flatten(run.variant.data, "", found)
    return found


def compare(base: dict[str, Any], head: dict[str, Any]) -> list[dict[str, Any]]:
    """The settings that differ, by path: `base`/`head` values (None where absent) and, for
    lists, the items added and removed."""
    differ = []
    for path in sorted(base.keys() | head.keys()):
        old, new = base.get(path), head.get(path)
        if old == new and (path in base) == (path in head):
            continue
        setting: dict[str, Any] = {"path": path, "base": old, "head": new}
        if isinstance(old, list) and isinstance(new, list):
            setting["added"] = [item for item in new if item not in old]
            setting["removed"] = [item for item in old if item not in new]
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
    status: str, run: Run, base: Variant | None, head: Variant | None, settings: list[dict[str, Any]]
) -> dict[str, Any]:
    """One run of the report: `run` gives its concurrency and topology, `base`/`head` the variant
    it selects at each ref (None where it does not exist or selects none)."""
    return {
        "concurrency": run.concurrency,
        "topology": _topology(run.point),
        "variant_base": base.name if base else None,
        "variant_head": head.name if head else None,
        "status": status,
        "settings": settings,
    }


def key_changes(change: KeyChange) -> dict[str, Any]:
    """One key's runs, base against head (DESIGN.md §3 `changes`)."""
    matched = change.changed + change.unchanged
    differ: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    if change.base is not None and change.head is not None:
        for run in matched:
            old = settings_of(change.before[run.ident], change.base)
            differ[run.ident] = compare(old, settings_of(run, change.head))
    common = _common(list(differ.values()))
    runs = []
    for run in sorted(matched, key=lambda r: (r.concurrency, r.ident)):
        own = [s for s in differ.get(run.ident, []) if s not in common]
        runs.append(
            _run("changed" if own else "as-before", run, change.before[run.ident].variant, run.variant, own)
        )
    runs += [_run("added", run, None, run.variant, []) for run in change.added]
    runs += [_run("removed", run, run.variant, None, []) for run in change.removed]
    runs.sort(key=lambda r: (r["concurrency"], r["status"]))
    return {"common": common, "runs": runs}


def _common(diffs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The settings that changed the same way at every run (none when fewer than two runs)."""
    if len(diffs) < 2:
        return []
    return [setting for setting in diffs[0] if all(setting in other for other in diffs[1:])]


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
        for run in change.added + change.changed + change.unchanged:
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
                    items=[str(item) for item in gone],
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
