"""Words that say what they mean (issue #26): the one-line summary counts what it names, a setting
that appears is "set to", a removed sequence-length config is named, runs are named one way, an
image change keeps its repository and tag, and no number is left empty."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.checks.changes_view import KeyChanges, RunChange, Setting, Status, Topology
from bot.cli import main
from bot.local import LocalRequest, run_local
from bot.output import messages, render
from bot.output.messages import en, zh
from tests.conftest import squash_merge


def _review(repo: Path, number: int, labels: tuple[str, ...] = ()):
    base, head, _ = squash_merge(repo, number)
    report, _, _ = run_local(LocalRequest(repo=str(repo), base=base, head=head, labels=labels, offline=True))
    return report


def test_the_summary_line_counts_checks_passed_and_notes_not_findings(capsys) -> None:
    assert main(["demo", "--format", "json"]) == 0
    err = capsys.readouterr().err.splitlines()
    # The counts of the comment's sections: its "Notes (5)" (the sweep plan is a section of its own).
    assert err[0].startswith("prbot: clean — 8 checks passed, 5 not checked, 5 notes in ")
    assert err[1].startswith("prbot: 无问题 — 8 项检查通过、5 项未检查、5 条备注，用时 ")
    assert main(["demo", "--lang", "en"]) == 0
    comment = capsys.readouterr().out
    assert "<summary>Notes (5)</summary>" in comment
    assert (
        "<summary>What was checked (8)</summary>" in comment
        and "<summary>Not checked (5)</summary>" in comment
    )
    assert "findings" not in err[0]


def test_the_demo_does_not_blame_a_flag_the_user_never_passed(capsys) -> None:
    main(["demo", "--lang", "en"])
    comment = capsys.readouterr().out
    assert "--offline" not in comment
    assert "the registry was not asked (the demo never contacts a registry)" in comment


def test_an_offline_review_names_the_flag(example, capsys) -> None:
    main(["review", "--repo", str(example.path), "--base", example.base, "--head", example.head])
    assert "--offline" not in capsys.readouterr().out  # the flag was not given: the registry is asked
    main(["review", "--repo", str(example.path), "--base", example.base, "--head", example.head, "--offline"])
    assert "the registry was not asked (`--offline`)" in capsys.readouterr().out


def _setting(lang: str, **setting) -> str:
    return render._setting(lang, Setting("benchmark.env.NAME", **setting))


def test_a_setting_that_appears_is_set_and_one_that_goes_is_removed() -> None:
    assert _setting("en", base=None, head=64) == "`NAME` set to `64`"
    assert _setting("zh", base=None, head=64) == "`NAME` 设为 `64`"
    assert _setting("en", base="1", head=None) == "`NAME` removed (was `1`)"
    assert _setting("zh", base="1", head=None) == "`NAME` 已删除（原为 `1`）"


def test_a_list_names_what_was_added_and_never_says_minus_zero() -> None:
    old = [f"layer.{i}.*" for i in range(6)]
    new = [*old, "*mlp.shared*", "*kv_a_proj*"]
    text = _setting("en", base=old, head=new, added=new[6:], removed=[])
    assert text == "`NAME`: 2 added (`*mlp.shared*`, `*kv_a_proj*`)"
    assert "−0" not in text and "−" not in _setting("zh", base=old, head=new, added=new[6:], removed=[])
    both = _setting("zh", base=old, head=new[1:], added=new[6:], removed=old[:1])
    assert both == "`NAME`：新增 2 项（`*mlp.shared*`、`*kv_a_proj*`）、删除 1 项（`layer.0.*`）"


@pytest.mark.parametrize(
    ("old", "new", "shown"),
    [
        (
            "docker.io/lmsysorg/sglang:v0.5.5-cu129-amd64-rocm700-mi35x-20260811",
            "docker.io/lmsysorg/sglang:v0.5.5-cu129-amd64-rocm700-mi35x-20260818",
            ("…/sglang:v0.5.5-c…-20260811", "…/sglang:v0.5.5-c…-20260818"),
        ),
        (
            "rocm/atom-dev:nightly_202610131505",
            "rocm/atom-dev:nightly_202610281457",
            ("rocm/atom-dev:nightly_202610131505", "rocm/atom-dev:nightly_202610281457"),
        ),
        (
            "rocm/atom-dev@sha256:" + "2180f0f4" * 8,
            "rocm/atom-dev@sha256:" + "96a96142" * 8,
            ("rocm/atom-dev@sha256:2180f0f42180f0f4…", "rocm/atom-dev@sha256:96a9614296a96142…"),
        ),
    ],
)
def test_an_image_change_keeps_repository_and_tag_readable(
    old: str, new: str, shown: tuple[str, str]
) -> None:
    assert render._pair(old, new) == shown


def _run(
    concurrency: int,
    status: Status,
    tp: int,
    isl: int | None = 1024,
    variants: tuple[str | None, ...] = (None, None),
) -> RunChange:
    osl = 1024 if isl else None
    topology = Topology("fixed-seq-len", isl, osl, tp, 1, 1, 1, 1, False, "none", "none")
    return RunChange(concurrency, topology, variants[0], variants[-1], status, ())


def _view(lang: str, runs: list[RunChange], detailed: bool) -> render.KeyShown:
    return render._key_view(lang, "k", KeyChanges((), tuple(runs)), detailed)


def test_new_runs_sharing_a_concurrency_are_named_with_their_config() -> None:
    """ "4 new (C64, C128, C256)" named four runs as three concurrencies."""
    runs = [_run(64, "added", 4), _run(64, "added", 8), _run(128, "added", 8), _run(256, "added", 8)]
    runs += [_run(c, "as-before", 8) for c in (1, 2, 4)]
    assert _view("en", runs, detailed=False).states == (
        "3 as before · 4 new (C64 (1k1k TP4), C64 (1k1k TP8), C128 (1k1k TP8), C256 (1k1k TP8))"
    )


def test_a_sequence_length_config_removed_whole_is_named() -> None:
    runs = [_run(c, "removed", 8) for c in (1, 2, 4)] + [_run(c, "as-before", 8, isl=8192) for c in (1, 2)]
    assert _view("en", runs, detailed=False).states == "1k1k removed (3 runs) · 2 as before"
    assert _view("zh", runs, detailed=False).states == "1k1k 已删除（3 次运行） · 2 次运行与之前相同"
    [row, *_] = _view("en", runs, detailed=True).rows
    assert row.runs == "1k1k: all 3 runs" and row.what == "removed run"


def test_a_recipe_without_overrides_is_shown_as_its_defaults_not_base() -> None:
    """#2709's runs each use a flat recipe, whose one variant the model calls `base`: the variant
    column read `base`, a name no recipe file has. A named variant keeps its name, as code."""
    runs = [_run(c, "changed", 8, variants=("base", "base")) for c in (20, 30)]
    runs.append(_run(60, "changed", 8, variants=("override_c60", "base")))
    [en_row] = _view("en", runs, detailed=True).rows
    [zh_row] = _view("zh", runs, detailed=True).rows
    assert en_row.variants == "the recipe's defaults, `override_c60` → the recipe's defaults"
    assert zh_row.variants == "配方的默认设置、`override_c60` → 配方的默认设置"


def test_2263_says_1k1k_removed(history: Path) -> None:
    """#2263 deprecated the 1k1k configurations: the changes view says so for each key."""
    report = _review(history, 2263)
    comment = render.render_comment(report, lang="en")
    assert "**`dsr1-fp4-b200-sglang`** — 1k1k removed (9 runs) · 9 as before" in comment
    assert "… and 182 more config keys (180 with changed points, 2 removed)" in comment


