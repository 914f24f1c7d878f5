"""What the review knows about the pull request itself (local mode fills it from flags)."""

from __future__ import annotations

from typing import NamedTuple


class Comment(NamedTuple):
    """A PR comment or review body, for the CODEOWNERS sign-off."""

    author: str
    body: str
    created_at: str
    association: str = "NONE"


class PullRequest(NamedTuple):
    title: str = ""
    body: str = ""
    labels: tuple[str, ...] = ()
    number: int | None = None
    url: str | None = None
    # The reviewed repository's web address (`https://github.com/owner/repo`), when known: a
    # changelog pr-link must point into it.
    repository: str | None = None
    author: str | None = None
    comments: tuple[Comment, ...] = ()
    # Members of each team owner ("org/team" → logins); None when they could not be read.
    team_members: dict[str, tuple[str, ...]] | None = None
    # False in local mode: there is no PR to look for sign-off comments in.
    is_pull_request: bool = False
    # What decides whether InferenceX's sweep starts, besides labels and the changelog.
    head_message: str = ""
    draft: bool = False
    from_fork: bool = False
    # GitHub's `mergeable`: False when the PR has merge conflicts; None when not known (local
    # mode, or GitHub has not worked it out yet).
    mergeable: bool | None = None
    # The day the PR is judged on (UTC, `YYYY-MM-DD`) for rules with effective dates: the day the
    # action reviews it; locally, the head commit's committer date. None when not known.
    review_date: str | None = None
