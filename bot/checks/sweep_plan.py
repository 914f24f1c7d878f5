"""`sweep-plan`: what InferenceX's sweep will run for this PR, as its `process_changelog.py`
computes it (DESIGN.md §2): every key named by an appended changelog entry, with its whole head
matrix (restricted to the entry's `scenario-type`, each key and scenario once), only the new
points for `append-only` entries, no throughput runs for `evals-only` / `all-evals`, the lowest
concurrency per parallelism config under the trimming label, and eval jobs counted apart. Also
which of those runs the PR changed, and the GPU-hours they cost."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from bot.checks import runlabels, sweep_matrix
from bot.checks.context import CheckContext
from bot.checks.sweep_matrix import Row
from bot.checks.sweep_rules import (
    appended,
    generated,
    generated_ident,
    generated_row,
    keys_named,
    primary_labels,
    sweep_start,
)
from bot.diff import KeyChange, run_ident, whole_ident
from bot.findings import Finding, Severity, finding
from bot.model.changelog import SCENARIO_TYPES, Entry
from bot.model.master import ConfigEntry, Point

CHECK = "sweep-plan"
# The runs a plan lists, throughput and eval rows alike (each costs memory and a place in the JSON
# report): a full sweep of today's whole InferenceX matrix is about 2,100. Past it, a changelog
# entry names so many runs (say, a wildcard over keys that alias one entry) that the plan blocks.
MAX_PLAN_RUNS = 40_000


def _changed_idents(change: KeyChange | None) -> set[Any] | None:
    """The runs of a key the PR added or changed, by their whole identity (`whole_ident`, as the
    diff pairs them), or None: all of them, e.g. a new image."""
    if change is None:
        return set()
    if (
        change.base is None
        or change.image_changed
        or (change.needs_entry and not (change.added or change.changed))
    ):
        return None
    return {whole_ident(run.point, run.concurrency) for run in change.added + change.changed}


def _variants(change: KeyChange | None) -> dict[Any, str | None]:
    if change is None:
        return {}
    return {
        whole_ident(run.point, run.concurrency): run.variant.name if run.variant else None
        for run in change.added + change.changed + change.unchanged
    }


def _run_json(
    row: Row, conc: int, changed: set[Any] | None, variants: dict[Any, str | None]
) -> dict[str, Any]:
    point = row.point
    # Worked out only for a key the diff has runs of (a key only swept has none, and may have many).
    ident = whole_ident(point, conc) if changed or variants else None
    return {
        "concurrency": conc,
        "scenario": point.scenario,
        "tp": point.tp,
        "gpus": point.gpus,
        "line": point.line,
        "variant": variants.get(ident),
        "dram_utilization": str(point.utilization) if point.utilization is not None else None,
        "changed": changed is None or ident in changed,
    }


class _Selection:
    """The rows of each key, gathered entry by entry as upstream does, while the budget lasts
    (`MAX_PLAN_RUNS`: the keys past it are `omitted`)."""

    def __init__(self) -> None:
        self.throughput: dict[str, list[Row]] = defaultdict(list)
        self.evals: dict[str, list[tuple[Row, int | None]]] = defaultdict(list)
        self.scenarios: dict[str, list[str]] = defaultdict(list)
        self.append_only: set[str] = set()
        self.omitted: dict[str, None] = {}
        self.runs = {False: 0, True: 0}  # the runs planned, and those an eval job is chosen among

    def afford(self, key: str, config: ConfigEntry, scenarios: tuple[str, ...], evals: bool = False) -> bool:
        """Whether the key's runs in these scenario types fit the budget (then they are counted)."""
        runs = sum(len(p.concurrencies) for p in config.points if p.scenario in scenarios)
        if self.runs[evals] + runs > MAX_PLAN_RUNS:
            self.omitted[key] = None
            return False
        self.runs[evals] += runs
        return True


