"""Issue #15, the GitHub side: whose comments the bot touches, rate limits, files too large to read.

Each test drives the real action (PyGithub unchanged) against the loopback fake of the GitHub API
and reproduces the attack as the issue describes it.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from github_fake import FakeGitHub, pull_event
from test_action import FAST, PR, act, stickies

from bot.example import ExampleRepo, build_example
from bot.local import LocalRequest, run_local
from bot.output import report_json
from bot.output.render import MARKER
from bot.sources.github import ClientOptions, GitHubSource, connect
from bot.sources.snapshot import Oversized
from tests.conftest import MASTER, RECIPE, commit


@pytest.fixture(scope="module")
def shared_example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("trust") / "inferencex")


def _serve(example: ExampleRepo, head: str | None = None, base: str | None = None) -> Iterator[FakeGitHub]:
    with FakeGitHub(example.path) as fake:
        fields = {"title": example.title, "body": example.body, "labels": example.labels}
        fake.add_pull(PR, base or example.base, head or example.head, **fields)
        yield fake


@pytest.fixture
def fake(shared_example: ExampleRepo) -> Iterator[FakeGitHub]:
    yield from _serve(shared_example)


def _writes(fake: FakeGitHub, method: str) -> list[str]:
    return [r.path for r in fake.calls(method, r"/issues/comments/\d+$")]


# ---------------------------------------------------------------- (8) whose comments are ours


def test_marked_comments_of_other_bots_are_never_edited_or_deleted(fake: FakeGitHub, tmp_path: Path) -> None:
    """`/user` is 403 (GITHUB_TOKEN): another app's and dependabot's marked comments are not ours."""
    other = fake.add_comment(PR, MARKER + "\nanother app's report", "otherapp[bot]", kind="Bot")
    dependabot = fake.add_comment(PR, MARKER + "\nbump", "dependabot[bot]", kind="Bot")
    run = act(fake, tmp_path, pull_event(fake, PR))
    assert run.code == 0
    assert _writes(fake, "PATCH") == [] and _writes(fake, "DELETE") == []
    assert fake.comments[other.id].body == MARKER + "\nanother app's report"
    assert fake.comments[dependabot.id].body == MARKER + "\nbump"
    assert [c.login for c in stickies(fake)] == ["otherapp[bot]", "dependabot[bot]", "github-actions[bot]"]
    assert len(fake.calls("POST", rf"/issues/{PR}/comments$")) == 1
    assert "Review-marked comments by otherapp[bot], dependabot[bot] were left alone" in run.log


def test_only_our_comment_is_edited_beside_a_foreign_one(fake: FakeGitHub, tmp_path: Path) -> None:
    other = fake.add_comment(PR, MARKER + "\nolder, by another app", "otherapp[bot]", kind="Bot")
    ours = fake.add_comment(PR, MARKER + "\nour old review", "github-actions[bot]", kind="Bot")
    run = act(fake, tmp_path, pull_event(fake, PR))
    assert run.code == 0
    assert _writes(fake, "PATCH") == [f"/repos/{fake.full_name}/issues/comments/{ours.id}"]
    assert _writes(fake, "DELETE") == [] and not fake.calls("POST", r"/comments$")
    assert fake.comments[other.id].body == MARKER + "\nolder, by another app"
    assert "prbot review —" in fake.comments[ours.id].body


def test_a_configured_bot_login_is_who_we_are(fake: FakeGitHub, tmp_path: Path) -> None:
    """An app's installation token writes as `<app>[bot]`: the actions bot's comment is not ours."""
    fake.bot_login = "prbot-app[bot]"
    actions = fake.add_comment(PR, MARKER + "\nby another workflow", "github-actions[bot]", kind="Bot")
    ours = fake.add_comment(PR, MARKER + "\nour old review", "prbot-app[bot]", kind="Bot")
    run = act(fake, tmp_path, pull_event(fake, PR), **{"bot-login": "prbot-app[bot]"})
    assert run.code == 0
    assert _writes(fake, "PATCH") == [f"/repos/{fake.full_name}/issues/comments/{ours.id}"]
    assert _writes(fake, "DELETE") == []
    assert fake.comments[actions.id].body == MARKER + "\nby another workflow"


def test_a_wrong_bot_login_is_named_and_leaves_one_comment(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.bot_login = "prbot-app[bot]"  # the token writes as the app, `bot-login` is left at its default
    first = act(fake, tmp_path, pull_event(fake, PR))
    assert (
        "posted as prbot-app[bot], but bot-login is github-actions[bot]: set bot-login to prbot-app[bot]"
        in first.log
    )
    second = act(fake, tmp_path, pull_event(fake, PR))
    assert [c.login for c in stickies(fake)] == ["prbot-app[bot]"]  # the second run's copy was removed
    assert "Removed 1 duplicate review comment" in second.log


def test_an_invalid_bot_login_stops_before_any_request(fake: FakeGitHub, tmp_path: Path) -> None:
    run = act(fake, tmp_path, pull_event(fake, PR), **{"bot-login": "a b"})
    assert run.code == 2 and fake.requests == []
    assert "Input bot-login must be a GitHub login such as github-actions[bot]" in run.log


# ---------------------------------------------------------------- (10) rate limits

SECONDARY = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID 0000:1111."
)
WAIT_ONCE = ClientOptions(timeout=10, backoff_factor=0.01, seconds_between_writes=None, rate_limit_wait=0.01)


def test_a_secondary_rate_limit_is_a_rate_limit_not_a_permission(fake: FakeGitHub, tmp_path: Path) -> None:
    """No `Retry-After`: one short wait, then the run says it hit a rate limit, in both languages."""
    fake.fail("GET", rf"/pulls/{PR}$", 403, times=None, message=SECONDARY)
    run = act(fake, tmp_path, pull_event(fake, PR), options=WAIT_ONCE)
    assert run.code == 2 and run.outputs["verdict"] == "error"
    assert len(fake.calls("GET", rf"/pulls/{PR}$")) == 2  # one wait, one retry
    assert run.log.count("GitHub's rate limit was hit while reading pull request #7; waiting 1 s") == 1
    assert (
        "::error title=prbot::GitHub's API rate limit stopped the run (HTTP 403) while reading pull"
        in run.log
    )
    body = stickies(fake)[0].body  # (where `#7` is kept from linking)
    assert "GitHub's API rate limit stopped the run (HTTP 403) while reading pull request #" in body
    assert (
        "GitHub named no time, so wait a few minutes, then push again or have a maintainer comment `/review`"
        in body
    )
    assert "GitHub API 的速率限制中止了本次运行（HTTP 403；当时正在读取 PR #" in body
    assert "lacks a permission" not in body + run.log and "缺少" not in body


def test_one_wait_per_run_then_rate_limits_fail_at_once(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.fail("GET", r"/compare/", 403, times=1, message=SECONDARY)  # waited out
    fake.fail("POST", rf"/issues/{PR}/comments$", 403, times=None, message=SECONDARY)  # no wait left
    run = act(fake, tmp_path, pull_event(fake, PR), options=WAIT_ONCE)
    assert run.code == 0  # the review ran; only its comment could not be posted
    assert [r.status for r in fake.calls("GET", r"/compare/")] == [403, 200]
    assert len(fake.calls("POST", rf"/issues/{PR}/comments$")) == 1
    assert run.log.count("waiting 1 s before trying again") == 1
    assert "The review comment could not be posted: GitHub's API rate limit stopped the run" in run.summary


@pytest.mark.parametrize(
    ("status", "message", "headers", "when"),
    [
        (403, SECONDARY, {"Retry-After": "3600"}, "about 60 minutes"),
        (429, "Too Many Requests", {"Retry-After": "600"}, "about 10 minutes"),
        (
            403,
            "API rate limit exceeded for installation.",
            {"X-RateLimit-Remaining": "0"},
            "about 30 minutes",
        ),
    ],
)
def test_a_long_wait_is_not_waited_out(
    fake: FakeGitHub, tmp_path: Path, status: int, message: str, headers: dict[str, str], when: str
) -> None:
    """With the defaults: what GitHub asks for is over a minute, so the run stops at once and says when."""
    reset = {"X-RateLimit-Reset": str(int(time.time()) + 1790)}  # read only when none are left
    fake.fail("GET", rf"/pulls/{PR}$", status, times=None, message=message, headers={**headers, **reset})
    run = act(fake, tmp_path, pull_event(fake, PR), options=ClientOptions(seconds_between_writes=None))
    assert run.code == 2
    assert len(fake.calls("GET", rf"/pulls/{PR}$")) == 1
    assert f"rate limit stopped the run (HTTP {status})" in run.log
    assert f"Wait {when} (the time GitHub named), then push again" in stickies(fake)[0].body


def test_a_permission_403_is_still_a_permission_and_not_retried(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.fail("GET", rf"/pulls/{PR}$", 403, times=None, message="Resource not accessible by integration")
    run = act(fake, tmp_path, pull_event(fake, PR), options=WAIT_ONCE)
    assert len(fake.calls("GET", rf"/pulls/{PR}$")) == 1
    assert "the token lacks a permission" in run.log and "rate limit" not in run.log


# ---------------------------------------------------------------- (12) files too large to download

BIG = 50_000_000
CODEOWNERS, RUNNERS = ".github/CODEOWNERS", "configs/runners.yaml"


@dataclass(frozen=True)
class BigPr:
    base: str
    head: str
    holder: str  # the commit whose file is 50 MB


@pytest.fixture(scope="module")
def oversized(tmp_path_factory: pytest.TempPathFactory) -> tuple[ExampleRepo, dict[str, BigPr]]:
    """Pull requests with one 50 MB file each: the recipe, the master config or the runners file
    at the head (the PR's own), or CODEOWNERS at the base (read from there)."""
    example = build_example(tmp_path_factory.mktemp("big") / "inferencex")
    text = {path: (example.path / path).read_text(encoding="utf-8") for path in (RECIPE, MASTER, RUNNERS)}
    filler = "# " + "x" * (BIG - 3) + "\n"
    prs: dict[str, BigPr] = {}
    for path, restore in ((RECIPE, {}), (MASTER, {RECIPE: text[RECIPE]}), (RUNNERS, {MASTER: text[MASTER]})):
        head = commit(example.path, {**restore, path: filler}, f"50 MB {path}")
        prs[path] = BigPr(example.base, head, head)
    base = commit(example.path, {RUNNERS: text[RUNNERS], CODEOWNERS: filler}, "50 MB CODEOWNERS")
    prs[CODEOWNERS] = BigPr(base, commit(example.path, {RECIPE: text[RECIPE] + "# retuned\n"}), base)
    return example, prs


def _findings_on(report: dict[str, Any], path: str) -> list[dict[str, Any]]:
    """The findings about the file (sign-offs of a changed file aside: they depend on the PR's
    comments and teams, which a local review does not have)."""
    return [
        f
        for f in report["findings"]
        if f["file"] == path and (f["check"] != "codeowners" or path == CODEOWNERS)
    ]


def _blob(repo: Path, sha: str, path: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", f"{sha}:{path}"], capture_output=True, check=True
    )
    return done.stdout.decode().strip()


@pytest.mark.parametrize(
    ("path", "truncated"),
    [(RECIPE, False), (MASTER, False), (RUNNERS, False), (CODEOWNERS, False), (RECIPE, True)],
)
def test_a_file_over_the_limit_is_refused_from_its_tree_size(
    oversized: tuple[ExampleRepo, dict[str, BigPr]], tmp_path: Path, path: str, truncated: bool
) -> None:
    """Never downloaded, and the review says what it says when the bytes are read (locally)."""
    example, prs = oversized
    pr = prs[path]
    request = LocalRequest(repo=str(example.path), base=pr.base, head=pr.head, offline=True)
    read_locally = json.loads(report_json.json_bytes(run_local(request)[0]))
    for fake in _serve(example, pr.head, pr.base):
        fake.truncate_trees = truncated  # then the contents API's metadata gives the size
        run = act(fake, tmp_path, pull_event(fake, PR))
        assert not fake.calls("GET", rf"/git/blobs/{_blob(example.path, pr.holder, path)}$")
        asked = [
            r for r in fake.calls("GET", "/contents/" + re.escape(path)) if r.query["ref"] == [pr.holder]
        ]
        assert len(asked) == (1 if truncated else 0)
        report = json.loads(Path(run.outputs["report"]).read_text(encoding="utf-8"))
        found = _findings_on(report, path)
        assert any(f"{BIG:,} bytes" in f["message_en"] and f"{BIG:,}" in f["message_zh"] for f in found)
        assert found == _findings_on(read_locally, path)
        assert path in stickies(fake)[0].body


def test_the_snapshot_knows_an_oversized_file_by_its_size(
    oversized: tuple[ExampleRepo, dict[str, BigPr]],
) -> None:
    example, prs = oversized
    head = prs[RECIPE].head
    for fake in _serve(example, head):
        snapshot = GitHubSource(connect(fake.token, fake.url, FAST), fake.full_name).snapshot(head)
        data = snapshot.read(RECIPE)
        assert isinstance(data, Oversized) and len(data) == BIG
        assert data == snapshot.read(RECIPE) and data != b"" and data != Oversized(BIG, "0" * 40)
        assert [r.path.rsplit("/", 2)[-2] for r in fake.requests] == ["trees"]


def test_a_listed_file_the_api_then_denies_is_a_failure_not_an_absent_file(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    """#16: in the REST reads, a 404 for a path the tree lists is an error. Read as "absent", the
    changed recipe would look deleted and its checks would judge a file that exists."""
    fake.fail("GET", "/contents/" + re.escape(RECIPE), 404, times=None)
    run = act(fake, tmp_path, pull_event(fake, PR))
    body = stickies(fake)[0].body
    assert "The review could not run: GitHub answered 404 Not Found while reading" in body
    assert "does not exist at the head ref" not in body
    assert run.code == 2 and run.outputs["verdict"] == "error"
