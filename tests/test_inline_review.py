"""The inline review: blocking findings on changed lines as review comments, end to end through
real PyGithub against the loopback fake GitHub (tests/github_fake.py), on the example PR."""

from __future__ import annotations

import dataclasses
import io
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from conftest import CHANGELOG, MASTER, RECIPE, commit, replace, shared_or_skip
from github_fake import EventFiles, FakeGitHub, ReviewComment, action_env, comment_event, pull_event

from bot.example import ExampleRepo
from bot.findings import Severity, finding
from bot.github_action.outputs import annotations
from bot.github_action.review import REVIEW_MARKER, draft_comment, wanted_comments
from bot.github_action.run import run_action
from bot.model.changelog import compare
from bot.output import changelog_draft as draft
from bot.report import Report
from bot.sources.github import ClientOptions, touched_lines

PR = 7
FAST = ClientOptions(
    timeout=10, backoff_factor=0.01, seconds_between_writes=None, rate_limit_wait=0.0, max_rate_limit_wait=0.0
)
WRONG_TOTAL = replace("TOTAL_CPU_DRAM_GB: '1799'", "TOTAL_CPU_DRAM_GB: '1800'")  # line 164 of the recipe
SUGGESTION = "```suggestion\n      TOTAL_CPU_DRAM_GB: '1799'\n```"


class Action:
    """The action run against the fake for the example PR, one event at a time."""

    def __init__(self, fake: FakeGitHub, folder: Path) -> None:
        self.fake, self.folder, self.runs = fake, folder, 0

    def run(self, event: tuple[str, dict] | None = None, **inputs: str) -> tuple[int, str, str]:
        """(exit status, job log, job summary) of one run; the pull request event by default."""
        self.runs += 1
        files = EventFiles(self.folder / f"run{self.runs}")
        stream = io.StringIO()
        env = action_env(self.fake, files, event or pull_event(self.fake, PR), inputs)
        code = run_action(env, options=FAST, stream=stream)
        return code, stream.getvalue(), files.summary.read_text(encoding="utf-8")

    def push(self, example: ExampleRepo, edits: dict, message: str) -> str:
        """Commit `edits` on top of the PR's head and make that the PR's new head."""
        head = commit(example.path, edits, message)
        self.fake.pulls[PR].head = head
        return head


@pytest.fixture
def served(example: ExampleRepo, tmp_path: Path) -> Iterator[tuple[FakeGitHub, Action]]:
    with FakeGitHub(example.path) as fake:
        fake.add_pull(
            PR, example.base, example.head, title=example.title, body=example.body, labels=example.labels
        )
        yield fake, Action(fake, tmp_path)


def ours(fake: FakeGitHub) -> list[ReviewComment]:
    return [c for c in fake.review_comments_on(PR) if c.login == fake.bot_login]


def test_a_wrong_dram_total_is_commented_on_its_line_with_a_suggestion(example, served) -> None:
    fake, action = served
    head = action.push(example, {RECIPE: WRONG_TOTAL}, "TOTAL_CPU_DRAM_GB typo")
    code, log, _ = action.run()
    assert code == 1
    [posted] = fake.calls("POST", r"/pulls/7/reviews$")
    assert posted.body["event"] == "COMMENT" and posted.body["commit_id"] == head
    assert posted.body["body"].startswith(REVIEW_MARKER)
    [comment] = ours(fake)
    assert (comment.path, comment.line, comment.commit) == (RECIPE, 164, head)
    assert comment.body.startswith(REVIEW_MARKER + "\n**prbot dram** — ")
    assert comment.body.endswith(SUGGESTION)  # once, after both languages
    assert comment.body.count("```suggestion") == 1
    english, chinese = comment.body.split("\n\n")[:2]
    assert "1800" in english and "1799" in english
    assert chinese.startswith("**prbot dram** —— ") and "1800" in chinese
    assert "Inline review posted on" in log and "1 comment on changed lines" in log


