"""Expert parallelism in recipe selection: a variant serves the EP its engine would run with (1
unless an argument says otherwise), and a `CONFIG_FILE=benchmarks/…` recipe must exist."""

from __future__ import annotations

import pytest

from bot.findings import Severity
from bot.model.layout import Layout
from bot.model.master import Point
from bot.model.recipe import parse_recipe
from bot.model.selection import select
from bot.output.messages import en, zh
from tests.conftest import MASTER, shared_or_skip

MINIMAX = "benchmarks/single_node/srt-slurm-recipes/minimaxm3/vllm/mi325x-fp8-mtp/agentic.yaml"
MINIMAX_KEY = """
minimaxm3-fp8-mi325x-vllm-agentic-mtp:
  image: vllm/vllm-openai-rocm:v0.27.1
  model: MiniMaxAI/MiniMax-M3-MXFP8
  model-prefix: minimaxm3
  runner: cluster:mi325x-amd
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.20
      search-space:
      - { tp: 8, ep: EP, spec-decoding: mtp, kv-offloading: none, conc-list: [16], srt-recipe: RECIPE }
""".replace("RECIPE", MINIMAX)


def _point(tp: int = 8, ep: int = 1, dp_attn: bool = False) -> Point:
    return Point("k", MASTER, 1, "agentic-coding", 0, 0, (1,), tp, ep=ep, dp_attn=dp_attn)


def _served(args: str, tp: int = 8, ep: int = 1, dp_attn: bool = False, engine: str = "sglang") -> list[str]:
    """The variants of a one-variant recipe whose role has these `args` that serve the point."""
    text = f"engine:\n  type: {engine}\nroles:\n  agg:\n    gpus: 8\n    args:\n"
    text += "".join(f"      {line}\n" for line in args.strip().splitlines())
    recipe = parse_recipe("r.yaml", text.encode())
    assert not recipe.problems
    return [v.name for v in select(recipe, _point(tp, ep, dp_attn), 1)]


def _serves_ep(args: str, tp: int = 8, engine: str = "sglang") -> list[int]:
    """The EP sizes (1, 2, 4, 8) at which the variant serves a TP `tp` point."""
    return [ep for ep in (1, 2, 4, 8) if _served(args, tp, ep, engine=engine)]


# --- the repros on the real minimaxm3-fp8-mi325x recipe --------------------------------


def _real_minimax():
    path = shared_or_skip("inferencex-e2e", MINIMAX)
    return path.read_text(encoding="utf-8"), parse_recipe(MINIMAX, path.read_bytes())


def test_real_minimax_recipe_serves_tep8_and_tp8_with_one_variant_each() -> None:
    _, recipe = _real_minimax()
    assert [v.name for v in select(recipe, _point(ep=8), 16)] == ["override_tep8_c16"]
    assert [v.name for v in select(recipe, _point(ep=1), 16)] == ["override_tp8_c16"]
    assert [v.name for v in select(recipe, _point(ep=4), 16)] == []


def _review_minimax(review_example, ep: int):
    text, _ = _real_minimax()
    key = MINIMAX_KEY.replace("ep: EP", f"ep: {ep}")
    report = review_example({MASTER: lambda master: master + key, MINIMAX: text})
    return [
        f
        for f in report.findings
        if f.check == "recipe-selection" and f.config_key == "minimaxm3-fp8-mi325x-vllm-agentic-mtp"
    ]


def test_publishing_the_tep8_point_selects_exactly_one_variant(review_example) -> None:
    """It used to block as "2 variants": `override_tp8_c16` (no EP argument) matched any EP."""
    findings = _review_minimax(review_example, ep=8)
    assert [f.message_id for f in findings] == ["selection-ok"]
    assert (findings[0].params["runs"], findings[0].params["variants"]) == (1, 1)


