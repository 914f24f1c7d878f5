"""Issue #31, the run model's classes: what a run reads, its settings and its recipe are taken as
InferenceX takes them, so that no construction turns a real defect into a clean review.

Each test injects one construction into the real `inferencex-e2e` files (`e2e_checkout`) and
reviews the commit that carries it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.example import ExampleRepo
from bot.findings import Finding, Severity
from bot.local import LocalRequest, run_local
from bot.report import Report
from tests.conftest import commit, e2e_checkout, replace

ROOT = "inferencex-e2e/"
AMD = f"{ROOT}configs/amd-master.yaml"
KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"
RECIPE = "benchmarks/single_node/srt-slurm-recipes/kimik3/atom/mi355x-fp4-mtp/agentic.yaml"


@pytest.fixture
def e2e(tmp_path: Path) -> tuple[Path, str]:
    return e2e_checkout(tmp_path)


def _review(repo: Path, base: str, head: str) -> Report:
    return run_local(LocalRequest(repo=str(repo), base=base, head=head, offline=True))[0]


def _found(report: Report, message_id: str) -> list[Finding]:
    return [f for f in report.findings if f.message_id == message_id]


def _moved_recipe(repo: Path, moved: str) -> str:
    """A base whose kimik3 ATOM key runs its recipe from `moved` (a path from the root)."""
    text = (repo / ROOT / RECIPE).read_text(encoding="utf-8")
    return commit(
        repo,
        {
            f"{ROOT}{RECIPE}": None,
            f"{ROOT}{moved}": text,
            AMD: replace(f"srt-recipe: {RECIPE}", f"srt-recipe: {moved}", count=99),
        },
    )


# --- item 1: whatever a point names as its recipe is a recipe -----------------------------------


@pytest.mark.parametrize(
    "moved",
    [
        "configs/recipes/kimik3-atom-agentic.yaml",  # outside benchmarks/
        "benchmarks/single_node/srt-slurm-recipes/kimik3/atom/mi355x-fp4-mtp/agentic.YAML",
        "recipes/kimik3/agentic",  # no extension, outside every folder the action fetches at once
    ],
    ids=["outside-benchmarks", "upper-case-suffix", "no-suffix"],
)
def test_an_edit_of_a_recipe_wherever_it_lives_is_reviewed(e2e: tuple[Path, str], moved: str) -> None:
    repo, _ = e2e
    base = _moved_recipe(repo, moved)
    head = commit(repo, {f"{ROOT}{moved}": replace("TOTAL_CPU_DRAM_GB: '1028'", "TOTAL_CPU_DRAM_GB: '3000'")})
    report = _review(repo, base, head)
    assert report.changed_keys[KEY] == ["recipe"]
    wrong = _found(report, "dram-total-mismatch")
    assert {(f.config_key, f.file, f.params["found"], f.params["expected"]) for f in wrong} == {
        (KEY, f"{ROOT}{moved}", "3000", 1028)
    }
    [missing] = _found(report, "changelog-missing")  # its new results need an entry
    assert missing.severity is Severity.BLOCKING and KEY in missing.params["keys"]
    assert report.verdict == "blocking"


def test_the_action_reads_a_recipe_outside_the_data_paths_at_both_commits(
    e2e: tuple[Path, str], tmp_path: Path
) -> None:
    from test_git_fetch import FETCHED, Servers, _report

    repo, _ = e2e
    moved = "recipes/kimik3/agentic.yaml"  # not among the paths the action fetches in one batch
    base = _moved_recipe(repo, moved)
    head = commit(repo, {f"{ROOT}{moved}": replace("TOTAL_CPU_DRAM_GB: '1028'", "TOTAL_CPU_DRAM_GB: '3000'")})
    example = ExampleRepo(path=repo, base=base, head=head, title="Retune kimik3", body="", labels=())
    with Servers(example, tmp_path / "served") as both:
        run = both.act(tmp_path)
        assert FETCHED in run.log and both.api_reads() == 0
        report = _report(run)
    wrong = [f for f in report["findings"] if f["id"] == "dram-total-mismatch"]
    assert {(f["config_key"], f["file"]) for f in wrong} == {(KEY, f"{ROOT}{moved}")}
    assert report["verdict"] == "blocking"
