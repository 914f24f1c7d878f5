"""Issue #31, the run model's classes: what a run reads, its settings and its recipe are taken as
InferenceX takes them, so that no construction turns a real defect into a clean review.

Each test injects one construction into the real `inferencex-e2e` files (`e2e_checkout`) and
reviews the commit that carries it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.example import ExampleRepo
from bot.findings import Finding, Severity
from bot.local import LocalRequest, run_local
from bot.report import Report
from tests.conftest import commit, e2e_checkout, replace, shared_or_skip

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


# --- item 2: one path per setting ---------------------------------------------------------------

QWEN_KEY = "qwen3.5-fp8-mi355x-atom"
QWEN = "benchmarks/single_node/srt-slurm-recipes/qwen3.5/atom/mi355x-fp8/8k1k.yaml"
RATIO = "      RANDOM_RANGE_RATIO: '0.8'\n      USE_CHAT_TEMPLATE: 'false'\n"


def _common_changes(report: Report, key: str) -> dict[str, tuple[object, object]]:
    return {s.path: (s.base, s.head) for s in report.changes[key].common}


def test_a_dotted_key_does_not_hide_the_setting_it_spells(e2e: tuple[Path, str]) -> None:
    repo, _ = e2e
    # A decoy after `env:` that flattens, written naively, to the same path as the real setting.
    decoy = RATIO + "    env.RANDOM_RANGE_RATIO: '0.8'\n"
    base = commit(repo, {f"{ROOT}{QWEN}": replace(RATIO, decoy)})
    head = commit(
        repo,
        {
            f"{ROOT}{QWEN}": replace(
                "RANDOM_RANGE_RATIO: '0.8'\n      USE", "RANDOM_RANGE_RATIO: '0.5'\n      USE"
            )
        },
    )
    report = _review(repo, base, head)
    common = _common_changes(report, QWEN_KEY)
    assert common == {"benchmark.env.RANDOM_RANGE_RATIO": ("0.8", "0.5")}
    assert len(report.changes[QWEN_KEY].runs) == 21
    [missing] = _found(report, "changelog-missing")
    assert missing.severity is Severity.BLOCKING and QWEN_KEY in missing.params["keys"]


def test_keys_that_read_alike_are_kept_apart(e2e: tuple[Path, str]) -> None:
    repo, _ = e2e
    # `1:` and `"1":`, `null:` and `"null":` are different keys of one mapping.
    extra = RATIO + "    options: {1: a, '1': b, null: c, 'null': d, 'x.y': e, x: {y: f}}\n"
    base = commit(repo, {f"{ROOT}{QWEN}": replace(RATIO, extra)})
    # Each edited key comes before the one that would have hidden it.
    head = commit(
        repo,
        {
            f"{ROOT}{QWEN}": replace(
                "{1: a, '1': b, null: c, 'null': d, 'x.y': e", "{1: A, '1': b, null: C, 'null': d, 'x.y': E"
            )
        },
    )
    report = _review(repo, base, head)
    assert _common_changes(report, QWEN_KEY) == {
        "benchmark.options.[1]": ("a", "A"),
        "benchmark.options.[null]": ("c", "C"),
        'benchmark.options."x.y"': ("e", "E"),
    }


# --- unbounded 1: list settings are compared in linear time -------------------------------------

ARGS = "        trust-remote-code: true\n"


def _sizes(values: range) -> str:
    return "[" + ",".join(map(str, values)) + "]"


def test_a_long_list_edited_at_every_run_is_compared_in_seconds(e2e: tuple[Path, str]) -> None:
    repo, _ = e2e
    # 4,000 capture sizes in `base`; the TP8 variants replace them with all but the last (through
    # an alias: the recipe is about 40 KB), and the head shifts every one of them.
    sizes = "graphs: &sizes " + _sizes(range(1, 4001)) + "\n"
    fewer = "fewer: &fewer " + _sizes(range(1, 4000)) + "\n"
    zipped = "      args:\n        cuda-graph-sizes: [" + ", ".join(["*fewer"] * 7) + "]\n"

    def recipe(text: str) -> str:
        text = text.replace(ARGS, ARGS + "        cuda-graph-sizes: *sizes\n")
        text = text.replace("      gpus: 8\n", "      gpus: 8\n" + zipped)
        return sizes + fewer + text

    base = commit(repo, {f"{ROOT}{QWEN}": recipe})
    shifted = "graphs: &sizes " + _sizes(range(4001, 8001)) + "\nfewer: &fewer " + _sizes(range(4001, 8000))
    head = commit(repo, {f"{ROOT}{QWEN}": lambda text: shifted + text[text.index("\nbase:") :]})
    assert 35_000 < (repo / ROOT / QWEN).stat().st_size < 45_000
    started = time.perf_counter()
    report = _review(repo, base, head)
    assert time.perf_counter() - started < 10  # minutes, when each item was looked for in the other list
    runs = report.changes[QWEN_KEY].runs
    path = "roles.agg.args.cuda-graph-sizes"
    changed = {(r.topology.tp, s.path, len(s.added), len(s.removed)) for r in runs for s in r.settings}
    assert len(runs) == 21 and changed == {
        (2, path, 4000, 4000),
        (4, path, 4000, 4000),
        (8, path, 3999, 3999),
    }
    dropped = _found(report, "changes-list-dropped")
    assert {(f.params["variant"], tuple(f.params["items"])) for f in dropped} == {
        (f"zip_override_tp8_ep1[{i}]", ("8000",)) for i in range(7)
    }


# --- item 5: of two names of one engine option, the one srt-slurm passes last counts ------------
# srt-slurm's `_config_to_cli_args` passes a role's options sorted by name, so `tp-size` comes after
# `tensor-parallel-size`, and `ep-size` / `ep_size` before `expert-parallel-size`, wherever the
# recipe writes them.

SGLANG_KEY = "qwen3.5-fp8-mi355x-sglang"
SGLANG = f"{ROOT}benchmarks/single_node/srt-slurm-recipes/qwen3.5/sglang/mi355x-fp8/8k1k.yaml"
PARALLEL = "        tensor-parallel-size: 4\n        expert-parallel-size: 1\n"


def test_the_name_passed_last_of_a_parallelism_option_is_what_runs(e2e: tuple[Path, str]) -> None:
    repo, base = e2e
    head = commit(repo, {SGLANG: replace(PARALLEL, PARALLEL + "        tp-size: 2\n")})
    report = _review(repo, base, head)
    wrong = [f for f in _found(report, "selection-none") if f.config_key == SGLANG_KEY]
    assert [f.params["concurrency"] for f in wrong] == [4, 8, 16, 32, 64, 128, 256]
    assert all(f.severity is Severity.BLOCKING for f in wrong)
    [twice] = _found(report, "recipe-option-twice")
    assert (twice.severity, twice.file, twice.line) == (Severity.WARNING, SGLANG, 24)
    params = twice.params
    assert (params["ignored"], params["ignored_value"], params["ignored_line"]) == (
        "tensor-parallel-size",
        "4",
        22,
    )
    assert (params["taken"], params["taken_value"], params["role"], params["matched"]) == (
        "tp-size",
        "2",
        "agg",
        True,
    )
    assert len(params["variants"]) == 7


def test_the_order_in_the_file_does_not_decide(e2e: tuple[Path, str]) -> None:
    """`tp-size: 8` written before the real `tensor-parallel-size: 4` is still passed after it: the
    server runs TP8 where the points are TP4."""
    repo, base = e2e
    head = commit(repo, {SGLANG: replace(PARALLEL, "        tp-size: 8\n" + PARALLEL)})
    report = _review(repo, base, head)
    wrong = [f for f in _found(report, "selection-none") if f.config_key == SGLANG_KEY]
    assert [f.params["concurrency"] for f in wrong] == [4, 8, 16, 32, 64, 128, 256]
    [twice] = _found(report, "recipe-option-twice")
    assert (twice.params["ignored"], twice.params["taken"], twice.params["taken_value"]) == (
        "tensor-parallel-size",
        "tp-size",
        "8",
    )


def test_an_ep_size_beside_expert_parallel_size_is_passed_first_and_ignored(e2e: tuple[Path, str]) -> None:
    """`ep_size: 4` after `expert-parallel-size: 1` is passed before it: the server runs EP 1, as
    the points, and the warning says `ep_size: 4` is not what runs."""
    repo, base = e2e
    head = commit(repo, {SGLANG: replace(PARALLEL, PARALLEL + "        ep_size: 4\n")})
    report = _review(repo, base, head)
    assert not [f for f in report.of(Severity.BLOCKING) if f.config_key == SGLANG_KEY]
    [twice] = _found(report, "recipe-option-twice")
    assert (twice.params["ignored"], twice.params["ignored_value"], twice.params["ignored_line"]) == (
        "ep_size",
        "4",
        24,
    )
    assert (twice.params["taken"], twice.params["taken_value"]) == ("expert-parallel-size", "1")


# --- item 4: the last `CONFIG_FILE=` is the recipe that runs ------------------------------------

DSV4_KEY = "dsv4-fp4-b300-dynamo-sglang"
TP4 = "recipes/sglang/deepseek-v4/8k1k/disagg-b300-1p1d-tp4-tp4.yaml"
DEP4 = "recipes/sglang/deepseek-v4/8k1k/disagg-b300-1p1d-dep4-dep8.yaml"


@pytest.fixture
def runfiles(tmp_path: Path) -> tuple[Path, str]:
    """The newest commit of the real history of the files a run executes (recipes of multinode
    rows included), as a repository to commit into."""
    bundle = shared_or_skip("inferencex-runfiles-history.bundle")
    repo = tmp_path / "runfiles"
    subprocess.run(["git", "clone", "-q", str(bundle), str(repo)], check=True)
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    )
    return repo, head.stdout.strip()


@pytest.mark.parametrize("where", ["decode", "prefill"])
def test_the_last_config_file_is_the_recipe_reviewed(runfiles: tuple[Path, str], where: str) -> None:
    repo, base = runfiles
    first = f'          - "CONFIG_FILE={TP4}"\n'
    second = f'          - "CONFIG_FILE={DEP4}"\n'
    if where == "decode":  # exported after the prefill's settings
        decode = "        decode:\n          num-worker: 1\n          tp: 4\n          ep: 1\n"
        decode += "          dp-attn: false\n"
        edit = replace(first + decode, first + decode + "          additional-settings:\n" + second)
    else:
        edit = replace(first, first + second)
    head = commit(repo, {"configs/nvidia-master.yaml": edit})
    report = _review(repo, base, head)
    common = _common_changes(report, DSV4_KEY)
    # The runs of that point now start from the second recipe: its name and topology are theirs.
    runs = [r for r in report.changes[DSV4_KEY].runs if r.status == "changed"]
    assert {r.concurrency for r in runs} == {1, 8, 16, 32} and not common
    names = {(s.base, s.head) for r in runs for s in r.settings if s.path == "name"}
    assert names == {("disagg-b300-1p1d-tp4-tp4", "disagg-b300-1p1d-dep4-dep8")}
    [twice] = _found(report, "master-config-file-twice")
    assert twice.severity is Severity.WARNING and twice.config_key == DSV4_KEY
    assert (twice.params["first"], twice.params["last"], twice.params["role"]) == (TP4, DEP4, where)


# --- item 6: an entry covers a changed run only if the sweep it starts runs it -------------------

CHANGELOG = f"{ROOT}perf-changelog.yaml"


def _entry(fields: str) -> str:
    return (
        f'\n- config-keys:\n    - {KEY}\n{fields}  description:\n    - "Smaller KV blocks."\n'
        "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n"
    )


@pytest.mark.parametrize(
    ("fields", "flags"),
    [
        ("  scenario-type:\n    - fixed-seq-len\n", []),
        ("  evals-only: true\n", ["evals-only"]),
        ("  all-evals: true\n", ["all-evals"]),
        ("  scenario-type:\n    - agentic-coding\n", None),  # runs them: covered
        ("", None),
    ],
    ids=["fixed-seq-len-only", "evals-only", "all-evals", "agentic", "every-scenario"],
)
def test_an_entry_covers_the_runs_its_sweep_runs(
    e2e: tuple[Path, str], fields: str, flags: list[str] | None
) -> None:
    repo, base = e2e
    head = commit(
        repo,
        {
            f"{ROOT}{RECIPE}": replace("block-size: 128\n", "block-size: 64\n"),
            CHANGELOG: lambda text: text + _entry(fields),
        },
    )
    report = _review(repo, base, head)
    assert len(report.changes[KEY].runs) == 7  # every run starts with the new argument
    missed = _found(report, "changelog-runs-not-swept")
    if flags is None:
        assert not missed
        assert report.sweep_plan["keys"][KEY]["changed"] == [1, 4, 14, 16, 48, 56, 72]
        return
    [finding] = missed
    assert (finding.severity, finding.config_key, finding.file) == (Severity.BLOCKING, KEY, CHANGELOG)
    assert (finding.params["count"], finding.params["runs"], finding.params["flags"]) == (7, 7, flags)
    assert finding.params["concurrencies"] == [1, 4, 14, 16, 48, 56, 72]
    assert report.verdict == "blocking"
    # The sweep plan agrees: it runs no benchmark of the key.
    assert KEY not in report.sweep_plan["keys"] or not report.sweep_plan["keys"][KEY]["runs"]


# --- unbounded 2: runs multiplied by aliases stay within the review's budgets --------------------

NVIDIA = f"{ROOT}configs/nvidia-master.yaml"
HEAVY = "qwen3.5-fp8-b300-sglang-agentic-mtp"  # 34 runs
MEASURE = (
    "import json, pathlib, resource, subprocess, sys, time\n"
    "started = time.perf_counter()\n"
    "done = subprocess.run(sys.argv[2:], capture_output=True)\n"
    "pathlib.Path(sys.argv[1]).write_bytes(done.stdout)\n"
    "print(json.dumps({'seconds': time.perf_counter() - started, 'json': len(done.stdout),\n"
    "    'rss_mb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))\n"
)


def _measured(repo: Path, base: str, head: str) -> tuple[dict[str, Any], dict[str, float]]:
    """The JSON report of the command line's review, and its wall time, peak memory and size (in a
    process of its own, so that the peak is the review's alone)."""
    command = [sys.executable, "-m", "bot", "review", "--repo", str(repo), "--base", base, "--head", head]
    command += ["--offline", "--format", "json"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    output = repo.parent / "report.json"
    probe = [sys.executable, "-c", MEASURE, str(output), *command]
    done = subprocess.run(probe, capture_output=True, text=True, check=True, env=env)
    return json.loads(output.read_bytes()), json.loads(done.stdout)


def _aliases(count: int, key: str, path: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        text = text.replace(f"\n{key}:\n", f"\n{key}: &heavy\n", 1)
        return text + "".join(f"alias-{i:05d}: *heavy\n" for i in range(count))

    return edit


def test_keys_aliasing_one_entry_and_a_wildcard_naming_them_stay_within_budget(e2e: tuple[Path, str]) -> None:
    repo, base = e2e
    entry = '\n- config-keys:\n    - "alias-*"\n  description:\n    - "Rerun."\n  pr-link: XXX\n'
    head = commit(repo, {NVIDIA: _aliases(15_000, HEAVY, NVIDIA), CHANGELOG: lambda text: text + entry})
    assert (repo / NVIDIA).stat().st_size - 300_000 < 500_000  # 15,000 short lines: 510,000 runs
    report, cost = _measured(repo, base, head)
    assert cost["seconds"] < 60 and cost["rss_mb"] < 200 and cost["json"] < 40_000_000, cost
    assert report["verdict"] == "blocking"
    blocking = {f["id"]: f for f in report["findings"] if f["severity"] == "blocking"}
    assert blocking["review-runs-too-heavy"]["file"] == NVIDIA
    assert blocking["sweep-plan-too-large"]["file"] == CHANGELOG
    assert report["sweep_plan"]["total_runs"] <= 40_000


def test_a_long_list_changed_under_many_aliases_fits_the_reports_budget(
    e2e: tuple[Path, str],
) -> None:
    repo, _ = e2e
    sizes = "graphs: &sizes " + _sizes(range(1, 4001)) + "\n"
    recipe = replace(ARGS, ARGS + "        cuda-graph-sizes: *sizes\n")
    base = commit(
        repo,
        {AMD: _aliases(2_000, QWEN_KEY, AMD), f"{ROOT}{QWEN}": lambda text: sizes + recipe(text)},
    )
    shifted = "graphs: &sizes " + _sizes(range(4001, 8001)) + "\n"
    head = commit(repo, {f"{ROOT}{QWEN}": lambda text: shifted + text[text.index("\nbase:") + 1 :]})
    report, cost = _measured(repo, base, head)
    assert cost["seconds"] < 60 and cost["rss_mb"] < 200 and cost["json"] < 40_000_000, cost
    [too_large] = [f for f in report["findings"] if f["id"] == "changes-too-large"]
    assert (too_large["severity"], too_large["file"]) == ("blocking", AMD)
    assert 0 < len(report["changes"]) < 2_001  # the keys that fit are reported
