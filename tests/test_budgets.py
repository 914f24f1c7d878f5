"""Issue #15: pull requests built to exhaust the review end in a blocking "too large", never in a
crash, a killed job or a stale "no blocking issues" (DESIGN.md §2, the fail-closed rule).

Each test commits the attack on top of the bundled example PR and reviews it as the CLI would.
The full-size figures (time, peak RSS) are measured by `bench/bombs.py`, not here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bot import engine
from bot.cli import main
from bot.findings import CHECK_IDS, Finding, Severity
from bot.local import LocalRequest, run_local
from bot.model.recipe import MAX_MERGED_VALUES, MAX_VARIANTS
from bot.model.selection import MAX_RUN_CHOICES
from bot.output.messages import en, zh
from bot.output.render import render_comment
from bot.report import EXIT_BLOCKING, Report
from bot.settings import Settings
from bot.sources.git import GitRepo
from tests.conftest import CHANGELOG, MASTER, RECIPE
from tests.test_hostile import append

KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"


def _blocking(report: Report, message_id: str) -> list[Finding]:
    return [f for f in report.findings if f.message_id == message_id and f.severity is Severity.BLOCKING]


def _not_crashed(report: Report) -> None:
    assert not [f for f in report.findings if "crashed" in f.message_id], report.findings


def _new_keys(count: int, concurrencies: int) -> tuple[str, str]:
    """`count` new config keys, each one point running `concurrencies` runs on the example
    recipe, and the changelog entries that name them."""
    conc = ", ".join(str(c) for c in range(1, concurrencies + 1))
    keys = "".join(
        f"\nbomb-{n}:\n  image: rocm/atom-dev:nightly_202610281457\n  model: m\n  model-prefix: m\n"
        "  runner: cluster:mi355x-amds\n  precision: fp4\n  framework: atom\n  multinode: false\n"
        "  scenarios:\n    agentic-coding:\n    - dram-utilization: 0.3\n      search-space:\n"
        f"      - {{ tp: 8, kv-offloading: none, conc-list: [{conc}], srt-recipe: {RECIPE} }}\n"
        for n in range(count)
    )
    entries = "".join(
        f'\n- config-keys:\n    - bomb-{n}\n  description:\n    - "load"\n  pr-link: XXX\n'
        for n in range(count)
    )
    return keys, entries


def test_nesting_hidden_in_chained_aliases_blocks_instead_of_crashing_a_check(
    review_example: Callable[..., Report],
) -> None:
    """Finding 1: 250 anchors of 60 levels, each aliasing the one before, under the example
    recipe's `base`. It crashed `dram` (RecursionError), which then said nothing about any key."""
    chain = ["chain0: &l0 leaf"] + [
        f"chain{i}: &l{i} " + "[" * 60 + f"*l{i - 1}" + "]" * 60 for i in range(1, 251)
    ]
    report = review_example({RECIPE: append("\n".join(chain) + "\n")})
    _not_crashed(report)
    (deep,) = _blocking(report, "yaml-too-deep")
    assert deep.file == RECIPE and deep.line is not None
    assert report.verdict == "blocking"


def test_a_large_base_times_many_overrides_is_too_large_not_a_memory_exhaustion(
    review_example: Callable[..., Report],
) -> None:
    """Finding 3, scaled down so that a regression cannot exhaust the test machine (the full-size
    bomb, 60,000 keys and 3,000 overrides, is in bench/bombs.py): a `base` of 1,000 keys with 600
    one-line overrides is over the merged-values budget, and is refused before any merge."""
    base = "".join(f"  k{i}: {i}\n" for i in range(1_000))
    overrides = "".join(f"override_v{i}: {{benchmark: {{env: {{CONC: '{i}'}}}}}}\n" for i in range(600))
    report = review_example({RECIPE: "base:\n" + base + overrides})
    _not_crashed(report)
    (too_large,) = _blocking(report, "recipe-too-large")
    assert too_large.file == RECIPE and too_large.line == 1
    assert too_large.params["values"] > MAX_MERGED_VALUES
    assert "too large to review" in en(too_large) and "过大" in zh(too_large)


def test_thousands_of_overrides_are_too_many_variants(review_example: Callable[..., Report]) -> None:
    """Finding 3's other half: 3,000 overrides, each a variant to select among."""
    base = "".join(f"  k{i}: {i}\n" for i in range(10))
    overrides = "".join(f"override_v{i}: {{benchmark: {{env: {{CONC: '{i}'}}}}}}\n" for i in range(3_000))
    report = review_example({RECIPE: "base:\n" + base + overrides})
    (too_many,) = _blocking(report, "recipe-too-many-variants")
    assert too_many.params == {"path": RECIPE, "variants": 3_000, "limit": MAX_VARIANTS}
    assert too_many.line == 12 + MAX_VARIANTS  # the first override past the limit


def test_a_few_variants_over_a_small_base_are_reviewed(review_example: Callable[..., Report]) -> None:
    """The budget is far above real recipes: the example's own variants are all checked."""
    report = review_example()
    assert not [f for f in report.findings if f.message_id.startswith(("recipe-too", "review-too"))]


