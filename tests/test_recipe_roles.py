"""`recipe-option-twice` reads every role a recipe runs, not only the serving one: a disaggregated
recipe's `decode` role (and `prefill`, `agg`) passes its engine options on a command line too, so an
option given twice under two names there is run as srt-slurm passes it: its options sorted by name,
`_` read as `-`, false and null left out (`_config_to_cli_args`); the engine takes the last passed.

Real shape: srt-slurm recipes under `benchmarks/multi_node/srt-slurm-recipes/` keep each role's
options in `backend.<engine>_config.<prefill|decode|aggregated>` (386 of the 465 at #2707 are
prefill + decode, 57 aggregated); srt-slurm's 2.0 layout writes them as `roles.<role>.args`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.findings import Severity
from bot.local import LocalRequest, run_local
from bot.model.recipe import parse_recipe
from bot.output.messages import render
from tests.conftest import commit

KEY = "dsv4-fp4-gb200-dynamo-sglang"
RECIPE = (
    "benchmarks/multi_node/srt-slurm-recipes/sglang/deepseek-v4/8k1k/disagg-gb200-1p4d-dep8-tp8-10-c64.yaml"
)
PREFILL = "      tensor-parallel-size: 8\n      data-parallel-size: 8\n      expert-parallel-size: 8\n"
DECODE = "      tensor-parallel-size: 8\n      data-parallel-size:   1\n      expert-parallel-size: 1\n"


@pytest.fixture
def ix(runfiles_history: Path, tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "ix"
    subprocess.run(["git", "clone", "-q", str(runfiles_history), str(repo)], check=True)
    recipe = repo / RECIPE
    if not recipe.exists() or PREFILL not in recipe.read_text() or DECODE not in recipe.read_text():
        pytest.skip(f"{RECIPE} is not at this head as at #2707")
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    return repo, head.stdout.strip()


def test_a_real_disaggregated_recipe_warns_for_each_role_that_gives_an_option_twice(
    ix: tuple[Path, str],
) -> None:
    """The prefill role gains `dp_size: 4`, the decode role `tp-size: 16`: each is passed after the
    name the recipe had (`data-parallel-size` < `dp_size`, `tensor-parallel-size` < `tp-size`)."""
    repo, base = ix

    def edit(text: str) -> str:
        text = text.replace(PREFILL, PREFILL + "      dp_size: 4\n", 1)
        return text.replace(DECODE, DECODE + "      tp-size: 16\n", 1)

    report = run_local(LocalRequest(str(repo), base, commit(repo, {RECIPE: edit}), offline=True))[0]
    twice = {f.params["role"]: f for f in report.findings if f.message_id == "recipe-option-twice"}
    assert sorted(twice) == ["decode", "prefill"]
    decode, prefill = twice["decode"], twice["prefill"]
    assert (decode.severity, decode.file) == (Severity.WARNING, RECIPE)
    assert decode.params["where"] == "backend.sglang_config.decode"
    assert (decode.params["ignored"], decode.params["ignored_value"], decode.params["taken"]) == (
        "tensor-parallel-size",
        "8",
        "tp-size",
    )
    assert decode.line == decode.params["ignored_line"] + 3  # the added line, after the DP and EP ones
    assert (prefill.params["ignored"], prefill.params["taken"], prefill.params["taken_value"]) == (
        "data-parallel-size",
        "dp_size",
        "4",
    )
    assert not decode.params["matched"]  # selection does not read the older layout's roles
    for finding in (decode, prefill):
        en, zh = (render(finding.message_id, lang, finding.params) for lang in ("en", "zh"))
        assert f"{finding.params['role']} role (backend.sglang_config.{finding.params['role']})" in en
        assert "so the engine takes" in en and "and so does prbot" not in en
        assert f"{finding.params['role']} 角色" in zh and "因此引擎采用" in zh


def test_an_unchanged_disaggregated_recipe_gives_no_option_twice(ix: tuple[Path, str]) -> None:
    """The control: the same review without the second names says nothing of the kind."""
    repo, base = ix
    edit = {RECIPE: lambda text: text.replace(DECODE, DECODE.replace("8\n", "8\n      # TP8 decode\n", 1), 1)}
    report = run_local(LocalRequest(str(repo), base, commit(repo, edit), offline=True))[0]
    assert not [f for f in report.findings if f.message_id == "recipe-option-twice"]


# A 2.0 disaggregated recipe (srt-slurm's `roles:` layout), shaped as InferenceX's: the serving role
# is `prefill`; `decode` gives its TP twice, once per spelling, and its MTP flag once as false.
ROLES = """\
schema: 2
name: dsv4-fp4-gb300-sglang-disagg-1p2d
engine: sglang
roles:
  prefill:
    nodes: 2
    workers: 1
    gpus: 8
    args:
      tensor-parallel-size: 8
      data-parallel-size: 8
      enable-dp-attention: true
      disaggregation-mode: prefill
  decode:
    nodes: 4
    workers: 2
    gpus: 8
    args:
      tp_size: 8
      tensor-parallel-size: 16
      enable-dp-attention: true
      enable_dp_attention: false
      disaggregation-mode: decode
benchmark:
  env:
    CONC: "64"
"""


def test_a_roles_recipe_names_the_decode_role_and_what_the_engine_takes() -> None:
    recipe = parse_recipe("agentic.yaml", ROLES.encode())
    found = sorted((p.params["ignored"], p.params["taken"], p.params["taken_value"]) for p in recipe.notices)
    # `tensor-parallel-size` < `tp_size`: TP 8 is passed last; `enable_dp_attention: false` passes no
    # flag, so `--enable-dp-attention` stands.
    assert found == [
        ("enable_dp_attention", "enable-dp-attention", "True"),
        ("tensor-parallel-size", "tp_size", "8"),
    ]
    assert {p.params["role"] for p in recipe.notices} == {"decode"}
    assert {p.params["where"] for p in recipe.notices} == {"roles.decode.args"}
    assert not any(p.params["matched"] for p in recipe.notices)  # prefill is the role selection reads
    lines = {p.params["ignored"]: p.params["ignored_line"] for p in recipe.notices}
    assert lines == {"tensor-parallel-size": 20, "enable_dp_attention": 22}


def test_the_serving_role_twice_is_what_selection_reads() -> None:
    text = ROLES.replace(
        "      data-parallel-size: 8\n", "      data-parallel-size: 8\n      tp-size: 4\n", 1
    )
    recipe = parse_recipe("agentic.yaml", text.encode())
    (prefill,) = [p for p in recipe.notices if p.params["role"] == "prefill"]
    assert (prefill.params["taken"], prefill.params["matched"]) == ("tp-size", True)
    assert (
        recipe.variants["base"].args["tp-size"] == 4
        and "tensor-parallel-size" not in recipe.variants["base"].args
    )


def test_a_tensorrt_llm_recipe_is_a_configuration_file_not_a_command_line() -> None:
    """TensorRT-LLM's roles are written to a configuration file: no command line to take the last of."""
    text = ROLES.replace("engine: sglang", "engine: trtllm")
    assert parse_recipe("agentic.yaml", text.encode()).notices == []