def test_keys_beyond_the_table_count_a_new_key_once() -> None:
    assert render._aspects(["added", "points", "image"]) == ["added"]
    assert render._aspects(["points", "image"]) == ["points", "image"]
    assert render._aspects(None) == ["other"]


def test_evals_only_never_leaves_the_gpu_hours_empty(history: Path) -> None:
    """`--label full-sweep-fail-fast --label evals-only` on #2652: "GPU-hours: . The sweep…"."""
    report = _review(history, 2652, ("full-sweep-fail-fast", "evals-only"))
    [total] = [f for f in report.findings if f.message_id == "sweep-total"]
    assert "GPU-hours: ." not in en(total) and "GPU-hours: 0 (no benchmark runs)." in en(total)
    assert "GPU 时间：0（没有基准测试运行）。" in zh(total)


def test_several_gpu_counts_are_a_sum_a_reader_can_check() -> None:
    """It said "55 (3600 s × 6 or 8 or 13 or 14 GPUs)": now each GPU count with its runs."""
    params = {"runs": 4, "jobs": 4, "evals": 0, "starts": True, "reason": "", "trimmed": False}
    params |= {"duration": 3600, "timed": 4, "untimed": 0, "no_gpus": 0, "gpu_hours": 12}
    params["gpus"] = [[2, 2], [4, 2]]  # 3600 s × (2 × 2 + 2 × 4) = 12 GPU-hours
    en_text, zh_text = (messages.render("sweep-total", lang, params) for lang in ("en", "zh"))
    assert "GPU-hours: 12 (3600 s × (2 runs × 2 GPUs + 2 runs × 4 GPUs))" in en_text
    assert "GPU 时间：12 小时（3600 秒 × （2 次运行 × 2 块 GPU + 2 次运行 × 4 块 GPU））" in zh_text