def test_the_same_findings_on_the_same_head_post_nothing_again(example, served) -> None:
    fake, action = served
    action.push(example, {RECIPE: WRONG_TOTAL}, "TOTAL_CPU_DRAM_GB typo")
    action.run()
    [first] = ours(fake)
    request = fake.add_comment(PR, "/review", "maintainer", association="MEMBER")
    before = len(fake.requests)
    code, log, _ = action.run(comment_event(fake, request))
    assert code == 1
    assert [c.id for c in ours(fake)] == [first.id]
    assert len(fake.calls("POST", r"/pulls/7/reviews$")) == 1
    assert not fake.calls("DELETE", r"/pulls/comments/")
    again = [(r.method, r.path) for r in fake.requests[before:] if "/pulls/7/comments" in r.path]
    assert again == [("GET", "/repos/acme/inferencex/pulls/7/comments")]  # listed once, nothing written
    assert "Inline review already up to date" in log


def test_after_a_fixing_push_no_comment_of_the_bot_remains(example, served) -> None:
    fake, action = served
    action.push(example, {RECIPE: WRONG_TOTAL}, "TOTAL_CPU_DRAM_GB typo")
    action.run()
    assert len(ours(fake)) == 1
    action.push(example, {RECIPE: replace("TOTAL_CPU_DRAM_GB: '1800'", "TOTAL_CPU_DRAM_GB: '1799'")}, "fix")
    code, log, _ = action.run()
    assert code == 0
    assert ours(fake) == []
    assert len(fake.calls("DELETE", r"/pulls/comments/\d+$")) == 1
    assert len(fake.calls("POST", r"/pulls/7/reviews$")) == 1  # the first run's only
    assert "Deleted 1 outdated inline review comment of the bot" in log


def test_a_push_that_keeps_the_finding_moves_its_comment_to_the_new_head(example, served) -> None:
    fake, action = served
    action.push(example, {RECIPE: WRONG_TOTAL}, "TOTAL_CPU_DRAM_GB typo")
    action.run()
    head = action.push(example, {MASTER: lambda text: text + "\n"}, "unrelated")
    action.run()
    [comment] = ours(fake)
    assert (comment.line, comment.commit) == (164, head)
    assert len(fake.calls("POST", r"/pulls/7/reviews$")) == 2  # one review per head commit


def test_marked_review_comments_of_other_accounts_are_never_deleted(example, served) -> None:
    fake, action = served
    action.push(example, {RECIPE: WRONG_TOTAL}, "TOTAL_CPU_DRAM_GB typo")
    copied = fake.add_review_comment(PR, RECIPE, 164, REVIEW_MARKER + "\nquoting the bot", "mallory")
    app = fake.add_review_comment(PR, RECIPE, 164, REVIEW_MARKER + "\nanother app", "otherapp[bot]")
    action.run()
    action.push(example, {RECIPE: replace("TOTAL_CPU_DRAM_GB: '1800'", "TOTAL_CPU_DRAM_GB: '1799'")}, "fix")
    _, log, _ = action.run()
    assert ours(fake) == []
    assert {c.id for c in fake.review_comments_on(PR)} == {copied.id, app.id}
    assert "Review comments by mallory, otherapp[bot] carry the bot's marker" in log


def test_a_blocking_finding_on_a_line_the_pr_did_not_touch_gets_no_comment(example, served) -> None:
    """A new utilization makes the untouched `TOTAL_CPU_DRAM_GB: '1028'` lines wrong: they are
    annotated, not commented."""
    fake, action = served
    retune = replace("dram-utilization: 0.343", "dram-utilization: 0.4")
    action.push(example, {MASTER: retune}, "retune C14/C16")
    code, log, _ = action.run()
    assert code == 1
    assert f"::error file={RECIPE},line=121," in log  # the finding is there, on an untouched line
    assert not fake.calls("POST", r"/pulls/7/reviews$") and not fake.review_comments


def test_a_file_without_a_patch_gets_no_comment(example, served) -> None:
    fake, action = served
    action.push(example, {RECIPE: WRONG_TOTAL}, "TOTAL_CPU_DRAM_GB typo")
    fake.omit_patches = {RECIPE}  # GitHub shows no diff for it: no line can be commented
    code, _, _ = action.run()
    assert code == 1
    assert not fake.calls("POST", r"/pulls/7/reviews$") and not fake.review_comments


