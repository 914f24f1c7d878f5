"""The checks on real InferenceX files: exact counts the maintainers can verify by hand."""

from __future__ import annotations

import subprocess
from collections import Counter
from decimal import Decimal

from bot.local import LocalRequest, run_local
from bot.model.dram import budget
from bot.model.layout import Layout
from bot.model.master import MasterFile
from bot.model.recipe import parse_recipe
from bot.model.runners import lookup
from bot.model.selection import select
from bot.yamlsafe import load_bytes
from tests.conftest import shared_or_skip


def _points():
    root = shared_or_skip("inferencex-e2e")
    base = root.parent
    for path in sorted((root / "configs").glob("*-master.yaml")):
        master = MasterFile(str(path), path.read_bytes(), Layout("inferencex-e2e/"))
        for key in master.entries:
            entry = master.entry(key)
            for point in entry.points:
                if point.recipe and (base / point.recipe).exists():
                    yield entry, point, parse_recipe(point.recipe, (base / point.recipe).read_bytes())


def test_every_point_resolves_or_is_a_known_gap() -> None:
    outcome: Counter[int] = Counter()
    gaps = Counter()
    chosen: dict[tuple[str, int, int], list[str]] = {}
    for entry, point, recipe in _points():
        for conc in point.concurrencies:
            variants = [v.name for v in select(recipe, point, conc)]
            outcome[min(len(variants), 2)] += 1
            chosen[(entry.key, point.line, conc)] = variants
            if not variants:
                gaps[entry.key] += 1
    assert outcome == {1: 473, 0: 14}
    # The gaps are recipe versions older or newer than the master config: qwen3.5 C48–C80 not yet
    # in the recipe, dsv41flash's ATOM TP2/TP4 concurrencies, dsv4 ATOM C256 pinned to DRAM
    # offload in the recipe but not in the master config.
    assert gaps == {
        "qwen3.5-fp8-mi355x-sglang-agentic-mtp": 5,
        "dsv41flash-fp4-mi355x-atom-agentic-dspark": 8,
        "dsv4-fp4-mi355x-atom-agentic-mtp": 1,
    }
    # vLLM's DP-attention points run `tensor-parallel-size 1` × `data-parallel-size 8` (how
    # InferenceX launches them), expert-parallel or not: each selects its DEP8 variant, and the
    # DPA C64 run is not served by the TP8 variant of the same concurrency.
    assert chosen[("dsv4-fp4-mi355x-vllm-agentic-mtp", 940, 64)] == ["override_dep8_c64"]
    assert chosen[("dsv4-fp4-mi355x-vllm-agentic-mtp", 937, 64)] == ["override_tp8_c64"]
    assert chosen[("dsv4-fp4-b200-vllm-agentic-mtp", 953, 32)] == ["override_dep8_c32"]
    assert chosen[("dsv4-fp4-b300-vllm-agentic-mtp", 1680, 288)] == ["zip_override_dep8[5]"]


def test_pinned_dram_totals_against_the_formula() -> None:
    runners = load_bytes(shared_or_skip("inferencex-e2e", "configs", "runners.yaml").read_bytes()).data
    agree, disagree = Counter(), Counter()
    for entry, point, recipe in _points():
        if point.kv_offloading != "dram":
            continue
        hardware = lookup(runners, entry.runner)
        for conc in point.concurrencies:
            chosen = select(recipe, point, conc)
            if len(chosen) != 1 or "TOTAL_CPU_DRAM_GB" not in chosen[0].env:
                continue
            pinned = int(chosen[0].env["TOTAL_CPU_DRAM_GB"])
            total = budget(
                hardware.available_mib, point.utilization, point.gpus_per_worker, hardware.gpus_per_node
            ).total_gb
            (agree if pinned == total else disagree)[(entry.key, pinned, total, hardware.name)] += 1
    assert sum(agree.values()) == 45 and sum(disagree.values()) == 8
    # vLLM's DEP8 runs on B200 and B300 (selected since `tensor-parallel-size` × `data-parallel-size`
    # is read as the TP) pin the right totals.
    assert agree[("dsv4-fp4-b200-vllm-agentic-mtp", 1947, 1947, "b200-nscale")] == 6
    assert agree[("dsv4-fp4-b300-vllm-agentic-mtp", 2849, 2849, "b300-dsxe")] == 6
    assert agree[("kimik3-fp4-mi355x-atom-agentic-mtp", 1028, 1028, "mi355x-amds")] == 3
    assert agree[("kimik3-fp4-mi355x-atom-agentic-mtp", 1538, 1538, "mi355x-amds")] == 2
    assert disagree[("dsv4-fp4-b200-sglang-agentic-hicache-mtp", 1717, 1731, "b200-nscale")] == 7
    # The eighth: the MiniMax-M3 MI300X recipe pins 1284 where 1,547,820 MiB × 0.80 gives 1298.
    assert disagree[("minimaxm3-fp8-mi300x-vllm-agentic-mtp", 1284, 1298, "mi300x-amd")] == 1


def test_formula_worked_example() -> None:
    for utilization, total in (("0.343", 1028), ("0.513", 1538), ("0.6", 1799)):
        calc = budget(3_095_781, Decimal(utilization), 8, 8)
        assert (calc.total_gb, calc.capped_mib) == (total, 2_861_022)


def test_fifty_consecutive_real_prs_review_without_error(history) -> None:
    commits = subprocess.run(
        [
            "git",
            "-C",
            str(history),
            "log",
            "--format=%H",
            "-n",
            "60",
            "--",
            "perf-changelog.yaml",
            "configs/amd-master.yaml",
            "configs/nvidia-master.yaml",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert len(commits) >= 50
    verdicts = Counter()
    for sha in commits:
        report, _, _ = run_local(LocalRequest(repo=str(history), base=f"{sha}^", head=sha, offline=True))
        assert not [f for f in report.findings if f.message_id == "check-crashed"], sha
        verdicts[report.verdict] += 1
    assert sum(verdicts.values()) == len(commits)
    assert verdicts["clean"] + verdicts["warnings"] > 0