def test_runs_times_variants_over_the_budget_block_and_name_the_keys(
    review_example: Callable[..., Report],
) -> None:
    """Finding 4, scaled down (the full-size bomb, 20 keys of 4,096 concurrencies, is in
    bench/bombs.py): 1,000 overrides (the most a recipe may have) and 20 new keys of 128
    concurrencies each come to 2.6 million selections. The keys the budget cannot pay for (the
    last 5 of 20, 128,000 each) are left out of the review and named in one blocking finding; the
    others, and the example's own key, are still reviewed."""
    recipe = "base:\n  roles: {agg: {gpus: 8}}\n" + "".join(
        f"override_v{i}: {{benchmark: {{env: {{TP: '{i}'}}}}}}\n" for i in range(MAX_VARIANTS)
    )
    keys, entries = _new_keys(20, 128)
    report = review_example({RECIPE: recipe, MASTER: append(keys), CHANGELOG: append(entries)})
    _not_crashed(report)
    (too_many,) = _blocking(report, "review-too-many-runs")
    assert too_many.params["count"] == 5 and too_many.params["limit"] == MAX_RUN_CHOICES
    left_out = set(too_many.params["keys"])
    assert len(left_out) == 5 and too_many.file == MASTER
    reviewed = {f"bomb-{n}" for n in range(20)} - left_out
    assert report.changed_keys.keys() == reviewed | {KEY}
    leftovers = [f for f in report.findings if f.message_id == "selection-leftovers-too-large"]
    assert leftovers and leftovers[0].severity is Severity.UNVERIFIED
    comment = render_comment(report)
    assert all(key in comment for key in left_out) and "无法审阅" in comment


def test_runs_under_the_budget_are_all_reviewed(review_example: Callable[..., Report]) -> None:
    """Two new keys of 64 concurrencies on the example recipe: far under the budget."""
    keys, entries = _new_keys(2, 64)
    report = review_example({MASTER: append(keys), CHANGELOG: append(entries)})
    assert not _blocking(report, "review-too-many-runs")
    assert {"bomb-0", "bomb-1"} <= report.changed_keys.keys()


def test_a_master_config_whose_name_has_a_line_break_is_a_finding(
    review_example: Callable[..., Report], example
) -> None:
    """Finding 5: `configs/nl\\n-master.yaml` matches `configs/*master.yaml`, so the sweep would
    run its keys; it was skipped without a word."""
    master = (example.path / MASTER).read_text(encoding="utf-8")
    report = review_example({"configs/nl\n-master.yaml": master.replace(KEY, "unseen-key")})
    (odd,) = _blocking(report, "path-odd-name")
    assert odd.file == "configs/nl\n-master.yaml"
    assert "configs/nl\\n-master.yaml" in en(odd)
    assert report.verdict == "blocking"


class _SlowSnapshot:
    """A snapshot whose reads each take `delay` seconds (a slow or stalling file source)."""

    def __init__(self, inner, delay: float) -> None:
        self.inner, self.delay = inner, delay
        self.label = inner.label

    def read(self, path: str) -> bytes | None:
        time.sleep(self.delay)
        return self.inner.read(path)

    def list_files(self, prefix: str) -> list[str]:
        return self.inner.list_files(prefix)

    def prefetch(self, paths: list[str]) -> None:
        self.inner.prefetch(paths)


def test_the_review_deadline_blocks_what_did_not_finish(example) -> None:
    """The whole review has a deadline (`review-deadline-s`): reading the files takes longer, so
    no check finished, and each says so as a blocking finding instead of the review hanging."""
    repo = GitRepo.open(str(example.path))
    base, head = repo.snapshot(example.base), repo.snapshot(example.head)
    changed = repo.changed_files(example.base, example.head)
    report = engine.review(
        _SlowSnapshot(base, 0.4),
        _SlowSnapshot(head, 0.4),
        changed,
        _pr(example),
        Settings(review_deadline_s=1),
    )
    late = _blocking(report, "check-deadline")
    assert (
        {f.check for f in late} == set(CHECK_IDS)
        and report.verdict == "blocking"
        and report.exit_code == EXIT_BLOCKING
    )
    assert "1 s" in en(late[0]) and "1 秒" in zh(late[0])


def test_a_check_still_running_at_the_deadline_blocks_and_the_others_are_kept(
    example, monkeypatch: pytest.MonkeyPatch
) -> None:
    def spins(_ctx: object) -> list[Finding]:
        while True:
            time.sleep(0.01)

    real = engine.function
    monkeypatch.setattr(engine, "function", lambda check: spins if check.id == "consistency" else real(check))
    repo = GitRepo.open(str(example.path))
    report = engine.review(
        repo.snapshot(example.base),
        repo.snapshot(example.head),
        repo.changed_files(example.base, example.head),
        _pr(example),
        Settings(review_deadline_s=1),
    )
    late = {f.check for f in _blocking(report, "check-deadline")}
    assert late == {"consistency", "changes", "sweep-plan", "launch", "scripts", "digest"}
    assert any(f.check == "dram" and f.severity is Severity.VERIFIED for f in report.findings)


def test_the_deadline_is_a_setting(tmp_path: Path, example, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "prbot.yml"
    config.write_text("review-deadline-s: 0\n")
    refs = ["--base", example.base, "--head", example.head]
    status = main(["review", "--repo", str(example.path), *refs, "--offline", "--config", str(config)])
    assert status == 2 and "review-deadline-s must be a positive whole number" in capsys.readouterr().err
    config.write_text("review-deadline-s: 120\n")
    report, _, _ = run_local(
        LocalRequest(
            repo=str(example.path), base=example.base, head=example.head, offline=True, config=str(config)
        )
    )
    assert not _blocking(report, "check-deadline")


def _pr(example):
    from bot.pullrequest import PullRequest

    return PullRequest(title=example.title, body=example.body, labels=example.labels)