@pytest.mark.parametrize(
    ("refuse", "note"),
    [
        ("read-only", "The inline review could not be posted: the token may not write to this pull request"),
        ("422", "The inline review could not be posted: GitHub answered HTTP 422 while posting the inline"),
        ("422", "inline review: Unprocessable Entity: Pull request review thread is locked"),  # errors[]
    ],
)
def test_a_refused_review_is_a_note_and_the_exit_status_follows_the_verdict(
    example, served, refuse: str, note: str
) -> None:
    fake, action = served
    action.push(example, {RECIPE: WRONG_TOTAL}, "TOTAL_CPU_DRAM_GB typo")
    if refuse == "read-only":
        fake.read_only()
    else:
        reason = ["Pull request review thread is locked"]
        fake.fail("POST", r"/pulls/7/reviews$", 422, None, "Unprocessable Entity", errors=reason)
    code, log, summary = action.run()
    assert code == 1  # blocking, as without the inline review
    assert note in summary and note in log
    assert not fake.review_comments


def test_only_changed_lines_of_a_patch_count_as_touched() -> None:
    patch = "\n".join(
        [
            "@@ -3,3 +3,4 @@ name: x",
            " kept",
            "-old",
            "+new\u2028same line",
            "+added",
            " kept",
            "@@ -40 +41,2 @@",
            "+last",
            "+line",
            "\\ No newline at end of file",
        ]
    )
    assert touched_lines(patch) == {4, 5, 41, 42}
    assert touched_lines(None) == frozenset() and touched_lines(12) == frozenset()


def test_annotations_are_at_most_ten_blocking_first() -> None:
    warnings = [
        finding("labels", Severity.WARNING, "labels-no-sweep-entry-missing", file=f"w{i}.yaml", line=i + 1)
        for i in range(12)
    ]
    blocking = [
        finding("changelog", Severity.BLOCKING, "changelog-missing", file=f"b{i}.yaml", line=1, keys=["k"])
        for i in range(3)
    ]
    report = Report(warnings + blocking)
    report.findings[:] = warnings + blocking  # the order a report may hold them in
    lines = annotations(report)
    assert len(lines) == 10
    assert [line.split(" ", 1)[0] for line in lines] == ["::error"] * 3 + ["::warning"] * 7
    assert [line.split(",", 1)[0].split("=")[1] for line in lines[3:]] == [f"w{i}.yaml" for i in range(7)]


def test_pr_text_in_a_comment_is_inert_and_cannot_close_the_suggestion(example, served) -> None:
    fake, action = served
    line = "TOTAL_CPU_DRAM_GB: '1800' # ``` @admins <img src=x>"
    action.push(example, {RECIPE: replace("TOTAL_CPU_DRAM_GB: '1799'", line)}, "hostile comment")
    action.run()
    [comment] = ours(fake)
    text, block = comment.body.split("\n````suggestion\n")
    assert block == "      TOTAL_CPU_DRAM_GB: '1799' # ``` @admins <img src=x>\n````"  # a longer fence
    assert "@admins" not in text and "<img" not in text


def test_a_hostile_value_quoted_in_a_comment_is_inert(example, served) -> None:
    fake, action = served
    value = "TOTAL_CPU_DRAM_GB: '@admins <img src=x> [merge](https://evil.example)'"
    action.push(example, {RECIPE: replace("TOTAL_CPU_DRAM_GB: '1799'", value)}, "hostile value")
    action.run()
    [comment] = ours(fake)
    assert "admins &lt;img src=x&gt;" in comment.body  # quoted, defused
    outside_code = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", comment.body)
    assert "@admins" not in outside_code and "<img" not in outside_code and "](https://" not in outside_code


