"""Which recipe variant serves which (point, concurrency): DESIGN.md §1 "Recipe" selectors.

A variant declares the points it serves through `benchmark.env` (`CONC`, `TP`, `KV_OFFLOADING`,
`SPEC_DECODING`) and the topology of its serving role (`roles.agg`, or the prefill worker). Only
what selects is compared: `CONC` (the client reads it), while `TP`, `KV_OFFLOADING` and
`SPEC_DECODING` only label results and select only among the variants of a bundle; a multinode
point's flat recipe, or the variant it names, is its one variant and its labels are compared as a
warning (`label_mismatches`, `chosen_by_name`). Only what a variant declares is compared, and a
variant without `CONC` serves every concurrency, except expert parallelism: a variant whose
serving role is stated serves the EP its engine would run with, which is 1 unless one of these
arguments says otherwise (as found on the real InferenceX recipes; `_` and `-` in names are the
same):
- `expert-parallel-size` / `ep-size` (SGLang, ATOM), `moe-expert-parallel-size` (TensorRT-LLM's
  `moe_expert_parallel_size`): that size.
- `enable-expert-parallel: true` (vLLM, ATOM): tensor-parallel size × data-parallel size, as
  vLLM sizes its expert group (the TP is the point's when the variant states none).
- SGLang's `moe-a2a-backend` `deepep`, `mooncake`, `mori`, `flashinfer` or `ascend_fuseep`, and
  its older `enable-deepep-moe: true` / `enable-ep-moe: true`: the tensor-parallel size, which
  SGLang then uses as its EP whatever `ep-size` says.
Likewise it serves DP attention only when `enable-dp-attention` is true or, without that flag, its
data-parallel size is above 1 (engines start without it). A variant that states no serving role
at all (e.g. the older dynamo recipes, whose workers live under `backend.*_config`) states no
topology and is compared on `benchmark.env` only.

vLLM's data parallelism multiplies its GPUs: InferenceX launches a `dp-attn` point of TP T as
`tensor-parallel-size 1`, `data-parallel-size T`, so a vLLM variant's `tensor-parallel-size` ×
`data-parallel-size` is the point's TP. SGLang and ATOM run data-parallel attention inside their
TP group, so their `tensor-parallel-size` is the point's TP.
"""

from __future__ import annotations

from typing import Any

from bot.model import schema
from bot.model.master import Point
from bot.model.recipe import DP_ARGS, EP_SIZE_ARGS, PARALLEL_ARGS, TP_ARGS, Recipe, Variant

# The work budget of a review: runs times the recipe variants each chooses among. Today's whole
# InferenceX matrix is about 2,100 runs and no real recipe has more than 18 variants; a PR over
# this budget is built to exhaust the review, so what it would cost more is not reviewed, and
# that blocks (DESIGN.md §2).
MAX_RUN_CHOICES = 2_000_000
# SGLang's all-to-all MoE backends after which its EP is its TP (`ServerArgs._handle_a2a_moe`), and
# its older flags that did the same.
EP_IS_TP_BACKENDS = ("deepep", "mooncake", "mori", "flashinfer", "ascend_fuseep")
EP_IS_TP_FLAGS = ("enable-deepep-moe", "enable-ep-moe")


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = value.strip() if isinstance(value, str) else ""
    if text.isdigit():  # no count has 30 digits; Python reads no more than 4,300
        return int(text) if len(text) <= 30 else None
    return None


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "1", "yes"))


def _first_int(args: dict[str, Any], names: tuple[str, ...]) -> int | None:
    """The first of `names` the arguments give, as an integer (None: none given, or not a number)."""
    for name in names:
        if name in args:
            return _int(args[name])
    return None


def _engine(variant: Variant) -> str:
    """The engine that serves the variant: `engine.type`, or `engine` itself when it is a name."""
    engine = variant.data.get("engine")
    if isinstance(engine, dict):
        engine = engine.get("type")
    return engine.strip().lower() if isinstance(engine, str) else ""


