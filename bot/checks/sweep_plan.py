"""`sweep-plan`: which matrix points the PR will run, the canary, and the GPU-hours it costs."""

from __future__ import annotations

from typing import Any

from bot.checks.context import CheckContext
from bot.diff import KeyChange, Run
from bot.findings import Finding, Severity, finding

CHECK = "sweep-plan"


def _run_json(run: Run) -> dict[str, Any]:
    return {
        "concurrency": run.concurrency,
        "scenario": run.point.scenario,
        "tp": run.point.tp,
        "gpus": run.point.gpus,
        "line": run.point.line,
        "variant": run.variant.name if run.variant else None,
        "dram_utilization": str(run.point.utilization) if run.point.utilization is not None else None,
    }


def _key_plan(change: KeyChange, duration: int) -> dict[str, Any]:
    reruns = sorted(change.reruns, key=lambda r: (r.concurrency, r.point.line or 0))
    timed = [r for r in reruns if r.point.scenario == "agentic-coding"]
    gpu_seconds = sum(duration * r.point.gpus for r in timed)
    return {
        "reason": "image" if change.image_changed else "points",
        "added": sorted({r.concurrency for r in change.added}),
        "removed": sorted({r.concurrency for r in change.removed}),
        "changed": sorted({r.concurrency for r in change.changed}),
        "runs": [_run_json(r) for r in reruns],
        "canary": _run_json(reruns[0]) if reruns else None,
        "gpu_hours": round(gpu_seconds / 3600, 2),
        "untimed_runs": len(reruns) - len(timed),
    }


def plan(ctx: CheckContext) -> dict[str, Any]:
    """The JSON sweep plan: per changed key, and totals (computed once per review)."""
    if "sweep_plan" not in ctx.memo:
        ctx.memo["sweep_plan"] = _plan(ctx)
    return ctx.memo["sweep_plan"]


def _plan(ctx: CheckContext) -> dict[str, Any]:
    duration = ctx.settings.agentic_duration_s
    keys = {c.key: _key_plan(c, duration) for c in ctx.live_keys()}
    return {
        "duration_s": duration,
        "keys": keys,
        "total_runs": sum(len(k["runs"]) for k in keys.values()),
        "total_gpu_hours": round(sum(k["gpu_hours"] for k in keys.values()), 2),
    }


def check(ctx: CheckContext) -> list[Finding]:
    sweep = plan(ctx)
    out: list[Finding] = ctx.unreadable(CHECK)
    for key, entry in sweep["keys"].items():
        runs = entry["runs"]
        change = ctx.diff.keys[key]
        if not runs:
            out.append(
                finding(
                    CHECK,
                    Severity.INFO,
                    "sweep-key-nothing",
                    config_key=key,
                    key=key,
                    removed=entry["removed"],
                )
            )
            continue
        gpus = sorted({r["gpus"] for r in runs})
        out.append(
            finding(
                CHECK,
                Severity.INFO,
                "sweep-key-plan",
                config_key=key,
                file=change.file,
                line=change.line,
                key=key,
                count=len(runs),
                image=change.image_changed,
                canary=entry["canary"]["concurrency"],
                runs=[(r["concurrency"], r["variant"]) for r in runs],
                removed=entry["removed"],
                duration=sweep["duration_s"],
                gpus=gpus,
                gpu_hours=entry["gpu_hours"],
                untimed=entry["untimed_runs"],
            )
        )
    if not out:
        out.append(finding(CHECK, Severity.INFO, "sweep-nothing"))
    return out
