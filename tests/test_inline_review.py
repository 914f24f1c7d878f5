"""The inline review: blocking findings on changed lines as review comments, end to end through
real PyGithub against the loopback fake GitHub (tests/github_fake.py), on the example PR."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CHANGELOG, MASTER, RECIPE, commit, replace
from github_fake import EventFiles, FakeGitHub, ReviewComment, action_env, comment_event, pull_event

from bot.example import ExampleRepo
from bot.findings import Severity, finding
from bot.github_action.outputs import annotations
from bot.github_action.review import REVIEW_MARKER
from bot.github_action.run import run_action
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
