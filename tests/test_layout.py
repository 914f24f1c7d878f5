"""Where the review looks for master configs (DESIGN.md §1 "Layout"), on small real repositories."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bot.local import LocalRequest, run_local
from tests.conftest import CHANGELOG, MASTER, commit


def _review(repo: Path, base: str, head: str):
    return run_local(LocalRequest(repo=str(repo), base=base, head=head, offline=True))[0]


def test_neither_ref_with_a_master_config_is_never_a_clean_review(tmp_path: Path) -> None:
    repo = tmp_path / "not-inferencex"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    base = commit(repo, {"settings.yaml": "a: 1\n"}, "one")
    head = commit(repo, {"settings.yaml": "a: 2\n"}, "two")
    args = ["review", "--repo", str(repo), "--base", base, "--head", head, "--offline"]
    done = subprocess.run(
        [sys.executable, "-m", "bot", *args, "--format", "json"], capture_output=True, text=True
    )
    report = json.loads(done.stdout)
    assert (done.returncode, report["verdict"]) == (0, "warnings")
    [warning] = [f for f in report["findings"] if f["severity"] == "warning"]
    assert warning["message_en"].startswith("Neither ref has a master config")
    unchecked = {f["check"] for f in report["findings"] if f["message_en"].startswith("Not checked: neither")}
    assert unchecked == {"recipe-selection", "dram", "changes", "sweep-plan", "launch", "digest"}
    assert not [f for f in report["findings"] if f["severity"] == "verified" and f["check"] in unchecked]
    comment = subprocess.run(
        [sys.executable, "-m", "bot", *args, "--lang", "en"], capture_output=True, text=True
    )
    assert "prbot review — no blocking issues · 1 warning" in comment.stdout
    assert "no warnings" not in comment.stdout


def test_master_configs_moved_from_the_older_folder_change_no_key(example) -> None:
    """InferenceX moved `.github/configs/` to `configs/` (#1992): the same entries are no change."""
    text = (example.path / MASTER).read_text()
    older = commit(example.path, {MASTER: None, f".github/{MASTER}": text}, "the older layout")
    moved = commit(example.path, {f".github/{MASTER}": None, MASTER: text}, "move to the root")
    report = _review(example.path, older, moved)
    assert report.changed_keys == {}
    assert report.sweep_plan["total_runs"] == 0
    assert "changelog-missing" not in [f.message_id for f in report.findings]
    assert report.verdict != "error"


def test_a_key_moved_to_another_master_config_is_no_change(example) -> None:
    text = (example.path / MASTER).read_text()
    start = text.index("# Kimi-K3 MXFP4 agentic coding")
    end = text.index("# Qwen3.5 FP8 on MI355X")
    block = text[start:end]
    head = commit(
        example.path,
        {MASTER: text[:start] + text[end:], "configs/nvidia-master.yaml": lambda t: t + "\n" + block},
        "move the key to the other master config",
    )
    report = _review(example.path, example.head, head)
    assert report.changed_keys == {}
    assert not [
        f for f in report.findings if f.message_id in ("changelog-missing", "changelog-key-not-covered")
    ]


def test_a_removal_only_needs_no_changelog_entry(example) -> None:
    """Losing points needs no rerun (6c23c65, 8141da5): no changelog entry is required."""
    head = commit(
        example.path, {MASTER: lambda t: t.replace("conc-list: [48, 56, 72]", "conc-list: [48, 56]", 1)}
    )
    report = _review(example.path, example.head, head)
    ids = [f.message_id for f in report.findings]
    assert "changelog-missing" not in ids, ids
    assert "changelog-not-needed" in ids
    assert report.verdict != "blocking"
    assert (example.path / CHANGELOG).exists()


def test_the_files_the_script_rules_read_are_fetched_by_the_action() -> None:
    from bot.model.layout import read_by_review

    for path in (
        "runners/launch_b200-cw.sh",
        "benchmarks/single_node/agentic/x_mtp.sh",
        "MODELS.md",
        "golden_al_distribution/dsv4_mtp.yaml",
        "docs/waiver/2508.md",
        "utils/matrix_logic/generate_sweep_configs.py",
        "inferencex-e2e/runners/launch_b200-cw.sh",
    ):
        assert read_by_review(path), path
    for path in ("docs/index.md", "utils/constants.py", "README.md"):
        assert not read_by_review(path), path
