"""A pull request and its files through the GitHub REST API (PyGithub): nothing is checked out or run.

`connect` builds the client (retries with backoff on 5xx), `GitHubSource` loads a pull request's
metadata, changed files (with the lines its diff touches), comments and team members, lists, posts
and deletes review comments, and `GitHubSnapshot` reads the files of one
commit (implements `bot.sources.snapshot.Snapshot`). Every API failure is raised as a `GitHubError`
whose message is one line that names what was being done and never the token.

Rate limits are handled here, not by PyGithub's `GithubRetry` (which waits on every retry and, once
its retries run out, hands back the 403 with its body already read, so that it looked like a
missing permission): `GitHubSource.call` waits as GitHub's documentation asks (`Retry-After`, the
`x-ratelimit-reset` time, else a minute) but only as often and as long as `ClientOptions` allows,
then stops with a message that says it was a rate limit.
"""

from __future__ import annotations

import base64
import logging
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import requests
import urllib3
from github import Auth, Github, GithubException, RateLimitExceededException, set_log_level
from github.PullRequest import PullRequest as GhPull
from urllib3.util import Retry

from bot.catalog import Msg, msg
from bot.pullrequest import Comment, PullRequest
from bot.sources.snapshot import Oversized, SourceError, is_plain_path
from bot.yamlsafe import MAX_BYTES

DEFAULT_API_URL = "https://api.github.com"
#: The contents API sends no content for files above this size; the git blob API does.
CONTENTS_LIMIT = 1024 * 1024
#: The compare API lists at most this many changed files; beyond it the pull request's file list is used.
COMPARE_FILE_LIMIT = 300
#: Teams whose members are looked up for CODEOWNERS sign-offs, at most.
MAX_TEAMS = 20
RETRY_STATUSES = (500, 502, 503, 504)
_MAX_DETAIL_CHARS = 160

T = TypeVar("T")


@dataclass(frozen=True)
class ClientOptions:
    """How the client talks to GitHub. The defaults suit a workflow run; tests shorten the waits."""

    timeout: int = 30
    retries: int = 3  # of a request answered 5xx or not answered at all
    backoff_factor: float = 2.0
    # A rate limit (seconds): the wait when GitHub names none (its docs: at least a minute for a
    # secondary limit), the longest wait honoured when it names one, and how many waits one run may
    # spend. The job has 10 minutes; beyond these the run stops and says it hit a rate limit.
    rate_limit_wait: float = 60.0
    max_rate_limit_wait: float = 60.0
    rate_limit_waits: int = 1
    seconds_between_requests: float | None = None
    # GitHub asks integrations to space out writes to stay clear of secondary rate limits.
    seconds_between_writes: float | None = 1.0
    per_page: int = 100


def connect(token: str, api_url: str | None = None, options: ClientOptions | None = None) -> Github:
    """A lazy PyGithub client: objects are fetched when first read, so no request is wasted."""
    options = options or ClientOptions()
    # PyGithub logs every refused request at INFO on stderr; the action reports failures itself.
    set_log_level(logging.WARNING)
    retry = Retry(
        total=options.retries,
        backoff_factor=options.backoff_factor,
        status_forcelist=list(RETRY_STATUSES),
        allowed_methods=None,  # writes too: a duplicated comment is cleaned up by bot.github_action.sticky
        raise_on_status=False,  # the last 5xx reaches PyGithub, which raises it with its status
        respect_retry_after_header=False,  # a 503's Retry-After could be an hour: backoff only
    )
    return Github(
        auth=Auth.Token(token),
        base_url=(api_url or DEFAULT_API_URL).rstrip("/"),
        timeout=options.timeout,
        retry=retry,
        per_page=options.per_page,
        seconds_between_requests=options.seconds_between_requests,
        seconds_between_writes=options.seconds_between_writes,
        lazy=True,
    )


