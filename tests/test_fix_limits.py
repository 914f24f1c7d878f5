"""`prbot fix` within the review's bounds (issue #23, item 4): every value of a file is located by
one parse and confirmed by one more, so a large recipe with several fixes is edited in linear
time with every other byte kept; the dry-run diff takes linear time; and the fix stops, changing
nothing, when the review's deadline (`review-deadline-s`) runs out. Figures: `bench/bombs.py`."""

from __future__ import annotations

import argparse

import pytest

from bot.example import ExampleRepo
from bot.fix import apply, command
from bot.fix.arguments import arguments
from bot.fix.yamledit import Place, replace_scalars
from tests.conftest import RECIPE, commit

WRONG = {
    "TOTAL_CPU_DRAM_GB: '1028'": "TOTAL_CPU_DRAM_GB: '1027'",
    "TOTAL_CPU_DRAM_GB: '1799'": "TOTAL_CPU_DRAM_GB: '1800'",
}


def _padding(entries: int) -> str:
    """A top-level mapping of `entries` one-line flow mappings (about 66 bytes each)."""
    return "notes:\n" + "".join(
        f"  n{i:07d}: {{text: 'a value as long as a real one', n: {i}}}\n" for i in range(entries)
    )


def _padded(seed: str, entries: int) -> str:
    return seed.replace("override_tp8_c4:", _padding(entries) + "override_tp8_c4:", 1)


def _broken(seed: str, entries: int) -> str:
    """The example recipe with every TOTAL_CPU_DRAM_GB one off, `entries` of padding inside."""
    for right, wrong in WRONG.items():
        seed = seed.replace(right, wrong)
    return _padded(seed, entries)


def test_every_fix_of_a_large_recipe_is_made_and_no_other_byte_moves(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = (example.path / RECIPE).read_text()
    broken = _broken(seed, 30_000)  # 2 MB: two ruamel.yaml parses per fix took 34 s on 0.1 MB
    commit(example.path, {RECIPE: broken})

    code = command.main(["--repo", str(example.path), "--base", example.base, "--offline", "--lang", "en"])

    out = capsys.readouterr().out
    fixed = (example.path / RECIPE).read_text()
    assert code == command.EXIT_FIXED and out.count("fixed: ") == 5
    assert fixed == _padded(seed, 30_000)
    changed = [
        n for n, (a, b) in enumerate(zip(broken.split("\n"), fixed.split("\n"), strict=True)) if a != b
    ]
    assert len(changed) == 5


def test_a_value_that_cannot_be_replaced_alone_is_left_and_the_others_are_still_made() -> None:
    text = "a:\n  T: &shared '5'\n  U: '5'\nb:\n  T: '5'\n  V: '5'  # kept\n"
    edited, done = replace_scalars(text, {Place("T", 2): "6", Place("T", 5): "6", Place("V", 6): "7"})
    # An anchored value is shared with its aliases: changing it would change them all.
    assert done == {Place("T", 5), Place("V", 6)}
    assert edited == "a:\n  T: &shared '5'\n  U: '5'\nb:\n  T: '6'\n  V: '7'  # kept\n"


def test_a_byte_order_mark_does_not_shift_the_edit() -> None:
    edited, done = replace_scalars('\ufeffa: 1\nT: "1800"\n', {Place("T", 2): "1799"})
    assert done == {Place("T", 2)} and edited == '\ufeffa: 1\nT: "1799"\n'


def test_the_dry_run_diff_of_a_file_of_equal_lines_shows_the_changed_line_alone() -> None:
    # difflib's matcher took 46 s on 4,000 equal lines: this is 100,000.
    old = b"  x: 1\n" * 50_000 + b"  T: '1800'\n" + b"  x: 1\n" * 50_000
    new = old.replace(b"'1800'", b"'1799'")
    context = "   x: 1\n" * 3
    expected = (
        f"--- a/r.yaml\n+++ b/r.yaml\n@@ -49998,7 +49998,7 @@\n{context}-  T: '1800'\n+  T: '1799'\n{context}"
    )
    assert apply.unified_diff("r.yaml", old, new) == expected


def test_an_appended_entry_after_a_fixed_link_is_one_hunk_when_they_are_close() -> None:
    old = b"- config-keys:\n    - k\n  pr-link: XXX\n"
    new = old.replace(b"XXX", b"https://github.com/o/r/pull/7") + b"\n- config-keys:\n    - j\n"
    assert apply.unified_diff("c.yaml", old, new) == (
        "--- a/c.yaml\n+++ b/c.yaml\n@@ -1,3 +1,6 @@\n - config-keys:\n     - k\n"
        "-  pr-link: XXX\n+  pr-link: https://github.com/o/r/pull/7\n+\n+- config-keys:\n+    - j\n"
    )


def test_fix_stops_when_the_deadline_runs_out_and_changes_nothing(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seed = (example.path / RECIPE).read_text()
    commit(example.path, {RECIPE: _broken(seed, 1_000)})
    before = (example.path / RECIPE).read_bytes()
    monkeypatch.setattr(command, "_deadline_s", lambda args: 1e-6)  # the review's own is untouched

    code = command.main(["--repo", str(example.path), "--base", example.base, "--offline"])

    out = capsys.readouterr()
    assert code == command.EXIT_ERROR
    assert (example.path / RECIPE).read_bytes() == before
    assert out.err.splitlines() == [
        "prbot: prbot fix stopped: reading the files and working out the fixes took longer than the review's"
        " 1e-06 s limit (the review-deadline-s setting). No file was changed.",
        "prbot: prbot fix 已停止：读取文件并计算修复所用的时间超过了审阅时限 1e-06 秒"
        "（由 review-deadline-s 设置）。没有改动任何文件。",
    ]
    assert "fixed" not in out.out


def test_fix_has_the_review_s_deadline_from_the_repository_settings(example: ExampleRepo) -> None:
    commit(example.path, {".github/prbot.yml": "review-deadline-s: 42\n"}, "settings")
    args = arguments(argparse.ArgumentParser()).parse_args(["--repo", str(example.path), "--base", "HEAD"])
    assert command._deadline_s(args) == 42