def test_lang_en_comments_in_english_only(example, served) -> None:
    fake, action = served
    action.push(example, {RECIPE: WRONG_TOTAL}, "TOTAL_CPU_DRAM_GB typo")
    action.run(lang="en")
    [comment] = ours(fake)
    [review] = fake.calls("POST", r"/pulls/7/reviews$")
    for text in (comment.body, review.body["body"]):
        assert not any("\u4e00" <= char <= "\u9fff" for char in text)
    assert comment.body.endswith(SUGGESTION)


def test_a_new_entrys_pr_link_naming_another_pr_gets_a_suggestion_of_this_prs_url(example, served) -> None:
    fake, action = served
    this_pr = fake.pull_payload(fake.pulls[PR])["html_url"]
    other = this_pr.replace("/pull/7", "/pull/5")
    action.push(example, {CHANGELOG: replace("  pr-link: XXX\n", f"  pr-link: {other}\n")}, "wrong link")
    code, _, _ = action.run()
    assert code == 1
    [comment] = ours(fake)
    assert comment.path == CHANGELOG
    assert comment.body.endswith(f"```suggestion\n  pr-link: {this_pr}\n```")


def test_the_inline_review_can_be_turned_off(example, served) -> None:
    """`inline-review: false`: the sticky comment has the finding, no review is posted."""
    fake, action = served
    action.push(example, {RECIPE: WRONG_TOTAL}, "TOTAL_CPU_DRAM_GB typo")
    code, _, _ = action.run(**{"inline-review": "false"})
    assert code == 1
    assert not fake.calls("POST", r"/pulls/7/reviews$") and ours(fake) == []
    assert any("1800" in c.body for c in fake.comments_on(PR))  # the sticky comment says it


# ---------------------------------------------------------------- replacing a review (#25 items 5, 6)


def test_the_new_review_is_posted_before_the_previous_one_is_retired(example, served) -> None:
    fake, action = served
    action.push(example, {RECIPE: WRONG_TOTAL}, "TOTAL_CPU_DRAM_GB typo")
    action.run()
    [first] = ours(fake)
    action.push(example, {MASTER: lambda text: text + "\n"}, "unrelated")
    before = len(fake.requests)
    action.run()
    writes = [(r.method, r.path) for r in fake.requests[before:] if "/pulls/" in r.path and r.method != "GET"]
    assert writes[:2] == [
        ("POST", "/repos/acme/inferencex/pulls/7/reviews"),
        ("DELETE", f"/repos/acme/inferencex/pulls/comments/{first.id}"),
    ]


def test_a_review_github_refuses_leaves_the_previous_one_up(example, served) -> None:
    """The new review refused for a reason no comment explains: the previous head's comment stays
    (it used to be deleted first, leaving the pull request with no inline comment at all)."""
    fake, action = served
    action.push(example, {RECIPE: WRONG_TOTAL}, "TOTAL_CPU_DRAM_GB typo")
    action.run()
    [first] = ours(fake)
    action.push(example, {MASTER: lambda text: text + "\n"}, "unrelated")
    fake.fail(
        "POST", r"/pulls/7/reviews$", 422, None, "Unprocessable Entity", errors=["Something went wrong"]
    )
    code, _, summary = action.run()
    assert code == 1
    assert [c.id for c in ours(fake)] == [first.id]
    assert "The inline review could not be posted: GitHub answered HTTP 422" in summary
    assert "inline review: Unprocessable Entity: Something went wrong" in summary