def swept(ctx: CheckContext) -> dict[str, set[tuple[Any, ...]]]:
    """The runs, by identity, that the appended entries themselves make the sweep measure, per key
    (its throughput runs: whatever the labels, which change from run to run of the workflow)."""
    if "swept" not in ctx.memo:
        chosen = _select(ctx, False, set())
        ctx.memo["swept"] = {
            key: {run_ident(row.point, conc) for row in rows for conc in row.concurrencies}
            for key, rows in chosen.throughput.items()
        }
    return ctx.memo["swept"]


def _select(ctx: CheckContext, trimmed: bool, labels: set[str] | None = None) -> _Selection:
    diff = ctx.diff
    labels = set(ctx.pr.labels) if labels is None else labels
    evals_only_label, all_evals_label = "evals-only" in labels, "all-evals" in labels
    chosen = _Selection()
    seen_runs: dict[str, set[str]] = defaultdict(set)
    seen_evals: dict[str, set[str]] = defaultdict(set)
    # Upstream takes the entries asking for all evals first, so that their wider eval set wins.
    for entry in sorted(appended(diff), key=lambda e: not e.flag("all-evals")):
        scenarios = _scenarios(entry)
        found = {key: diff.head_entry(key) for key in keys_named(diff, entry)}
        keys = {key: config for key, config in found.items() if config is not None}
        if not (evals_only_label or entry.flag("evals-only") or entry.flag("all-evals")):
            for key, config in keys.items():
                unseen = tuple(s for s in SCENARIO_TYPES if s in scenarios and s not in seen_runs[key])
                seen_runs[key].update(unseen)
                if not chosen.afford(key, config, unseen):
                    continue
                matrix = sweep_matrix.rows(key, config, unseen)
                if entry.flag("append-only"):
                    chosen.append_only.add(key)
                    matrix = _new_points(matrix, diff.keys.get(key))
                chosen.throughput[key] += sweep_matrix.trim(matrix) if trimmed else matrix
                chosen.scenarios[key] += [s for s in unseen if s not in chosen.scenarios[key]]
        if entry.flag("append-only"):
            continue
        groups: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for key in keys:
            unseen = tuple(s for s in SCENARIO_TYPES if s in scenarios and s not in seen_evals[key])
            if unseen and chosen.afford(key, keys[key], unseen, evals=True):
                seen_evals[key].update(unseen)
                groups[unseen].append(key)
        for unseen, group in groups.items():
            matrix = [row for key in group for row in sweep_matrix.rows(key, keys[key], unseen)]
            picked = sweep_matrix.eval_rows(matrix, all_evals=all_evals_label or entry.flag("all-evals"))
            minimum = entry.get("eval-min-prefill-ep")
            for row, conc in sweep_matrix.min_prefill_ep(
                picked, minimum if isinstance(minimum, int) else None
            ):
                chosen.evals[row.key].append((row, conc))
    return chosen


def _scenarios(entry: Entry) -> tuple[str, ...]:
    wanted = entry.get("scenario-type")
    return tuple(wanted) if isinstance(wanted, list) and wanted else SCENARIO_TYPES


def _new_points(matrix: list[Row], change: KeyChange | None) -> list[Row]:
    """`append-only`: only the runs the base did not generate, each once (a concurrency listed
    twice, `[4, 8, 8]`, runs once, as `process_changelog.py` emits it). Runs are told apart by
    every field of their generated row (`generated_ident`): a point copied with another
    `kv-p2p-transfer` is a new run."""
    old = generated(change.base, set(SCENARIO_TYPES)) if change is not None else set()
    emitted: set[Any] = set()
    generated_rows: dict[int, tuple[Any, ...]] = {}  # per point
    out = []
    for row in matrix:
        if id(row.point) not in generated_rows:
            generated_rows[id(row.point)] = generated_row(row.entry, row.point)
        concs = []
        for conc in row.concurrencies:
            ident = generated_ident(generated_rows[id(row.point)], row.point, conc)
            if ident not in old and ident not in emitted:
                emitted.add(ident)
                concs.append(conc)
        if concs:
            out.append(row._replace(concurrencies=tuple(concs)))
    return out