def expert_parallel(variant: Variant, point: Point) -> int | None:
    """The EP the engine of a variant with a serving role runs with (module docstring); None when
    a size it gives is not a number. The point is asked only for the TP a variant leaves to it."""
    args = variant.args
    tp = _first_int(args, TP_ARGS)
    if _forced_ep(args):
        return tp if tp is not None else point.tp
    if any(name in args for name in EP_SIZE_ARGS):
        return _first_int(args, EP_SIZE_ARGS)
    if _truthy(args.get("enable-expert-parallel")):
        return tp * (_first_int(args, DP_ARGS) or 1) if tp is not None else point.tp
    return 1


def dp_attention(variant: Variant) -> bool:
    """Whether the engine of a variant with a serving role runs data-parallel attention:
    `enable-dp-attention` when given, else a data-parallel size above 1 (vLLM's form of it)."""
    args = variant.args
    if "enable-dp-attention" in args:
        return _truthy(args["enable-dp-attention"])
    return (_first_int(args, DP_ARGS) or 1) > 1


def _forced_ep(args: dict[str, Any]) -> bool:
    """Whether SGLang sets its EP to its TP: an all-to-all MoE backend that does, or the older flags."""
    backend = args.get("moe-a2a-backend")
    if isinstance(backend, str) and backend.strip().lower() in EP_IS_TP_BACKENDS:
        return True
    return any(_truthy(args.get(name)) for name in EP_IS_TP_FLAGS)


def topology_matches(variant: Variant, point: Point) -> bool:
    """True when every topology value the variant's role states, and the EP and DP attention it
    serves, equal the point's."""
    return all(stated == wanted for stated, wanted in _topology(variant, point).values())


def _topology(variant: Variant, point: Point) -> dict[str, tuple[Any, int | bool]]:
    """(what the variant serves, what the point needs) for each topology value the variant states."""
    role = variant.role
    args = variant.args
    expected: dict[str, tuple[Any, int | bool]] = {}
    if "gpus" in role and not any(name in args for name in PARALLEL_ARGS):
        expected["gpus"] = (_int(role["gpus"]), point.gpus_per_worker)
    if any(name in args for name in TP_ARGS):
        tp = _first_int(args, TP_ARGS)
        if tp is not None and _engine(variant) == "vllm":
            tp *= _first_int(args, DP_ARGS) or 1
        expected["tp"] = (tp, point.tp)
    if role:
        expected["ep"] = (expert_parallel(variant, point), point.ep)
        expected["dp-attn"] = (dp_attention(variant), point.dp_attn)
    if "decode-context-parallel-size" in args:
        expected["dcp"] = (_int(args["decode-context-parallel-size"]), point.dcp)
    return expected


def ep_misses(recipe: Recipe, point: Point, concurrency: int) -> list[tuple[str, int]]:
    """The variants that would serve (point, concurrency) but for their expert parallelism, each
    with the EP it serves: why a point that names an EP finds no variant."""
    misses = []
    for variant in recipe.candidates(point.selector):
        if not env_matches(variant, point, concurrency, not chosen_by_name(recipe, point)):
            continue
        topology = _topology(variant, point)
        served, _ = topology.pop("ep", (None, None))
        if served is not None and served != point.ep and all(a == b for a, b in topology.values()):
            misses.append((variant.name, served))
    return misses


def env_matches(variant: Variant, point: Point, concurrency: int, labels_select: bool = True) -> bool:
    """True when every selector the variant's `benchmark.env` states equals the point's. `CONC`
    always selects (the client reads it); `TP`, `KV_OFFLOADING` and `SPEC_DECODING` only label the
    results and select only among the variants of a bundle (`labels_select`)."""
    env = variant.env
    if "CONC" in env and _int(env["CONC"]) != concurrency:
        return False
    return not labels_select or not label_mismatches(variant, point)


def label_mismatches(variant: Variant, point: Point) -> list[tuple[str, str, str]]:
    """The `benchmark.env` labels (`TP`, `KV_OFFLOADING`, `SPEC_DECODING`) that the variant states
    and that differ from the point's: (name, the variant's value, the point's)."""
    env = variant.env
    wanted = {
        "TP": schema.text(point.tp),
        "KV_OFFLOADING": point.kv_offloading,
        "SPEC_DECODING": point.spec_decoding,
    }
    found = []
    for name, value in wanted.items():
        if name not in env:
            continue
        stated = env[name]
        matches = _int(stated) == point.tp if name == "TP" else _word(stated) == value
        if not matches:
            found.append((name, schema.text(stated), value))
    return found