def test_a_comment_github_refuses_is_dropped_and_the_rest_posted(example, served) -> None:
    """A stacked pull request whose first commit reached its base branch while prbot reviewed it:
    GitHub's diff no longer has the changelog lines, and refuses the whole review (422, "Line could
    not be resolved"). The review is posted once more without that comment; the finding is still in
    the sticky comment, and the job summary gives GitHub's reason."""
    fake, action = served
    this_pr = fake.pull_payload(fake.pulls[PR])["html_url"]
    other = this_pr.replace("/pull/7", "/pull/5")
    merged = action.push(example, {CHANGELOG: replace("  pr-link: XXX\n", f"  pr-link: {other}\n")}, "link")
    action.push(example, {RECIPE: WRONG_TOTAL}, "TOTAL_CPU_DRAM_GB typo")

    def retarget(fake: FakeGitHub, request) -> None:
        if request.method == "POST" and request.path.endswith("/pulls/7/reviews"):
            fake.pulls[PR].base = merged

    fake.on_request = retarget
    code, log, summary = action.run()
    assert code == 1
    first, second = fake.calls("POST", r"/pulls/7/reviews$")
    assert (first.status, second.status) == (422, 200)
    assert {c["path"] for c in first.body["comments"]} == {CHANGELOG, RECIPE}
    assert [c["path"] for c in second.body["comments"]] == [RECIPE]
    assert [(c.path, c.line) for c in ours(fake)] == [(RECIPE, 164)]
    note = (
        "GitHub refused 1 inline comment (Unprocessable Entity: Line could not be resolved); "
        "the inline review was posted without it."
    )
    assert note in summary and note in log
    [sticky] = [c for c in fake.comments_on(PR) if c.login == fake.bot_login]
    assert f"- **changelog** · `{CHANGELOG}:73` — `pr-link` is `{other}`" in sticky.body  # still there


def _review_bodies(fake: FakeGitHub) -> list[tuple[str, str]]:
    return [(r.commit, r.body) for r in fake.reviews if r.login == fake.bot_login and r.body]


def test_earlier_review_bodies_say_they_are_out_of_date(example, served) -> None:
    """A defective head, a push that keeps the finding, a fixing push: no review of the bot still
    says "blocking" (three COMMENTED reviews used to), each earlier one names its commit."""
    fake, action = served
    first = action.push(example, {RECIPE: WRONG_TOTAL}, "TOTAL_CPU_DRAM_GB typo")
    action.run()
    second = action.push(example, {MASTER: lambda text: text + "\n"}, "unrelated")
    action.run()
    [(_, old), (_, current)] = _review_bodies(fake)
    assert "1 blocking issue on lines this pull request changes" in current
    assert f"this review was about commit `{first[:12]}` and is out of date" in old
    assert f"The current review, of commit `{second[:12]}`" in old and "in a newer review" in old
    assert "blocking" not in old
    fixed = action.push(
        example, {RECIPE: replace("TOTAL_CPU_DRAM_GB: '1800'", "TOTAL_CPU_DRAM_GB: '1799'")}, "fix"
    )
    _, log, _ = action.run()
    bodies = _review_bodies(fake)
    assert len(bodies) == 2 and not any("blocking" in body for _, body in bodies)
    assert all(f"of commit `{fixed[:12]}`" in body for _, body in bodies[1:])
    assert [body.startswith(REVIEW_MARKER) for _, body in bodies] == [True, True]  # never a sign-off
    assert len(fake.calls("PUT", r"/pulls/7/reviews/\d+$")) == 2  # each once
    assert "Marked 1 earlier inline review of the bot as out of date." in log
    action.run()  # nothing changed: no request edits a review again
    assert len(fake.calls("PUT", r"/pulls/7/reviews/\d+$")) == 2


def test_reviews_of_other_accounts_are_never_edited(example, served) -> None:
    fake, action = served
    action.push(example, {RECIPE: WRONG_TOTAL}, "TOTAL_CPU_DRAM_GB typo")
    quoting = fake.add_review(PR, REVIEW_MARKER + "\nprbot: 1 blocking issue (quoted)", "mallory")
    action.run()
    action.push(example, {RECIPE: replace("TOTAL_CPU_DRAM_GB: '1800'", "TOTAL_CPU_DRAM_GB: '1799'")}, "fix")
    action.run()
    assert quoting.body == REVIEW_MARKER + "\nprbot: 1 blocking issue (quoted)"


# ---------------------------------------------------------------- the drafted changelog entry (#26)

