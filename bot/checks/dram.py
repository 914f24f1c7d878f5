"""`dram`: host-DRAM budgets of KV-offload points agree with the formula and fit the node."""

from __future__ import annotations

import re
from collections import defaultdict
from decimal import Decimal
from typing import Any

from bot.checks.context import CheckContext
from bot.diff import KeyChange, Run
from bot.findings import Finding, Severity, finding, from_problem
from bot.model import schema
from bot.model.dram import Budget, budget
from bot.model.recipe import Variant
from bot.model.runners import Hardware, lookup, shape_problem

CHECK = "dram"
_MAX_DIGITS = 30  # digits of a pinned size read as a number; Python reads no more than 4,300


def _int_setting(variant: Variant, name: str) -> tuple[int | None, Any, int | None]:
    """(value as int or None, raw value, source line) of an env setting of the variant."""
    raw, path = variant.setting(name)
    line = variant.line_of(path) if path else None
    if raw is None:
        return None, None, line
    text = schema.text(raw).strip()
    if not text.isdigit() or len(text) > _MAX_DIGITS:  # no host has that many GB: not a pin to compare
        return None, raw, line
    return int(text), raw, line


def _suggestion(source: str | None, name: str, value: int) -> str | None:
    """The recipe line with its number replaced, for a GitHub suggestion block."""
    if source is None:
        return None
    # Only a value that is all digits (quoted or not, a comment after it) is rewritten: `'18x00'`
    # has no known fix.
    pattern = rf"({re.escape(name)}\s*:\s*(['\"]?))\d+(?=\2\s*(?:[#,}}]|$))"
    fixed, count = re.subn(pattern, rf"\g<1>{value}", source, count=1)
    return fixed if count else None


def _hardware(ctx: CheckContext, change: KeyChange) -> tuple[Hardware | None, list[Finding]]:
    runner = change.head.runner if change.head else None
    file = ctx.diff.layout.runners
    if ctx.diff.runners_problem is not None:
        return None, [from_problem(CHECK, Severity.BLOCKING, ctx.diff.runners_problem, change.key)]
    hardware = lookup(ctx.diff.runners, runner) if runner else None
    shape = shape_problem(ctx.diff.runners, runner) if runner and hardware is None else None
    if shape is not None:
        field_name, line = shape
        return None, [
            finding(
                CHECK,
                Severity.BLOCKING,
                "dram-runners-not-mapping",
                config_key=change.key,
                file=file,
                line=line,
                field=file if field_name == "runners.yaml" else field_name,
                runner=runner,
            )
        ]
    if hardware is None:
        return None, [
            finding(
                CHECK,
                Severity.BLOCKING,
                "dram-unknown-runner",
                **change.where,
                runner=runner or "—",
                runners=file,
            )
        ]
    missing = [
        n
        for n, v in (
            ("gpus-per-node", hardware.gpus_per_node),
            ("available-cpu-dram-mib", hardware.available_mib),
        )
        if not v
    ]
    if missing:
        return None, [
            finding(
                CHECK,
                Severity.BLOCKING,
                "dram-missing-hardware",
                config_key=change.key,
                file=file,
                line=hardware.line,
                runner=runner,
                fields=missing,
            )
        ]
    return hardware, []


def _check_run(run: Run, calc: Budget, recipe_path: str, lines: Any, key: str) -> list[Finding]:
    variant = run.variant
    assert variant is not None
    tp = run.point.tp
    out: list[Finding] = []
    pool = calc.per_rank(tp)
    total, raw_total, total_line = _int_setting(variant, "TOTAL_CPU_DRAM_GB")
    common = {"config_key": key, "file": recipe_path}
    if raw_total is not None and total != calc.total_gb:
        out.append(
            finding(
                CHECK,
                Severity.BLOCKING,
                "dram-total-mismatch",
                line=total_line,
                suggestion=_suggestion(lines(total_line), "TOTAL_CPU_DRAM_GB", calc.total_gb),
                **common,
                variant=variant.name,
                concurrency=run.concurrency,
                found=schema.text(raw_total),
                expected=calc.total_gb,
                **_calc_params(calc),
            )
        )
    lmcache, raw_lmcache, lm_line = _int_setting(variant, "LMCACHE_MAX_LOCAL_CPU_SIZE")
    if raw_lmcache is not None:
        if lmcache is None or lmcache * tp > calc.total_gb:
            out.append(
                finding(
                    CHECK,
                    Severity.BLOCKING,
                    "dram-pool-oversubscribed",
                    line=lm_line,
                    suggestion=_suggestion(lines(lm_line), "LMCACHE_MAX_LOCAL_CPU_SIZE", pool),
                    **common,
                    variant=variant.name,
                    found=schema.text(raw_lmcache),
                    tp=tp,
                    total=calc.total_gb,
                    expected=pool,
                )
            )
        elif lmcache < pool:
            out.append(
                finding(
                    CHECK,
                    Severity.INFO,
                    "dram-pool-under",
                    line=lm_line,
                    **common,
                    variant=variant.name,
                    found=lmcache,
                    expected=pool,
                )
            )
    state, raw_state, state_line = _int_setting(variant, "OFFLOAD_STATE_CPU_SIZE")
    cap = lmcache if lmcache is not None and lmcache * tp <= calc.total_gb else pool
    if raw_state is not None and (state is None or state > cap):
        out.append(
            finding(
                CHECK,
                Severity.BLOCKING,
                "dram-state-over-pool",
                line=state_line,
                **common,
                variant=variant.name,
                found=schema.text(raw_state),
                pool=cap,
            )
        )
    return out


