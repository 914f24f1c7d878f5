"""InferenceX's changelog gate, rule by rule, on the exact bytes of small realistic changelogs
(DESIGN.md §2 `changelog`), and the `pr-link` and coverage rules end to end."""

from __future__ import annotations

import pytest

from bot.findings import Severity
from bot.model.changelog import compare, gate, pattern_matches
from bot.output.messages import en, zh
from bot.output.report_json import to_json
from tests.conftest import CHANGELOG

PATH = "perf-changelog.yaml"


def entry(key: str, pr: int | str, *, extra: str = "") -> str:
    link = pr if isinstance(pr, str) else f"https://github.com/SemiAnalysisAI/InferenceX/pull/{pr}"
    return f'- config-keys:\n    - {key}\n  description:\n    - "Retune {key}"\n  pr-link: {link}\n{extra}'


BASE = (entry("dsr1-fp8-b200-sglang", 101) + "\n" + entry("gptoss-fp4-h200-vllm", 102)).encode()
NEW = entry("kimik3-fp4-mi355x-atom-agentic-mtp", "XXX").encode()


def ids(diff) -> list[str]:
    return [p.message_id for p in diff.problems]


def warned(diff) -> list[str]:
    return [p.message_id for p in diff.warnings]


def gates(diff) -> list[str]:
    """Which of InferenceX's gates refuses each problem (`pr`: the PR-time check; `merge`)."""
    return [gate(p, diff.drops_lines) for p in diff.problems]


def test_one_empty_line_then_the_entry_is_accepted() -> None:
    diff = compare(PATH, BASE, BASE + b"\n" + NEW)
    assert ids(diff) == [] and diff.base_problems == []
    assert [e.config_keys for e in diff.appended] == [["kimik3-fp4-mi355x-atom-agentic-mtp"]]
    assert diff.appended[0].index == 2 and diff.appended[0].line == 13


def test_a_base_that_already_ends_with_an_empty_line_takes_the_entry_right_after_it() -> None:
    assert ids(compare(PATH, BASE + b"\n", BASE + b"\n" + NEW)) == []
    # …but not after one more: two empty lines.
    diff = compare(PATH, BASE + b"\n", BASE + b"\n\n" + NEW)
    assert ids(diff) == ["changelog-separator"] and diff.problems[0].params["blanks"] == 2


@pytest.mark.parametrize(
    ("separator", "params"),
    [
        (b"", {"blanks": 0, "spaces": False}),
        (b"\n\n", {"blanks": 2, "spaces": False}),
        (b"  \n", {"blanks": 1, "spaces": True}),  # a line of spaces is not an empty line
        (b"\n# retune\n", {"other": True}),
    ],
)
def test_the_separator_before_the_first_new_entry(separator: bytes, params: dict) -> None:
    diff = compare(PATH, BASE, BASE + separator + NEW)
    assert ids(diff) == ["changelog-separator"] and gates(diff) == ["merge"]
    assert warned(diff) == (["changelog-trailing-space"] if b" \n" in separator else [])
    assert params.items() <= diff.problems[0].params.items()
    assert diff.problems[0].line == BASE.count(b"\n") + separator.count(b"\n") + 1


def test_exactly_one_empty_line_between_new_entries() -> None:
    second = entry("qwen3.5-fp8-mi355x-sglang", "XXX").encode()
    assert ids(compare(PATH, BASE, BASE + b"\n" + NEW + b"\n" + second)) == []
    diff = compare(PATH, BASE, BASE + b"\n" + NEW + b"\n\n" + second)
    assert ids(diff) == ["changelog-spacing"] and diff.problems[0].params["blanks"] == 2
    spaces = compare(PATH, BASE, BASE + b"\n" + NEW + b"   \n" + second)
    assert ids(spaces) == ["changelog-spacing"] and warned(spaces) == ["changelog-trailing-space"]


def test_the_end_of_the_file() -> None:
    blank = compare(PATH, BASE, BASE + b"\n" + NEW + b"\n")
    assert ids(blank) == ["changelog-trailing-blank"] and gates(blank) == ["merge"]
    # The PR-time check itself reads the final newline.
    unended = compare(PATH, BASE, BASE + b"\n" + NEW.rstrip(b"\n"))
    assert ids(unended) == ["changelog-no-final-newline"] and gates(unended) == ["pr"]