class GitHubError(SourceError):
    """An API call failed; `message` says what was being done and why, in both languages."""

    def __init__(self, message: Msg, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

    @property
    def rate_limited(self) -> bool:
        return self.message.id == "action-api-rate-limit"

    @property
    def read_only(self) -> bool:
        """GitHub refused a write the token may not make (a fork PR's read-only token): 403 or 404."""
        return self.status in (403, 404) and self.message.id in ("action-api-403", "action-api-404")


API_ERRORS = (GithubException, requests.RequestException, urllib3.exceptions.HTTPError)


def _detail(data: Any) -> str:
    """GitHub's `message` and, after it, the reasons in its `errors` list (a 422 says why there:
    `["Line could not be resolved"]`, or `{resource, field, code, message}` objects)."""
    if isinstance(data, str):
        return data[:_MAX_DETAIL_CHARS]
    if not isinstance(data, dict):
        return ""
    text = str(data.get("message") or "")
    errors = data.get("errors")
    reasons = [_reason(e) for e in errors] if isinstance(errors, list) else []
    reasons = [r for r in reasons if r]
    if reasons:
        text = f"{text}: {'; '.join(reasons)}" if text else "; ".join(reasons)
    return text[:_MAX_DETAIL_CHARS]  # rendering escapes it and cuts out any secret


def _reason(error: Any) -> str:
    """One item of GitHub's `errors`: a string, or an object whose `message` says it (else its
    field and code, as in `content invalid`)."""
    if isinstance(error, str):
        return error
    if not isinstance(error, dict):
        return ""
    if error.get("message"):
        return str(error["message"])
    return " ".join(str(error[k]) for k in ("field", "code") if error.get(k))


def rate_limited(exc: GithubException) -> bool:
    """GitHub's documented signs of a rate limit: a 429, or a 403 that says "rate limit" (primary or
    secondary; PyGithub's own reading of the message included), has `x-ratelimit-remaining: 0` or
    names a `Retry-After`."""
    if exc.status == 429 or isinstance(exc, RateLimitExceededException):
        return True
    headers = exc.headers or {}
    return exc.status == 403 and (
        "rate limit" in _detail(exc.data).lower()
        or headers.get("x-ratelimit-remaining") == "0"
        or "retry-after" in headers
    )


def asked_wait(headers: Mapping[str, str]) -> float | None:
    """The seconds a rate-limited answer asks to wait: its `Retry-After`, else the time until
    `x-ratelimit-reset` when no request is left; None when it names no time."""
    after, reset = headers.get("retry-after", ""), headers.get("x-ratelimit-reset", "")
    if after.isdigit():
        return float(after)
    if headers.get("x-ratelimit-remaining") == "0" and reset.isdigit():
        return max(0.0, int(reset) - time.time()) + 1  # the reset falls somewhere in that second
    return None


def explain(exc: BaseException, doing: Msg, retries: int = 3) -> GitHubError:
    """The one-line, token-free description of an API failure."""
    if isinstance(exc, GitHubError):
        return exc
    if isinstance(exc, GithubException):
        status, detail = exc.status, _detail(exc.data)
        if rate_limited(exc):
            wait = asked_wait(exc.headers or {})
            minutes = math.ceil(wait / 60) if wait else None
            return GitHubError(
                msg("action-api-rate-limit", doing=doing, status=status, minutes=minutes), status
            )
        if status == 401:
            return GitHubError(msg("action-api-401", doing=doing), status)
        if status == 403:
            return GitHubError(msg("action-api-403", doing=doing, detail=detail), status)
        if status == 404:
            return GitHubError(msg("action-api-404", doing=doing), status)
        if status in RETRY_STATUSES:
            return GitHubError(msg("action-api-server", doing=doing, status=status, retries=retries), status)
        return GitHubError(msg("action-api-other", doing=doing, status=status, detail=detail), status)
    if isinstance(exc, requests.exceptions.RetryError):
        return GitHubError(msg("action-api-server", doing=doing, status="5xx", retries=retries))
    return GitHubError(msg("action-api-unreachable", doing=doing, detail=type(exc).__name__))


def _iso(moment: datetime | None) -> str:
    return moment.isoformat() if moment else ""


def _login(user: Any) -> str:
    return user.login if user is not None else "ghost"


_HUNK = re.compile(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def touched_lines(patch: Any, *, context: bool = False) -> frozenset[int]:
    """The head-side line numbers that a file's `patch` (as the API lists it) adds or changes: its
    `+` lines, and with `context` its unchanged lines too (every line a review comment may be on);
    none for a file without a patch (binary, or a diff too large for GitHub to show)."""
    if not isinstance(patch, str):
        return frozenset()
    touched: set[int] = set()
    line = None  # the head-side number of the next line; None before the first hunk
    for row in patch.split("\n"):  # not splitlines(): a line may hold U+2028 and the like
        hunk = _HUNK.match(row)
        if hunk:
            line = int(hunk.group(1))
        elif line is None or row.startswith(("-", "\\")):
            continue  # a removed line, or the "No newline at end of file" mark
        else:
            if context or row.startswith("+"):
                touched.add(line)
            line += 1
    return frozenset(touched)


@dataclass
class PullInfo:
    """What the review needs to know about one pull request."""

    number: int
    pull: GhPull
    request: PullRequest  # its `draft` and `from_fork` say whether InferenceX's sweep can start
    state: str
    base_sha: str  # where the head forked from the base branch (the compare API's merge base)
    head_sha: str
    changed_files: list[str]
    notes: list[Msg] = field(default_factory=list)
    touched: dict[str, frozenset[int]] = field(default_factory=dict)  # path -> lines the diff adds


@dataclass(frozen=True)
class Changes:
    """What the comparison of a pull request's base and head says (`GitHubSource.changed_files`)."""

    merge_base: str
    files: list[str]  # renames: both names
    notes: list[Msg]
    head_message: str
    touched: dict[str, frozenset[int]]  # head path -> the lines its patch adds or changes


class GitHubSource:
    """One repository through the API. `failures` collects read errors met while the checks ran;
    `log` is told when a rate limit makes the run wait."""

    def __init__(
        self,
        gh: Github,
        repository: str,
        *,
        options: ClientOptions | None = None,
        log: Callable[[Msg], None] | None = None,
    ) -> None:
        self.gh = gh
        self.repository = repository
        self.repo = gh.get_repo(repository)  # lazy: the client is
        self.options = options or ClientOptions()
        self.waits_left = self.options.rate_limit_waits
        self.log = log
        self.failures: list[GitHubError] = []

    def call(self, doing: Msg, action: Callable[[], T]) -> T:
        """Run one API interaction, turning any failure into a `GitHubError`. After a rate limit it
        waits and runs the interaction again, while the run has waits left (`ClientOptions`)."""
        while True:
            try:
                return action()
            except API_ERRORS as exc:
                wait = self._rate_limit_wait(exc)
                if wait is None:
                    raise explain(exc, doing, self.options.retries) from None
                if self.log is not None:
                    self.log(msg("action-rate-limit-wait", doing=doing, seconds=math.ceil(wait)))
                time.sleep(wait)

    def _rate_limit_wait(self, exc: BaseException) -> float | None:
        """How long to wait before trying again after `exc`; None when not to: not a rate limit, a
        longer wait than allowed, or no wait left in this run."""
        if not isinstance(exc, GithubException) or not rate_limited(exc) or self.waits_left <= 0:
            return None
        asked = asked_wait(exc.headers or {})
        wait = self.options.rate_limit_wait if asked is None else asked
        if wait > self.options.max_rate_limit_wait:
            return None
        self.waits_left -= 1
        return wait

    # ------------------------------------------------------------ the pull request

    def pull(self, number: int) -> GhPull:
        doing = msg("action-doing-pull", number=number)
        return self.call(doing, lambda: self.repo.get_pull(number).complete())

    def load(
        self, number: int, *, pull: GhPull | None = None, own_marker: str | tuple[str, ...] | None = None
    ) -> PullInfo:
        """Metadata, merge base, changed files and comments of pull request `number`; comments and
        review bodies that start with `own_marker` (the bot's own, one marker or several) are left out."""
        pull = pull or self.pull(number)
        changes = self.changed_files(pull)
        comments = self.call(msg("action-doing-comments"), lambda: self.comments(pull, own_marker))
        request = PullRequest(
            title=pull.title or "",
            body=pull.body or "",
            labels=tuple(label.name for label in pull.labels),
            number=pull.number,
            url=pull.html_url,
            repository=self.repo.html_url,
            author=pull.user.login if pull.user else None,
            comments=comments,
            is_pull_request=True,
            head_message=changes.head_message,
            draft=bool(pull.draft),
            from_fork=pull.head.repo is None or pull.head.repo.full_name != self.repo.full_name,
            mergeable=pull.mergeable,
            review_date=datetime.now(UTC).date().isoformat(),  # upstream's verifier: `date -u +%F`
        )
        return PullInfo(
            number,
            pull,
            request,
            pull.state,
            changes.merge_base,
            pull.head.sha,
            changes.files,
            changes.notes,
            changes.touched,
        )

    def changed_files(self, pull: GhPull) -> Changes:
        """The merge base of the PR's base and head, the files changed since it and the lines each
        patch adds, and the head commit's message (from the same comparison when it lists the head)."""
        doing = msg("action-doing-files")

        def compare() -> tuple[str, list[Any], str | None]:
            comparison = self.repo.compare(pull.base.sha, pull.head.sha)
            commits = comparison.raw_data.get("commits") or []
            last = commits[-1] if commits and isinstance(commits[-1], dict) else {}
            message = (last.get("commit") or {}).get("message") if last.get("sha") == pull.head.sha else None
            return comparison.merge_base_commit.sha, list(comparison.files), message

        merge_base, files, head_message = self.call(doing, compare)
        if head_message is None:  # the comparison lists at most 250 commits
            head_message = self.call(
                msg("action-doing-commit"), lambda: self.repo.get_commit(pull.head.sha).commit.message or ""
            )
        notes: list[Msg] = []
        if len(files) >= COMPARE_FILE_LIMIT:
            files = self.call(doing, lambda: list(pull.get_files()))
            if pull.changed_files > len(files):
                notes.append(msg("action-files-capped", total=pull.changed_files, listed=len(files)))
        names: list[str] = []
        for item in files:
            names.append(item.filename)
            if item.status == "renamed" and item.previous_filename:
                names.append(item.previous_filename)
        touched = {item.filename: touched_lines(item.patch) for item in files}
        return Changes(merge_base, list(dict.fromkeys(names)), notes, head_message, touched)

    def comments(self, pull: GhPull, own_marker: str | tuple[str, ...] | None = None) -> tuple[Comment, ...]:
        """PR comments and review bodies (for CODEOWNERS sign-offs), oldest first, leaving out those
        that start with `own_marker`."""
        markers = (own_marker,) if isinstance(own_marker, str) else own_marker or ()
        found = [
            Comment(_login(c.user), c.body or "", _iso(c.created_at), c.author_association or "NONE")
            for c in pull.get_issue_comments()
            if not (c.body or "").startswith(markers)
        ]
        found += [
            Comment(_login(r.user), r.body, _iso(r.submitted_at), r.author_association or "NONE")
            for r in pull.get_reviews()
            if r.body
            and r.submitted_at is not None
            and r.state != "DISMISSED"
            and not r.body.startswith(markers)
        ]
        return tuple(sorted(found, key=lambda c: c.created_at))

    # ------------------------------------------------------------ review comments

    def review_comments(self, pull: GhPull) -> list[Any]:
        """Every review comment on the pull request's lines (all pages), oldest first."""
        return self.call(msg("review-doing-list"), lambda: list(pull.get_review_comments()))

    def post_review(self, pull: GhPull, head_sha: str, body: str, comments: list[dict[str, Any]]) -> Any:
        """One review of commit `head_sha` that only comments (`COMMENT`: never an approval or a
        request for changes), with `comments` as `{path, line, side, body}` on its lines."""
        commit = self.repo.get_commit(head_sha)  # lazy: names the commit, requests nothing
        return self.call(
            msg("review-doing-post"),
            lambda: pull.create_review(commit=commit, body=body, event="COMMENT", comments=comments),
        )

    def diff_lines(self, pull: GhPull) -> dict[str, frozenset[int]]:
        """Per file, the head-side lines of the pull request's diff as GitHub shows it now (added
        or unchanged): the lines a review comment may be on (all pages of its files)."""
        files = self.call(msg("review-doing-diff"), lambda: list(pull.get_files()))
        return {f.filename: touched_lines(f.patch, context=True) for f in files}

    def reviews(self, pull: GhPull) -> list[Any]:
        """Every review of the pull request (all pages), oldest first."""
        return self.call(msg("review-doing-reviews"), lambda: list(pull.get_reviews()))

    def edit_review(self, review: Any, body: str) -> None:
        """Replace a submitted review's body (its comments stay)."""
        self.call(msg("review-doing-edit"), lambda: review.edit(body))

    def delete_review_comment(self, comment: Any) -> None:
        """Delete one review comment; one already gone (404: a racing run deleted it) is no error."""

        def delete() -> None:
            try:
                comment.delete()
            except GithubException as exc:
                if exc.status != 404:
                    raise

        self.call(msg("review-doing-delete"), delete)

    def team_members(self, org: str, team: str) -> tuple[str, ...] | None:
        """Logins of a team's members; None when they cannot be read (403/404: the token may not; or
        GitHub failed): the review then cannot count sign-offs by members of that team."""

        def members() -> tuple[str, ...]:
            found = self.gh.get_organization(org).get_team_by_slug(team).get_members()
            return tuple(sorted(user.login for user in found))

        try:
            return self.call(msg("action-doing-team", team=f"{org}/{team}"), members)
        except GitHubError:
            return None

    def teams(self, handles: Iterable[str]) -> tuple[dict[str, tuple[str, ...]], list[str]]:
        """Members of each `org/team` handle that could be read, and the handles that could not."""
        known: dict[str, tuple[str, ...]] = {}
        unreadable: list[str] = []
        for handle in list(dict.fromkeys(handles))[:MAX_TEAMS]:
            org, _, team = handle.lstrip("@").partition("/")
            members = self.team_members(org, team) if org and team else None
            if members is None:
                unreadable.append(handle)
            else:
                known[handle.lstrip("@")] = members
        return known, unreadable

    def snapshot(self, sha: str) -> GitHubSnapshot:
        return GitHubSnapshot(self, sha, sha[:12])


@dataclass
class _Tree:
    blobs: dict[str, tuple[str, int, str]]  # path -> (mode, size, blob sha)
    complete: bool  # False when GitHub truncated the recursive listing


def _blob_bytes(blob: Any) -> bytes:
    if blob.encoding == "base64":
        return base64.b64decode(blob.content or "")
    return (blob.content or "").encode("utf-8")


@dataclass
class GitHubSnapshot:
    """The files of one commit, read through the API (implements `bot.sources.snapshot.Snapshot`).

    The recursive git tree of the commit is fetched once: it lists the files, says which paths do
    not exist (no request needed for them), which are too large for the contents API, and which are
    too large to review at all: those are never downloaded (an `Oversized` holds their size).
    """

    source: GitHubSource
    sha: str
    label: str
    _cache: dict[str, bytes | None] = field(default_factory=dict, repr=False)
    _tree: _Tree | None = field(default=None, repr=False)

    def read(self, path: str) -> bytes | None:
        if path not in self._cache:
            try:
                self._cache[path] = self._read(path) if is_plain_path(path) else None
            except GitHubError as exc:
                self.source.failures.append(exc)
                raise
        return self._cache[path]

    def prefetch(self, paths: list[str]) -> None:
        """Nothing ahead of time: GitHub asks integrations to send requests one after another, not
        concurrently (secondary rate limits), so each file is requested when it is read."""

    def list_files(self, prefix: str) -> list[str]:
        tree = self._load_tree()
        if tree.complete:
            return sorted(p for p in tree.blobs if p.startswith(prefix))
        return self._walk(prefix)

    # ------------------------------------------------------------ internals

    def _doing_read(self, path: str) -> Msg:
        return msg("action-doing-read", path=path, sha=self.label)

    def _read(self, path: str) -> bytes | None:
        tree = self._load_tree()
        entry = tree.blobs.get(path)
        if entry is None and tree.complete:
            return None
        if entry is not None:
            mode, size, blob = entry
            if size > MAX_BYTES:
                return Oversized(size, blob)
            if mode == "120000" or size > CONTENTS_LIMIT:
                return self._blob(path, blob)  # a symlink (its target, as git stores it) or a large file
        data = self.source.call(self._doing_read(path), lambda: self._contents(path))
        if data is None and entry is not None:  # the tree lists it: a 404 now is a failure, not "absent"
            raise GitHubError(msg("action-api-404", doing=self._doing_read(path)), 404)
        return data

    def _contents(self, path: str) -> bytes | None:
        try:
            found = self.source.repo.get_contents(path, ref=self.sha)
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise
        if isinstance(found, list) or found.type not in ("file", "symlink"):
            return None  # a folder or a submodule
        if found.size > MAX_BYTES:
            return Oversized(found.size, found.sha)  # (a truncated tree did not list it)
        if found.encoding == "base64":
            return found.decoded_content
        return _blob_bytes(self.source.repo.get_git_blob(found.sha))

    def _blob(self, path: str, blob_sha: str) -> bytes:
        repo = self.source.repo
        return self.source.call(self._doing_read(path), lambda: _blob_bytes(repo.get_git_blob(blob_sha)))

    def _load_tree(self) -> _Tree:
        if self._tree is None:
            listing = self.source.call(
                msg("action-doing-tree", sha=self.label),
                lambda: self.source.repo.get_git_tree(self.sha, recursive=True),
            )
            blobs = {e.path: (e.mode, e.size or 0, e.sha) for e in listing.tree if e.type == "blob"}
            self._tree = _Tree(blobs, not listing.truncated)
        return self._tree

    def _walk(self, prefix: str) -> list[str]:
        """List a folder of a truncated tree: descend to it one level at a time, then list it."""
        folder = prefix.rstrip("/") if prefix.endswith("/") else prefix.rpartition("/")[0]
        repo = self.source.repo

        def below(tree_sha: str, lead: str) -> list[str]:
            listing = repo.get_git_tree(tree_sha, recursive=True)
            if not listing.truncated:
                return [lead + e.path for e in listing.tree if e.type == "blob"]
            paths = []  # still too large: one level here, then each sub-folder on its own
            for entry in repo.get_git_tree(tree_sha).tree:
                if entry.type == "blob":
                    paths.append(lead + entry.path)
                elif entry.type == "tree":
                    paths += below(entry.sha, f"{lead}{entry.path}/")
            return paths

        def walk() -> list[str]:
            tree_sha = self.sha
            for part in folder.split("/") if folder else []:
                level = repo.get_git_tree(tree_sha)
                match = [e.sha for e in level.tree if e.path == part and e.type == "tree"]
                if not match:
                    return []
                tree_sha = match[0]
            return sorted(p for p in below(tree_sha, f"{folder}/" if folder else "") if p.startswith(prefix))

        return self.source.call(msg("action-doing-tree", sha=self.label), walk)