def chosen_by_name(recipe: Recipe, point: Point) -> bool:
    """Whether nothing but `CONC` selects among the variants a point may run: its recipe offers it
    one variant only (a flat recipe, its own single variant, or a variant the point names), and
    no script reads the labels of that variant. That is known of the multinode srt-slurm client,
    `benchmarks/multi_node/agentic_srt.sh`, which checks only `MODEL MODEL_PREFIX FRAMEWORK
    PRECISION CONC RESULT_FILENAME DURATION`; a single-node recipe's client is not read here, so
    its labels still select."""
    return point.multinode and (bool(point.selector) or not recipe.is_bundle)


#: The `benchmark.env` selectors, each with the point's value it is compared with.
ENV_SELECTORS = ("CONC", "TP", "KV_OFFLOADING", "SPEC_DECODING")
#: Variants and selectors a "no variant serves" finding names at most.
MISSES_SHOWN = 3


def mismatches(variant: Variant, point: Point, concurrency: int) -> list[tuple[str, Any, Any]]:
    """The selectors on which a variant fails (point, concurrency): each as (selector, what the
    variant states, what the point has); `benchmark.env` ones by their path
    (`benchmark.env.KV_OFFLOADING`), topology ones by the field (`tp`, `ep`, `gpus`, `dcp`, `dp-attn`)."""
    env = variant.env
    wanted = {
        "CONC": concurrency,
        "TP": point.tp,
        "KV_OFFLOADING": point.kv_offloading,
        "SPEC_DECODING": point.spec_decoding,
    }
    found: list[tuple[str, Any, Any]] = []
    for name in ENV_SELECTORS:
        if name not in env:
            continue
        stated = env[name]
        if _int(stated) != wanted[name] if name in ("CONC", "TP") else _word(stated) != wanted[name]:
            found.append((f"benchmark.env.{name}", stated, wanted[name]))
    found += [
        (name, stated, need) for name, (stated, need) in _topology(variant, point).items() if stated != need
    ]
    return found


def nearest_misses(recipe: Recipe, point: Point, concurrency: int) -> list[tuple[Any, ...]]:
    """Why no variant serves (point, concurrency): the variants that fail on the fewest selectors
    (at most MISSES_SHOWN), each failing selector as (variant, selector, stated, point's value), a
    record of fixed shape; the variant is None when the recipe has only the one."""
    candidates = recipe.candidates(point.selector)
    single = len(candidates) == 1
    scored = [(mismatches(v, point, concurrency), None if single else v.name) for v in candidates]
    scored = [(misses, name) for misses, name in scored if misses]
    if not scored:
        return []
    fewest = min(len(misses) for misses, _ in scored)
    return [
        (name, selector, stated, need)
        for misses, name in [pair for pair in scored if len(pair[0]) == fewest][:MISSES_SHOWN]
        for selector, stated, need in misses[:MISSES_SHOWN]
    ]


def _word(value: Any) -> str:
    """A selector's value as compared with the point's: its text, trimmed, in lower case."""
    return schema.text(value).strip().lower()


def select(recipe: Recipe, point: Point, concurrency: int) -> list[Variant]:
    """All candidate variants that serve (point, concurrency); exactly one is the healthy answer.
    Worked out once per recipe, selector, topology and concurrency (what it depends on): keys that
    alias one entry, and the checks, ask again for the same runs."""
    slot = (point.selector, point.multinode, point.topology, concurrency)
    if slot not in recipe.selected:
        labels_select = not chosen_by_name(recipe, point)
        recipe.selected[slot] = [
            v
            for v in recipe.candidates(point.selector)
            if env_matches(v, point, concurrency, labels_select) and topology_matches(v, point)
        ]
    return recipe.selected[slot]


def choices(recipe: Recipe | None, point: Point) -> int:
    """What selecting a variant for each of a point's runs costs: runs × variants compared."""
    return len(point.concurrencies) * max(1, len(recipe.candidates(point.selector)) if recipe else 1)
