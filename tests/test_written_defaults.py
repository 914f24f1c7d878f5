"""A default written out is the run left out, wherever InferenceX's generator fills that default in
(`bot.model.generated`): `pp: 1`, `dcp-size: 1`, `pcp-size: 1`, `ep: 1`, `dp-attn: false`,
`spec-decoding: none` on a single-node point, `pp` / `dcp-size` / `pcp-size` of a worker,
`kv-offloading: none` on a multinode agentic point, `disagg: false` on a key.

Measured on the real master configs of #2707 (InferenceX 843c6254f, the last commit of the runfiles
bundle) with InferenceX's own `generate_sweep_configs.py test-config` and `process_changelog.py`:
- the four keys edited by `_write_defaults` generate the same 62 rows before and after;
- a regular entry for the two keys edited by `_twins` sweeps 27 rows (33 runs) and 14 eval jobs,
  trimmed (`--trim-conc`) 15 rows: each twin is the same parallelism config as the point it copies;
- an `append-only` entry for `_ep_and_c20` is accepted and sweeps the C20 row alone.
Before this, prbot blocked the first (`changelog-missing`, 11 runs "changed"), planned 15 eval
jobs and 16 trimmed rows for the second, and refused the third (existing points "changed").
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.findings import Severity
from bot.local import LocalRequest, run_local
from bot.report import Report
from tests.conftest import commit

MASTER = "configs/nvidia-master.yaml"
CHANGELOG = "perf-changelog.yaml"
FIXED = "dsv4-fp4-b200-vllm"  # single-node, fixed-seq-len
AGENTIC = "dsv4-fp4-b200-vllm-agentic-mtp"  # single-node, agentic
DISAGG = "dsv4-fp4-gb300-dynamo-vllm-agentic"  # multinode agentic, disaggregated
AGG = "kimik3-fp4-h200-vllm-agentic"  # multinode, `disagg: false` written out
TRT = "dsr1-fp4-gb200-dynamo-trt"  # multinode fixed-seq-len 8k1k, disaggregated

FIXED_TP8 = "      - { tp: 8, conc-start: 1, conc-end: 64 }\n"
AGENTIC_TP8 = (
    "- { tp: 8, kv-offloading: dram, kv-offload-backend: { name: vllm-simple }, spec-decoding: mtp, "
    "conc-list: [1, 4, 8, 14] }"
)
DISAGG_C32 = "        conc-list: [32]\n        prefill:\n          num-worker: 1\n          tp: 4\n"
AGG_TOP = (
    "  framework: vllm\n  multinode: true\n  disagg: false\n  scenarios:\n    agentic-coding:\n    - dram"
)
TRT_FIRST = (
    '      - spec-decoding: "mtp"\n        conc-list: [ 4, 8, 12, 24, 48 ]\n        prefill:\n'
    "          num-worker: 1\n          tp: 4\n          ep: 4\n          dp-attn: true\n"
    "          additional-settings:\n"
    "          # https://github.com/NVIDIA/srt-slurm/blob/sa-submission-q2-2026/recipes/trtllm/gb200-fp4/8k1k/mtp/"
    "ctx1_gen4_tep8_batch8_eplb0_mtp3.yaml\n"
    '          - "CONFIG_FILE=recipes/trtllm/gb200-fp4/8k1k/mtp/ctx1_gen4_tep8_batch8_eplb0_mtp3.yaml"\n'
    "        decode:\n          num-worker: 4\n          tp: 8\n          ep: 8\n          dp-attn: false\n"
)
PR = "https://github.com/SemiAnalysisAI/InferenceX/pull/9999"


@pytest.fixture
def ix(runfiles_history: Path, tmp_path: Path) -> tuple[Path, str]:
    """A working copy of the runfiles history at #2707, whose master config has the points edited."""
    repo = tmp_path / "ix"
    subprocess.run(["git", "clone", "-q", str(runfiles_history), str(repo)], check=True)
    text = (repo / MASTER).read_text(encoding="utf-8")
    if not all(part in text for part in (FIXED_TP8, AGENTIC_TP8, DISAGG_C32, AGG_TOP, TRT_FIRST)):
        pytest.skip("the runfiles history's head is not #2707")
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    return repo, head.stdout.strip()


def _review(repo: Path, base: str, head: str, *labels: str) -> Report:
    request = LocalRequest(str(repo), base, head, offline=True, labels=labels, pr_number=9999, pr_url=PR)
    return run_local(request)[0]


def _entry(*keys: str, append_only: bool = False) -> str:
    names = "".join(f"    - {key}\n" for key in keys)
    flag = "  append-only: true\n" if append_only else ""
    return f'\n- config-keys:\n{names}  description:\n    - "Add points"\n  pr-link: {PR}\n{flag}'


def _in_key(key: str, old: str, new: str) -> Callable[[str], str]:
    """An edit that replaces `old` (which must be there) by `new` in the entry of `key` only."""

    def edit(text: str) -> str:
        start = text.index(f"\n{key}:\n")
        end = re.compile(r"^[^\s#]", re.M).search(text, start + len(key) + 3)
        stop = end.start() if end else len(text)
        block = text[start:stop]
        assert old in block, f"{old!r} not in {key}"
        return text[:start] + block.replace(old, new, 1) + text[stop:]

    return edit