def _key_plan(
    ctx: CheckContext, key: str, chosen: _Selection, duration: int
) -> tuple[dict[str, Any], Point | None]:
    """The key's JSON plan, and the point of its canary (the first run)."""
    change = ctx.diff.keys.get(key)
    changed, variants = _changed_idents(change), _variants(change)
    jobs = chosen.throughput.get(key, [])
    ordered = sorted(
        ((_run_json(row, conc, changed, variants), row.point) for row in jobs for conc in row.concurrencies),
        key=lambda pair: (pair[0]["concurrency"], pair[0]["line"] or 0),
    )
    runs = [run for run, _ in ordered]
    timed = [r for r in runs if r["scenario"] == "agentic-coding"]
    gpu_seconds = sum(duration * r["gpus"] for r in timed)
    plan = {
        "scenarios": chosen.scenarios.get(key, []),
        "append_only": key in chosen.append_only,
        "jobs": len(jobs),
        "runs": runs,
        "eval_jobs": len(chosen.evals.get(key, [])),
        "changed": sorted({r["concurrency"] for r in runs if r["changed"]}),
        "added": sorted({r.concurrency for r in change.added}) if change else [],
        "removed": sorted({r.concurrency for r in change.removed}) if change else [],
        "canary": runs[0] if runs else None,
        "gpu_hours": round(_hours(gpu_seconds), 2),
        "untimed_runs": len(runs) - len(timed),
    }
    return plan, ordered[0][1] if ordered else None


def _hours(seconds: int | float) -> int | float:
    """GPU-seconds as hours; whole hours when they are too many for a float (a PR can write a GPU
    count of thousands of digits)."""
    try:
        return seconds / 3600
    except OverflowError:
        return int(seconds) // 3600


def _total(hours: list[int | float]) -> int | float:
    """GPU-hours added up, to two decimals; whole hours when one is too many for a float."""
    try:
        return round(sum(hours), 2)
    except OverflowError:
        return sum(int(h) for h in hours)


def plan(ctx: CheckContext) -> dict[str, Any]:
    """The JSON sweep plan (computed once per review)."""
    if "sweep_plan" not in ctx.memo:
        ctx.memo["sweep_plan"], ctx.memo["sweep_canaries"] = _plan(ctx)
    return ctx.memo["sweep_plan"]


def _canaries(ctx: CheckContext) -> dict[str, Point | None]:
    """The point of each key's canary run (worked out with the plan)."""
    plan(ctx)
    return ctx.memo["sweep_canaries"]


def _plan(ctx: CheckContext) -> tuple[dict[str, Any], dict[str, Point | None]]:
    duration = ctx.settings.agentic_duration_s
    start = sweep_start(ctx)
    trimmed = primary_labels(ctx) == [ctx.settings.trim_label]
    chosen = _select(ctx, trimmed)
    ctx.memo["sweep_omitted"] = list(chosen.omitted)
    named = [
        key
        for key in dict.fromkeys([*chosen.throughput, *chosen.evals])
        if chosen.throughput[key] or chosen.evals[key]
    ]
    plans = {key: _key_plan(ctx, key, chosen, duration) for key in named}
    keys = {key: key_plan for key, (key_plan, _) in plans.items()}
    return {
        "starts": start.runs,
        "reason": start.reason or None,
        "label": start.label,
        "trimmed": trimmed,
        "duration_s": duration,
        "keys": keys,
        "total_runs": sum(len(k["runs"]) for k in keys.values()),
        "total_jobs": sum(k["jobs"] for k in keys.values()),
        "total_eval_jobs": sum(k["eval_jobs"] for k in keys.values()),
        "total_gpu_hours": _total([k["gpu_hours"] for k in keys.values()]),
    }, {key: canary for key, (_, canary) in plans.items()}


