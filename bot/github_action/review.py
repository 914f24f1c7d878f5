"""The inline review: each blocking finding on a line that the pull request's diff adds or changes
becomes a review comment on that line, with a GitHub `suggestion` block where the finding knows the
fixed line, so that the author can commit the fix from the comment.

Changed keys that no new changelog entry names get one more comment where the diff adds the head
changelog's last line (`draft_comment`): its suggestion keeps that line and appends the entry the
review comment shows (`bot.output.changelog_draft`), with the pull request's URL as `pr-link`, one
empty line before it as InferenceX writes them. Appending after the last line is the one edit that
cannot split an entry; a changelog the diff does not end has no such comment. The last line's text
comes with the report (`Report.changelog_end`, from the head file the review read): no request.

The comments of one run go in one review of the head commit, posted as `COMMENT` (never an approval
nor a request for changes). A run replaces the bot's previous inline review rather than adding to
it: a comment is ours when its body starts with `REVIEW_MARKER` and its author is the bot's identity
(as for the sticky comment, `bot.github_action.sticky.identity`); ours that are still wanted on this
head commit stay, only the missing ones are posted, and then the others are deleted (the new review
first: a review GitHub refuses leaves the previous one up). The same findings on the same head
therefore post nothing, and after a fixing push no comment of ours is left on the fixed finding.
Review comments by anyone else are never touched.

GitHub refuses a whole review for one comment it cannot place (422, its reason in `errors[]`, which
does not say which comment). The review is then posted once more without the comments that are not
on a line of the pull request's diff as GitHub shows it now; those findings stay in the sticky
comment. Once a new review is up or comments were deleted, the bodies of the bot's earlier reviews
are replaced by a line saying which commit they were about and where the current review is, so no
stale "blocking" text stays on the pull request.

Requests: none to list when the pull request has no review comment (its `review_comments` count),
else one (and `/user` once if one of them bears the marker); one review; one per stale comment;
then, when something changed, one listing of the reviews and one edit per earlier review of ours.
After a 422: one listing of the pull request's files and one more review.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from github.PullRequest import PullRequest as GhPull

from bot.catalog import Msg, msg
from bot.checks import changes_view
from bot.checks.changelog import PLACEHOLDER
from bot.findings import Finding, Severity
from bot.github_action.sticky import identity, split_by_author
from bot.output import changelog_draft, messages, textsafe
from bot.output.messages import Safe
from bot.report import Report
from bot.sources.github import GitHubError, GitHubSource

REVIEW_MARKER = "<!-- prbot:inline -->"
#: How an earlier review of ours starts once its body was replaced (it still starts with the marker).
OUTDATED_MARKER = REVIEW_MARKER + "<!-- prbot:outdated -->"
#: Review comments in one review, at most: the sticky comment lists every finding.
MAX_COMMENTS = 20
#: One language's text of a comment, at most (a finding quoting a long PR value is shortened).
TEXT_LIMIT = 4_000
#: A pull request's web address, as a drafted entry's `pr-link` may hold it (GitHub or GHES).
_PULL_URL = re.compile(r"https://[^\s/]+/[\w.-]+/[\w.-]+/pull/\d+")

POSTED, UNCHANGED, NOTHING, READ_ONLY, FAILED = "posted", "unchanged", "nothing", "read-only", "failed"


@dataclass(frozen=True)
class Wanted:
    """A review comment this run wants on a line of the head commit."""

    path: str
    line: int
    body: str
    suggested: bool

    def api(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "side": "RIGHT", "body": self.body}


@dataclass(frozen=True)
class ReviewResult:
    status: str
    posted: int = 0
    kept: int = 0
    removed: int = 0
    capped: tuple[int, int] | None = None  # (findings on changed lines, comments posted) when cut
    foreign: tuple[str, ...] = ()  # authors of marked review comments that are not ours
    error: GitHubError | None = None  # why nothing could be posted, or why comments were dropped
    dropped: int = 0  # comments GitHub refused, left out of the review posted
    outdated: int = 0  # earlier reviews whose body now says they are out of date


def _langs(lang: str) -> tuple[str, ...]:
    return messages.LANG_CHOICES.get(lang, messages.LANG_CHOICES["both"])


def _text(check: str, message_id: str, params: dict[str, Any], lang: str) -> str:
    text = messages.render(message_id, lang, params, markdown=True)
    text = textsafe.cut_markdown(text, TEXT_LIMIT, messages.render("ui-shortened", lang, {}, markdown=True))
    return messages.render("review-finding", lang, {"check": check, "text": Safe(text)}, markdown=True)


def _body(parts: list[str], suggestion: str) -> str:
    """The marker, the texts, and `suggestion` as a `suggestion` block when there is one (once:
    GitHub commits the block as it is), in a fence longer than any backtick run inside it."""
    if suggestion and len(suggestion) <= TEXT_LIMIT:
        fence = textsafe.fence_for(suggestion)
        parts = [*parts, f"{fence}suggestion\n{suggestion}\n{fence}"]
    return textsafe.redact(REVIEW_MARKER + "\n" + "\n\n".join(parts))


def comment_body(f: Finding, lang: str) -> str:
    """The marker, the finding in each language of `lang` (`both`, `en`, `zh`), and its suggested
    line as a `suggestion` block."""
    suggestion = f.suggestion if isinstance(f.suggestion, str) else ""
    return _body([_text(f.check, f.message_id, f.params, one) for one in _langs(lang)], suggestion)


def _link(pr_url: str | None) -> str:
    """The `pr-link` of the drafted entry: the pull request's URL, else the placeholder."""
    return pr_url if pr_url and _PULL_URL.fullmatch(pr_url) else PLACEHOLDER