def _edits(*edits: Callable[[str], str]) -> Callable[[str], str]:
    def edit(text: str) -> str:
        for one in edits:
            text = one(text)
        return text

    return edit


def _write_defaults(worker_pp: str = "1") -> dict[str, object]:
    """Every kind of default written out once (or `disagg: false` left out), on four real keys."""
    every = "{ tp: 8, pp: 1, dcp-size: 1, pcp-size: 1, ep: 1, dp-attn: false, spec-decoding: none, "
    workers = f"          pp: {worker_pp}\n          dcp-size: 1\n"
    return {
        MASTER: _edits(
            _in_key(FIXED, FIXED_TP8, FIXED_TP8.replace("{ tp: 8, ", every)),
            _in_key(
                AGENTIC,
                AGENTIC_TP8,
                AGENTIC_TP8.replace("{ tp: 8, ", "{ tp: 8, pp: 1, ep: 1, dp-attn: false, "),
            ),
            _in_key(DISAGG, DISAGG_C32, "        kv-offloading: none\n" + DISAGG_C32 + workers),
            _in_key(AGG, AGG_TOP, AGG_TOP.replace("  disagg: false\n", "")),
        )
    }


def test_writing_out_the_generators_defaults_changes_no_run(ix: tuple[Path, str]) -> None:
    repo, base = ix
    report = _review(repo, base, commit(repo, _write_defaults()))
    assert report.verdict == "clean", [f.message_id for f in report.of(Severity.BLOCKING)]
    for key in (FIXED, AGENTIC, DISAGG, AGG):
        runs = report.changes[key].runs
        assert runs and {run.status for run in runs} == {"as-before"}, key
        assert report.changes[key].common == (), key
    (said,) = [f for f in report.findings if f.message_id == "changelog-not-needed"]
    assert said.params["removed"] == []  # no key "only lost points": none lost any


def test_a_value_other_than_the_default_is_a_change(ix: tuple[Path, str]) -> None:
    """The control: the same edit with a worker's `pp: 2` changes the disaggregated key's run."""
    repo, base = ix
    report = _review(repo, base, commit(repo, _write_defaults(worker_pp="2")))
    (missing,) = [f for f in report.of(Severity.BLOCKING) if f.message_id == "changelog-missing"]
    assert missing.params["keys"] == [DISAGG]


def _twins(repo: Path) -> str:
    """Each key gains a point at a new concurrency that differs from an existing one only by the
    defaults it writes out: single-node `ep: 1, dp-attn: false`, multinode workers' `pp: 1` and
    `dcp-size: 1`."""
    twin = TRT_FIRST.replace("[ 4, 8, 12, 24, 48 ]", "[ 96 ]")
    twin = twin.replace("          tp: 4\n", "          tp: 4\n          pp: 1\n")
    twin = twin.replace("          tp: 8\n", "          tp: 8\n          dcp-size: 1\n")
    fixed_twin = "      - { tp: 8, ep: 1, dp-attn: false, conc-list: [96] }\n"
    edit = _edits(
        _in_key(FIXED, FIXED_TP8, FIXED_TP8 + fixed_twin), _in_key(TRT, TRT_FIRST, TRT_FIRST + twin)
    )
    return commit(repo, {MASTER: edit, CHANGELOG: lambda old: old + _entry(FIXED, TRT)})


def test_a_twin_that_writes_out_defaults_is_the_same_parallelism_config(ix: tuple[Path, str]) -> None:
    repo, base = ix
    head = _twins(repo)
    full = _review(repo, base, head, "full-sweep-fail-fast").sweep_plan
    assert (full["total_jobs"], full["total_runs"], full["total_eval_jobs"]) == (27, 33, 14)
    assert full["keys"][TRT]["eval_jobs"] == 10  # the twin is evaluated with the point it copies
    trimmed = _review(repo, base, head, "sweep-enabled").sweep_plan
    assert (trimmed["total_jobs"], trimmed["total_runs"]) == (15, 15)
    assert [run["concurrency"] for run in trimmed["keys"][FIXED]["runs"]] == [1, 64, 128]


def test_append_only_accepts_a_default_written_out_beside_a_new_concurrency(ix: tuple[Path, str]) -> None:
    repo, base = ix
    point = AGENTIC_TP8.replace("{ tp: 8, ", "{ tp: 8, ep: 1, dp-attn: false, ").replace("14] }", "14, 20] }")
    edits = {
        MASTER: _in_key(AGENTIC, AGENTIC_TP8, point),
        CHANGELOG: lambda old: old + _entry(AGENTIC, append_only=True),
    }
    report = _review(repo, base, commit(repo, edits), "full-sweep-fail-fast")
    assert not [f.message_id for f in report.of(Severity.BLOCKING)]
    plan = report.sweep_plan
    assert plan["starts"] is True
    assert [run["concurrency"] for run in plan["keys"][AGENTIC]["runs"]] == [20]