#: A key of the example's master config whose runs the PR now changes (a new C256 point) while the
#: PR's changelog entry names only kimik3's key.
QWEN = "qwen3.5-fp8-mi355x-sglang"
MORE_QWEN = {MASTER: replace("conc-end: 128", "conc-end: 256")}
LAST_LINE = 73  # the example's changelog ends with the entry the PR appends: `  pr-link: XXX`
WEB_PULL = "https://github.com/SemiAnalysisAI/InferenceX/pull"
_NEW_RUN = {
    "concurrency": 256,
    "topology": {"scenario": "fixed-seq-len", "isl": 1024, "osl": 1024, "tp": 4},
    "status": "added",
    "settings": [],
}


def _suggestion(body: str) -> str:
    """The text of a comment's `suggestion` block (fenced by three or more backticks)."""
    [found] = re.findall(r"^(`{3,})suggestion\n(.*)\n\1$", body, re.DOTALL | re.MULTILINE)
    return found[1]


def _committed(text: str, line: int, suggestion: str) -> str:
    """`text` once the suggestion on `line` is committed: GitHub replaces that line's content with
    the block's and keeps the line's own newline."""
    lines = text.split("\n")
    lines[line - 1] = suggestion
    return "\n".join(lines)


def test_a_key_no_entry_names_gets_the_drafted_entry_as_a_suggestion_on_the_changelogs_last_line(
    example, served
) -> None:
    fake, action = served
    this_pr = fake.pull_payload(fake.pulls[PR])["html_url"]
    head = action.push(example, MORE_QWEN, "qwen3.5: add C256")
    code, log, _ = action.run()
    assert code == 1
    [comment] = ours(fake)  # the master config's key line is not in the diff: this is the only one
    assert (comment.path, comment.line, comment.commit) == (CHANGELOG, LAST_LINE, head)
    english, chinese = comment.body.removeprefix(REVIEW_MARKER + "\n").split("\n\n")[:2]
    assert english.startswith(f"**prbot changelog** — No new changelog entry names `{QWEN}`")
    assert "The suggestion below appends an entry drafted from what changed" in english
    assert chinese.startswith(f"**prbot changelog** —— 没有任何新变更日志条目列出 `{QWEN}`")
    assert _suggestion(comment.body) == "\n".join(
        [
            "  pr-link: XXX",  # the last line, as it is at the head
            "",  # one empty line between entries, as InferenceX writes them
            "- config-keys:",
            f"    - {QWEN}",
            "  scenario-type:",
            "    - fixed-seq-len",
            "  description:",
            '    - "Add C256."',
            f"  pr-link: {this_pr}",  # the pull request's own URL, not the placeholder
        ]
    )
    [review] = fake.calls("POST", r"/pulls/7/reviews$")
    assert "with a suggested change that can be committed from the comment" in review.body["body"]
    [sticky] = [c for c in fake.comments_on(PR) if c.login == fake.bot_login]
    assert "An entry drafted from what changed" in sticky.body  # the review comment still shows it
    assert "Inline review posted on" in log and "1 comment on changed lines" in log


def test_committing_the_drafted_entry_gives_a_changelog_the_review_accepts(example, served) -> None:
    fake, action = served
    action.push(example, MORE_QWEN, "qwen3.5: add C256")
    action.run()
    [comment] = ours(fake)
    text = (example.path / CHANGELOG).read_text(encoding="utf-8")
    fixed = _committed(text, comment.line, _suggestion(comment.body))
    assert fixed.startswith(text) and fixed.endswith(f"/pull/{PR}\n")  # appended, and only that
    entries = yaml.safe_load(fixed)
    assert entries[-1]["config-keys"] == [QWEN] and entries[-2]["pr-link"] == "XXX"
    action.push(example, {CHANGELOG: fixed}, "Apply suggestions from code review")
    code, log, _ = action.run()
    assert code == 0  # no changelog finding left, nor any other blocking one
    assert ours(fake) == []  # the suggestion's comment is gone with its finding
    assert "Deleted 1 outdated inline review comment of the bot" in log
    [sticky] = [c for c in fake.comments_on(PR) if c.login == fake.bot_login]
    assert "not-covered" not in sticky.body and "no new changelog entry names it" not in sticky.body


