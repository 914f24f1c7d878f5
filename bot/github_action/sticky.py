"""The one review comment per pull request, found again by its hidden marker and edited in place.

Only the bot's own comments are ever edited or deleted. A comment is ours when its body starts with
the marker (so a person quoting the marker is never edited) and its author is the bot's identity:
the token's user when GitHub tells it (`/user` answers for a personal or a user token), else the
`bot-login` input (`github-actions[bot]` for the workflow's `GITHUB_TOKEN`, `<app>[bot]` for an
app's installation token, which may not read `/user`). Marked comments by anyone else are left
alone. Two runs racing may both create a comment: after creating, our comments are listed again
(by the author GitHub gave the new one), the oldest is kept and the younger ones are deleted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from github import GithubException

from bot.catalog import msg
from bot.output.render import MARKER
from bot.sources.github import GitHubError, GitHubSource

CREATED, UPDATED, UNCHANGED, READ_ONLY, FAILED = "created", "updated", "unchanged", "read-only", "failed"


@dataclass(frozen=True)
class StickyResult:
    status: str
    url: str | None = None
    removed: int = 0
    error: GitHubError | None = None
    foreign: tuple[str, ...] = ()  # authors of marked comments that are not ours (left alone)
    written_as: str | None = None  # the new comment's author, when it is not the login looked for


def identity(source: GitHubSource, bot_login: str) -> str:
    """The login our comments are written as: the token's user when `/user` answers, else
    `bot_login` (GitHub answers 403 there for installation tokens; a rate limit is not a 403)."""
    try:
        return source.call(msg("action-doing-identity"), lambda: source.gh.get_user().login)
    except GitHubError as exc:
        if exc.status in (403, 404) and not exc.rate_limited:
            return bot_login
        raise


def _marked(issue: Any) -> list[Any]:
    """The issue's comments that start with the marker (every page), oldest first."""
    found = (c for c in issue.get_comments() if (c.body or "").startswith(MARKER))
    return sorted(found, key=lambda c: (c.created_at, c.id))


def author(comment: Any) -> str:
    """Who wrote a comment or review comment (`ghost` for a deleted account)."""
    return comment.user.login if comment.user is not None else "ghost"


def split_by_author(comments: list[Any], login: str) -> tuple[list[Any], tuple[str, ...]]:
    """The comments by `login`, and the other authors (each once)."""
    ours = [c for c in comments if author(c).casefold() == login.casefold()]
    others = (author(c) for c in comments if author(c).casefold() != login.casefold())
    return ours, tuple(dict.fromkeys(others))


def _delete(comments: Iterable[Any]) -> int:
    removed = 0
    for comment in comments:
        try:
            comment.delete()
            removed += 1
        except GithubException as exc:
            if exc.status != 404:  # 404: the racing run deleted it first
                raise
    return removed


def publish(source: GitHubSource, number: int, body: str, bot_login: str) -> StickyResult:
    """Edit our comment on pull request `number` to `body`, or create it when there is none;
    `bot_login` is who we are when GitHub does not say (`bot.github_action.events.DEFAULT_BOT_LOGIN`)."""
    try:
        return source.call(msg("action-doing-comment"), lambda: _publish(source, number, body, bot_login))
    except GitHubError as error:
        return StickyResult(READ_ONLY if error.read_only else FAILED, error=error)


def _publish(source: GitHubSource, number: int, body: str, bot_login: str) -> StickyResult:
    issue = source.repo.get_issue(number)
    login = identity(source, bot_login)
    found, foreign = split_by_author(_marked(issue), login)
    if found:
        keep = found[0]
        status = UNCHANGED
        if keep.body != body:
            keep.edit(body)
            status = UPDATED
        return StickyResult(status, keep.html_url, _delete(found[1:]), foreign=foreign)
    created = issue.create_comment(body)
    written = author(created)  # GitHub's word on who we are
    written_as = written if written.casefold() != login.casefold() else None
    found, foreign = split_by_author(_marked(issue), written)
    keep = found[0] if found else created
    removed = _delete(found[1:])
    if keep.id == created.id:
        return StickyResult(CREATED, keep.html_url, removed, foreign=foreign, written_as=written_as)
    if keep.body != body:
        keep.edit(body)
    return StickyResult(UPDATED, keep.html_url, removed, foreign=foreign, written_as=written_as)


def react(source: GitHubSource, number: int, comment_id: int, content: str) -> GitHubError | None:
    """Add a reaction (`eyes`, `rocket`, `confused`) to a comment; the error, if it failed."""
    comment = source.repo.get_issue(number).get_comment(comment_id)
    try:
        source.call(msg("action-doing-reaction"), lambda: comment.create_reaction(content))
    except GitHubError as exc:
        return exc
    return None