def shown_hours(hours: float) -> int | float:
    """GPU-hours as a reader wants them: whole hours without `.0`, one decimal from one hour up,
    two below (a 5-minute run on one GPU is 0.08, not 0)."""
    value = round(hours, 1 if hours >= 1 else 2)
    return int(value) if value == int(value) else value


def _cost(runs: list[dict[str, Any]], duration: int) -> dict[str, Any]:
    """What the GPU-hours of some runs are made of: the agentic runs with GPUs are timed (`gpus`:
    [GPUs per run, runs] for each GPU count, so the sum can be written out); a fixed-seq-len run
    has no set duration and a run without GPUs no count, so theirs are unknown."""
    agentic = [r for r in runs if r["scenario"] == "agentic-coding"]
    timed = [r for r in agentic if r["gpus"] > 0]
    hours = _hours(sum(duration * r["gpus"] for r in timed))
    return {
        "timed": len(timed),
        "untimed": len(runs) - len(agentic),
        "no_gpus": len(agentic) - len(timed),
        "gpus": [(gpus, runs) for gpus, runs in sorted(Counter(r["gpus"] for r in timed).items())],
        "gpu_hours": shown_hours(hours) if timed else None,
    }


def _canary_topology(ctx: CheckContext, key: str, concurrency: int) -> str | None:
    """The canary's topology when other runs of the key, at the head or removed, share its
    concurrency: then `canary C20` and a removed C20 are told apart."""
    canary = _canaries(ctx).get(key)
    if canary is None:
        return None
    entry, change = ctx.diff.head_entry(key), ctx.diff.keys.get(key)
    others = [(p, c) for p in (entry.points if entry else ()) for c in p.concurrencies]
    others += [(r.point, r.concurrency) for r in (change.removed if change else ())]
    return runlabels.label(canary, concurrency, others)


def _key_finding(ctx: CheckContext, key: str, entry: dict[str, Any], duration: int) -> Finding:
    runs = entry["runs"]
    change = ctx.diff.keys.get(key)
    where = {"file": change.file, "line": change.line} if change else {}
    canary = runs[0]["concurrency"] if runs else None
    return finding(
        CHECK,
        Severity.INFO,
        "sweep-key-plan",
        config_key=key,
        **where,
        key=key,
        count=len(runs),
        changed=len([r for r in runs if r["changed"]]),
        evals=entry["eval_jobs"],
        canary=canary,
        canary_topology=_canary_topology(ctx, key, canary) if canary is not None else None,
        removed=len(change.removed) if change else 0,
        duration=duration,
        append_only=entry["append_only"],
        **_cost(runs, duration),
    )


def check(ctx: CheckContext) -> list[Finding]:
    sweep = plan(ctx)
    out: list[Finding] = ctx.unreadable(CHECK)
    if not appended(ctx.diff):
        return [*out, finding(CHECK, Severity.INFO, "sweep-nothing")]
    omitted = ctx.memo["sweep_omitted"]
    if omitted:
        changelog = ctx.diff.layout.changelog
        params = {"count": len(omitted), "keys": omitted[:10], "limit": MAX_PLAN_RUNS, "path": changelog}
        out.append(finding(CHECK, Severity.BLOCKING, "sweep-plan-too-large", file=changelog, **params))
    duration = sweep["duration_s"]
    for key, entry in sweep["keys"].items():
        out.append(_key_finding(ctx, key, entry, duration))
    every_run = [run for entry in sweep["keys"].values() for run in entry["runs"]]
    out.append(
        finding(
            CHECK,
            Severity.INFO,
            "sweep-total",
            runs=sweep["total_runs"],
            jobs=sweep["total_jobs"],
            evals=sweep["total_eval_jobs"],
            starts=sweep["starts"],
            reason=sweep["reason"] or "",
            trimmed=sweep["trimmed"],
            duration=duration,
            **_cost(every_run, duration),
        )
    )
    return out