def test_the_drafted_entrys_comment_is_stable_on_the_same_head(example, served) -> None:
    fake, action = served
    action.push(example, MORE_QWEN, "qwen3.5: add C256")
    action.run()
    [first] = ours(fake)
    request = fake.add_comment(PR, "/review", "maintainer", association="MEMBER")
    code, log, _ = action.run(comment_event(fake, request))
    assert code == 1
    assert [(c.id, c.body) for c in ours(fake)] == [(first.id, first.body)]
    assert len(fake.calls("POST", r"/pulls/7/reviews$")) == 1 and not fake.calls("DELETE", r"/comments/")
    assert "Inline review already up to date" in log


def test_no_drafted_entry_is_suggested_when_the_pr_leaves_the_changelog_alone(example, served) -> None:
    """`changelog-missing`: the sticky comment shows the drafted entry; no line of the changelog is
    in the diff, so there is nowhere to suggest it."""
    fake, action = served
    base_log = subprocess.run(
        ["git", "-C", str(example.path), "show", f"{example.base}:{CHANGELOG}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    action.push(example, {CHANGELOG: base_log, **MORE_QWEN}, "no changelog entry")
    code, _, _ = action.run()
    assert code == 1
    assert ours(fake) == [] and not fake.calls("POST", r"/pulls/7/reviews$")
    [sticky] = [c for c in fake.comments_on(PR) if c.login == fake.bot_login]
    assert "An entry drafted from what changed" in sticky.body


def test_no_drafted_entry_is_suggested_unless_the_diff_adds_the_last_line(review_example) -> None:
    """Only appending after the last line cannot break an entry: a diff that does not add it (or
    does not show the changelog) gets no suggestion, whatever other lines it adds."""
    report = review_example(MORE_QWEN)
    assert report.changelog_end is not None and report.changelog_end.number == LAST_LINE
    url = "https://github.com/acme/inferencex/pull/7"
    [draft] = wanted_comments(report, {CHANGELOG: frozenset({LAST_LINE})}, "both", url)
    assert draft.line == LAST_LINE and draft.suggested
    assert wanted_comments(report, {CHANGELOG: frozenset(range(65, LAST_LINE))}, "both", url) == []
    assert wanted_comments(report, {MASTER: frozenset({78})}, "both", url) == []
    assert draft_comment(report, {}, "both", url) is None
    assert f"  pr-link: {url}\n```" in draft.body
    unknown = wanted_comments(report, {CHANGELOG: frozenset({LAST_LINE})}, "both", None)
    assert unknown[0].body.endswith("  pr-link: XXX\n```")  # no URL: the placeholder the gate accepts


def test_a_wrong_link_on_the_last_line_is_corrected_in_the_drafted_entrys_suggestion(example, served) -> None:
    """GitHub applies one suggestion per line: the drafted entry's suggestion carries the `pr-link`
    correction of the same line, so committing it alone leaves nothing to fix."""
    fake, action = served
    this_pr = fake.pull_payload(fake.pulls[PR])["html_url"]
    other = this_pr.replace("/pull/7", "/pull/5")
    action.push(example, {CHANGELOG: replace("  pr-link: XXX\n", f"  pr-link: {other}\n"), **MORE_QWEN}, "x")
    action.run()
    link, draft = ours(fake)
    assert _suggestion(link.body) == f"  pr-link: {this_pr}"
    assert _suggestion(draft.body).startswith(f"  pr-link: {this_pr}\n\n- config-keys:\n    - {QWEN}\n")
    text = (example.path / CHANGELOG).read_text(encoding="utf-8")
    action.push(example, {CHANGELOG: _committed(text, draft.line, _suggestion(draft.body))}, "commit it")
    code, _, _ = action.run()
    assert code == 0 and ours(fake) == []


def test_a_hostile_last_line_stays_inside_the_suggestion(example, served) -> None:
    fake, action = served
    hostile = "  pr-link: XXX # ```` </details> @admins <img src=x>\n"
    action.push(example, {CHANGELOG: replace("  pr-link: XXX\n", hostile), **MORE_QWEN}, "hostile")
    action.run()
    [comment] = [c for c in ours(fake) if "- config-keys:" in c.body]
    text, block = comment.body.split("\n`````suggestion\n")  # a fence longer than the line's backticks
    assert block.startswith(hostile + "\n- config-keys:") and block.endswith("\n`````")
    assert block.count("`````") == 1  # only the closing fence
    assert "@admins" not in text and "<img" not in text and "</details>" not in text


@pytest.mark.parametrize(
    ("tail", "expected"),
    [
        (b"  pr-link: XXX\n", "  pr-link: XXX\n\n- new"),  # house style: one empty line before
        (b"  pr-link: XXX\n\n", "\n- new"),  # the file already ends with that empty line
        (b"  pr-link: XXX\n\n\n", None),  # two: the suggestion cannot remove one
        (b"  pr-link: XXX", None),  # no final newline: GitHub's edit of the line is not exact
        (b"  pr-link: XXX\n   \n", None),  # a line of spaces is not an empty line
        (b"  pr-link: XXX\r\n", None),
        (b"  pr-link: \xff\n", None),
    ],
    ids=["one-newline", "empty-line", "two-empty-lines", "no-final-newline", "spaces", "crlf", "not-utf8"],
)
def test_an_entry_follows_the_last_line_only_where_the_bytes_come_out_as_the_gate_wants(
    tail: bytes, expected: str | None
) -> None:
    base = b"- config-keys:\n    - a\n  description:\n    - d\n"
    entry = "- config-keys:\n    - b\n  description:\n    - e\n  pr-link: XXX\n"
    log = compare(CHANGELOG, base, base + tail)
    end = log.last_line(CHANGELOG)
    if expected is None:
        assert end is None
        return
    assert end is not None and end.number == (base + tail).count(b"\n")
    suggestion = end.with_entry(entry)
    assert suggestion == expected.replace("- new", entry.removesuffix("\n"))
    lines = (base + tail).decode().split("\n")
    lines[end.number - 1] = suggestion
    after = compare(CHANGELOG, base + tail, "\n".join(lines).encode())
    assert after.problems == [] and [e.config_keys for e in after.appended] == [["b"]]


def test_the_drafted_entry_follows_inferencexs_own_changelog_as_its_entries_follow_each_other() -> None:
    """The real changelog: a fork's copy is the base, upstream's (21 entries appended) the head.
    The suggestion on its last line appends one more entry the way upstream's are separated."""
    base = shared_or_skip("forks", "HamzaElshafie+InferenceX", "perf-changelog.yaml").read_bytes()
    head = shared_or_skip("inferencex-e2e", "perf-changelog.yaml").read_bytes()
    path = "inferencex-e2e/perf-changelog.yaml"
    end = compare(path, base, head).last_line(path)
    assert end is not None and end.text == "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/3088"
    entry = draft.entry_text([QWEN], {QWEN: {"common": [], "runs": [_NEW_RUN]}}, f"{WEB_PULL}/3697")
    assert entry is not None
    lines = head.decode().split("\n")
    lines[end.number - 1] = end.with_entry(entry)
    applied = "\n".join(lines).encode()
    assert applied == head + b"\n" + entry.encode()  # upstream's separator: one empty line
    after = compare(path, base, applied)
    assert after.problems == [] and after.warnings == []
    assert len(after.appended) == 22 and after.appended[-1].config_keys == [QWEN]


def test_the_suggested_entry_is_bilingual_when_the_changelog_is(review_example) -> None:
    """The suggestion is the entry the comment shows, in the base changelog's languages: with most
    of its newest entries bilingual, each English line and then the Chinese."""
    report = dataclasses.replace(review_example(MORE_QWEN), changelog_langs=("en", "zh"))
    url = "https://github.com/acme/inferencex/pull/7"
    [draft] = wanted_comments(report, {CHANGELOG: frozenset({LAST_LINE})}, "both", url)
    [entry] = yaml.safe_load(_suggestion(draft.body).split("\n", 2)[2])
    assert entry["description"] == ["Add C256.", "新增 C256。"]