def test_an_ep4_point_is_served_by_no_variant(review_example) -> None:
    """It used to be served, silently, by the EP 1 variant `override_tp8_c16`."""
    findings = _review_minimax(review_example, ep=4)
    [none] = [f for f in findings if f.message_id == "selection-none-ep"]
    assert none.severity is Severity.BLOCKING and none.params["concurrency"] == 16
    assert "selection-ambiguous" not in {f.message_id for f in findings}
    # It says which EP the point needs and which each variant of that concurrency serves.
    assert none.params["served"] == [["override_tp8_c16", 1], ["override_tep8_c16", 8]]
    assert "The point needs EP 4; override_tp8_c16 serves EP 1, override_tep8_c16 serves EP 8" in en(none)
    assert "该点需要 EP 4，而 override_tp8_c16 对应 EP 1，override_tep8_c16 对应 EP 8" in zh(none)


def test_a_point_missed_for_another_reason_keeps_the_plain_message(review_example) -> None:
    """A concurrency no variant states is not an EP question: no EP is named."""
    text, _ = _real_minimax()
    key = MINIMAX_KEY.replace("ep: EP", "ep: 4").replace("conc-list: [16]", "conc-list: [20]")
    report = review_example({MASTER: lambda master: master + key, MINIMAX: text})
    [none] = [f for f in report.findings if f.message_id.startswith("selection-none")]
    assert none.message_id == "selection-none" and none.params["concurrency"] == 20


# --- each argument that states or implies EP (synthetic one-variant recipes) -------------------


def test_a_variant_without_an_ep_argument_serves_ep_1_only() -> None:
    assert _serves_ep("tensor-parallel-size: 8") == [1]
    assert _serves_ep("tensor-parallel-size: 8", engine="vllm") == [1]


@pytest.mark.parametrize("name", ["expert-parallel-size", "ep-size", "ep_size", "moe_expert_parallel_size"])
def test_an_ep_size_argument_states_the_ep(name: str) -> None:
    assert _serves_ep(f"tensor-parallel-size: 8\n{name}: 4") == [4]


def test_enable_expert_parallel_serves_tp_times_dp() -> None:
    assert _serves_ep("tensor-parallel-size: 8\nenable-expert-parallel: true", engine="vllm") == [8]
    assert _serves_ep("tensor-parallel-size: 4\nenable-expert-parallel: 'true'", tp=4, engine="vllm") == [4]
    assert _serves_ep("tensor-parallel-size: 8\nenable-expert-parallel: false", engine="vllm") == [1]
    # ATOM states its TP through `gpus` only: the EP is the point's TP.
    assert _serves_ep("enable-expert-parallel: true\nenable-dp-attention: false", engine="atom") == [8]


def test_vllm_data_parallelism_multiplies_the_tp() -> None:
    """InferenceX launches a vLLM DP-attention point of TP 8 as `-tp 1 -dp 8`: that is TP 8, and
    with expert parallelism EP 8."""
    dep = "tensor-parallel-size: 1\ndata-parallel-size: 8\nenable-expert-parallel: true"
    assert _served(dep, tp=8, ep=8, dp_attn=True, engine="vllm") == ["base"]
    assert _served(dep, tp=8, ep=1, dp_attn=True, engine="vllm") == []
    assert _served(dep, tp=1, ep=8, dp_attn=True, engine="vllm") == []
    dpa = "tensor-parallel-size: 1\ndata-parallel-size: 8"
    assert _served(dpa, tp=8, ep=1, dp_attn=True, engine="vllm") == ["base"]
    # SGLang runs DP attention inside its TP group: its tp-size is the point's TP.
    sglang = "tp-size: 8\ndp-size: 8\nenable-dp-attention: true"
    assert _served(sglang, tp=8, ep=1, dp_attn=True) == ["base"]


def test_a_variant_that_states_no_dp_attention_serves_points_without_it() -> None:
    assert _served("tensor-parallel-size: 8\ndata-parallel-size: 1", dp_attn=True) == []
    assert _served("tensor-parallel-size: 8\ndata-parallel-size: 1", dp_attn=False) == ["base"]


@pytest.mark.parametrize("backend", ["deepep", "mooncake", "mori", "flashinfer", "ascend_fuseep"])
def test_an_all_to_all_backend_makes_sglang_ep_its_tp(backend: str) -> None:
    assert _serves_ep(f"tp-size: 8\nmoe-a2a-backend: {backend}") == [8]
    # SGLang overrides a smaller ep-size with its TP under these backends.
    assert _serves_ep(f"tp-size: 4\nep-size: 1\nmoe-a2a-backend: {backend}", tp=4) == [4]