def draft_comment(
    report: Report, touched: dict[str, frozenset[int]], lang: str, pr_url: str | None = None
) -> Wanted | None:
    """The comment offering the changelog entry drafted for the changed keys that no new entry
    names (the one the review comment shows, `changelog_draft.entry_text`, with the pull request's
    URL as its `pr-link`), as a suggestion on the head changelog's last line that appends it.

    Only where the diff adds that last line: appending is the one edit that cannot split an entry,
    and GitHub takes a comment only on a line of the diff. None when no blocking finding asks for
    an entry, nothing can be drafted, the file's end does not allow an exact append
    (`ChangelogDiff.last_line`), or the suggestion would not be committed as written (longer than
    `TEXT_LIMIT`, or holding something `textsafe.redact` cuts). A blocking finding's own suggested
    line for that last line (a `pr-link` to correct) is kept in it: GitHub applies one suggestion
    per line."""
    end = report.changelog_end
    blocking = report.of(Severity.BLOCKING)
    keys = changelog_draft.drafted_keys(blocking)
    if end is None or not keys or end.number not in touched.get(end.path, ()):
        return None
    changes = changes_view.as_json(report.changes, keys)
    entry = changelog_draft.entry_text(keys, changes, _link(pr_url), report.changelog_langs)
    if entry is None:
        return None
    fixed = {
        f.suggestion
        for f in blocking
        if (f.file, f.line) == (end.path, end.number) and isinstance(f.suggestion, str) and f.suggestion
    }
    line = end._replace(text=fixed.pop()) if len(fixed) == 1 else end
    suggestion = line.with_entry(entry)
    if len(suggestion) > TEXT_LIMIT or textsafe.redact(suggestion) != suggestion:
        return None
    texts = [_text("changelog", "review-draft-entry", {"keys": keys}, one) for one in _langs(lang)]
    return Wanted(end.path, end.number, _body(texts, suggestion), True)


def wanted_comments(
    report: Report, touched: dict[str, frozenset[int]], lang: str, pr_url: str | None = None
) -> list[Wanted]:
    """A comment for each blocking finding on a line the diff adds or changes, in the report's order
    (two findings with the same text on one line give one comment), and the drafted changelog
    entry's (`draft_comment`, with the PR's URL `pr_url`) after those of the first finding that
    asks for an entry."""
    found: dict[tuple[str, int, str], Wanted] = {}
    draft = draft_comment(report, touched, lang, pr_url)
    for f in report.of(Severity.BLOCKING):
        line = f.line if type(f.line) is int else None
        if f.file and line is not None and line in touched.get(f.file, ()):
            body = comment_body(f, lang)
            found.setdefault((f.file, line, body), Wanted(f.file, line, body, bool(f.suggestion)))
        if draft is not None and f.message_id in changelog_draft.DRAFT_FOR:
            found.setdefault((draft.path, draft.line, draft.body), draft)
    return list(found.values())


def review_body(comments: list[Wanted], lang: str) -> str:
    """The review's own text: how many comments it has, in each language of `lang`."""
    params = {"count": len(comments), "suggested": any(c.suggested for c in comments)}
    texts = [messages.render("review-body", one, params, markdown=True) for one in _langs(lang)]
    return REVIEW_MARKER + "\n" + "\n\n".join(texts)


def _key(comment: Any) -> tuple[Any, ...]:
    """What makes one of our comments current: its commit, path, line and text."""
    return (comment.original_commit_id, comment.path, comment.original_line, comment.body)


def publish_review(
    source: GitHubSource, pull: GhPull, head_sha: str, wanted: list[Wanted], lang: str, bot_login: str
) -> ReviewResult:
    """Make the bot's inline review of `head_sha` hold exactly `wanted` (the first `MAX_COMMENTS`)."""
    capped = (len(wanted), MAX_COMMENTS) if len(wanted) > MAX_COMMENTS else None
    try:
        result = _sync(source, pull, head_sha, wanted[:MAX_COMMENTS], lang, bot_login)
    except GitHubError as error:
        return ReviewResult(READ_ONLY if error.read_only else FAILED, capped=capped, error=error)
    return replace(result, capped=capped)


