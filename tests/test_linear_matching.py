"""Matching PR-controlled text takes linear time (issue #23, item 3): a changelog `config-keys`
wildcard is matched without backtracking, and no regex over PR text retries a long run from each
of its characters. Each case is a 100 KB input that took seconds before (figures in
`bench/bombs.py`); the tests assert the answer, never the time."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.checks import changelog as changelog_check
from bot.checks import claims, dram
from bot.findings import Severity
from bot.fix.yamledit import item_indent
from bot.github_action.events import is_review_command
from bot.model import owners
from bot.model.changelog import _ENTRY_LINE, compare, pattern_matches
from bot.model.images import PIN_RE
from bot.model.wildcard import matches
from bot.output import textsafe
from bot.sources import registry
from bot.sources.github import touched_lines
from bot.sources.references import parse_reference
from tests.conftest import CHANGELOG

PATH = "perf-changelog.yaml"
KB100 = 100_000


def upstream(pattern: str, key: str) -> bool:
    """InferenceX's own reading of a `config-keys` item (`process_changelog.py` at 843c6254f): a
    plain item names its key; with `*`, the escaped item with each star as `.*`, fully matched."""
    if "*" not in pattern:
        return pattern == key
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), key) is not None


# Short texts over the characters that matter: stars, line breaks, `?` and `[` (plain), letters.
_TEXT = st.text(alphabet="ab*?[\n", max_size=9)


@given(_TEXT, st.text(alphabet="ab?[\n*", max_size=12))
def test_the_matcher_agrees_with_upstream_on_small_patterns_and_keys(pattern: str, key: str) -> None:
    assert matches(pattern, key) is upstream(pattern, key)


def test_a_star_stands_for_text_without_a_line_break_as_upstream_s_dot_does() -> None:
    assert pattern_matches("dsr1-*-sglang", "dsr1-fp8-b200-sglang")
    assert not pattern_matches("dsr1-*-sglang", "dsr1-fp8\nb200-sglang")
    assert pattern_matches("dsr1*\n*sglang", "dsr1-fp8\nb200-sglang")  # the break is written out
    assert pattern_matches("*", "") and not pattern_matches("*", "\n")
    assert not pattern_matches("a*a", "a")  # the two ends may not overlap


def test_nine_stars_against_a_100_kb_key_answer_at_once() -> None:
    key = "z" * KB100 + "y"
    assert not matches("*********zz", key)  # the regex took minutes from k=6 stars on
    assert matches("*********zy", key) and matches("z*z*z*z*z*z*z*z*zy", key)
    assert not matches("*" * 50 + "\n*", key)  # a line break the key does not have


def test_a_wildcard_of_many_stars_is_an_unknown_key_not_a_review_out_of_time(review_example) -> None:
    # The regex took 9 s to try nine stars on the example's three keys, once per look at them.
    entry = '\n- config-keys:\n    - "*********zz"\n  description:\n    - "Rerun"\n  pr-link: XXX\n'
    report = review_example({CHANGELOG: lambda old: old + entry})
    found = {(f.check, f.message_id): f.severity for f in report.findings}
    assert found[("changelog", "changelog-unknown-key")] is Severity.BLOCKING
    assert not [f for f in report.findings if f.message_id == "check-deadline"]


def _entry(description_line: str) -> bytes:
    text = f'- config-keys:\n    - k\n  description:\n    - "Rerun"{description_line}\n  pr-link: XXX\n'
    return text.encode()


def test_trailing_space_is_found_after_a_100_kb_run_of_spaces_before_a_comment() -> None:
    base = _entry("")
    long_run = b" " * KB100 + b"# not a trailing space: a comment follows"
    head = base + b"\n" + _entry("").replace(b'"Rerun"', b'"Rerun"' + long_run).replace(b"XXX", b"XXX ")
    # `[ \t]+\n` took 22 s here, retrying the run from each of its spaces.
    diff = compare(PATH, base, head)
    assert diff.problems == []  # a warning since #24: upstream no longer runs `git diff --check`
    assert [(p.message_id, p.line, p.params) for p in diff.warnings] == [
        ("changelog-trailing-space", 11, {"count": 1})
    ]


# --- every other regex over PR-controlled text, on a 100 KB worst case ---------------------------
# Each case is the input that makes its regex retry the most (a long run its quantifier takes and
# gives back, at every place the match may start); the answer is asserted, the time is not.
# Audited and linear as they stand, except the three fixed here (trailing space, the registry's
# challenge, the changelog wildcard above) and master.py's `_TOP_KEY` (quadratic on a line of
# spaces: its owner is removing that text split).

SPACES = " " * 99_000  # the claims read at most 100,000 characters of PR text


def _claims(text: str, *known: str) -> tuple[list[tuple[str, str]], list[int]]:
    found = claims.parse([text], lambda name: name in known)
    assert not found.cut
    return [(c.name, c.value) for c in found.settings], [c.concurrency for c in found.as_before]


@pytest.mark.parametrize(
    ("text", "known", "expected"),
    [
        # _NAME and _VALUE (bounded gaps and values), _SENTENCE_END, _MENTION's `[\s=:]*`
        ("TP = 8" + SPACES + "conc" + " =:" * 300 + "x", ("TP",), ([("TP", "8")], [])),
        # _VALUE's quoted value never closed: at most 80 characters are tried
        ("TP='" + "a" * 99_000, ("TP",), ([], [])),
        # _AS_BEFORE's `[ \t]+` after "exactly", "same" and "as", then _LISTED_BEFORE's window
        ("exactly" + SPACES + "x; same \t" * 50 + "C4 and C16 serve exactly as before", (), ([], [4, 16])),
        # _LISTED_BEFORE: a list whose separators and links are one long run of spaces and tabs
        ("C1" + " \t" * 49_000 + "as before", (), ([], [])),
        # _CHAIN and _MENTION: a chain of 33,000 concurrencies, and a 99,000-digit one
        ("C1" + "/C2" * 33_000, (), ([], [])),
    ],
)
def test_claims_over_100_kb_of_pr_text(text: str, known: tuple[str, ...], expected: tuple) -> None:
    assert _claims(text, *known) == expected


def test_concurrency_mentions_over_100_kb() -> None:
    assert claims.mentioned_concurrencies("C1" + "/C2" * 33_000) == [1, 2]  # _CHAIN
    assert claims.mentioned_concurrencies("C" + "1" * KB100 + " conc" + " =:" * 33_000 + "7") == [
        7
    ]  # _MENTION


def test_changelog_entry_lines_and_links_over_100_kb() -> None:
    assert [m.start() for m in _ENTRY_LINE.finditer(b"- config-keys:" + b" " * KB100)] == []
    assert [m.start() for m in _ENTRY_LINE.finditer(b"- config-keys:" + b" " * KB100 + b"\n")] == [0]
    # _is_pull_url: `[\w.-]+` segments, then `/pull/` and digits
    assert not changelog_check._canonical("https://github.com/" + "a." * 50_000 + "/r/pull/1x", None)
    assert changelog_check._canonical("https://github.com/o/r/pull/" + "1" * KB100, None)
    assert item_indent(b"- config-keys:\n" + b" " * KB100 + b"x") == b"    "  # bot.fix's indent regex


def test_codeowners_comment_after_100_kb_of_comment_marks() -> None:
    assert owners._normalise("docs/ @team" + " #x" * 33_000) == ("docs/ @team", "docs/")


def test_image_patterns_over_100_kb() -> None:
    # (The recipe-reference regex of bot/diff.py is gone: references come from the parsed points, #22.)
    digest = "sha256:" + "0" * 64
    assert PIN_RE.match("r" * KB100 + "@" + digest)["repo"] == "r" * KB100
    assert PIN_RE.match("r" * KB100 + "@" + digest[:-1]) is None
    for bad in ("a-" * 50_000 + "!", "a__" * 33_000 + "!", "a/" * 50_000 + "!", "h" * KB100 + ".io-/r"):
        with pytest.raises(ValueError):
            parse_reference(bad)  # _HOST_RE, _REPO_RE, _TAG_RE
    with pytest.raises(ValueError):
        parse_reference("r@" + "a." * 50_000 + "!")  # _DIGEST_RE


def test_dram_suggestion_over_a_100_kb_line() -> None:
    line = "      TOTAL_CPU_DRAM_GB:" + " " * KB100 + "'1800'  # C48"
    assert dram._suggestion(line, "TOTAL_CPU_DRAM_GB", 1799) == line.replace("'1800'", "'1799'")
    assert (
        dram._suggestion("      TOTAL_CPU_DRAM_GB: " + "1" * KB100 + "x", "TOTAL_CPU_DRAM_GB", 1799) is None
    )


def test_a_registry_challenge_with_a_100_kb_word_is_read() -> None:
    # `(\w+)\s*=` retried the word from each of its letters: 7 s for 20 KB, minutes for 100 KB.
    header = "Bearer " + "a" * KB100 + ' realm="https://r.example/token",service="r.example"'
    assert registry._parse_challenge(header) == (
        "bearer",
        {"realm": "https://r.example/token", "service": "r.example"},
    )


def test_patch_hunks_and_review_commands_over_100_kb() -> None:
    assert touched_lines("@@ -" + "1" * KB100 + "\n+a") == frozenset()  # _HUNK: not a hunk header
    assert touched_lines("@@ -1,2 +" + "3" * 20 + ",2 @@" + " " * KB100 + "\n+a") == frozenset(
        {int("3" * 20)}
    )
    # `/review` is compared as a string now (#25): no leading space, whatever follows the command.
    assert not is_review_command(" " * KB100 + "/review") and is_review_command("/review" + " " * KB100)


def test_rendering_pr_text_over_100_kb() -> None:
    hex_run = "a" * KB100  # _LINKISH: a run of hex digits, a SHA unless a letter follows
    assert textsafe.no_links(hex_run + "g") == hex_run + "g"
    assert textsafe.no_links(hex_run + " ").split("\u200b") == ["a" * 6] * (KB100 // 6) + ["aaaa "]
    assert textsafe.redact("ghp_" + "a" * KB100 + "!") == "***!"  # _TOKEN_SHAPES
    assert textsafe.no_links("`" * 1_000 + "z" * KB100) == "`" * 1_000 + "z" * KB100  # _OPENER, never closed
    # _OPENER and _closer: PR values become code spans whose fences no backtick inside can close
    # (and md_text escapes backticks), so each closer is found at its own span's end.
    spans = " and ".join(textsafe.md_code("`" * width + " #1") for width in range(1, 300))
    assert len(spans) > 90_000
    assert textsafe.no_links(spans + " see #1") == spans + " see #\u200b1"
