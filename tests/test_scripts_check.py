"""The `scripts` check: InferenceX's reviewer rules on the scripts a PR adds or changes.

Recall: a defect seeded into a copy of a real InferenceX script (from the runfiles history bundle;
skipped when absent) is found, at its line. Precision: the real scripts themselves, and variants
real scripts use (`--dsv4` clients, arrays of flags, EP strings built in branches), raise nothing;
a script the PR does not touch raises nothing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.checks import scripts
from bot.findings import Severity
from bot.local import LocalRequest, run_local
from bot.pullrequest import PullRequest
from tests.conftest import commit, squash_merge

FSL = "benchmarks/single_node/fixed_seq_len/"
ATOM_MTP = FSL + "dsr1_fp4_mi355x_atom_mtp.sh"  # EP string built in a branch, `--use-chat-template`
VLLM_DSV4 = FSL + "dsv4_fp4_b200_vllm_mtp.sh"  # EP_ARGS array, `--dsv4` client
SGLANG = FSL + "qwen3.5_fp8_h200.sh"  # `--expert-parallel-size "$EP_SIZE"`
LAUNCHER = "runners/launch_b200-cw.sh"  # `enroot import` inside `srun … bash -c "…"`
REAL = (ATOM_MTP, VLLM_DSV4, SGLANG, LAUNCHER)


@pytest.fixture(scope="session")
def runfiles(runfiles_checkout: Path) -> Path:
    """The real InferenceX scripts and configs (`conftest.runfiles_checkout`)."""
    return runfiles_checkout


def _real(runfiles: Path, path: str) -> str:
    return (runfiles / path).read_text(encoding="utf-8")


def _repo(tmp_path: Path, files: dict[str, str]) -> tuple[Path, str]:
    repo = tmp_path / "ix"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    return repo, commit(repo, files, "base")


def _review(repo: Path, base: str, head: str, **request: object) -> list:
    report, _, _ = run_local(LocalRequest(str(repo), base, head, offline=True, **request))
    return [f for f in report.findings if f.check == "scripts"]


def _said(found: list) -> list[tuple[str, str, str | None, int | None]]:
    """What the check said, less the lines every local review has (merge conflicts not known
    locally, and the summary)."""
    quiet = ("scripts-conflicts-local", "scripts-ok")
    return [(f.severity.value, f.message_id, f.file, f.line) for f in found if f.message_id not in quiet]


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_real_scripts_added_break_no_rule_but_one(tmp_path: Path, runfiles: Path) -> None:
    """Four real scripts added by a PR: all rules hold, except that the dsv4 vLLM script starts its
    launch command with three options on one line, which the formatting rule names (a warning)."""
    files = {path: _real(runfiles, path) for path in REAL}
    repo, base = _repo(tmp_path, {p: "#!/usr/bin/env bash\n" for p in REAL})
    head = commit(repo, files)
    found = _review(repo, base, head)
    line = _line_of(files[VLLM_DSV4], 'vllm serve "$MODEL" --host 0.0.0.0 --port "$PORT"')
    assert _said(found) == [("warning", "scripts-one-per-line", VLLM_DSV4, line)]
    (warn,) = [f for f in found if f.message_id == "scripts-one-per-line"]
    assert warn.params["flags"] == ["--host", "--port"]


def _seeded(tmp_path: Path, runfiles: Path, path: str, edit) -> tuple[list, str]:
    text = _real(runfiles, path)
    repo, base = _repo(tmp_path, {path: text})
    seeded = edit(text)
    assert seeded != text
    return _review(repo, base, commit(repo, {path: seeded})), seeded


def test_mtp_script_without_chat_template_blocks_with_the_fix(tmp_path: Path, runfiles: Path) -> None:
    found, text = _seeded(
        tmp_path, runfiles, ATOM_MTP, lambda t: t.replace(" \\\n    --use-chat-template", "")
    )
    last = _line_of(text, "--result-dir /workspace/")
    assert _said(found) == [("blocking", "scripts-chat-template", ATOM_MTP, last)]
    (block,) = [f for f in found if f.message_id == "scripts-chat-template"]
    assert block.suggestion == "    --result-dir /workspace/ \\\n    --use-chat-template"
    assert block.params["call"] == _line_of(text, "run_benchmark_serving \\")


def test_dsv4_client_counts_as_chat_template_and_its_removal_blocks(tmp_path: Path, runfiles: Path) -> None:
    found, _ = _seeded(tmp_path, runfiles, VLLM_DSV4, lambda t: t.replace(" \\\n    --dsv4", ""))
    assert [f[1] for f in _said(found)] == ["scripts-chat-template"]


def test_client_flags_from_a_variable_the_script_never_sets_are_not_checked(tmp_path: Path) -> None:
    path = FSL + "x_fp8_h200_mtp.sh"
    repo, base = _repo(tmp_path, {path: "#!/usr/bin/env bash\n"})
    head = commit(
        repo, {path: 'run_benchmark_serving --model "$MODEL" --trust-remote-code $EXTRA_CLIENT_ARGS\n'}
    )
    assert _said(_review(repo, base, head)) == [("unverified", "scripts-chat-template-unknown", path, 1)]
    # the value of an option is not a flag: `--model $MODEL` alone is decided
    head = commit(repo, {path: "run_benchmark_serving --model $MODEL\n"})
    assert [f[1] for f in _said(_review(repo, base, head))] == ["scripts-chat-template"]


def test_hard_coded_expert_parallel_warns_and_the_branch_pattern_does_not(
    tmp_path: Path, runfiles: Path
) -> None:
    found, text = _seeded(
        tmp_path,
        runfiles,
        ATOM_MTP,
        lambda t: t.replace("$CALCULATED_MAX_MODEL_LEN $EP", "--enable-expert-parallel"),
    )
    assert _said(found) == [
        ("warning", "scripts-ep-hardcoded", ATOM_MTP, _line_of(text, "fp8 --enable-expert"))
    ]


def test_ep_in_the_dp_attention_branch_only_warns(tmp_path: Path, runfiles: Path) -> None:
    """EP enabled under `DP_ATTENTION` without reading `EP_SIZE` (a shape real scripts had)."""

    def edit(text: str) -> str:
        return text.replace('if [ "${EP_SIZE:-1}" -gt 1 ]; then', 'if [ "$DP_ATTENTION" = "true" ]; then', 1)

    found, text = _seeded(tmp_path, runfiles, VLLM_DSV4, edit)
    assert _said(found) == [
        ("warning", "scripts-ep-hardcoded", VLLM_DSV4, _line_of(text, "EP_ARGS=(--enable"))
    ]


def test_sglang_with_the_vllm_flag_warns(tmp_path: Path, runfiles: Path) -> None:
    found, _ = _seeded(
        tmp_path,
        runfiles,
        SGLANG,
        lambda t: t.replace('--expert-parallel-size "$EP_SIZE"', "--enable-expert-parallel"),
    )
    assert [f[1] for f in _said(found)] == ["scripts-ep-sglang"]


def test_two_arguments_on_one_line_of_a_launch_command_warn(tmp_path: Path, runfiles: Path) -> None:
    found, text = _seeded(
        tmp_path,
        runfiles,
        SGLANG,
        lambda t: t.replace('--host 0.0.0.0 \\\n  --port "$PORT"', '--host 0.0.0.0 --port "$PORT"'),
    )
    assert _said(found) == [
        ("warning", "scripts-one-per-line", SGLANG, _line_of(text, "--host 0.0.0.0 --port"))
    ]
    (warn,) = [f for f in found if f.message_id == "scripts-one-per-line"]
    assert warn.params["flags"] == ["--host", "--port"]


def test_launcher_without_enroot_import_warns(tmp_path: Path, runfiles: Path) -> None:
    def edit(text: str) -> str:
        return text.replace('enroot import -o \\"$SQUASH_FILE\\" docker://$IMAGE', "echo no import")

    found, text = _seeded(tmp_path, runfiles, LAUNCHER, edit)
    assert _said(found) == [
        ("warning", "scripts-enroot-missing", LAUNCHER, _line_of(text, "--container-image"))
    ]


def test_a_new_directory_under_workspace_blocks(tmp_path: Path, runfiles: Path) -> None:
    def edit(text: str) -> str:
        return text.replace(
            "SERVER_LOG=/workspace/server.log",
            'OUT=/workspace/results\nmkdir -p "$OUT"\nSERVER_LOG=$OUT/s.log',
        )

    found, text = _seeded(tmp_path, runfiles, ATOM_MTP, edit)
    assert _said(found) == [("blocking", "scripts-workspace-dir", ATOM_MTP, _line_of(text, "OUT=/workspace"))]


def test_an_override_that_skips_the_indexer_blocks(tmp_path: Path, runfiles: Path) -> None:
    settings = '{"text_config": {"use_index_cache": true, "index_topk_freq": 4}}'
    override = f"--hf-overrides '{settings}' \\\n    --method mtp"
    found, text = _seeded(tmp_path, runfiles, ATOM_MTP, lambda t: t.replace("--method mtp", override))
    assert _said(found) == [("blocking", "scripts-flop-override", ATOM_MTP, _line_of(text, "--hf-overrides"))]
    # an override whose effect needs the model's config is not judged
    found, _ = _seeded(
        tmp_path / "b",
        runfiles,
        ATOM_MTP,
        lambda t: t.replace("--method mtp", '--hf-overrides "$OVR" --method mtp'),
    )
    assert [f[1] for f in _said(found)] == ["scripts-override-unjudged"]


def test_an_engine_patch_blocks_without_a_waiver_of_this_pr(tmp_path: Path, runfiles: Path) -> None:
    patch = "sed -i 's/a/b/' /usr/local/lib/python3.12/dist-packages/vllm/v1/core/sched/scheduler.py\n"
    text = _real(runfiles, ATOM_MTP)
    repo, base = _repo(tmp_path, {ATOM_MTP: text})
    head = commit(repo, {ATOM_MTP: text.replace("set -x\n", "set -x\n" + patch)})
    line = _line_of((repo / ATOM_MTP).read_text(), "sed -i")
    assert _said(_review(repo, base, head)) == [("unverified", "scripts-patch-no-pr", ATOM_MTP, line)]
    assert _said(_review(repo, base, head, pr_number=77)) == [("blocking", "scripts-patch", ATOM_MTP, line)]
    waived = commit(repo, {"docs/waiver/77.md": "# waiver\n"})
    assert _said(_review(repo, base, waived, pr_number=77)) == [
        ("info", "scripts-patch-waived", ATOM_MTP, line)
    ]
    # a waiver of another PR does not cover this one
    assert [f[1] for f in _said(_review(repo, base, waived, pr_number=78))] == ["scripts-patch"]


def test_a_script_the_pr_does_not_touch_raises_nothing(tmp_path: Path, runfiles: Path) -> None:
    broken = _real(runfiles, ATOM_MTP).replace(" \\\n    --use-chat-template", "")
    repo, base = _repo(tmp_path, {ATOM_MTP: broken, "README.md": "a\n"})
    head = commit(repo, {"README.md": "b\n"})
    assert _said(_review(repo, base, head)) == []
    # nor does a script the PR only moves (InferenceX moves retired scripts to deprecated/), also
    # when another folder's script of the same name moves too (#2493 moved two `qwen3.5_bf16_b200.sh`)
    name = ATOM_MTP.rsplit("/", 1)[1]
    twin = "benchmarks/single_node/agentic/" + name
    other = _real(runfiles, VLLM_DSV4)  # three options on its launch line
    base = commit(repo, {twin: other})
    head = commit(
        repo,
        {
            ATOM_MTP: None,
            twin: None,
            FSL + "deprecated/" + name: broken,
            twin.replace(name, "deprecated/" + name): other,
        },
    )
    assert _said(_review(repo, base, head)) == []


def test_sweep_generator_line_count(tmp_path: Path) -> None:
    path = "utils/matrix_logic/generate_sweep_configs.py"
    repo, base = _repo(tmp_path, {path: "a = 1\n" * 10})
    head = commit(repo, {path: "a = 1\n" * 13})
    (info,) = [f for f in _review(repo, base, head) if f.message_id == "scripts-generator-lines"]
    assert (info.severity, info.params) == (Severity.INFO, {"total": 13, "base": 10, "change": 3})


def test_bilingual_title_is_asked_only_of_an_agent_written_pr() -> None:
    agent = PullRequest(
        title="Add dsv4 B300 recipe",
        head_message="x\n\nCo-Authored-By: Claude Opus 4.6 <noreply@anthropic.com>",
    )
    (info,) = scripts._bilingual(agent)
    assert info.severity is Severity.INFO and info.params == {"agent": "Claude Opus 4.6", "parts": ["title"]}
    assert scripts._bilingual(agent._replace(title="Add dsv4 B300 recipe / 新增 dsv4 B300 配方")) == []
    person = agent._replace(head_message="x\n\nCo-authored-by: Cameron Quilici <c@example.com>")
    assert scripts._bilingual(person) == []
    assert (
        scripts._bilingual(PullRequest(title="Bump", author="renovate[bot]"))[0].params["agent"]
        == "renovate[bot]"
    )


def test_merge_conflicts_from_github_and_not_known_locally() -> None:
    local = scripts._conflicts(PullRequest())
    assert [(f.severity, f.message_id) for f in local] == [(Severity.UNVERIFIED, "scripts-conflicts-local")]
    on_github = PullRequest(is_pull_request=True)
    assert scripts._conflicts(on_github._replace(mergeable=True)) == []
    assert [f.message_id for f in scripts._conflicts(on_github._replace(mergeable=False))] == [
        "scripts-conflicts"
    ]
    assert [f.message_id for f in scripts._conflicts(on_github)] == ["scripts-conflicts-unknown"]


# --- rules that read another file at the base: golden acceptance lengths, MODELS.md, images ----------

AGENTIC = "benchmarks/single_node/agentic/"
QWEN_MTP = AGENTIC + "qwen3.5_fp8_b200_sglang_mtp.sh"  # SGLANG_SIMULATE_ACC_LEN=3.39
TRT_MTP = (
    AGENTIC + "minimaxm3_fp4_b200_trt_mtp.sh"
)  # TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.78 (AL 2.78)
KIMI_ATOM = AGENTIC + "kimik3_fp4_mi355x_atom_mtp.sh"  # --spec-decode-acceptance-length "$SPEC_DECODE_AL"
VLLM_AGENTIC = AGENTIC + "minimaxm3_fp4_b300_mtp.sh"  # printf of a synthetic_acceptance_length JSON


def _golden(runfiles: Path) -> dict[str, str]:
    folder = runfiles / "golden_al_distribution"
    return {f"golden_al_distribution/{p.name}": p.read_text(encoding="utf-8") for p in folder.glob("*.yaml")}


def _agentic(tmp_path: Path, runfiles: Path, path: str, edit, golden: bool = True) -> tuple[list, str]:
    text = _real(runfiles, path)
    repo, base = _repo(tmp_path, {path: text, **(_golden(runfiles) if golden else {"README.md": "x\n"})})
    seeded = edit(text)
    return _review(repo, base, commit(repo, {path: seeded})), seeded


def test_real_agentic_scripts_pin_their_golden_acceptance_length(tmp_path: Path, runfiles: Path) -> None:
    paths = (QWEN_MTP, TRT_MTP, KIMI_ATOM, VLLM_AGENTIC)
    repo, base = _repo(tmp_path, {**_golden(runfiles), "README.md": "x\n"})
    head = commit(repo, {p: _real(runfiles, p) for p in paths})
    assert _said(_review(repo, base, head)) == []


def test_an_acceptance_length_off_the_golden_curve_blocks(tmp_path: Path, runfiles: Path) -> None:
    found, text = _agentic(
        tmp_path, runfiles, QWEN_MTP, lambda t: t.replace("SIMULATE_ACC_LEN=3.39", "SIMULATE_ACC_LEN=3.5")
    )
    line = _line_of(text, "SGLANG_SIMULATE_ACC_LEN=3.5")
    assert _said(found) == [("blocking", "scripts-al-mismatch", QWEN_MTP, line)]
    (block,) = [f for f in found if f.message_id == "scripts-al-mismatch"]
    assert block.params["al"] == "3.5" and block.params["golden"] == ["qwen3.5_mtp.yaml"]


def test_tensorrt_pins_the_golden_length_minus_one(tmp_path: Path, runfiles: Path) -> None:
    """The classic slip: the golden AL written where TensorRT-LLM wants AL − 1."""
    found, text = _agentic(
        tmp_path, runfiles, TRT_MTP, lambda t: t.replace("ACCEPTED_TOKENS=1.78", "ACCEPTED_TOKENS=2.78")
    )
    line = _line_of(text, "ACCEPTED_TOKENS=2.78")
    assert _said(found) == [("blocking", "scripts-al-mismatch", TRT_MTP, line)]


def test_golden_lengths_are_read_at_the_base(tmp_path: Path, runfiles: Path) -> None:
    """A PR that adds its own golden file does not choose the value it is judged by."""
    text = _real(runfiles, QWEN_MTP)
    repo, base = _repo(tmp_path, {"README.md": "x\n"})
    head = commit(repo, {QWEN_MTP: text, **_golden(runfiles)})
    found = _review(repo, base, head)
    assert _said(found) == [
        ("unverified", "scripts-al-no-golden", QWEN_MTP, _line_of(text, "SIMULATE_ACC_LEN=3.39"))
    ]


def test_a_new_agentic_spec_decode_script_without_simulation_blocks(tmp_path: Path, runfiles: Path) -> None:
    text = _real(runfiles, QWEN_MTP)
    lines = [line for line in text.splitlines(keepends=True) if "SGLANG_SIMULATE_ACC" not in line]
    repo, base = _repo(tmp_path, {**_golden(runfiles)})
    head = commit(repo, {QWEN_MTP: "".join(lines)})
    assert [f[1] for f in _said(_review(repo, base, head))] == ["scripts-al-missing"]


def test_simulated_acceptance_in_a_fixed_sequence_length_script_blocks(
    tmp_path: Path, runfiles: Path
) -> None:
    found, text = _seeded(
        tmp_path,
        runfiles,
        SGLANG,
        lambda t: t.replace("set -x\n", "set -x\nexport SGLANG_SIMULATE_ACC_LEN=3.39\n", 1),
    )
    assert _said(found) == [
        ("blocking", "scripts-al-not-agentic", SGLANG, _line_of(text, "SIMULATE_ACC_LEN"))
    ]


def _history_pr(runfiles: Path, number: int) -> tuple[str, str]:
    """(parent, commit) of a real squash-merged PR."""
    return squash_merge(runfiles, number)[:2]


def test_a_key_added_for_a_scenario_deprecated_for_all_models_blocks(runfiles: Path) -> None:
    """#2533 added `glm5.1-fp8-b200-tilert` with a 1k1k group after MODELS.md deprecated
    Single-turn 1k1k for all models."""
    base, head = _history_pr(runfiles, 2533)
    found = [f for f in _review(runfiles, base, head) if f.message_id == "scripts-deprecated-scenario"]
    assert [(f.config_key, f.params["scenario"], f.severity) for f in found] == [
        ("glm5.1-fp8-b200-tilert", "Single-turn 1k1k", Severity.BLOCKING)
    ]


@pytest.mark.parametrize(
    ("image", "blocks"),
    [
        ("rocm/sgl-dev:v0.5.14-mi30x", True),
        ("lmsysorg/sglang:v0.5.15-cu130", False),
        ("docker.io/lmsysorg/sglang:v0.5.15-cu130@sha256:" + "a" * 64, False),
        ("nvcr.io#nvidia/sglang:26.08", True),
    ],
)
def test_sglang_keys_on_established_hardware_run_upstream_images(
    tmp_path: Path, runfiles: Path, image: str, blocks: bool
) -> None:
    repo = tmp_path / "ix"
    subprocess.run(["git", "clone", "-q", str(runfiles), str(repo)], check=True)
    base = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    entry = "\n  model: Qwen/Qwen3.5-397B-A17B-FP8\n  model-prefix: qwen3.5\n  runner: h200"
    old = "  image: lmsysorg/sglang:v0.5.14-cu130" + entry
    edit = {"configs/nvidia-master.yaml": lambda t: t.replace(old, f"  image: {image}{entry}", 1)}
    head = commit(repo, edit)
    found = [f for f in _review(repo, base, head) if f.message_id == "scripts-upstream-image"]
    assert [(f.config_key, f.params["sku"]) for f in found] == (
        [("qwen3.5-fp8-h200-sglang", "h200")] if blocks else []
    )


# --- cost and noise on a PR that touches no script ---------------------------------------------------


def test_a_review_without_script_changes_parses_no_script(example, monkeypatch) -> None:
    """The seed PR changes no script: its launchers are followed (that needs the bash grammar), but
    the reviewer rules parse no script of it."""
    parsed: list[bytes] = []
    real = scripts.parse
    monkeypatch.setattr(scripts, "parse", lambda data: parsed.append(data) or real(data))
    report, _, _ = run_local(LocalRequest(str(example.path), example.base, example.head, offline=True))
    assert "launch-verified" in [f.message_id for f in report.findings]
    assert parsed == []


def test_a_pr_that_breaks_no_rule_adds_nothing_above_the_folds(review_example) -> None:
    """The first screen (headline, changed keys, what changed) is as before: the check's one line
    sits in the folded "What was checked", and locally the unknown merge state in "Not checked"
    (the headline's count of what was not checked names the check, nothing more)."""
    from bot.output.render import render_comment

    comment = render_comment(review_example(), lang="en")
    first_fold = comment.index("<details>")
    first_screen = comment[:first_fold]
    assert "**scripts**" not in first_screen and first_screen.count("scripts") == 1
    assert "not checked (digest, codeowners, scripts)" in first_screen
    checked = comment.split("What was checked", 1)[1].split("</details>", 1)[0]
    assert "**scripts** — InferenceX's reviewer rules hold on what this PR adds or changes." in checked


def test_changed_lines_of_a_hostile_script_are_found_in_bounded_time() -> None:
    import time

    assert scripts.touched_lines(b"a\nb\nc\nd\n", b"a\nB\nc\nd\ne\n") == {2, 5}
    assert scripts.touched_lines(None, b"a\n") is None
    started = time.monotonic()
    touched = scripts.touched_lines(b"x\n" * 120_000, b"x\ny\n" * 60_000)
    assert time.monotonic() - started < 5
    assert touched is not None and {2 * i for i in range(1, 60_001)} <= touched


def test_a_changed_script_over_the_size_limit_blocks_and_is_not_parsed(review_example) -> None:
    """A script past the reader's limit (a hostile PR's 300 KB of `echo`) is refused with a
    blocking finding naming it; no rule is decided on what could not be read."""
    from bot.model.shell import MAX_BYTES

    path = "benchmarks/single_node/agentic/kimik3_fp4_mi355x_atom_mtp.sh"
    body = "#!/usr/bin/env bash\n" + "echo x\n" * (MAX_BYTES // 7 + 1)
    report = review_example({path: body})
    found = [f for f in report.findings if f.message_id == "scripts-too-large"]
    assert [(f.severity, f.file) for f in found] == [(Severity.BLOCKING, path)]
    assert str(MAX_BYTES) in found[0].params["reason"]