def _calc_params(calc: Budget) -> dict[str, Any]:
    return {
        "available": calc.available_mib,
        "capped": calc.capped_mib,
        "utilization": str(calc.utilization),
        "gpus": calc.gpus,
        "gpus_per_node": calc.gpus_per_node,
        "total": calc.total_gb,
    }


def _key_findings(ctx: CheckContext, change: KeyChange) -> list[Finding]:
    runs = [
        r
        for r in change.head_runs
        if r.point.kv_offloading == "dram" and r.point.scenario == "agentic-coding"
    ]
    if not runs:
        return []
    hardware, out = _hardware(ctx, change)
    if hardware is None:
        return out
    assert hardware.gpus_per_node and hardware.available_mib
    blocks: dict[tuple[Decimal, int, int], list[Run]] = defaultdict(list)
    for run in runs:
        point = run.point
        gpus = (
            min(point.gpus_per_worker, hardware.gpus_per_node) if point.multinode else point.gpus_per_worker
        )
        if point.utilization is None:
            out.append(
                finding(
                    CHECK,
                    Severity.BLOCKING,
                    "dram-no-utilization",
                    **point.where,
                    concurrency=run.concurrency,
                )
            )
        elif point.multinode and (
            tiling := schema.worker_tiling(point.gpus_per_worker, hardware.gpus_per_node)
        ):
            out.append(
                finding(
                    CHECK,
                    Severity.BLOCKING,
                    tiling,
                    **point.where,
                    gpus=point.gpus_per_worker,
                    gpus_per_node=hardware.gpus_per_node,
                )
            )
        elif gpus > hardware.gpus_per_node:
            out.append(
                finding(
                    CHECK,
                    Severity.BLOCKING,
                    "dram-too-many-gpus",
                    **point.where,
                    gpus=gpus,
                    gpus_per_node=hardware.gpus_per_node,
                )
            )
        else:
            blocks[(point.utilization, gpus, point.tp)].append(run)
    budgets: list[Budget] = []
    for (utilization, gpus, tp), block in sorted(blocks.items()):
        calc = budget(hardware.available_mib, utilization, gpus, hardware.gpus_per_node)
        problems: list[Finding] = []
        pinned: list[int] = []
        for run in block:
            if run.variant is None:
                continue
            recipe = ctx.diff.recipes_head.get(run.point.recipe or "")
            lines = recipe.source_line if recipe else (lambda _line: None)
            problems += _check_run(run, calc, run.point.recipe or "", lines, change.key)
            if _int_setting(run.variant, "TOTAL_CPU_DRAM_GB")[1] is not None:
                pinned.append(run.concurrency)
        out += problems
        state = [
            s for s in (_int_setting(r.variant, "OFFLOAD_STATE_CPU_SIZE")[0] for r in block if r.variant) if s
        ]
        if not problems:
            out.append(
                finding(
                    CHECK,
                    Severity.VERIFIED,
                    "dram-block-ok",
                    config_key=change.key,
                    file=change.file,
                    line=block[0].point.line,
                    runner=change.head.runner if change.head else "",
                    concurrencies=sorted({r.concurrency for r in block}),
                    pinned=sorted(pinned),
                    per_rank=calc.per_rank(tp),
                    tp=tp,
                    state=max(state) if state else None,
                    **_calc_params(calc),
                )
            )
        budgets.append(calc)
    if budgets:
        out.append(_host_total(change.key, budgets))
    return out


def _host_total(key: str, budgets: list[Budget]) -> Finding:
    """One note per key: the node total its blocks' budgets imply (the same figure, give or take
    the rounding down, when the runner's record is right), each block's working listed."""
    hosts = [calc.host_total_gb for calc in budgets]
    blocks = [
        {
            "utilization": str(calc.utilization),
            "total": calc.total_gb,
            "gpus": calc.gpus,
            "gpus_per_node": calc.gpus_per_node,
        }
        for calc in budgets
    ]
    return finding(
        CHECK,
        Severity.INFO,
        "dram-host-total",
        config_key=key,
        key=key,
        low=min(hosts),
        high=max(hosts),
        blocks=blocks,
    )


def check(ctx: CheckContext) -> list[Finding]:
    out: list[Finding] = ctx.unreadable(CHECK)
    for change in ctx.live_keys():
        out += _key_findings(ctx, change)
    if not out:
        out.append(finding(CHECK, Severity.VERIFIED, "dram-nothing"))
    return out
