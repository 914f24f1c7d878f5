"""The sweep plan identifies a run as the diff does, by every field the generator hands on (issue
32, 5c): two disaggregated points of one key at one concurrency that differ only in
`kv-p2p-transfer` are two runs. Measured by running InferenceX's `process_changelog.py` at
843c6254f on this very shape: a regular entry sweeps both C2048 rows (11 runs, the base's 10 and
the twin) and 5 eval jobs (4 without it); an `append-only` entry sweeps the Mooncake twin alone
(1 row) and is accepted. A copy that is the same in every field runs twice under a regular entry
but is evaluated once (4 eval jobs); it adds no generated run, so `append-only` is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.findings import Severity
from bot.local import LocalRequest, run_local
from bot.report import Report
from tests.conftest import commit, e2e_checkout

KEY = "qwen3.5-fp4-gb300-dynamo-sglang"
MASTER = "inferencex-e2e/configs/nvidia-master.yaml"
CHANGELOG = "inferencex-e2e/perf-changelog.yaml"
# The real 5P1D wide-EP C2048 point (NIXL) and the comment of the point after it.
C2048 = '      - spec-decoding: "none"\n        kv-p2p-transfer: nixl\n        conc-list: [2048]\n'
NEXT = "      # 6P1D wide-EP: 6 prefill workers @ DEP4 + 1 decode worker @ DEP16.\n"


@pytest.fixture
def e2e(tmp_path: Path) -> tuple[Path, str]:
    return e2e_checkout(tmp_path)


def _twin(repo: Path, transfer: str) -> str:
    """The master config with the C2048 point written once more, its transfer set to `transfer`."""
    text = (repo / MASTER).read_text(encoding="utf-8")
    start = text.index(C2048)
    block = text[start : text.index(NEXT, start)]
    return text.replace(
        NEXT, block.replace("kv-p2p-transfer: nixl", f"kv-p2p-transfer: {transfer}") + NEXT, 1
    )


def _review(repo: Path, base: str, transfer: str, append_only: bool) -> Report:
    flag = "  append-only: true\n" if append_only else ""
    entry = (
        f'\n- config-keys:\n    - {KEY}\n  description:\n    - "Add a Mooncake C2048 point"\n'
        f"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/9999\n{flag}"
    )
    head = commit(repo, {MASTER: _twin(repo, transfer), CHANGELOG: lambda old: old + entry})
    labels = ("full-sweep-fail-fast",)
    return run_local(LocalRequest(repo=str(repo), base=base, head=head, offline=True, labels=labels))[0]


def _c2048(report: Report) -> list[bool]:
    """Whether each planned C2048 run of the key is marked changed."""
    runs = report.sweep_plan["keys"][KEY]["runs"]
    return [run["changed"] for run in runs if run["concurrency"] == 2048]


def _refusals(report: Report) -> list[str]:
    return [
        f.params.get("reason", "")
        for f in report.findings
        if f.message_id.startswith("changelog-append-only") and f.severity is Severity.BLOCKING
    ]


def test_a_regular_entry_sweeps_both_twins_and_marks_only_the_new_one_changed(e2e: tuple[Path, str]) -> None:
    repo, base = e2e
    report = _review(repo, base, "mooncake", append_only=False)
    plan = report.sweep_plan["keys"][KEY]
    assert len(plan["runs"]) == 11 and plan["jobs"] == 5  # upstream: 5 rows, 11 runs
    assert plan["eval_jobs"] == 5  # upstream: one per parallelism config, each twin its own
    assert sorted(_c2048(report)) == [False, True]  # the NIXL run is as before, the Mooncake one new
    assert plan["changed"] == [2048]


def test_a_regular_entry_runs_a_copy_the_same_in_every_field_twice_and_evaluates_it_once(
    e2e: tuple[Path, str],
) -> None:
    repo, base = e2e
    plan = _review(repo, base, "nixl", append_only=False).sweep_plan["keys"][KEY]
    assert len(plan["runs"]) == 11 and plan["jobs"] == 5  # upstream: 5 rows, 11 runs
    assert plan["eval_jobs"] == 4  # upstream: the copy is the same parallelism config


def test_append_only_sweeps_the_twin_alone(e2e: tuple[Path, str]) -> None:
    repo, base = e2e
    report = _review(repo, base, "mooncake", append_only=True)
    assert _refusals(report) == []
    assert report.sweep_plan["starts"] is True
    assert [r["concurrency"] for r in report.sweep_plan["keys"][KEY]["runs"]] == [2048]
    assert _c2048(report) == [True]


def test_append_only_refuses_a_copy_the_same_in_every_field(e2e: tuple[Path, str]) -> None:
    repo, base = e2e
    report = _review(repo, base, "nixl", append_only=True)
    assert _refusals(report) == ["nothing"]
    assert report.sweep_plan["starts"] is False
