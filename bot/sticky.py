"""The one review comment per pull request, found again by its hidden marker and edited in place.

Whose comment is ours: with a personal token, the authenticated user's; with the workflow's
`GITHUB_TOKEN` or an app's installation token (which may not read `/user`), a bot's
(`github-actions[bot]`, `<app>[bot]`). Only comments whose body starts with the marker count, so
a person quoting the marker is never edited. Two runs racing may both create a comment: after
creating, the comments are listed again, the oldest is kept and the younger ones are deleted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from github import GithubException

from bot.action_text import msg
from bot.render import MARKER
from bot.sources.github import API_ERRORS, GitHubError, GitHubSource, explain

CREATED, UPDATED, UNCHANGED, READ_ONLY, FAILED = "created", "updated", "unchanged", "read-only", "failed"


@dataclass(frozen=True)
class StickyResult:
    status: str
    url: str | None = None
    removed: int = 0
    error: GitHubError | None = None


def own_login(source: GitHubSource) -> str | None:
    """The token's user, or None for installation tokens (GitHub answers 403 on `/user` for them)."""
    try:
        return source.gh.get_user().login
    except API_ERRORS:
        return None


def is_ours(comment: Any, login: str | None) -> bool:
    if not (comment.body or "").startswith(MARKER) or comment.user is None:
        return False
    if login:
        return comment.user.login.casefold() == login.casefold()
    return comment.user.type == "Bot" or comment.user.login.endswith("[bot]")


def _ours(issue: Any, login: str | None) -> list[Any]:
    """Our marked comments on the issue (every page), oldest first."""
    return sorted((c for c in issue.get_comments() if is_ours(c, login)), key=lambda c: (c.created_at, c.id))


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


def publish(source: GitHubSource, number: int, body: str) -> StickyResult:
    """Edit our comment on pull request `number` to `body`, or create it when there is none."""
    issue = source.repo.get_issue(number)
    login = own_login(source)
    try:
        found = _ours(issue, login)
        if found:
            keep = found[0]
            status = UNCHANGED
            if keep.body != body:
                keep.edit(body)
                status = UPDATED
            return StickyResult(status, keep.html_url, _delete(found[1:]))
        created = issue.create_comment(body)
        login = login or created.user.login
        found = _ours(issue, login)
        if len(found) <= 1:
            return StickyResult(CREATED, created.html_url)
        keep = found[0]
        removed = _delete(found[1:])
        if keep.id == created.id:
            return StickyResult(CREATED, keep.html_url, removed)
        if keep.body != body:
            keep.edit(body)
        return StickyResult(UPDATED, keep.html_url, removed)
    except API_ERRORS as exc:
        error = explain(exc, msg("action-doing-comment"), source.retries)
        read_only = error.status in (403, 404) and error.message.id in ("action-api-403", "action-api-404")
        return StickyResult(READ_ONLY if read_only else FAILED, error=error)


def react(source: GitHubSource, number: int, comment_id: int, content: str) -> GitHubError | None:
    """Add a reaction (`eyes`, `rocket`, `confused`) to a comment; the error, if it failed."""
    comment = source.repo.get_issue(number).get_comment(comment_id)
    try:
        source.call(msg("action-doing-reaction"), lambda: comment.create_reaction(content))
    except GitHubError as exc:
        return exc
    return None