def _sync(
    source: GitHubSource, pull: GhPull, head_sha: str, wanted: list[Wanted], lang: str, bot_login: str
) -> ReviewResult:
    login = cache(lambda: identity(source, bot_login))
    ours, foreign = _ours(source, pull, login)
    keys = {(head_sha, w.path, w.line, w.body) for w in wanted}
    kept: dict[tuple[Any, ...], Any] = {}
    stale = []
    for comment in ours:
        if _key(comment) in keys and _key(comment) not in kept:
            kept[_key(comment)] = comment
        else:
            stale.append(comment)  # of an earlier head, a finding now gone, or a duplicate
    missing = [w for w in wanted if (head_sha, w.path, w.line, w.body) not in kept]
    posted, dropped, refusal = (
        _post(source, pull, head_sha, wanted, missing, lang) if missing else (None, [], None)
    )
    for comment in stale:  # after the new review is up: a refused one leaves the previous in place
        source.delete_review_comment(comment)
    current = {c.pull_request_review_id for c in kept.values()} | (
        {posted.id} if posted is not None else set()
    )
    outdated = (
        _outdate(source, pull, login, current, head_sha, lang, posted is not None) if posted or stale else 0
    )
    status = POSTED if posted is not None else UNCHANGED if kept else NOTHING
    return ReviewResult(
        status,
        len(missing) - len(dropped),
        len(kept),
        len(stale),
        foreign=foreign,
        error=refusal,
        dropped=len(dropped),
        outdated=outdated,
    )


def _post(
    source: GitHubSource, pull: GhPull, head_sha: str, wanted: list[Wanted], missing: list[Wanted], lang: str
) -> tuple[Any, list[Wanted], GitHubError | None]:
    """Post the review of `missing` (the body counts every comment of `wanted`): the review, the
    comments GitHub refused and its reason. After a 422, the comments off GitHub's diff of the pull
    request are dropped and the rest posted once more; a refusal that names no such comment stands."""
    try:
        return (
            source.post_review(pull, head_sha, review_body(wanted, lang), [w.api() for w in missing]),
            [],
            None,
        )
    except GitHubError as error:
        if error.status != 422:
            raise
        lines = source.diff_lines(pull)
        dropped = [w for w in missing if w.line not in lines.get(w.path, ())]
        if not dropped or len(dropped) == len(missing):
            raise error from None
        rest = [w for w in missing if w not in dropped]
        body = review_body([w for w in wanted if w not in dropped], lang)
        return source.post_review(pull, head_sha, body, [w.api() for w in rest]), dropped, error


def _ours(source: GitHubSource, pull: GhPull, login: Callable[[], str]) -> tuple[list[Any], tuple[str, ...]]:
    """The bot's marked review comments on the pull request, and the other authors of marked ones."""
    count = pull.review_comments
    if isinstance(count, int) and count == 0:
        return [], ()  # nothing to list: GitHub counts them in the pull request already read
    marked = [c for c in source.review_comments(pull) if (c.body or "").startswith(REVIEW_MARKER)]
    if not marked:
        return [], ()
    return split_by_author(marked, login())


def outdated_body(about: str, head: str, newer: bool, lang: str) -> str:
    """What an earlier review of ours says once out of date: the commit it was about and where the
    current review of `head` is."""
    params = {"about": about[:12], "head": head[:12], "newer": newer}
    texts = [messages.render("review-outdated", one, params, markdown=True) for one in _langs(lang)]
    return OUTDATED_MARKER + "\n" + "\n\n".join(texts)


def _outdate(
    source: GitHubSource,
    pull: GhPull,
    login: Callable[[], str],
    current: set[int],
    head_sha: str,
    lang: str,
    newer: bool,
) -> int:
    """Replace the body of each earlier review of ours (not in `current`, not already replaced);
    how many were."""
    earlier = [
        r
        for r in source.reviews(pull)
        if r.id not in current
        and (r.body or "").startswith(REVIEW_MARKER)
        and not r.body.startswith(OUTDATED_MARKER)
    ]
    if not earlier:
        return 0
    mine = [r for r in earlier if r.user is not None and r.user.login == login()]
    for r in mine:
        source.edit_review(r, outdated_body(r.commit_id or "", head_sha, newer, lang))
    return len(mine)


def log_lines(result: ReviewResult, head: str) -> list[Msg]:
    """What the job log says about the inline review (a failure is a `note`)."""
    lines: list[Msg] = []
    if result.capped:
        lines.append(msg("review-capped", total=result.capped[0], shown=result.capped[1]))
    if result.foreign:
        lines.append(msg("review-foreign", logins=list(result.foreign)))
    if result.removed:
        lines.append(msg("review-removed", count=result.removed))
    if result.outdated:
        lines.append(msg("review-outdated-log", count=result.outdated))
    if result.status == POSTED:
        lines.append(msg("review-posted", head=head, count=result.posted + result.kept))
    elif result.status == UNCHANGED:
        lines.append(msg("review-unchanged", head=head, count=result.kept))
    return lines


def note(result: ReviewResult) -> Msg | None:
    """The job-summary note of a review that could not be published; None when it was."""
    if result.status == READ_ONLY:
        return msg("review-read-only")
    if result.status == FAILED:
        assert result.error is not None
        return msg("review-failed", reason=result.error.message)
    if result.dropped:
        assert result.error is not None
        detail = result.error.message.params.get("detail")  # GitHub's own words, from `errors[]`
        return msg("review-dropped", count=result.dropped, reason=detail or result.error.message)
    return None