def test_whitespace_at_the_end_of_a_new_line_is_a_warning_not_a_block() -> None:
    """InferenceX dropped its `git diff --check` rule (its PR 1853): `pr-link: …/pull/1311  ` is
    the right link. A later edit of such a line would trip the byte rule, hence the warning."""
    spaced = NEW.replace(b'agentic-mtp"\n', b'agentic-mtp"  \n').replace(
        b"pr-link: XXX\n", b"pr-link: XXX \n"
    )
    diff = compare(PATH, BASE, BASE + b"\n" + spaced)
    assert ids(diff) == [] and not diff.pr_gate_fails()
    assert warned(diff) == ["changelog-trailing-space"] and diff.warnings[0].params["count"] == 2
    assert diff.warnings[0].line == BASE.count(b"\n") + 5  # the description line
    assert diff.appended[0].pr_link == "XXX"


def test_a_tab_or_a_carriage_return_in_the_new_part() -> None:
    assert (
        ids(compare(PATH, BASE, BASE + b"\n" + NEW.replace(b"  pr-link", b"\tpr-link")))[0] == "changelog-tab"
    )
    assert "changelog-cr" in ids(compare(PATH, BASE, BASE + b"\n" + NEW.replace(b"\n", b"\r\n")))


def test_history_bytes_changed_by_whitespace_while_appending() -> None:
    """26 real PRs removed a line of spaces or trailing spaces above the end (the gate refuses)."""
    base = BASE.replace(
        b"pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/101\n",
        b"pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/101  \n",
    )
    diff = compare(PATH, base, BASE + b"\n" + NEW)
    assert ids(diff) == ["changelog-history-bytes"]
    assert diff.problems[0].params == {"line": 5, "whitespace": True}
    # Trimming a line that has text deletes it in the diff: the PR-time check refuses that too.
    assert gates(diff) == ["pr"]
    # Removing a line of spaces is only the merge step's business.
    spaced = BASE.replace(b"\n- config-keys:\n    - gptoss", b"  \n- config-keys:\n    - gptoss")
    blank = compare(PATH, spaced, BASE + b"\n" + NEW)
    assert ids(blank) == ["changelog-history-bytes"] and gates(blank) == ["merge"]


def test_a_format_only_edit_of_history_is_refused() -> None:
    diff = compare(
        PATH, BASE, BASE.replace(b'"Retune dsr1-fp8-b200-sglang"', b"'Retune dsr1-fp8-b200-sglang'")
    )
    assert ids(diff) == ["changelog-bytes-changed"] and diff.problems[0].params["line"] == 4


def test_a_pr_link_correction_alone_is_allowed() -> None:
    head = BASE.replace(b"/pull/101\n", b"/pull/111\n")
    diff = compare(PATH, BASE, head)
    assert ids(diff) == [] and diff.appended == []
    [(corrected, old)] = diff.corrections
    assert corrected.pr_link.endswith("/pull/111") and old.endswith("/pull/101")


def test_a_correction_mixed_with_other_bytes_or_with_new_entries_is_refused() -> None:
    corrected = BASE.replace(b"/pull/101\n", b"/pull/111\n")
    reflowed = corrected.replace(b'"Retune gptoss-fp4-h200-vllm"\n', b'"Retune gptoss-fp4-h200-vllm"  \n')
    assert ids(compare(PATH, BASE, reflowed)) == ["changelog-correction-bytes"]
    # The merge step allows any bytes on a corrected `  pr-link:` line, trailing spaces included
    # (a warning, as on a new line).
    spaced = compare(PATH, BASE, BASE.replace(b"/pull/101\n", b"/pull/111 \n"))
    assert ids(spaced) == [] and warned(spaced) == ["changelog-trailing-space"]
    assert spaced.warnings[0].line == 5
    assert ids(compare(PATH, BASE, corrected + b"\n" + NEW)) == ["changelog-link-edit-mixed"]
    # Quoting a link changes bytes, not the entry: neither a correction nor allowed.
    quoted = BASE.replace(b"pull/101\n", b'pull/101"\n').replace(b"pr-link: https", b'pr-link: "https', 1)
    assert ids(compare(PATH, BASE, quoted)) == ["changelog-bytes-changed"]


def test_entries_removed_edited_inserted_or_moved() -> None:
    first, second = entry("dsr1-fp8-b200-sglang", 101), entry("gptoss-fp4-h200-vllm", 102)
    assert ids(compare(PATH, BASE, first.encode())) == ["changelog-removed"]
    edited = BASE.replace(b'"Retune gptoss-fp4-h200-vllm"', b'"Retune gptoss again"')
    assert ids(compare(PATH, BASE, edited)) == ["changelog-edited"]
    inserted = compare(PATH, BASE, (first + "\n" + NEW.decode() + "\n" + second).encode())
    assert ids(inserted) == ["changelog-inserted"] and inserted.inserted[0].index == 1
    # A reorder of the whole file is one finding, however many entries moved (#1161: 202).
    many = [entry(f"key-{i}", 200 + i) for i in range(30)]
    moved = compare(PATH, "\n".join(many).encode(), "\n".join(reversed(many)).encode())
    # 29: the fewest entries that must move back to restore the order (one may stay put).
    assert ids(moved) == ["changelog-moved"] and moved.problems[0].params["count"] == 29


