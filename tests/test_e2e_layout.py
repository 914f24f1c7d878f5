"""A PR against the real InferenceX files in their current `inferencex-e2e/` layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.findings import Severity
from bot.local import LocalRequest, run_local
from bot.output.messages import en
from tests.conftest import commit, e2e_checkout, replace

KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"
MASTER = "inferencex-e2e/configs/amd-master.yaml"
CHANGELOG = "inferencex-e2e/perf-changelog.yaml"
ENTRY = f"""
- config-keys:
    - {KEY}
  scenario-type:
    - agentic-coding
  description:
    - "Move to ATOM nightly_202610131505"
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX
"""


@pytest.fixture(scope="module")
def e2e_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return e2e_checkout(tmp_path_factory.mktemp("e2e"))


def test_image_bump_on_the_real_files(e2e_repo: tuple[Path, str]) -> None:
    repo, base = e2e_repo
    head = commit(
        repo,
        {
            MASTER: replace(
                "  image: rocm/atom-dev:nightly_202609251613\n  model: moonshotai/Kimi-K3",
                "  image: rocm/atom-dev:nightly_202610131505\n  model: moonshotai/Kimi-K3",
            ),
            CHANGELOG: lambda text: text + ENTRY,
        },
    )
    report, _, _ = run_local(
        LocalRequest(repo=str(repo), base=base, head=head, offline=True, labels=("full-sweep-fail-fast",))
    )
    assert list(report.published_sets) == [KEY]
    assert report.published_sets[KEY]["head"] == [1, 4, 14, 16, 48, 56, 72]
    by_id = {f.message_id: f for f in report.findings}
    assert by_id["selection-ok"].severity is Severity.VERIFIED
    assert "each of its 7 runs selects exactly one variant" in en(by_id["selection-ok"])
    variants = {r.concurrency: r.variant_head for r in report.changes[KEY].runs}
    assert variants[56] == "override_tp8_dcp8_c56_lmcache"  # each run's variant, in the changes view
    blocks = sorted(
        (f.params["utilization"], f.params["total"])
        for f in report.findings
        if f.message_id == "dram-block-ok"
    )
    assert blocks == [("0.343", 1028), ("0.513", 1538)]
    assert by_id["changelog-appended"].file == CHANGELOG
    # An image bump with its changelog entry, on files upstream merged, breaks no rule.
    blocking = [f.message_id for f in report.findings if f.severity is Severity.BLOCKING]
    assert blocking == []
    plan = report.sweep_plan["keys"][KEY]
    assert len(plan["runs"]) == 7 and plan["gpu_hours"] == 56.0
    assert plan["changed"] == [1, 4, 14, 16, 48, 56, 72]  # a new image changes every run