def test_other_moe_backends_leave_the_ep_to_the_arguments() -> None:
    assert _serves_ep("tp-size: 8\nmoe-a2a-backend: megamoe") == [1]
    assert _serves_ep("tp-size: 8\nexpert-parallel-size: 8\nmoe-a2a-backend: megamoe") == [8]
    assert _serves_ep("tp-size: 8\nmoe-a2a-backend: none") == [1]


@pytest.mark.parametrize("flag", ["enable-deepep-moe", "enable-ep-moe"])
def test_older_sglang_flags_make_the_ep_the_tp(flag: str) -> None:
    assert _serves_ep(f"tp-size: 8\n{flag}: true") == [8]
    assert _serves_ep(f"tp-size: 8\n{flag}: false") == [1]


def test_a_recipe_without_a_serving_role_states_no_ep() -> None:
    """The older dynamo recipes keep their workers under `backend.*_config`: no topology is read."""
    recipe = parse_recipe("r.yaml", b"backend:\n  type: trtllm\nbenchmark:\n  env:\n    CONC: '1'\n")
    assert [ep for ep in (1, 4, 8) if select(recipe, _point(ep=ep), 1)] == [1, 4, 8]


# --- a CONFIG_FILE recipe path from the repository root must exist --------------------------------

LEGACY_KEY = """
qwen3.5-fp4-gb200-sglang-agentic-mtp:
  image: lmsysorg/sglang:v0.5.14
  runner: cluster:mi355x-amds
  multinode: true
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - conc-list: [1]
        prefill: {num-worker: 1, tp: 2, ep: 2, additional-settings: ["CONFIG_FILE=PATH"]}
        decode: {num-worker: 1, tp: 2, ep: 2}
"""
TP2EP2 = "benchmarks/multi_node/srt-slurm-recipes/sglang/qwen3.5/gb200-fp4/agentic/agg-gb200-tp2ep2-mtp.yaml"
TP2EP2_TEXT = "name: a\nbenchmark:\n  env:\n    CONC: '1'\n"


def _legacy_findings(review_example, config_file: str):
    key = LEGACY_KEY.replace("PATH", config_file)
    report = review_example({MASTER: lambda master: master + key, TP2EP2: TP2EP2_TEXT})
    return [f for f in report.findings if f.config_key == "qwen3.5-fp4-gb200-sglang-agentic-mtp"]


def test_a_missing_config_file_path_from_the_root_is_blocking(review_example) -> None:
    """Real #2568's recipe with a typo (`tp2-ep2` for `tp2ep2`): the path is inside the repository,
    so its absence is the PR's error, not a recipe kept elsewhere."""
    typo = TP2EP2.replace("tp2ep2", "tp2-ep2")
    findings = _legacy_findings(review_example, typo)
    [missing] = [f for f in findings if f.message_id == "selection-recipe-missing"]
    assert missing.severity is Severity.BLOCKING and typo in en(missing) and typo in zh(missing)
    assert "selection-legacy-missing" not in {f.message_id for f in findings}


def test_the_same_path_spelled_right_is_found(review_example) -> None:
    findings = _legacy_findings(review_example, TP2EP2)
    assert {f.message_id for f in findings if f.check == "recipe-selection"} == {"selection-ok"}


def test_only_the_recipes_form_may_name_a_recipe_outside_the_repository(review_example) -> None:
    findings = _legacy_findings(review_example, "recipes/sglang/qwen3.5/gb200-fp4/agentic/absent.yaml")
    [outside] = [f for f in findings if f.message_id == "selection-legacy-missing"]
    assert outside.severity is Severity.UNVERIFIED
    assert "selection-recipe-missing" not in {f.message_id for f in findings}


def test_layout_tells_the_two_config_file_forms_apart() -> None:
    layout = Layout("inferencex-e2e/")
    assert layout.legacy_recipe_path(TP2EP2) == "inferencex-e2e/" + TP2EP2
    assert not layout.legacy_recipe_outside(TP2EP2)
    assert layout.legacy_recipe_path("recipes/sglang/a.yaml") == (
        "inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/sglang/a.yaml"
    )
    assert layout.legacy_recipe_outside("recipes/sglang/a.yaml")
