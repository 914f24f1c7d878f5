"""`pull_request_review`: a person's review refreshes the comment, so a CODEOWNER's sign-off shows.

The classification is checked on payloads shaped like GitHub's; the refresh end to end, with real
PyGithub against the loopback fake of the GitHub API, on the bundled example PR (whose AMD master
config and MI355X recipe need a sign-off by one of their CODEOWNERS).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from gh_expression import evaluate, interpolate
from github_fake import EventFiles, FakeGitHub, Review, action_env, pull_event

from bot.example import ExampleRepo, build_example
from bot.github_action.events import Skip, Trigger, classify, is_review_command
from bot.github_action.run import run_action
from bot.output.messages import text
from bot.output.render import MARKER
from bot.settings import Settings
from bot.sources.github import ClientOptions

PR = 7
PHRASE = Settings().signoff_phrase
OWNER = "amd-bench-lin"  # a CODEOWNER of configs/amd-master.yaml in the example repository
FAST = ClientOptions(timeout=10, backoff_factor=0.01, seconds_between_writes=None, rate_limit_wait=0.0)


def review_payload(action: str = "submitted", login: str = "amd-bench-lin", **pull: Any) -> dict[str, Any]:
    """A `pull_request_review` payload as GitHub sends it, reduced to the fields prbot reads."""
    return {
        "action": action,
        "review": {"id": 11, "user": {"login": login, "type": "User"}, "state": "approved", "body": PHRASE},
        "pull_request": {"number": PR, "state": "open", "draft": False, **pull},
    }


def reason(decision: Trigger | Skip) -> str:
    assert isinstance(decision, Skip), decision
    return text(decision.reason)


# ---------------------------------------------------------------- which reviews start a review


@pytest.mark.parametrize("action", ["submitted", "edited", "dismissed"])
def test_a_persons_review_refreshes_the_pull_request(action: str) -> None:
    assert classify("pull_request_review", review_payload(action)) == Trigger(PR)


def test_another_review_action_is_skipped_with_its_name() -> None:
    said = reason(classify("pull_request_review", review_payload("deleted")))
    assert said == "pull_request_review with action deleted does not trigger a review; nothing to do."


@pytest.mark.parametrize(
    ("login", "kind"), [("github-actions[bot]", "Bot"), ("acme-prbot[bot]", "User"), ("dependabot", "Bot")]
)
def test_a_bots_review_is_skipped(login: str, kind: str) -> None:
    payload = review_payload()
    payload["review"]["user"] = {"login": login, "type": kind}
    said = reason(classify("pull_request_review", payload))
    assert said.startswith(f"The pull request review is by the bot {login};")


def test_reviews_of_closed_and_draft_pull_requests_are_skipped() -> None:
    assert "is closed" in reason(classify("pull_request_review", review_payload(state="closed")))
    assert "is a draft" in reason(classify("pull_request_review", review_payload(draft=True)))


@pytest.mark.parametrize(
    "pull", [None, "7", [7], {}, {"number": "7"}, {"number": True}, {"number": 0}, {"number": None}]
)
def test_a_review_without_a_pull_request_number_is_skipped(pull: object) -> None:
    payload = {**review_payload(), "pull_request": pull}
    said = reason(classify("pull_request_review", payload))
    assert said == "The pull_request_review event names no pull request number; nothing to do."


@pytest.mark.parametrize("review", [None, "by someone", ["x"], {"user": "someone"}, {"user": None}])
def test_a_malformed_review_does_not_crash(review: object) -> None:
    """No reviewer that can be read is no bot: the pull request is reviewed, as for any person."""
    assert classify("pull_request_review", {**review_payload(), "review": review}) == Trigger(PR)


# ---------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("review-event") / "inferencex")


@pytest.fixture
def fake(example: ExampleRepo) -> Iterator[FakeGitHub]:
    with FakeGitHub(example.path) as fake:
        fake.add_pull(
            PR, example.base, example.head, title=example.title, body=example.body, labels=example.labels
        )
        yield fake


def review_event(fake: FakeGitHub, review: Review, action: str = "submitted") -> tuple[str, dict[str, Any]]:
    """The event GitHub sends when `review` is submitted: the review (state in lower case, as in
    webhook payloads) and the pull request."""
    payload = fake.review_payload(review)
    return "pull_request_review", {
        "action": action,
        "review": {**payload, "state": payload["state"].lower()},
        "pull_request": fake.pull_payload(fake.pulls[review.number]),
        "repository": fake.repo_payload(),
        "sender": payload["user"],
    }


def act(fake: FakeGitHub, folder: Path, event: tuple[str, dict[str, Any]]) -> tuple[int, str]:
    """Run the action in-process for one event: its exit status and its log."""
    files = EventFiles(folder / f"run{len(list(folder.glob('run*')))}")
    stream = io.StringIO()
    code = run_action(action_env(fake, files, event, {}), options=FAST, stream=stream)
    return code, stream.getvalue()


def sticky(fake: FakeGitHub) -> str:
    (body,) = [c.body for c in fake.comments_on(PR) if c.body.startswith(MARKER)]
    return body


def english(body: str) -> str:
    return body.split("<details><summary>中文</summary>", 1)[0]


def test_a_codeowners_sign_off_in_a_review_updates_the_comment(fake: FakeGitHub, tmp_path: Path) -> None:
    first, _ = act(fake, tmp_path, pull_event(fake, PR, "opened"))
    before = english(sticky(fake))
    assert "Sign-off needed for" in before and f"signed off by `@{OWNER}`" not in before

    review = fake.add_review(PR, f"{PHRASE} no concerns with the MI355X retune.", OWNER, "MEMBER", "APPROVED")
    code, log = act(fake, tmp_path, review_event(fake, review))

    assert code == first, log  # a sign-off changes no verdict
    after = english(sticky(fake))
    assert f"signed off by `@{OWNER}`" in after
    assert "Sign-off needed for" not in after
    assert len(fake.calls("POST", r"/issues/7/comments$")) == 1  # the same comment, edited
    assert len(fake.calls("PATCH", r"/issues/comments/\d+$")) == 1


def test_a_dismissed_sign_off_no_longer_counts(fake: FakeGitHub, tmp_path: Path) -> None:
    review = fake.add_review(PR, f"{PHRASE} no concerns.", OWNER, "MEMBER", "APPROVED")
    act(fake, tmp_path, review_event(fake, review))
    assert f"signed off by `@{OWNER}`" in english(sticky(fake))
    review.state = "DISMISSED"  # a maintainer dismissed the approval
    code, log = act(fake, tmp_path, review_event(fake, review, "dismissed"))
    assert code in (0, 1), log
    after = english(sticky(fake))
    assert "Sign-off needed for" in after and f"signed off by `@{OWNER}`" not in after


def test_a_review_without_the_phrase_leaves_the_sign_off_open(fake: FakeGitHub, tmp_path: Path) -> None:
    review = fake.add_review(PR, "Looks good to me.", OWNER, "MEMBER", "APPROVED")
    code, log = act(fake, tmp_path, review_event(fake, review))
    assert code in (0, 1), log  # reviewed: the verdict is the seed PR's
    assert "Sign-off needed for" in english(sticky(fake))


def test_a_bots_review_starts_nothing(fake: FakeGitHub, tmp_path: Path) -> None:
    review = fake.add_review(PR, PHRASE, "github-actions[bot]", "NONE", "COMMENTED")
    name, payload = review_event(fake, review)
    payload["review"]["user"]["type"] = "Bot"
    code, log = act(fake, tmp_path, (name, payload))
    assert code == 0
    assert "The pull request review is by the bot github-actions[bot]" in log
    assert fake.requests == [] and fake.comments_on(PR) == []


# ---------------------------------------------------------------- `/review`: one rule (#25 item 7)

WORKFLOW = yaml.safe_load((Path(__file__).resolve().parents[1] / "docs" / "prbot-workflow.yml").read_text())
JOB = WORKFLOW["jobs"]["review"]


def issue_comment_payload(
    body: str, association: str = "MEMBER", login: str = "maintainer", kind: str = "User", pr: bool = True
) -> dict[str, Any]:
    """An `issue_comment` `created` payload shaped as GitHub sends it (the fields of the
    `issue_comment.created` examples in npm's @octokit/webhooks-examples; a comment on a pull
    request has `issue.pull_request`, as GitHub's webhook description has it)."""
    api, web = "https://api.github.com/repos/acme/inferencex", "https://github.com/acme/inferencex"
    user = {
        "login": login,
        "id": 21031067,
        "node_id": "MDQ6VXNlcjIxMDMxMDY3",
        "type": kind,
        "site_admin": False,
    }
    issue: dict[str, Any] = {
        "url": f"{api}/issues/{PR}",
        "id": 444500041,
        "node_id": "MDU6SXNzdWU0NDQ1MDAwNDE=",
        "number": PR,
        "title": "Tune MI355X recipes",
        "user": {**user, "login": "contributor"},
        "labels": [],
        "state": "open",
        "locked": False,
        "assignees": [],
        "milestone": None,
        "comments": 0,
        "author_association": "CONTRIBUTOR",
        "body": "",
    }
    if pr:
        issue["pull_request"] = {
            "url": f"{api}/pulls/{PR}",
            "html_url": f"{web}/pull/{PR}",
            "diff_url": f"{web}/pull/{PR}.diff",
            "patch_url": f"{web}/pull/{PR}.patch",
            "merged_at": None,
        }
    return {
        "action": "created",
        "issue": issue,
        "comment": {
            "url": f"{api}/issues/comments/492700400",
            "html_url": f"{web}/pull/{PR}#issuecomment-492700400",
            "issue_url": f"{api}/issues/{PR}",
            "id": 492700400,
            "node_id": "MDEyOklzc3VlQ29tbWVudDQ5MjcwMDQwMA==",
            "user": user,
            "created_at": "2026-10-29T10:00:00Z",
            "updated_at": "2026-10-29T10:00:00Z",
            "author_association": association,
            "body": body,
            "reactions": {"url": f"{api}/issues/comments/492700400/reactions", "total_count": 0},
            "performed_via_github_app": None,
        },
        "repository": {"id": 186853002, "full_name": "acme/inferencex"},
        "sender": user,
    }


def _workflow_runs(payload: dict[str, Any]) -> bool:
    """Whether the example workflow's job starts for this `issue_comment` payload."""
    context = {"github": {"event_name": "issue_comment", "event": payload, "repository": "acme/inferencex"}}
    return bool(evaluate(JOB["if"], context))


def _group(payload: dict[str, Any]) -> str:
    context = {"github": {"event_name": "issue_comment", "event": payload, "run_id": 99}}
    return interpolate(JOB["concurrency"]["group"], context)


@pytest.mark.parametrize(
    ("body", "reviews"),
    [
        ("/review", True),
        ("/review please, the registry is back", True),
        ("/review\nthe label changed", True),
        ("/review\r\nfrom the web editor", True),
        ("/REVIEW", True),  # GitHub's startsWith and == ignore case: so does prbot now
        ("/Review now", True),
        ("/reviewed", False),  # the workflow used to start a container that prbot then skipped
        ("/reviewer wanted", False),
        (" /review", False),  # prbot used to take it; the workflow held it back
        ("\n/review", False),
        ("please /review", False),
        ("/review\tnow", False),
        ("", False),
        ("LGTM", False),
    ],
)
def test_the_workflow_and_prbot_take_the_same_review_commands(body: str, reviews: bool) -> None:
    payload = issue_comment_payload(body)
    assert is_review_command(body) is reviews
    assert isinstance(classify("issue_comment", payload), Trigger) is reviews
    assert _workflow_runs(payload) is reviews
    assert _group(payload) == ("prbot-7-review" if reviews else "prbot-7-99")


@pytest.mark.parametrize(
    ("association", "login", "kind", "pr"),
    [
        ("NONE", "drive-by", "User", True),
        ("CONTRIBUTOR", "drive-by", "User", True),
        ("OWNER", "maintainer", "User", False),  # a comment on an issue, not a pull request
    ],
)
def test_a_review_command_from_others_or_on_an_issue_starts_nothing(
    association: str, login: str, kind: str, pr: bool
) -> None:
    payload = issue_comment_payload("/review", association, login, kind, pr)
    assert isinstance(classify("issue_comment", payload), Skip)
    assert not _workflow_runs(payload)


def test_the_rule_is_what_the_workflow_evaluates_for_pull_request_events() -> None:
    """The evaluator reads the rest of the `if:` as GitHub does: a PR event runs, a draft does not."""
    for draft, runs in ((False, True), (True, False)):
        event = {"action": "opened", "pull_request": {"number": PR, "draft": draft}}
        context = {"github": {"event_name": "pull_request_target", "event": event}}
        assert bool(evaluate(JOB["if"], context)) is runs
        assert interpolate(JOB["concurrency"]["group"], context) == "prbot-7-review"
