"""The GitHub Action end to end: real PyGithub against a loopback fake of the GitHub API."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from github_fake import EventFiles, FakeGitHub, action_env, comment_event, pull_event

from bot.example import ExampleRepo, build_example
from bot.github_action.events import DEFAULT_BOT_LOGIN, Inputs
from bot.github_action.run import registry_env, run_action
from bot.github_action.sticky import publish
from bot.output.render import MARKER
from bot.sources import github as gh_source
from bot.sources.github import ClientOptions, GitHubSource, connect

ROOT = Path(__file__).resolve().parents[1]
PR = 7
FAST = ClientOptions(
    timeout=10,
    backoff_factor=0.01,
    seconds_between_writes=None,
    rate_limit_wait=0.0,
    max_rate_limit_wait=0.0,
)
READ_ONLY_NOTE = "The review comment could not be posted: the token may not write to this pull request"


@pytest.fixture(scope="module")
def shared_example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    """One example repository for the tests that do not commit to it."""
    return build_example(tmp_path_factory.mktemp("action") / "inferencex")


def _serve(example: ExampleRepo, **pull: Any) -> Iterator[FakeGitHub]:
    with FakeGitHub(example.path) as fake:
        fields = {"title": example.title, "body": example.body, "labels": example.labels, **pull}
        fake.add_pull(PR, example.base, example.head, **fields)
        yield fake


@pytest.fixture
def fake(shared_example: ExampleRepo) -> Iterator[FakeGitHub]:
    yield from _serve(shared_example)


@dataclass
class Run:
    code: int
    log: str
    files: EventFiles

    @property
    def outputs(self) -> dict[str, str]:
        return self.files.outputs()

    @property
    def summary(self) -> str:
        return self.files.summary.read_text(encoding="utf-8")


def _no_token(fake: FakeGitHub, *texts: str) -> None:
    for text in texts:
        assert fake.token not in text
    for comment in fake.comments.values():
        assert fake.token not in comment.body


def act(
    fake: FakeGitHub, folder: Path, event: tuple[str, dict], *, options: ClientOptions = FAST, **inputs: str
) -> Run:
    """Run the action in-process for one event; every run is checked for a leaked token."""
    files = EventFiles(folder / f"run{len(list(folder.glob('run*')))}")
    stream = io.StringIO()
    code = run_action(action_env(fake, files, event, inputs), options=options, stream=stream)
    run = Run(code, stream.getvalue(), files)
    report = Path(run.outputs["report"]).read_text(encoding="utf-8") if run.outputs.get("report") else ""
    _no_token(fake, run.log, run.summary, run.files.output.read_text(encoding="utf-8"), report)
    return run


def stickies(fake: FakeGitHub) -> list[Any]:
    return [c for c in fake.comments_on(PR) if c.body.startswith(MARKER)]


# ---------------------------------------------------------------- the sticky comment


def test_first_run_creates_the_comment_and_the_second_edits_it(fake: FakeGitHub, tmp_path: Path) -> None:
    first = act(fake, tmp_path, pull_event(fake, PR, "opened"))
    assert first.code == 0
    assert [c.login for c in stickies(fake)] == ["github-actions[bot]"]
    body = stickies(fake)[0].body
    assert "prbot review — no blocking issues, no warnings" in body
    assert "<details><summary>中文</summary>" in body
    assert first.outputs["verdict"] == "clean"
    assert (first.outputs["blocking"], first.outputs["warnings"]) == ("0", "0")
    report = json.loads(Path(first.outputs["report"]).read_text(encoding="utf-8"))
    assert report["verdict"] == "clean" and report["findings"]
    assert Path(first.outputs["report"]).parent == first.files.folder  # $RUNNER_TEMP
    assert "prbot review — no blocking issues, no warnings" in first.summary
    assert "::warning " not in first.log and "::error " not in first.log  # nothing to annotate
    assert len(fake.calls("POST", r"/issues/7/comments$")) == 1

    fake.pulls[PR].labels = ("all-evals",)  # a modifier without a sweep label: blocking
    second = act(fake, tmp_path, pull_event(fake, PR, "labeled"))
    assert second.code == 1
    assert len(stickies(fake)) == 1
    assert len(fake.calls("POST", r"/issues/7/comments$")) == 1
    assert len(fake.calls("PATCH", r"/issues/comments/\d+$")) == 1
    assert "blocking issue" in stickies(fake)[0].body
    assert second.outputs["verdict"] == "blocking"
    assert "::error " in second.log and "title=prbot labels::" in second.log


def test_an_unchanged_review_is_not_written_again(fake: FakeGitHub, tmp_path: Path) -> None:
    act(fake, tmp_path, pull_event(fake, PR, "opened"))
    again = act(fake, tmp_path, pull_event(fake, PR, "edited"))
    assert again.code == 0
    assert len(stickies(fake)) == 1
    assert not fake.calls("PATCH", r".*") and len(fake.calls("POST", r"/comments$")) == 1
    assert "already up to date" in again.log


def test_comments_of_people_quoting_the_marker_are_left_alone(fake: FakeGitHub, tmp_path: Path) -> None:
    quoted = fake.add_comment(PR, MARKER + "\nI copied the bot's comment", "mallory", association="NONE")
    act(fake, tmp_path, pull_event(fake, PR))
    assert fake.comments[quoted.id].body.endswith("I copied the bot's comment")
    assert [c.login for c in stickies(fake)] == ["mallory", "github-actions[bot]"]


def test_the_sticky_comment_is_found_on_a_later_page(fake: FakeGitHub, tmp_path: Path) -> None:
    for i in range(120):
        fake.add_comment(PR, f"chatter {i}", f"user{i % 3}")
    old = fake.add_comment(PR, MARKER + "\nold review", "github-actions[bot]", kind="Bot")
    source = GitHubSource(connect(fake.token, fake.url, FAST), fake.full_name)
    result = publish(source, PR, MARKER + "\nnew review", DEFAULT_BOT_LOGIN)
    assert result.status == "updated"
    assert fake.comments[old.id].body == MARKER + "\nnew review"
    assert not fake.calls("POST", r"/comments$")
    pages = [r.query.get("page", ["1"])[0] for r in fake.calls("GET", r"/issues/7/comments$")]
    assert pages == ["1", "2"]


def test_a_racing_run_leaves_one_comment(fake: FakeGitHub) -> None:
    """Another run created its comment just before ours: ours (the younger) is deleted, theirs edited."""
    raced: list[int] = []

    def race(fake: FakeGitHub, request: Any) -> None:
        if request.method == "POST" and request.path.endswith(f"/issues/{PR}/comments") and not raced:
            raced.append(fake.add_comment(PR, MARKER + "\nother run", fake.bot_login, kind="Bot").id)

    fake.on_request = race
    source = GitHubSource(connect(fake.token, fake.url, FAST), fake.full_name)
    result = publish(source, PR, MARKER + "\nour review", DEFAULT_BOT_LOGIN)
    assert (result.status, result.removed) == ("updated", 1)
    assert [(c.id, c.body) for c in stickies(fake)] == [(raced[0], MARKER + "\nour review")]
    assert len(fake.calls("DELETE", r"/issues/comments/\d+$")) == 1


def test_duplicates_from_an_earlier_race_are_cleaned_up(fake: FakeGitHub) -> None:
    first = fake.add_comment(PR, MARKER + "\none", fake.bot_login, kind="Bot")
    fake.add_comment(PR, MARKER + "\ntwo", fake.bot_login, kind="Bot")
    source = GitHubSource(connect(fake.token, fake.url, FAST), fake.full_name)
    result = publish(source, PR, MARKER + "\nthree", DEFAULT_BOT_LOGIN)
    assert (result.status, result.removed) == ("updated", 1)
    assert [(c.id, c.body) for c in stickies(fake)] == [(first.id, MARKER + "\nthree")]


def test_a_personal_token_owns_comments_by_its_user(fake: FakeGitHub) -> None:
    fake.login = "review-bot"
    fake.add_comment(PR, MARKER + "\nby the actions bot", fake.bot_login, kind="Bot")
    source = GitHubSource(connect(fake.token, fake.url, FAST), fake.full_name)
    assert publish(source, PR, MARKER + "\nmine", DEFAULT_BOT_LOGIN).status == "created"
    assert [c.login for c in stickies(fake)] == [fake.bot_login, "review-bot"]


# ---------------------------------------------------------------- events


def _member_says(
    fake: FakeGitHub, body: str, association: str = "MEMBER", login: str = "maintainer", kind: str = "User"
) -> tuple[str, dict]:
    return comment_event(fake, fake.add_comment(PR, body, login, kind, association))


def test_review_command_by_a_member_reacts_and_reviews(fake: FakeGitHub, tmp_path: Path) -> None:
    event = _member_says(fake, "/review please")
    comment_id = event[1]["comment"]["id"]
    run = act(fake, tmp_path, event)
    assert run.code == 0
    assert fake.reactions == [(comment_id, "eyes"), (comment_id, "rocket")]
    assert len(stickies(fake)) == 1
    writes = [(r.method, r.path.rsplit("/", 1)[-1]) for r in fake.requests if r.method != "GET"]
    assert writes == [("POST", "reactions"), ("POST", "comments"), ("POST", "reactions")]


@pytest.mark.parametrize(
    ("body", "association", "login", "kind", "says"),
    [
        ("/review", "NONE", "drive-by", "User", "may not request a review"),
        ("/review", "CONTRIBUTOR", "drive-by", "User", "may not request a review"),
        ("/review", "OWNER", "github-actions[bot]", "Bot", "bots cannot request a review"),
        ("/review", "MEMBER", "renovate[bot]", "User", "bots cannot request a review"),
        ("please /review", "MEMBER", "maintainer", "User", "does not start with"),
        ("/reviewer wanted", "MEMBER", "maintainer", "User", "does not start with"),
    ],
)
def test_other_comments_start_nothing(
    fake: FakeGitHub, tmp_path: Path, body: str, association: str, login: str, kind: str, says: str
) -> None:
    run = act(fake, tmp_path, _member_says(fake, body, association, login, kind))
    assert run.code == 0
    assert says in run.log
    assert fake.requests == [] and fake.reactions == []
    assert run.outputs == {"verdict": "skipped"}


def test_a_comment_on_an_issue_or_an_edited_comment_starts_nothing(fake: FakeGitHub, tmp_path: Path) -> None:
    name, payload = _member_says(fake, "/review")
    edited = act(fake, tmp_path, (name, {**payload, "action": "edited"}))
    issue = {k: v for k, v in payload["issue"].items() if k != "pull_request"}
    on_issue = act(fake, tmp_path, (name, {**payload, "issue": issue}))
    assert (edited.code, on_issue.code) == (0, 0)
    assert "only a new comment" in edited.log and "not on a pull request" in on_issue.log
    assert fake.requests == []


@pytest.mark.parametrize("action", ["closed", "assigned", "review_requested", "converted_to_draft"])
def test_other_pull_request_actions_start_nothing(fake: FakeGitHub, tmp_path: Path, action: str) -> None:
    run = act(fake, tmp_path, pull_event(fake, PR, action))
    assert run.code == 0 and "does not trigger a review" in run.log and fake.requests == []


def test_other_events_start_nothing(fake: FakeGitHub, tmp_path: Path) -> None:
    run = act(fake, tmp_path, ("push", {"ref": "refs/heads/main"}))
    assert run.code == 0 and "Event push does not trigger a review" in run.log


def test_drafts_are_reviewed_only_on_request(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.pulls[PR].draft = True
    skipped = act(fake, tmp_path, pull_event(fake, PR, "synchronize", event="pull_request"))
    assert skipped.code == 0 and "is a draft" in skipped.log and fake.requests == []
    asked = act(fake, tmp_path, _member_says(fake, "/review"))
    assert asked.code == 0 and len(stickies(fake)) == 1


def test_a_pr_turned_draft_after_the_event_is_skipped(fake: FakeGitHub, tmp_path: Path) -> None:
    event = pull_event(fake, PR, "synchronize")
    fake.pulls[PR].draft = True
    run = act(fake, tmp_path, event)
    assert run.code == 0 and "is a draft" in run.log and not stickies(fake)


# ---------------------------------------------------------------- tokens, failures, retries


def test_a_fork_pr_with_a_read_only_token_still_reports(shared_example: ExampleRepo, tmp_path: Path) -> None:
    for fake in _serve(shared_example, labels=("all-evals",), fork=True):
        fake.read_only()
        run = act(fake, tmp_path, pull_event(fake, PR, "synchronize", event="pull_request"))
        assert run.code == 1  # the verdict's code: blocking
        assert not fake.comments
        assert READ_ONLY_NOTE in run.summary
        assert "pull_request_target" in run.summary
        assert "无法发布审阅评论" in run.summary  # the note in both languages
        assert "blocking issue" in run.summary
        assert run.outputs["verdict"] == "blocking"
        assert "::error " in run.log


def test_fail_on_decides_the_exit_code(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.pulls[PR].labels = ("full-sweep",)  # not a sweep label: a warning
    warned = act(fake, tmp_path, pull_event(fake, PR), **{"fail-on": "warning"})
    assert (warned.code, warned.outputs["verdict"]) == (1, "warnings")
    fake.pulls[PR].labels = ("all-evals",)
    never = act(fake, tmp_path, pull_event(fake, PR), **{"fail_on": "never"})  # the underscore form
    assert (never.code, never.outputs["verdict"]) == (0, "blocking")


def test_an_invalid_input_stops_before_any_request(fake: FakeGitHub, tmp_path: Path) -> None:
    run = act(fake, tmp_path, pull_event(fake, PR), **{"fail-on": "sometimes"})
    assert run.code == 2
    assert (
        "::error title=prbot::Input fail-on must be one of blocking, warning, never, not sometimes."
        in run.log
    )
    assert fake.requests == []


def test_a_5xx_answer_is_retried(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.fail("GET", rf"/pulls/{PR}$", 502, times=1)
    fake.fail("GET", r"/compare/", 503, times=2)
    run = act(fake, tmp_path, pull_event(fake, PR))
    assert run.code == 0 and len(stickies(fake)) == 1
    assert [r.status for r in fake.calls("GET", rf"/pulls/{PR}$")] == [502, 200]
    assert [r.status for r in fake.calls("GET", r"/compare/")] == [503, 503, 200]


def test_a_review_that_cannot_complete_still_updates_the_comment(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.fail("GET", r"/compare/", 502, times=None)
    event = _member_says(fake, "/review")
    comment_id = event[1]["comment"]["id"]
    run = act(fake, tmp_path, event)
    assert run.code == 2
    assert len(fake.calls("GET", r"/compare/")) == 1 + FAST.retries
    body = stickies(fake)[0].body
    assert "### prbot review — could not complete" in body
    assert "GitHub kept failing (HTTP 502) while listing the changed files, even after 3 retries." in body
    assert "- **dram** — Not checked: the review stopped before this check could run." in body
    assert "### prbot 审阅 — 未能完成" in body
    assert run.outputs == {"verdict": "error"}
    assert "::error title=prbot::GitHub kept failing (HTTP 502)" in run.log
    assert fake.reactions == [(comment_id, "eyes"), (comment_id, "confused")]


def test_files_that_cannot_be_read_are_said_in_the_comment(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.fail("GET", r"/contents/perf-changelog\.yaml$", 500, times=None)
    run = act(fake, tmp_path, pull_event(fake, PR))
    assert run.code == 2
    body = stickies(fake)[0].body
    assert "could not complete" in body
    assert "reading `perf-changelog.yaml` at " in body


def test_a_bad_token_is_explained_and_never_shown(fake: FakeGitHub, tmp_path: Path) -> None:
    real = fake.token
    fake.token = "ghs_" + "0" * 36  # the server now expects another token: ours is rejected
    run = act(fake, tmp_path, pull_event(fake, PR), **{"github-token": real})
    fake.token = real
    assert run.code == 2
    assert fake.requests and {r.status for r in fake.requests} == {401}  # nothing was written
    assert "GitHub rejected the token (401 Bad credentials) while reading pull request #7" in run.log
    _no_token(fake, run.log, run.summary)


def test_missing_permission_on_the_pull_request_is_explained(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.fail("GET", rf"/pulls/{PR}$", 403, times=None, message="Resource not accessible by integration")
    run = act(fake, tmp_path, pull_event(fake, PR))
    assert run.code == 2
    assert (
        "GitHub refused access (403: Resource not accessible by integration) while reading pull request #7"
        in run.log
    )


def test_outside_github_actions_the_action_says_what_is_missing(tmp_path: Path) -> None:
    stream = io.StringIO()
    code = run_action({"INPUT_GITHUB-TOKEN": "ghs_x" * 8}, options=FAST, stream=stream)
    assert code == 2 and "GITHUB_EVENT_NAME is not set" in stream.getvalue()
    assert run_action({}, options=FAST, stream=stream) == 2
    assert "No GitHub token" in stream.getvalue()


# ---------------------------------------------------------------- inputs and contents


def test_comment_false_and_lang_en(fake: FakeGitHub, tmp_path: Path) -> None:
    quiet = act(fake, tmp_path, pull_event(fake, PR), comment="false", lang="en")
    assert quiet.code == 0 and not fake.comments
    assert "Commenting is turned off" in quiet.summary and "中文" not in quiet.summary.split("\n\n", 2)[-1]
    act(fake, tmp_path, pull_event(fake, PR), lang="zh")
    assert "prbot 审阅 — 无阻塞问题，无警告" in stickies(fake)[0].body
    assert "prbot review" not in stickies(fake)[0].body


def test_settings_are_read_at_the_base_not_from_the_pr(example: ExampleRepo, tmp_path: Path) -> None:
    from conftest import commit

    head = commit(example.path, {".github/prbot.yml": "not-a-setting: 1\n"}, "PR adds settings")
    for fake in _serve(example):
        fake.pulls[PR].head = head
        run = act(fake, tmp_path, pull_event(fake, PR))
        assert run.code == 0, run.log
        assert "No settings file .github/prbot.yml at the base commit" in run.log
        bad = act(fake, tmp_path, pull_event(fake, PR), config="configs/runners.yaml")
        assert bad.code == 2
        assert (
            "The settings file `configs/runners.yaml` at the base commit is not valid"
            in stickies(fake)[0].body
        )


def test_large_files_come_from_the_blob_api(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.contents_limit = 2000  # the contents API now omits the content of larger files
    act(fake, tmp_path, pull_event(fake, PR))
    via_contents = len(fake.calls("GET", r"/git/blobs/"))
    monkeypatch.setattr(gh_source, "CONTENTS_LIMIT", 2000)  # and now the tree sizes send us there directly
    before = len(fake.requests)
    run = act(fake, tmp_path, pull_event(fake, PR))
    assert via_contents > 0
    assert len(fake.calls("GET", r"/git/blobs/")) > via_contents
    assert not [
        r for r in fake.requests[before:] if "/contents/" in r.path and r.path.endswith("agentic.yaml")
    ]
    assert (run.outputs["verdict"], run.outputs["warnings"]) == ("clean", "0")  # as read through contents


def test_more_files_than_compare_lists_fall_back_to_the_pull_files(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gh_source, "COMPARE_FILE_LIMIT", 2)
    fake.compare_file_limit = 2
    source = GitHubSource(connect(fake.token, fake.url, ClientOptions(per_page=2)), fake.full_name)
    info = source.load(PR, own_marker=MARKER)
    assert sorted(info.changed_files) == [
        "benchmarks/single_node/srt-slurm-recipes/kimik3/atom/mi355x-fp4-mtp/agentic.yaml",
        "configs/amd-master.yaml",
        "perf-changelog.yaml",
    ]
    assert [r.query.get("page", ["1"])[0] for r in fake.calls("GET", rf"/pulls/{PR}/files$")] == ["1", "2"]


def test_a_truncated_tree_is_walked_folder_by_folder(fake: FakeGitHub, shared_example: ExampleRepo) -> None:
    from bot.sources.git import GitRepo

    fake.truncate_trees = True
    snapshot = GitHubSource(connect(fake.token, fake.url, FAST), fake.full_name).snapshot(shared_example.head)
    local = GitRepo.open(shared_example.path)
    try:
        for prefix in ("configs/", "benchmarks/single_node/", "", "nothing/here/"):
            assert snapshot.list_files(prefix) == sorted(local.list_files(shared_example.head, prefix)), (
                prefix
            )
        assert snapshot.read("configs/runners.yaml") == local.read(
            shared_example.head, "configs/runners.yaml"
        )
    finally:
        local.close()


def test_snapshot_reads_match_git(fake: FakeGitHub, shared_example: ExampleRepo) -> None:
    from bot.sources.git import GitRepo

    snapshot = GitHubSource(connect(fake.token, fake.url, FAST), fake.full_name).snapshot(shared_example.base)
    local = GitRepo.open(shared_example.path)
    try:
        paths = local.list_files(shared_example.base, "")
        assert snapshot.list_files("") == sorted(paths)
        for path in paths:
            assert snapshot.read(path) == local.read(shared_example.base, path), path
        before = len(fake.requests)
        for missing in (
            "configs/none.yaml",
            "inferencex-e2e/configs/x",
            "configs",
            "../etc/passwd",
            "/abs",
            "",
        ):
            assert snapshot.read(missing) is None
        assert len(fake.requests) == before  # the tree already says they do not exist
    finally:
        local.close()


def test_pr_metadata_comments_and_teams(fake: FakeGitHub, shared_example: ExampleRepo) -> None:
    fake.add_comment(
        PR,
        "As a PR reviewer and CODEOWNER, I have reviewed this and have no concerns.",
        "owner1",
        association="MEMBER",
    )
    fake.add_comment(PR, MARKER + "\nthe bot's own review", fake.bot_login, kind="Bot")
    fake.add_review(PR, "LGTM from the team", "owner2", association="COLLABORATOR")
    fake.add_review(PR, "", "owner3", state="APPROVED")
    fake.add_review(PR, "draft thoughts", "owner4", state="PENDING")
    fake.teams = {"example-org/core": ["alice", "bob"], "example-org/secret": 403}
    source = GitHubSource(connect(fake.token, fake.url, FAST), fake.full_name)
    info = source.load(PR, own_marker=MARKER)
    pr = info.request
    assert (pr.title, pr.labels, pr.number, pr.author) == (
        shared_example.title,
        shared_example.labels,
        PR,
        "contributor",
    )
    assert pr.url == f"https://github.com/{fake.full_name}/pull/{PR}" and pr.is_pull_request
    assert info.base_sha == shared_example.base and info.head_sha == shared_example.head
    assert [(c.author, c.association) for c in pr.comments] == [
        ("owner1", "MEMBER"),
        ("owner2", "COLLABORATOR"),
    ]
    assert source.team_members("example-org", "core") == ("alice", "bob")
    assert source.team_members("example-org", "secret") is None
    assert source.team_members("example-org", "absent") is None
    assert source.teams(["@example-org/core", "example-org/secret"]) == (
        {"example-org/core": ("alice", "bob")},
        ["example-org/secret"],
    )


# ---------------------------------------------------------------- the real entry point


def test_python_m_bot_action(fake: FakeGitHub, tmp_path: Path) -> None:
    files = EventFiles(tmp_path / "subprocess")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
    env.update(action_env(fake, files, pull_event(fake, PR, "opened"), {}))
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "bot", "action"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Review comment created" in done.stdout
    assert done.stderr == ""
    _no_token(fake, done.stdout, done.stderr, files.summary.read_text(encoding="utf-8"))
    assert files.outputs()["verdict"] == "clean"
    assert len(stickies(fake)) == 1


# ---------------------------------------------------------------- what a failure inside the review looks like

OTHER_RECIPE = "benchmarks/single_node/srt-slurm-recipes/dsr1/atom/mi355x-fp4/8k1k.yaml"


def test_a_file_unreadable_during_the_checks_is_noted(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot import pipeline
    from bot.sources.github import GitHubError

    real = pipeline.run

    def review_reading_more(review: pipeline.ReviewInput) -> Any:
        with contextlib.suppress(GitHubError):  # as a check would: its finding becomes "unverified"
            review.head.read(OTHER_RECIPE)
        return real(review)

    monkeypatch.setattr(pipeline, "run", review_reading_more)
    fake.fail("GET", "/contents/" + re.escape(OTHER_RECIPE), 500, times=None)
    run = act(fake, tmp_path, pull_event(fake, PR))
    assert run.code == 0
    body = stickies(fake)[0].body
    marker, note = body.split("\n")[:2]
    assert marker == MARKER
    assert note.startswith(
        "> ⚠️ Some files could not be read from GitHub (GitHub kept failing (HTTP 500) while"
    )
    assert "部分文件无法从 GitHub 读取" in body
    assert "prbot review — no blocking issues, no warnings" in body
    assert "Some files could not be read" in run.summary


def test_a_bug_in_the_review_is_one_line_and_exit_2(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot import pipeline

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"boom with {fake.token}")  # even a careless message must not leak it

    monkeypatch.setattr(pipeline, "run", broken)
    run = act(fake, tmp_path, pull_event(fake, PR))
    assert run.code == 2
    assert "prbot stopped on an unexpected RuntimeError (test_action.py:" in run.log
    assert "unexpected RuntimeError (test\\_action.py:" in stickies(fake)[0].body  # markdown-escaped
    assert "Traceback" not in run.log


def test_a_bug_while_publishing_is_one_line_and_exit_2(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bot.github_action.outputs

    def broken(report: Any) -> Any:
        raise KeyError(fake.token)

    monkeypatch.setattr(bot.github_action.outputs, "annotations", broken)
    run = act(fake, tmp_path, pull_event(fake, PR))
    assert run.code == 2
    head = fake.pulls[PR].head[:12]
    assert (
        f"::error title=prbot::The checks of head {head} ran, but prbot stopped on an unexpected "
        "KeyError (test_action.py:" in run.log
    )
    assert run.outputs["verdict"] == "error"
    assert (
        "### prbot review — could not complete" in stickies(fake)[0].body
    )  # the clean one posted before is gone


def test_a_review_in_which_every_check_crashed_exits_2(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot import engine

    def broken(_ctx: object) -> list:
        raise RuntimeError("boom")

    monkeypatch.setattr(engine, "function", lambda _check: broken)
    run = act(fake, tmp_path, pull_event(fake, PR), **{"fail-on": "never"})
    assert run.code == 2
    body = stickies(fake)[0].body
    assert "This check stopped on an unexpected RuntimeError" in body


def test_registry_logins_come_from_the_input_and_never_show(fake: FakeGitHub, tmp_path: Path) -> None:
    """#15 finding 11: the `registry-credentials` input is the registry client's table, over a
    step's `env:` value, and its passwords are cut from the log and the summary (the review is
    offline, so no registry is asked)."""
    table = '{"ghcr.io": {"username": "bot", "password": "input-secret-1234"}}'
    stale = '{"ghcr.io": {"username": "old", "password": "env-secret-5678"}}'
    files = EventFiles(tmp_path / "run")
    env = action_env(fake, files, pull_event(fake, PR), {"registry-credentials": table})
    env["PRBOT_REGISTRY_CREDENTIALS"] = stale
    stream = io.StringIO()
    assert run_action(env, options=FAST, stream=stream) == 0
    assert env["PRBOT_REGISTRY_CREDENTIALS"] == stale  # the step's environment is left as it was …
    assert registry_env(env, Inputs.from_env(env))["PRBOT_REGISTRY_CREDENTIALS"] == table  # … the input wins
    for text in (stream.getvalue(), files.summary.read_text(encoding="utf-8"), stickies(fake)[0].body):
        assert "input-secret-1234" not in text and "env-secret-5678" not in text


def _verdicts(run: Run, fake: FakeGitHub) -> tuple[str, str, str]:
    """What a maintainer sees: the step's verdict output, the JSON report's, the headline."""
    report = json.loads(Path(run.outputs["report"]).read_text(encoding="utf-8"))
    headline = stickies(fake)[0].body.split("\n")[1]
    return run.outputs["verdict"], report["verdict"], headline


def test_an_alias_chain_in_a_recipe_blocks_everywhere(example: ExampleRepo, tmp_path: Path) -> None:
    """#15 finding 2: a 14 KB alias chain at the top of a recipe crashed the read of the changes,
    and the comment, the outputs and the JSON report then said `clean`."""
    from conftest import RECIPE, commit

    chain = "".join(f"c{i}: &l{i} " + "[" * 60 + f"*l{i - 1}" + "]" * 60 + "\n" for i in range(1, 115))
    recipe = (example.path / RECIPE).read_text(encoding="utf-8")
    head = commit(example.path, {RECIPE: "c0: &l0 leaf\n" + chain + recipe}, "alias chain")
    for fake in _serve(example):
        fake.pulls[PR].head = head
        run = act(fake, tmp_path, pull_event(fake, PR))
        assert run.code == 1 and run.outputs["blocking"] != "0"
        verdict, in_report, headline = _verdicts(run, fake)
        assert verdict == in_report == "blocking" and "blocking issue" in headline
        assert "nested too deeply" in stickies(fake)[0].body


def test_memory_exhaustion_while_reading_the_changes_is_an_error_not_clean(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#15 finding 2, memory: a review that could not be worked out says so in every output."""
    from bot import engine

    def exhausted(*_args: object) -> None:
        raise MemoryError

    monkeypatch.setattr(engine, "compute", exhausted)
    run = act(fake, tmp_path, pull_event(fake, PR), **{"fail-on": "never"})
    assert run.code == 2
    verdict, in_report, headline = _verdicts(run, fake)
    assert verdict == in_report == "error" and "could not run" in headline
    assert "no blocking issues" not in stickies(fake)[0].body and "no blocking issues" not in run.summary


def test_the_teams_named_in_codeowners_are_looked_up(fake: FakeGitHub, tmp_path: Path) -> None:
    """The action asks GitHub for the members of each team the base's CODEOWNERS rules name, as
    the CODEOWNERS parser reads the file: the example names `@example-org/core` twice, in rules."""
    fake.teams = {"example-org/core": ["alice", "bob"]}
    run = act(fake, tmp_path, pull_event(fake, PR))
    assert run.code == 0
    asked = [c.path for c in fake.calls("GET", r"/orgs/[^/]+/teams/[^/]+/members")]
    assert asked and all("/orgs/example-org/teams/core/members" in path for path in asked), asked
