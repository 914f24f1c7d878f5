"""Several kinds of change to old changelog entries in one PR, named as InferenceX's gate names
them (DESIGN.md §2 `changelog`): a `pr-link`-only change is a correction, never an edit; a
reorder is one "moved" finding, also when entries are deleted in the same PR (each deletion named);
the real violation comes first; each finding sits on the line that breaks the rule. Real PRs from
the history bundle (#759, #1161, #343) and small changelogs built for one rule each."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bot.findings import Finding, Severity
from bot.local import LocalRequest, run_local
from bot.model.changelog import compare

PATH = "perf-changelog.yaml"
UPSTREAM = "https://github.com/SemiAnalysisAI/InferenceX"


def entry(key: str, pr: int, text: str = "Retune") -> str:
    link = f"{UPSTREAM}/pull/{pr}"
    return f'- config-keys:\n    - {key}\n  description:\n    - "{text} {key}"\n  pr-link: {link}\n'


def changelog(*entries: str) -> bytes:
    return "\n".join(entries).encode()


def ids(diff) -> list[str]:
    return [p.message_id for p in diff.problems]


def test_a_correction_beside_an_edit_is_a_correction_and_the_edit_comes_first() -> None:
    old = [entry(f"key-{i}", 100 + i) for i in range(6)]
    new = [e.replace(f"/pull/{100 + i}", f"/pull/{200 + i}") for i, e in enumerate(old)]
    new[4] = new[4].replace('"Retune key-4"', '"Retune key-4 (see https://example.com/x)"')
    diff = compare(PATH, changelog(*old), changelog(*new))
    assert ids(diff) == ["changelog-edited"]
    assert diff.problems[0].params["index"] == 5 and diff.problems[0].line == 4 * 6 + 1
    assert len(diff.corrections) == 5 and diff.appended == [] and diff.inserted == []


def test_a_reorder_with_deletions_is_one_move_and_each_deletion() -> None:
    old = [entry(f"key-{i}", 100 + i) for i in range(10)]
    new = [old[i] for i in (0, 1, 2, 7, 3, 4, 6, 8)]  # 7 moved up; 5 and 9 removed
    diff = compare(PATH, changelog(*old), changelog(*new))
    problems = {p.message_id: [] for p in diff.problems}
    for p in diff.problems:
        problems[p.message_id].append(p.params)
    assert problems["changelog-moved"] == [{"count": 1, "index": 4}]
    assert [p["index"] for p in problems["changelog-removed"]] == [6, 10]
    assert set(problems) == {"changelog-moved", "changelog-removed"}
    assert diff.appended == [] and diff.inserted == []  # no entry here is new: no pr-link finding


def test_a_re_spaced_pr_link_beside_a_correction_is_named_on_its_own_line() -> None:
    old = changelog(entry("dsr1-fp8-b200-sglang", 3000), entry("gptoss-fp4-h200-vllm", 3088))
    new = old.replace(b"/pull/3000\n", b"/pull/3001\n").replace(
        f"pr-link: {UPSTREAM}/pull/3088".encode(), f"pr-link:  {UPSTREAM}/pull/3088".encode()
    )
    diff = compare(PATH, old, new)
    assert ids(diff) == ["changelog-correction-bytes"]
    respaced = new.split(b"\n").index(f"  pr-link:  {UPSTREAM}/pull/3088".encode()) + 1
    assert diff.problems[0].line == respaced == 11 and diff.problems[0].params["whitespace"] is True


def test_an_entry_replaced_where_it_stood_is_edited_even_with_new_keys() -> None:
    old = [entry("a", 1), entry("b-sglang", 2), entry("c", 3)]
    new = [old[0], entry("b-dynamo-sglang", 2, "Improve"), old[2]]
    diff = compare(PATH, changelog(*old), changelog(*new))
    assert ids(diff) == ["changelog-edited"] and diff.problems[0].params["index"] == 2


# --- real PRs ------------------------------------------------------------------------------------


def review(history: Path, number: int) -> list[Finding]:
    """The changelog findings of real PR `number` (squash-merged or merged), with its own URL."""
    log = subprocess.run(
        ["git", "-C", str(history), "log", "--format=%H %P%x09%s"], capture_output=True, text=True, check=True
    ).stdout
    shas = next(line.split("\t")[0].split() for line in log.splitlines() if f"(#{number})" in line)
    request = LocalRequest(
        repo=str(history),
        base=shas[1],
        head=shas[0],
        pr_number=number,
        pr_url=f"{UPSTREAM}/pull/{number}",
        offline=True,
    )
    report, _, _ = run_local(request)
    return [f for f in report.findings if f.check == "changelog"]


def blocking(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity is Severity.BLOCKING]


def test_759_rebranded_links_are_corrections_and_the_rewritten_description_is_the_edit(history) -> None:
    found = review(history, 759)
    [edited] = blocking(found)
    assert edited.message_id == "changelog-edited" and edited.params["index"] == 57
    assert edited.line == 463 and edited.params["gate"] == "pr"
    assert sum(f.message_id == "changelog-link-edit" for f in found) > 70  # info, not edits


def test_1161_cleanup_is_one_move_and_three_removals(history) -> None:
    found = blocking(review(history, 1161))
    assert [f.message_id for f in found] == ["changelog-removed"] * 3 + ["changelog-moved"]
    assert [f.params["index"] for f in found[:3]] == [147, 206, 210]
    assert found[3].params["count"] < 202  # the fewest entries that moved, one finding


def test_343_reformatted_entries_are_edits_not_new_entries(history) -> None:
    found = blocking(review(history, 343))
    assert {f.message_id for f in found} == {"changelog-edited", "changelog-more-edits"}
    assert not any(f.message_id.startswith("changelog-pr-link") for f in found)