def test_entries_with_keys_of_mixed_types_are_compared_not_crashed_on() -> None:
    odd = entry("dsr1-fp8-b200-sglang", 101, extra="  1: one\n")  # `1` and `pr-link` do not sort
    base = (odd + "\n" + entry("gptoss-fp4-h200-vllm", 102)).encode()
    swapped = (entry("gptoss-fp4-h200-vllm", 102) + "\n" + odd).encode()
    diff = compare(PATH, base, swapped)
    assert ids(diff) == ["changelog-moved"]
    assert [p.message_id for p in diff.base_problems] == ["changelog-unknown-field"]


def test_the_schema_of_new_entries() -> None:
    def problems(extra: str) -> list[str]:
        return ids(compare(PATH, BASE, BASE + b"\n" + entry("k", "XXX", extra=extra).encode()))

    assert problems("  evals-only: yes\n") == []  # the gate's schema reads "yes" as true
    assert problems("  run-on: friday\n") == ["changelog-unknown-field"]
    assert problems("  scenario-type: [agentic]\n") == ["changelog-field-invalid"]
    assert problems("  append-only: true\n  evals-only: true\n") == ["changelog-append-only-evals"]
    assert problems("  eval-min-prefill-ep: 0\n") == ["changelog-field-invalid"]
    no_link = entry("k", "XXX").replace("  pr-link: XXX\n", "")
    assert ids(compare(PATH, BASE, BASE + b"\n" + no_link.encode())) == ["changelog-field-invalid"]


def test_every_entry_starts_with_a_config_keys_line() -> None:
    reordered = b'- description:\n    - "Retune k"\n  config-keys:\n    - k\n  pr-link: XXX\n'
    assert "changelog-entry-count" in ids(compare(PATH, BASE, BASE + b"\n" + reordered))


