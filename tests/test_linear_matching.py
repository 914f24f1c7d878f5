"""Matching PR-controlled text takes linear time (issue #23, item 3): a changelog `config-keys`
wildcard is matched without backtracking, and no regex over PR text retries a long run from each
of its characters. Each case is a 100 KB input that took seconds before (figures in
`bench/bombs.py`); the tests assert the answer, never the time."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from bot.findings import Severity
from bot.model.changelog import compare, pattern_matches
from bot.model.wildcard import matches
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
def test_the_matcher_agrees_with_upstream_on_every_small_pattern_and_key(pattern: str, key: str) -> None:
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
    assert [(p.message_id, p.line, p.params) for p in diff.problems] == [
        ("changelog-trailing-space", 11, {"count": 1})
    ]
