"""The `launch` check and script changes on the real InferenceX files (runfiles history head):
a PR that edits only a per-key benchmark script changes that key's runs, a new key whose script
the launcher cannot find blocks, a shared file is named once."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.local import LocalRequest, run_local
from bot.report import Report
from tests.conftest import commit, replace, squash_merge

SCRIPT = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x.sh"  # the fallback name
KEY = "dsr1-fp8-mi355x-sglang"


@pytest.fixture
def checkout(runfiles_history: Path, tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "ix"
    subprocess.run(["git", "clone", "-q", str(runfiles_history), str(repo)], check=True)
    if not (repo / SCRIPT).exists():
        pytest.skip(f"{SCRIPT} is not at this head")
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    return repo, head.stdout.strip()


def _review(repo: Path, base: str, head: str) -> Report:
    return run_local(LocalRequest(str(repo), base, head, offline=True))[0]


def _ids(report: Report, severity: str) -> list[str]:
    return [f.message_id for f in report.findings if f.severity == severity]


def test_a_pr_that_edits_only_a_benchmark_script_changes_its_key_and_needs_an_entry(
    checkout: tuple[Path, str],
) -> None:
    repo, base = checkout
    head = commit(repo, {SCRIPT: lambda text: text + "export SGLANG_EXTRA_FLAG=1\n"})
    report = _review(repo, base, head)
    assert KEY in report.changed_keys
    assert "script" in report.changed_keys[KEY]
    (named,) = [f for f in report.findings if f.message_id == "launch-script-changed"]
    assert named.params["path"] == SCRIPT
    assert (named.params["added"], named.params["removed"]) == (1, 0)
    assert KEY in named.params["keys"]
    # No changelog entry: the coverage rule blocks, as for a recipe change.
    (missing,) = [f for f in report.findings if f.message_id == "changelog-missing"]
    assert missing.severity == "blocking"
    assert KEY in missing.params["keys"]
    common = report.changes[KEY].common
    assert any(s.path == "script" for s in common)


def test_a_new_key_whose_script_does_not_exist_blocks_naming_the_names_tried(
    checkout: tuple[Path, str],
) -> None:
    repo, base = checkout
    master = repo / "configs" / "amd-master.yaml"
    text = master.read_text()
    start = text.index(f"\n{KEY}:") + 1
    end = text.index("\n\n", start)
    block = text[start:end].replace(f"{KEY}:", "dsr1x-fp8-mi355x-sglang:", 1)
    block = block.replace("model-prefix: dsr1\n", "model-prefix: dsr1x\n", 1)
    head = commit(repo, {"configs/amd-master.yaml": text + "\n" + block + "\n"})
    report = _review(repo, base, head)
    missing = [f for f in report.findings if f.message_id == "launch-script-missing"]
    assert missing and missing[0].severity == "blocking"
    assert missing[0].config_key == "dsr1x-fp8-mi355x-sglang"
    assert missing[0].params["tried"] == [
        "benchmarks/single_node/fixed_seq_len/dsr1x_fp8_mi355x_sglang.sh",
        "benchmarks/single_node/fixed_seq_len/dsr1x_fp8_mi355x.sh",
    ]


def test_a_shared_file_is_named_once_and_changes_no_key(checkout: tuple[Path, str]) -> None:
    repo, base = checkout
    launcher = "runners/launch_mi355x-amds.sh"
    head = commit(
        repo, {launcher: replace("#!/usr/bin/env bash\n", "#!/usr/bin/env bash\nexport NCCL_DEBUG=INFO\n")}
    )
    report = _review(repo, base, head)
    assert report.changed_keys == {}
    (shared,) = [f for f in report.findings if f.message_id == "launch-shared-changed"]
    assert shared.params["reach"] == ["mi355x-amds"]
    assert "launch-shared-no-entry" in _ids(report, "warning")
    assert not _ids(report, "blocking")
    # A comment alone changes nothing a run executes: named, with no warning.
    commented = commit(repo, {launcher: replace("#!/usr/bin/env bash\n", "#!/usr/bin/env bash\n# c\n")})
    quiet = _review(repo, head, commented)
    named = [f.message_id for f in quiet.findings if f.check == "launch" and f.file == launcher]
    assert named == ["launch-shared-same-code"]
    assert "launch-shared-no-entry" not in _ids(quiet, "warning")


CONTAINER_RECIPE = (
    "benchmarks/multi_node/srt-slurm-recipes/trtllm/deepseek-v4/agentx-gb300-20260811/"
    "dynamo-disagg-gb300-1p4d-dep4-tep8-c4-b1-mtp.yaml"
)


def test_a_multinode_recipe_whose_container_is_not_the_keys_image_blocks(checkout: tuple[Path, str]) -> None:
    repo, base = checkout
    if not (repo / CONTAINER_RECIPE).exists():
        pytest.skip(f"{CONTAINER_RECIPE} is not at this head")
    old = "  container: nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24\n"
    head = commit(repo, {CONTAINER_RECIPE: replace(old, old.replace("1.3.0rc24", "1.3.0rc25"))})
    report = _review(repo, base, head)
    found = [f for f in report.findings if f.message_id == "launch-container-image"]
    assert [f.config_key for f in found] == ["dsv4-fp4-gb300-dynamo-trt-agentx"]
    assert found[0].severity == "blocking"
    assert found[0].params["container"].endswith("1.3.0rc25")
    assert found[0].params["image"].endswith("1.3.0rc24")
    # The same recipe edit that keeps the container equal to the image does not block.
    fixed = commit(repo, {CONTAINER_RECIPE: replace("1.3.0rc25", "1.3.0rc24")})
    again = _review(repo, head, fixed)
    assert not [f for f in again.findings if f.message_id == "launch-container-image"]


def test_a_container_alias_is_neither_compared_with_the_image_nor_asked_of_a_registry(
    checkout: tuple[Path, str],
) -> None:
    """Fifteen merged InferenceX PRs (#2113, #2157, #2121, …) run multi-node SGLang recipes whose
    `model.container` is `dynamo-sglang`, a name the cluster's srtslurm.yaml maps to an image: it is
    no image reference, so it neither blocks as "not the key's image" nor goes to a registry."""
    from bot.checks import images

    assert images.is_alias("dynamo-sglang") and images.is_alias("dynamo-trtllm")
    assert not any(
        images.is_alias(name)
        for name in (
            "lmsysorg/sglang:v0.5.12",
            "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24",
            "ubuntu:24.04",
        )
    )
    repo, base = checkout
    if not (repo / CONTAINER_RECIPE).exists():
        pytest.skip(f"{CONTAINER_RECIPE} is not at this head")
    old = "  container: nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24\n"
    head = commit(repo, {CONTAINER_RECIPE: replace(old, "  container: dynamo-trtllm\n")})
    report = _review(repo, base, head)
    assert not [f for f in report.findings if f.message_id == "launch-container-image"]
    pulled = [f.params["image"] for f in report.findings if f.message_id.startswith("image-")]
    assert pulled and "dynamo-trtllm" not in pulled


def test_a_script_edited_only_in_comments_or_eval_branches_changes_no_run(checkout: tuple[Path, str]) -> None:
    repo, base = checkout
    head = commit(
        repo,
        {
            SCRIPT: lambda text: replace("# Reference\n", "# Reference (checked 2026-08-01)\n")(
                replace("    setup_eval_context\n", "    setup_eval_context\n    export EVAL_TIMEOUT=7200\n")(
                    text
                )
            )
        },
    )
    report = _review(repo, base, head)
    assert report.changed_keys == {}
    (same,) = [f for f in report.findings if f.message_id == "launch-script-same-code"]
    assert same.params["path"] == SCRIPT and KEY in same.params["keys"]
    assert same.params["added"] == 2 and same.params["removed"] == 1
    assert "changelog-missing" not in _ids(report, "blocking")


@pytest.mark.parametrize(
    ("number", "why"),
    [
        (2531, "rewords a comment in glm5.2_fp4_b300_sglang_mtp.sh"),
        (2561, "rewords comments in three MTP scripts"),
        (1947, "wraps each agentic replay in `if EVAL_ONLY … else … fi`"),
    ],
)
def test_real_script_edits_that_change_no_throughput_run_need_no_entry(
    runfiles_history: Path, number: int, why: str
) -> None:
    """Merged without a changelog entry, rightly: no throughput command changed."""
    parent, merged, _ = squash_merge(runfiles_history, number)
    report = _review(runfiles_history, parent, merged)
    assert "changelog-missing" not in _ids(report, "blocking"), why
    assert [f for f in report.findings if f.message_id == "launch-script-same-code"], why
    assert not [key for key, aspects in report.changed_keys.items() if aspects == ["script"]], why


def test_a_real_script_edit_that_changes_the_replay_still_needs_an_entry(runfiles_history: Path) -> None:
    """#2178 moved the cache-warmup flag out of three scripts into benchmark_lib.sh."""
    parent, merged, _ = squash_merge(runfiles_history, 2178)
    report = _review(runfiles_history, parent, merged)
    (missing,) = [f for f in report.findings if f.message_id == "changelog-missing"]
    assert "dsv4-fp4-b200-vllm-agentic" in missing.params["keys"]