def test_a_broken_base_is_the_base_s_problem_not_the_pr_s() -> None:
    unlinked = BASE.replace(b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/101\n", b"")
    diff = compare(PATH, unlinked, unlinked + b"\n" + NEW)
    assert ids(diff) == [] and [p.message_id for p in diff.base_problems] == ["changelog-field-invalid"]
    no_newline = BASE.rstrip(b"\n")
    diff = compare(PATH, no_newline, no_newline + b"\n\n" + NEW)
    assert ids(diff) == [] and [p.message_id for p in diff.base_problems] == ["changelog-no-final-newline"]
    assert len(diff.appended) == 1


def test_wildcards_match_the_whole_key_and_only_star_is_special() -> None:
    assert pattern_matches("dsr1-fp8-*-sglang", "dsr1-fp8-b200-sglang")
    assert not pattern_matches("dsr1-fp8-*", "xdsr1-fp8-b200")
    assert not pattern_matches("dsr1-fp8-b?00-sglang", "dsr1-fp8-b200-sglang")
    assert pattern_matches("dsr1-fp8-b?00-sglang", "dsr1-fp8-b?00-sglang")


# --- end to end: the pr-link of a new entry, on a PR and locally --------------------------------

LINK = "  pr-link: XXX\n"
URL = "https://github.com/acme/inferencex/pull/7"
ON_PR = {"pr_number": 7, "pr_url": URL}
OTHER = ("changelog-pr-link-other", Severity.BLOCKING)
INVALID = ("changelog-pr-link-invalid", Severity.BLOCKING)
PLACEHOLDER = ("changelog-pr-link-placeholder", Severity.INFO)
REPO = "https://github.com/acme/inferencex"
UPSTREAM = "https://github.com/SemiAnalysisAI/InferenceX"  # what the example's base changelog links to


def _link(review_example, link: str, **pr: object):
    edits = {CHANGELOG: lambda text: text.replace(LINK, f"  pr-link: {link}\n")} if link != "XXX" else None
    report = review_example(edits, **pr)
    return {f.message_id: f.severity for f in report.findings if f.check == "changelog"}


@pytest.mark.parametrize(
    ("link", "pr", "expected"),
    [
        (URL, ON_PR, None),
        ("XXX", ON_PR, PLACEHOLDER),
        (f"{REPO}/pull/XXX", ON_PR, PLACEHOLDER),
        ("https://github.com/acme/inferencex/pull/XXXX", ON_PR, OTHER),
        ("https://github.com/acme/inferencex/pull/8", ON_PR, OTHER),
        ("TBD", {}, INVALID),
        ("https://github.com/acme/inferencex/pull/2305/changes", {}, INVALID),
        # Without a PR: any canonical link into the repository the base changelog links to.
        (f"{UPSTREAM}/pull/12", {}, None),
        ("https://github.com/acme/inferencex/pull/12", {}, INVALID),
        # --pr-number alone: the PR's URL is in that repository too.
        (f"{UPSTREAM}/pull/12", {"pr_number": 7}, OTHER),
        (f"{UPSTREAM}/pull/7", {"pr_number": 7}, None),
    ],
)  # fmt: skip
def test_the_pr_link_of_a_new_entry(review_example, link: str, pr: dict, expected) -> None:
    found = _link(review_example, link, **pr)
    bad = {k: v for k, v in found.items() if k.startswith("changelog-pr-")}
    assert bad == (dict([expected]) if expected else {}), found


def test_naming_an_unchanged_key_is_a_rerun_not_a_warning(review_example) -> None:
    mine = "    - kimik3-fp4-mi355x-atom-agentic-mtp\n  scenario-type:"
    also = "    - kimik3-fp4-mi355x-atom-agentic-mtp\n    - gptoss-fp4-h200-vllm\n  scenario-type:"
    report = review_example(
        {CHANGELOG: lambda text: text[: text.rindex(mine)] + also + text[text.rindex(mine) + len(mine) :]}
    )
    [named] = [f for f in report.findings if f.message_id == "changelog-unchanged-key"]
    assert named.severity is Severity.INFO and named.params["keys"] == ["gptoss-fp4-h200-vllm"]
    assert "gptoss-fp4-h200-vllm" not in report.sweep_plan["keys"]  # the entry's scenario-type: agentic only
    assert report.verdict == "clean"


def test_a_changelog_known_only_by_its_size_is_too_large_not_rewritten() -> None:
    """The GitHub source does not download a file over the parse limit (#15 finding 12): its
    bytes are unknown, so no byte rule can be judged; it is named as too large, in both languages."""
    from bot.findings import from_problem
    from bot.sources.snapshot import Oversized

    base = b"- config-keys:\n    - a\n  description:\n    - x\n  pr-link: https://example.invalid/pull/1\n"
    for old, new in ((base, Oversized(5_000_000, "b" * 40)), (Oversized(5_000_000, "a" * 40), base)):
        (problem,) = compare("perf-changelog.yaml", old, new).problems
        assert problem.message_id == "yaml-too-large" and problem.params["size"] == 5_000_000
        shown = from_problem("changelog", Severity.BLOCKING, problem)
        assert "5,000,000 bytes" in en(shown) and "5,000,000 字节" in zh(shown)


def test_json_findings_carry_their_stable_message_id(review_example) -> None:
    """Tools key on `id`, not on the wording (DESIGN.md §3)."""
    report = review_example({CHANGELOG: lambda text: text.replace(LINK, "  pr-link: TBD\n")})
    findings = to_json(report)["findings"]
    [invalid] = [f for f in findings if f["id"] == "changelog-pr-link-invalid"]
    assert invalid["severity"] == "blocking" and invalid["check"] == "changelog"
    assert "TBD" in invalid["message_en"] and invalid["line"] is not None
    assert all(isinstance(f["id"], str) and f["id"] for f in findings)


def test_a_correction_alone_warns_that_the_pr_time_check_fails(review_example, example) -> None:
    """The merge step accepts a pr-link-only correction; `process_changelog.py` refuses any deleted
    line, so InferenceX's PR-time check is red (#1158, #1365, #1821): a warning, not a block."""
    base_text = (example.path / CHANGELOG).read_text()
    without_entry = base_text.rstrip("\n").rsplit("\n\n", 1)[0] + "\n"
    corrected = without_entry.replace("/pull/1840\n", "/pull/1841\n")
    report = review_example({CHANGELOG: corrected})
    found = {f.message_id: f.severity for f in report.findings if f.check == "changelog"}
    assert found["changelog-link-edit"] is Severity.INFO
    assert found["changelog-correction-pr-gate"] is Severity.WARNING
    # Only prbot's own coverage rule blocks (the example PR's runs changed and lost their entry).
    assert [m for m, s in found.items() if s is Severity.BLOCKING] == ["changelog-key-not-covered"]
