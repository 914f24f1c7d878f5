"""Issue #22 items 1–8: the diff is total (DESIGN.md §2 "The diff is total").

Each test reproduces one way a change used to get through unreviewed, on small git repositories
built from the bundled example, on the real files of `inferencex-e2e/`, or on real merged PRs of
the history bundle, and checks that the review now sees it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.example import ExampleRepo
from bot.findings import Finding, Severity
from bot.local import LocalRequest, run_local
from bot.output.render import render_comment
from bot.report import Report
from tests.conftest import MASTER, RECIPE, commit, e2e_checkout, replace, squash_merge

KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"
C48_POINT = (
    "      - { tp: 8, dcp-size: 8, kv-offloading: dram,"
    ' kv-offload-backend: { name: lmcache, version: "0.4.5" },'
    f" conc-list: [48], spec-decoding: mtp, srt-recipe: {RECIPE} }}\n"
)


def _review(repo: Path, base: str, head: str) -> Report:
    return run_local(LocalRequest(repo=str(repo), base=base, head=head, offline=True))[0]


def _found(report: Report, message_id: str) -> list[Finding]:
    return [f for f in report.findings if f.message_id == message_id]


def _common(report: Report, key: str) -> dict[str, tuple[object, object]]:
    return {s.path: (s.base, s.head) for s in report.changes[key].common}


# --- item 1: hardware and model moves are shown ----------------------------------------------


def test_runner_moves_of_real_2169_are_shown_and_named_in_the_comment(history: Path) -> None:
    parent, merged, _ = squash_merge(history, 2169)
    report = _review(history, parent, merged)
    moves = {
        "dsv4-fp4-b200-vllm": ("b200-dsv4", "cluster:b200-dgxc"),
        "dsv4-fp4-b200-vllm-mtp": ("b200-dsv4", "cluster:b200-dgxc"),
        "dsv4-fp4-b300-vllm": ("b300", "cluster:b300-nv"),
        "dsv4-fp4-b300-vllm-mtp": ("b300", "cluster:b300-nv"),
    }
    for key, (before, after) in moves.items():
        common = _common(report, key)
        assert common["runner"] == (before, after), key
        # Its fixed-seq-len runs read nothing of the new label's DRAM record (issue 32).
        assert not any(path.startswith("hardware.") for path in common), key
        assert "runner" in report.changed_keys[key]
    comment = render_comment(report, lang="en")
    assert comment.count("cluster:b200-dgxc") >= 2 and comment.count("cluster:b300-nv") >= 2


def test_a_model_change_of_real_1780_is_shown_on_every_run(history: Path) -> None:
    parent, merged, _ = squash_merge(history, 1780)
    report = _review(history, parent, merged)
    key = "glm5-fp4-gb300-dynamo-sglang"
    assert _common(report, key)["model"] == ("nvidia/GLM-5-NVFP4", "nvidia/GLM-5.1-NVFP4")
    # Each of its 19 runs starts with another model: the key needs a changelog entry.
    assert len(report.changes[key].runs) == 19
    [uncovered] = [f for f in _found(report, "changelog-key-not-covered") if f.config_key == key]
    assert uncovered.severity is Severity.BLOCKING


# --- item 2: a runners.yaml change re-checks every run on the runners it changed -------------


@pytest.fixture
def e2e(tmp_path: Path) -> tuple[Path, str]:
    return e2e_checkout(tmp_path)


def test_lowering_a_clusters_dram_rechecks_its_pinned_budgets(e2e: tuple[Path, str]) -> None:
    repo, base = e2e
    cluster = "  mi355x-amds:\n    gpus-per-node: 8\n    available-cpu-dram-mib: "
    head = commit(
        repo, {"inferencex-e2e/configs/runners.yaml": replace(cluster + "3_095_781", cluster + "2_500_000")}
    )
    report = _review(repo, base, head)
    key = "minimaxm3-fp4-mi355x-atom-agentic-mtp"
    budgets = {  # what the run reads of the record: the budget the DRAM rule computes
        (s.base, s.head)
        for run in report.changes[key].runs
        for s in run.settings + report.changes[key].common
        if s.path == "total-cpu-dram-gb"
    }
    assert (1030, 900) in budgets
    wrong = [
        f for f in _found(report, "dram-total-mismatch") if f.config_key == key and f.params["gpus"] == 4
    ]
    assert {(f.params["found"], f.params["expected"]) for f in wrong} == {("1030", 900)}
    assert report.verdict == "blocking"
    assert not _found(report, "dram-nothing")
    # Only keys on that cluster changed.
    assert report.changed_keys and all(aspects == ["hardware"] for aspects in report.changed_keys.values())


# --- item 3: exactly the master configs InferenceX reads ---------------------------------------


def test_a_copy_in_a_file_inferencex_does_not_read_neither_hides_nor_counts(example: ExampleRepo) -> None:
    text = (example.path / MASTER).read_text(encoding="utf-8")
    block = text[text.index(f"{KEY}:") : text.index("# Qwen3.5 FP8 on MI355X")]
    head = commit(
        example.path,
        {
            MASTER: replace("- dram-utilization: 0.6\n", "- dram-utilization: 0.5\n"),
            "configs/.aaa-master.yaml": block,
        },
    )
    report = _review(example.path, example.head, head)
    wrong = _found(report, "dram-total-mismatch")
    assert wrong and {(f.config_key, f.file) for f in wrong} == {(KEY, RECIPE)}
    [unread] = _found(report, "master-not-read")
    assert (unread.severity, unread.file) == (Severity.WARNING, "configs/.aaa-master.yaml")
    verified = [f for f in report.findings if f.check == "dram" and f.severity is Severity.VERIFIED]
    assert all(f.file != "configs/.aaa-master.yaml" for f in verified)


def test_a_key_defined_in_both_master_configs_blocks(example: ExampleRepo) -> None:
    text = (example.path / MASTER).read_text(encoding="utf-8")
    block = text[text.index(f"{KEY}:") : text.index("# Qwen3.5 FP8 on MI355X")]
    head = commit(example.path, {"configs/nvidia-master.yaml": lambda t: t + "\n" + block})
    report = _review(example.path, example.head, head)
    [twice] = _found(report, "master-key-twice")
    assert (twice.severity, twice.config_key, twice.file) == (
        Severity.BLOCKING,
        KEY,
        "configs/nvidia-master.yaml",
    )
    assert twice.params["first"] == MASTER


def test_a_star_in_a_key_blocks(example: ExampleRepo) -> None:
    head = commit(example.path, {MASTER: replace(f"{KEY}:\n", "kimik3-*-agentic:\n")})
    [star] = _found(_review(example.path, example.head, head), "master-key-star")
    assert (star.severity, star.config_key) == (Severity.BLOCKING, "kimik3-*-agentic")


# --- item 4: two runs with one identity --------------------------------------------------------


def test_a_duplicate_run_blocks_and_both_are_checked(example: ExampleRepo) -> None:
    """A second C48 point of the same topology in a new 0.9 block listed first: both runs are
    launched, so both budgets are checked (0.9 → 2699 GB, the recipe pins 1799)."""
    block = "    - dram-utilization: 0.9\n      search-space:\n" + C48_POINT
    head = commit(
        example.path,
        {MASTER: replace("    - dram-utilization: 0.343\n", block + "    - dram-utilization: 0.343\n")},
    )
    report = _review(example.path, example.head, head)
    [duplicate] = _found(report, "runs-duplicate")
    assert (duplicate.severity, duplicate.config_key, duplicate.params["concurrency"]) == (
        Severity.BLOCKING,
        KEY,
        48,
    )
    wrong = _found(report, "dram-total-mismatch")
    assert [(f.params["concurrency"], f.params["found"], f.params["expected"]) for f in wrong] == [
        (48, "1799", 2699)
    ]


def test_a_duplicate_run_in_a_key_the_pr_adds_blocks_once(example: ExampleRepo) -> None:
    """A new key (no base runs to pair with: its runs are told apart by topology and concurrency,
    and by their point's fields only where those collide) with the C48 point given twice."""
    text = (example.path / MASTER).read_text(encoding="utf-8")
    start = text.index(f"{KEY}:\n")
    end = text.find("\n\n", start)
    entry = text[start : end if end >= 0 else len(text)].rstrip("\n") + "\n"
    copy = entry.replace(f"{KEY}:\n", "kimik3-fp4-mi355x-atom-agentic-mtp-copy:\n", 1)
    block = "    - dram-utilization: 0.343\n"
    assert block in copy
    copy = copy.replace(block, "    - dram-utilization: 0.6\n      search-space:\n" + C48_POINT + block, 1)
    head = commit(example.path, {MASTER: text.rstrip("\n") + "\n\n" + copy})
    report = _review(example.path, example.head, head)
    found = _found(report, "runs-duplicate")
    assert [(f.severity, f.config_key, f.params["concurrency"]) for f in found] == [
        (Severity.BLOCKING, "kimik3-fp4-mi355x-atom-agentic-mtp-copy", 48)
    ]


def test_a_duplicate_the_base_had_already_is_a_warning(example: ExampleRepo) -> None:
    block = "    - dram-utilization: 0.6\n      search-space:\n"
    base = commit(example.path, {MASTER: replace(block, block + C48_POINT)})
    image = "rocm/atom-dev:nightly_202610281457"
    head = commit(
        example.path, {MASTER: replace(f"image: {image}", "image: rocm/atom-dev:nightly_202611010000")}
    )
    [duplicate] = _found(_review(example.path, base, head), "runs-duplicate")
    assert (duplicate.severity, duplicate.params["concurrency"]) == (Severity.WARNING, 48)


# --- item 5: a recipe reference is followed whatever way it is written ------------------------


@pytest.mark.parametrize(
    "written",
    [
        f"srt-recipe: !!str {RECIPE}",
        'srt-recipe: "' + RECIPE.replace("agentic.yaml", "agentic\\x2eyaml") + '"',
    ],
    ids=["str-tag", "escape"],
)
def test_a_recipe_named_another_way_is_followed(example: ExampleRepo, written: str) -> None:
    base = commit(example.path, {MASTER: replace(f"srt-recipe: {RECIPE}", written, count=99)})
    head = commit(example.path, {RECIPE: replace("TOTAL_CPU_DRAM_GB: '1799'", "TOTAL_CPU_DRAM_GB: '1800'")})
    report = _review(example.path, base, head)
    assert KEY in report.changes
    wrong = _found(report, "dram-total-mismatch")
    assert wrong and {(f.config_key, f.params["found"], f.params["expected"]) for f in wrong} == {
        (KEY, "1800", 1799)
    }


# --- item 6: an alias into another entry --------------------------------------------------------


def test_an_edit_of_an_anchor_changes_the_keys_that_alias_it(example: ExampleRepo) -> None:
    image = "rocm/atom-dev:nightly_202610281457"
    base = commit(
        example.path,
        {
            MASTER: lambda t: t.replace(
                "  image: rocm/atom:rocm7.2.2_ubuntu24.04_py3.12_atom20260904\n",
                f"  image: &atom {image}\n",
                1,
            ).replace(f"{KEY}:\n  image: {image}\n", f"{KEY}:\n  image: *atom\n", 1)
        },
    )
    head = commit(
        example.path, {MASTER: replace(f"&atom {image}", "&atom rocm/atom-dev:nightly_202611010000")}
    )
    report = _review(example.path, base, head)
    assert _common(report, KEY)["image"] == (image, "rocm/atom-dev:nightly_202611010000")
    assert "image" in report.changed_keys[KEY] and "dsr1-fp4-mi355x-atom" in report.changed_keys


# --- item 7: the layout is detected at each ref ------------------------------------------------


def test_base_and_head_are_each_read_with_their_own_layout(example: ExampleRepo) -> None:
    head = commit(
        example.path,
        {
            MASTER: replace("conc-list: [48, 56, 72]", "conc-list: [48, 56, 64, 72]"),
            "inferencex-e2e/configs/x-master.yaml": "# notes\n",
        },
    )
    report = _review(example.path, example.head, head)
    runs = {r.concurrency: r.status for r in report.changes[KEY].runs}
    assert runs[64] == "added"
    [unread] = _found(report, "master-not-read")
    assert unread.file == "inferencex-e2e/configs/x-master.yaml"
    assert report.verdict == "blocking"  # the new run needs a changelog entry


# --- item 8: values are compared by value and type ----------------------------------------------


def test_true_and_one_point_zero_are_different_settings(example: ExampleRepo) -> None:
    head = commit(
        example.path, {RECIPE: replace("enable_prefix_caching: true", "enable_prefix_caching: 1.0")}
    )
    report = _review(example.path, example.head, head)
    [setting] = [s for s in report.changes[KEY].common if s.path.endswith("enable_prefix_caching")]
    assert setting.base is True and setting.head == 1.0 and not isinstance(setting.head, bool)
    assert report.verdict == "blocking"
    assert _found(report, "changelog-recipe-key-not-covered") or _found(report, "changelog-missing")


def test_the_master_configs_read_are_a_setting(example: ExampleRepo) -> None:
    """A repository whose generator reads another file says so in `.github/prbot.yml`."""
    text = (example.path / MASTER).read_text(encoding="utf-8")
    block = text[text.index(f"{KEY}:") : text.index("# Qwen3.5 FP8 on MI355X")].replace(KEY, "kimik3-extra")
    settings = "master-configs: [configs/amd-master.yaml, configs/extra-master.yaml]\n"
    base = commit(example.path, {".github/prbot.yml": settings, "configs/extra-master.yaml": block})
    head = commit(
        example.path, {"configs/extra-master.yaml": replace("conc-list: [48, 56, 72]", "conc-list: [48, 56]")}
    )
    report = _review(example.path, base, head)
    assert {r.concurrency: r.status for r in report.changes["kimik3-extra"].runs}[72] == "removed"
    assert not _found(report, "master-not-read")


def test_values_are_compared_by_type_whatever_their_size() -> None:
    """`same` tells `true`, `1` and `1.0` apart, and compares integers too long for Python's
    decimal text (over 4,300 digits) instead of raising."""
    from bot.model.runs import same

    huge = 16**3600 - 1
    assert same(huge, 16**3600 - 1) and same({"a": [huge]}, {"a": [16**3600 - 1]})
    assert not same(huge, huge - 1) and not same([huge], [huge + 1])
    assert not same(True, 1) and not same(1, 1.0) and not same("1", 1)


def test_a_huge_integer_in_a_multinode_worker_is_an_identity_not_a_crash() -> None:
    """A worker's settings identify a multinode run; building that identity never asks Python for
    an integer's decimal text (the whole review used to end there, with no finding)."""
    from bot.model.layout import Layout
    from bot.model.master import build_entry

    def entry(ep: int):
        worker = {"num-worker": 1, "tp": 8, "ep": ep}
        point = {"conc-list": [1], "prefill": worker, "decode": {"num-worker": 1, "tp": 8}}
        group = {"isl": 1024, "osl": 1024, "search-space": [point]}
        raw = {"image": "i", "runner": "r", "multinode": True, "scenarios": {"fixed-seq-len": [group]}}
        return build_entry("k", raw, "configs/amd-master.yaml", 1, Layout(""))

    huge = 16**3600 - 1
    [same], [also], [other] = entry(huge).points, entry(16**3600 - 1).points, entry(huge - 1).points
    assert same.topology == also.topology and same.topology != other.topology
