"""Which recipe variant serves which (point, concurrency): DESIGN.md §1 "Recipe" selectors.

A variant declares the points it serves through `benchmark.env` (`CONC`, `TP`, `KV_OFFLOADING`,
`SPEC_DECODING`) and the topology of its serving role. Only what a variant declares is compared;
a variant without `CONC` serves every concurrency.
"""

from __future__ import annotations

from typing import Any

from bot.model.master import Point
from bot.model.recipe import PARALLEL_ARGS, Recipe, Variant

# The work budget of a review: runs times the recipe variants each chooses among. Today's whole
# InferenceX matrix is about 2,100 runs and no real recipe has more than 18 variants; a PR over
# this budget is built to exhaust the review, so what it would cost more is not reviewed, and
# that blocks (DESIGN.md §2).
MAX_RUN_CHOICES = 2_000_000


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "1", "yes"))


def topology_matches(variant: Variant, point: Point) -> bool:
    """True when every topology value the variant's role states equals the point's."""
    role = variant.role
    args = variant.args
    expected: list[tuple[Any, int | bool]] = []
    if "gpus" in role and not any(name in args for name in PARALLEL_ARGS):
        expected.append((_int(role["gpus"]), point.gpus_per_worker))
    for name in ("tensor-parallel-size", "tp-size"):
        if name in args:
            expected.append((_int(args[name]), point.tp))
    ep_given = [args[n] for n in ("expert-parallel-size", "ep-size") if n in args]
    if ep_given:
        expected.append((_int(ep_given[0]), point.ep))
    elif "enable-expert-parallel" in args:
        expected.append((point.tp if _truthy(args["enable-expert-parallel"]) else 1, point.ep))
    if "decode-context-parallel-size" in args:
        expected.append((_int(args["decode-context-parallel-size"]), point.dcp))
    if "enable-dp-attention" in args:
        expected.append((_truthy(args["enable-dp-attention"]), point.dp_attn))
    elif (_int(args.get("data-parallel-size", args.get("dp-size"))) or 1) > 1:
        # Data parallelism above 1 states DP attention; a size of 1 is the default and states nothing.
        expected.append((True, point.dp_attn))
    return all(stated == wanted for stated, wanted in expected)


def env_matches(variant: Variant, point: Point, concurrency: int) -> bool:
    """True when every selector the variant's `benchmark.env` states equals the point's."""
    env = variant.env
    if "CONC" in env and _int(env["CONC"]) != concurrency:
        return False
    if "TP" in env and _int(env["TP"]) != point.tp:
        return False
    if "KV_OFFLOADING" in env and str(env["KV_OFFLOADING"]).strip().lower() != point.kv_offloading:
        return False
    return not ("SPEC_DECODING" in env and str(env["SPEC_DECODING"]).strip().lower() != point.spec_decoding)


def select(recipe: Recipe, point: Point, concurrency: int) -> list[Variant]:
    """All candidate variants that serve (point, concurrency); exactly one is the healthy answer."""
    return [
        v
        for v in recipe.candidates(point.selector)
        if env_matches(v, point, concurrency) and topology_matches(v, point)
    ]


def choices(recipe: Recipe | None, point: Point) -> int:
    """What selecting a variant for each of a point's runs costs: runs × variants compared."""
    return len(point.concurrencies) * max(1, len(recipe.candidates(point.selector)) if recipe else 1)
