"""A loopback fake of the GitHub REST API, for driving the action end to end with PyGithub unchanged.

`FakeGitHub(repo_path)` serves one repository on 127.0.0.1 (a real HTTP server in a thread) with
payloads shaped like GitHub's: pulls (+ files, reviews), compare, contents (base64), git trees and
blobs, issue comments (list/create/edit/delete, paginated with `Link` headers), reviews with their
line comments (create; list and delete the comments), reactions, the authenticated user,
organisations and team members. File contents, trees, merge bases, changed files and their patches
come from the real local git repository at `repo_path`, so SHAs are real commits; as on GitHub, a
review comment must be on a line of its file's diff (right side: added or context), else 422.

Every request is recorded in `requests`. `fail(...)` injects error answers (a 502 once, a 403 on
every comment write for a read-only token, a rate limit with or without `Retry-After`). As on
GitHub, a token with write access may edit and delete anyone's comment: whose comments the bot
touches is up to the bot. Nothing here reaches the network.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

EPOCH = datetime(2026, 10, 29, 10, 0, 0, tzinfo=UTC)
WEB = "https://github.com"
DOCS = "https://docs.github.com/rest"
#: The `content` values GitHub's OpenAPI description allows for a reaction.
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")


def _time(offset: int) -> str:
    return (EPOCH + timedelta(seconds=offset)).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    status: int = 0
    authorized: bool = False


@dataclass
class Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    times: int | None  # None: every time
    body: dict[str, Any]
    headers: dict[str, str]


@dataclass
class Pull:
    number: int
    base: str
    head: str
    title: str = ""
    body: str = ""
    labels: tuple[str, ...] = ()
    author: str = "contributor"
    draft: bool = False
    state: str = "open"
    fork: bool = False


@dataclass
class IssueComment:
    id: int
    number: int
    body: str
    login: str
    type: str = "User"
    association: str = "NONE"
    created: int = 0
    updated: int = 0


@dataclass
class Review:
    id: int
    number: int
    body: str
    login: str
    association: str = "NONE"
    state: str = "COMMENTED"
    submitted: int | None = 0
    commit: str = ""  # the commit reviewed; "" for the pull request's head


@dataclass
class ReviewComment:
    """A comment on one line of a pull request's diff, posted with a review."""

    id: int
    number: int
    review_id: int
    path: str
    line: int
    body: str
    login: str
    commit: str
    type: str = "User"
    created: int = 0


class ApiError(Exception):
    """An error answer: `message`, and GitHub's `errors` list where its OpenAPI description has one
    (422: strings for a review, `{resource, field, code}` objects for comments and reactions)."""

    def __init__(self, status: int, message: str, errors: list[Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors

    def payload(self) -> dict[str, Any]:
        body: dict[str, Any] = {"message": self.message, "documentation_url": DOCS}
        if self.errors is not None:
            body["errors"] = self.errors
        return body


def _invalid(resource: str, field: str, code: str = "invalid", message: str | None = None) -> ApiError:
    """GitHub's 422 for a field of a request body (its `validation-error` schema)."""
    error: dict[str, Any] = {"resource": resource, "field": field, "code": code}
    if message is not None:
        error["message"] = message
    return ApiError(422, "Validation Failed", [error])


def _user(login: str, kind: str = "User", api: str = "") -> dict[str, Any]:
    return {
        "login": login,
        "id": abs(hash(login)) % 10_000_000,
        "node_id": f"U_{login}",
        "type": kind,
        "site_admin": False,
        "url": f"{api}/users/{login}",
        "html_url": f"{WEB}/{login}",
    }


class FakeGitHub:
    """The fake API for one repository; use as a context manager (starts and stops the server)."""

    def __init__(self, repo_path: Path, full_name: str = "acme/inferencex") -> None:
        self.repo_path = Path(repo_path)
        self.full_name = full_name
        self.owner, self.name = full_name.split("/")
        self.token = "ghs_" + secrets.token_hex(18)
        # None: the token cannot read /user (GITHUB_TOKEN, app installation tokens) → 403.
        self.login: str | None = None
        self.bot_login = "github-actions[bot]"
        self.pulls: dict[int, Pull] = {}
        self.comments: dict[int, IssueComment] = {}
        self.reviews: list[Review] = []
        self.review_comments: dict[int, ReviewComment] = {}
        self.omit_patches: set[str] = set()  # files whose diff GitHub deems too large to show
        self.reactions: list[tuple[int, str]] = []
        self.teams: dict[str, list[str] | int] = {}  # "org/slug" → logins, or an HTTP status
        self.contents_limit = 1024 * 1024
        self.compare_file_limit = 300
        self.truncate_trees = False
        self.requests: list[Recorded] = []
        self.faults: list[Fault] = []
        self.on_request: Callable[[FakeGitHub, Recorded], None] | None = None
        self._ids = 1000
        self._clock = 0
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ set-up

    @property
    def url(self) -> str:
        assert self._server is not None, "start the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeGitHub:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        fake = self

        class Handler(_Handler):
            owner = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)

    def next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def tick(self) -> int:
        with self._lock:
            self._clock += 1
            return self._clock

    def add_pull(self, number: int, base: str, head: str, **fields: Any) -> Pull:
        self.pulls[number] = Pull(number, base, head, **fields)
        return self.pulls[number]

    def add_comment(
        self, number: int, body: str, login: str, kind: str = "User", association: str = "NONE"
    ) -> IssueComment:
        now = self.tick()
        comment = IssueComment(self.next_id(), number, body, login, kind, association, now, now)
        self.comments[comment.id] = comment
        return comment

    def add_review(
        self, number: int, body: str, login: str, association: str = "NONE", state: str = "COMMENTED"
    ) -> Review:
        review = Review(
            self.next_id(),
            number,
            body,
            login,
            association,
            state,
            None if state == "PENDING" else self.tick(),
        )
        self.reviews.append(review)
        return review

    def add_review_comment(
        self, number: int, path: str, line: int, body: str, login: str, commit: str | None = None
    ) -> ReviewComment:
        """A review comment by `login` (in a review of its own) on `line` of `path`, at the head."""
        review = self.add_review(number, "", login)
        review.commit = commit or self.pulls[number].head
        comment = ReviewComment(
            self.next_id(), number, review.id, path, line, body, login, review.commit, created=self.tick()
        )
        self.review_comments[comment.id] = comment
        return comment

    def review_comments_on(self, number: int) -> list[ReviewComment]:
        return sorted((c for c in self.review_comments.values() if c.number == number), key=lambda c: c.id)

    def fail(
        self,
        method: str,
        pattern: str,
        status: int = 502,
        times: int | None = 1,
        message: str = "Server Error",
        headers: dict[str, str] | None = None,
        errors: list[Any] | None = None,
    ) -> None:
        """Answer matching requests (regex on the path) with an error, `times` times (None: always);
        `errors` is GitHub's list of reasons of a 422."""
        body = ApiError(status, message, errors).payload()
        self.faults.append(Fault(method.upper(), re.compile(pattern), status, times, body, headers or {}))

    def read_only(self) -> None:
        """The token may read but not write (a fork PR on `pull_request`): every write is a 403."""
        for method in ("POST", "PATCH", "DELETE"):
            self.fail(method, r".*", 403, None, "Resource not accessible by integration")

    def comments_on(self, number: int) -> list[IssueComment]:
        return sorted((c for c in self.comments.values() if c.number == number), key=lambda c: c.id)

    def calls(self, method: str, pattern: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and re.search(pattern, r.path)]

    # ------------------------------------------------------------ git

    def git(self, *args: str) -> bytes:
        done = subprocess.run(["git", "-C", str(self.repo_path), *args], capture_output=True, check=False)
        if done.returncode != 0:
            raise ApiError(404, "Not Found")
        return done.stdout

    def _commit(self, ref: str) -> str:
        if not re.fullmatch(r"[0-9a-f]{7,40}|[\w./-]+", ref) or ref.startswith("-"):
            raise ApiError(404, "Not Found")
        return self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").decode().strip()

    def _tree_entries(self, ref: str, recursive: bool) -> list[dict[str, Any]]:
        args = ["ls-tree", "-l", "-z"] + (["-r", "-t"] if recursive else []) + [ref]
        entries = []
        for raw in self.git(*args).decode("utf-8", "surrogateescape").split("\0"):
            if not raw:
                continue
            meta, path = raw.split("\t", 1)
            mode, kind, sha, size = meta.split()
            entry: dict[str, Any] = {"path": path, "mode": mode, "type": kind, "sha": sha}
            if kind == "blob":
                entry["size"] = int(size)
            entry["url"] = f"{self.api}/git/{'blobs' if kind == 'blob' else 'trees'}/{sha}"
            entries.append(entry)
        return entries

    # ------------------------------------------------------------ payloads

    @property
    def api(self) -> str:
        return f"{self.url}/repos/{self.full_name}"

    def repo_payload(self, fork: bool = False) -> dict[str, Any]:
        owner = "forker" if fork else self.owner
        name = f"{owner}/{self.name}"
        return {
            "id": 4242 if not fork else 4343,
            "node_id": "R_1",
            "name": self.name,
            "full_name": name,
            "private": False,
            "fork": fork,
            "default_branch": "main",
            "owner": _user(owner, "Organization" if not fork else "User", self.url),
            "html_url": f"{WEB}/{name}",
            "url": f"{self.url}/repos/{name}",
        }

    def pull_payload(self, pull: Pull) -> dict[str, Any]:
        api, n = self.api, pull.number
        return {
            "url": f"{api}/pulls/{n}",
            "id": 90_000 + n,
            "node_id": f"PR_{n}",
            "number": n,
            "html_url": f"{WEB}/{self.full_name}/pull/{n}",
            "diff_url": f"{WEB}/{self.full_name}/pull/{n}.diff",
            "issue_url": f"{api}/issues/{n}",
            "comments_url": f"{api}/issues/{n}/comments",
            "review_comments_url": f"{api}/pulls/{n}/comments",
            "commits_url": f"{api}/pulls/{n}/commits",
            "statuses_url": f"{api}/statuses/{pull.head}",
            "state": pull.state,
            "locked": False,
            "draft": pull.draft,
            "merged": False,
            "title": pull.title,
            "body": pull.body or None,
            "user": _user(pull.author, api=self.url),
            "labels": [
                {
                    "id": i + 1,
                    "node_id": f"L_{i}",
                    "name": name,
                    "color": "ededed",
                    "default": False,
                    "url": f"{api}/labels/{name}",
                }
                for i, name in enumerate(pull.labels)
            ],
            "head": {
                "label": f"{'forker' if pull.fork else self.owner}:retune",
                "ref": "retune",
                "sha": pull.head,
                "user": _user("forker" if pull.fork else self.owner, api=self.url),
                "repo": self.repo_payload(fork=pull.fork),
            },
            "base": {
                "label": f"{self.owner}:main",
                "ref": "main",
                "sha": pull.base,
                "user": _user(self.owner, "Organization", self.url),
                "repo": self.repo_payload(),
            },
            "author_association": "CONTRIBUTOR",
            "created_at": _time(0),
            "updated_at": _time(1),
            "commits": 1,
            "additions": 1,
            "deletions": 1,
            "changed_files": len(self._diff(pull.base, pull.head)[1]),
            "comments": len(self.comments_on(n)),
            "review_comments": len(self.review_comments_on(n)),
        }

    def comment_payload(self, c: IssueComment) -> dict[str, Any]:
        return {
            "id": c.id,
            "node_id": f"IC_{c.id}",
            "url": f"{self.api}/issues/comments/{c.id}",
            "html_url": f"{WEB}/{self.full_name}/pull/{c.number}#issuecomment-{c.id}",
            "issue_url": f"{self.api}/issues/{c.number}",
            "body": c.body,
            "user": _user(c.login, c.type, self.url),
            "author_association": c.association,
            "created_at": _time(c.created),
            "updated_at": _time(c.updated),
        }

    def review_payload(self, r: Review) -> dict[str, Any]:
        payload = {
            "id": r.id,
            "node_id": f"PRR_{r.id}",
            "user": _user(r.login, api=self.url),
            "body": r.body,
            "state": r.state,
            "author_association": r.association,
            "commit_id": r.commit or self.pulls[r.number].head,
            "html_url": f"{WEB}/{self.full_name}/pull/{r.number}#pullrequestreview-{r.id}",
            "pull_request_url": f"{self.api}/pulls/{r.number}",
        }
        if r.submitted is not None:
            payload["submitted_at"] = _time(r.submitted)
        return payload

    def review_comment_payload(self, c: ReviewComment) -> dict[str, Any]:
        url = f"{self.api}/pulls/comments/{c.id}"
        html = f"{WEB}/{self.full_name}/pull/{c.number}#discussion_r{c.id}"
        return {
            "url": url,
            "pull_request_review_id": c.review_id,
            "id": c.id,
            "node_id": f"PRRC_{c.id}",
            "diff_hunk": "@@",
            "path": c.path,
            "commit_id": c.commit,
            "original_commit_id": c.commit,
            "user": _user(c.login, c.type, self.url),
            "body": c.body,
            "created_at": _time(c.created),
            "updated_at": _time(c.created),
            "html_url": html,
            "pull_request_url": f"{self.api}/pulls/{c.number}",
            "author_association": "NONE" if c.type == "Bot" else "MEMBER",
            "_links": {
                "self": {"href": url},
                "html": {"href": html},
                "pull_request": {"href": f"{self.api}/pulls/{c.number}"},
            },
            "start_line": None,
            "original_start_line": None,
            "start_side": None,
            "line": c.line,
            "original_line": c.line,
            "side": "RIGHT",
            "subject_type": "line",
        }

    def _patches(self, merge_base: str, head: str) -> list[str | None]:
        """Each changed file's patch as the API gives it (its hunks), in `git diff`'s order; None
        for a file that has none (binary, a mode change)."""
        raw = self.git("diff", "-M", "--no-color", "--no-ext-diff", "--no-textconv", merge_base, head)
        chunks = raw.decode("utf-8", "replace").split("\ndiff --git ")
        patches: list[str | None] = []
        for chunk in chunks if raw else []:
            at = chunk.find("\n@@ ")
            patches.append(chunk[at + 1 :].rstrip("\n") if at >= 0 else None)
        return patches

    def _diff(self, base: str, head: str) -> tuple[str, list[dict[str, Any]]]:
        merge_base = self.git("merge-base", base, head).decode().strip()
        raw = self.git("diff", "--name-status", "-M", "-z", merge_base, head).decode(
            "utf-8", "surrogateescape"
        )
        parts = [p for p in raw.split("\0") if p]
        patches = iter(self._patches(merge_base, head))
        files, i = [], 0
        names = {"A": "added", "M": "modified", "D": "removed", "R": "renamed", "T": "changed", "C": "copied"}
        while i < len(parts):
            status = parts[i]
            entry: dict[str, Any] = {"status": names.get(status[0], "modified")}
            if status[0] in "RC":
                entry["previous_filename"], entry["filename"] = parts[i + 1], parts[i + 2]
                i += 3
            else:
                entry["filename"] = parts[i + 1]
                i += 2
            side = merge_base if entry["status"] == "removed" else head
            blob = self.git("rev-parse", f"{side}:{entry['filename']}").decode().strip()
            patch = next(patches, None)
            rows = patch.split("\n") if patch else []
            added = sum(1 for row in rows if row.startswith("+"))
            removed = sum(1 for row in rows if row.startswith("-"))
            if patch is not None and entry["filename"] not in self.omit_patches:
                entry["patch"] = patch  # GitHub leaves it out for a binary file or a too large diff
            entry.update(
                sha=blob,
                additions=added,
                deletions=removed,
                changes=added + removed,
                blob_url=f"{WEB}/{self.full_name}/blob/{head}/{entry['filename']}",
                raw_url=f"{WEB}/{self.full_name}/raw/{head}/{entry['filename']}",
                contents_url=f"{self.api}/contents/{entry['filename']}?ref={head}",
            )
            files.append(entry)
        return merge_base, files

    def _commit_payload(self, sha: str) -> dict[str, Any]:
        return {
            "sha": sha,
            "node_id": f"C_{sha[:8]}",
            "url": f"{self.api}/commits/{sha}",
            "html_url": f"{WEB}/{self.full_name}/commit/{sha}",
            "commit": {
                "message": self.git("log", "-1", "--format=%B", sha).decode(),
                "tree": {"sha": self.git("rev-parse", f"{sha}^{{tree}}").decode().strip()},
            },
            "parents": [],
        }

    # ------------------------------------------------------------ routing

    def handle(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any, dict]:
        """The status, JSON body and extra headers for one request (already authorized)."""
        with self._lock:
            for fault in self.faults:
                if fault.method == method and fault.pattern.search(path) and fault.times != 0:
                    if fault.times is not None:
                        fault.times -= 1
                    return fault.status, fault.body, fault.headers
        for route_method, pattern, action in _ROUTES:
            if route_method != method:
                continue
            match = re.fullmatch(pattern.replace("{repo}", re.escape(f"/repos/{self.full_name}")), path)
            if match:
                try:
                    return action(self, query, body, *map(unquote, match.groups()))
                except ApiError as exc:
                    return exc.status, exc.payload(), {}
        return 404, {"message": "Not Found", "documentation_url": DOCS}, {}

    def page(self, path: str, query: dict[str, list[str]], items: list[Any]) -> tuple[int, Any, dict]:
        per_page = min(int(query.get("per_page", ["30"])[0]), 100)
        page = int(query.get("page", ["1"])[0])
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        headers = {}
        extra = "".join(f"&{k}={v[0]}" for k, v in query.items() if k not in ("page", "per_page"))
        links = []
        if page < last:
            links.append(f'<{self.url}{path}?per_page={per_page}&page={page + 1}{extra}>; rel="next"')
            links.append(f'<{self.url}{path}?per_page={per_page}&page={last}{extra}>; rel="last"')
        if links:
            headers["Link"] = ", ".join(links)
        return 200, chunk, headers

    # handlers: (fake, query, body, *path groups) → (status, body, headers)

    def _get_user(self, query: dict, body: Any) -> tuple[int, Any, dict]:
        if self.login is None:
            raise ApiError(403, "Resource not accessible by integration")
        return 200, _user(self.login, api=self.url), {}

    def _get_repo(self, query: dict, body: Any) -> tuple[int, Any, dict]:
        return 200, self.repo_payload(), {}

    def _pull(self, number: str) -> Pull:
        pull = self.pulls.get(int(number))
        if pull is None:
            raise ApiError(404, "Not Found")
        return pull

    def _get_pull(self, query: dict, body: Any, number: str) -> tuple[int, Any, dict]:
        return 200, self.pull_payload(self._pull(number)), {}

    def _get_pull_files(self, query: dict, body: Any, number: str) -> tuple[int, Any, dict]:
        pull = self._pull(number)
        return self.page(
            f"/repos/{self.full_name}/pulls/{number}/files", query, self._diff(pull.base, pull.head)[1]
        )

    def _get_reviews(self, query: dict, body: Any, number: str) -> tuple[int, Any, dict]:
        self._pull(number)
        items = [self.review_payload(r) for r in self.reviews if r.number == int(number)]
        return self.page(f"/repos/{self.full_name}/pulls/{number}/reviews", query, items)

    def _list_review_comments(self, query: dict, body: Any, number: str) -> tuple[int, Any, dict]:
        self._pull(number)
        items = [self.review_comment_payload(c) for c in self.review_comments_on(int(number))]
        return self.page(f"/repos/{self.full_name}/pulls/{number}/comments", query, items)

    def _diff_lines(self, pull: Pull, commit: str) -> dict[str, set[int]]:
        """Per file, the right-side lines of its diff at `commit`: the lines a comment may be on."""
        lines: dict[str, set[int]] = {}
        for entry in self._diff(pull.base, commit)[1]:
            found, number = lines.setdefault(entry["filename"], set()), 0
            for row in entry.get("patch", "").split("\n"):
                if row.startswith("@@"):
                    number = int(re.match(r"@@ -\S+ \+(\d+)", row).group(1))  # type: ignore[union-attr]
                elif row[:1] in ("+", " "):
                    found.add(number)
                    number += 1
        return lines

    def _create_review(self, query: dict, body: Any, number: str) -> tuple[int, Any, dict]:
        pull = self._pull(number)
        body = body if isinstance(body, dict) else {}
        event, text, wanted = body.get("event"), body.get("body") or "", body.get("comments") or []
        if event not in ("APPROVE", "REQUEST_CHANGES", "COMMENT"):  # a pending review is not modelled
            raise ApiError(422, "Unprocessable Entity", ["Event is not supported here"])
        if event != "APPROVE" and not text:  # GitHub's docs: required for COMMENT and REQUEST_CHANGES
            raise ApiError(422, "Unprocessable Entity", ["Body is required"])
        commit = self._commit(body.get("commit_id") or pull.head)
        lines = self._diff_lines(pull, commit)
        for item in wanted:  # one refused comment refuses the review; the reason does not say which
            path, line = item.get("path"), item.get("line")
            if item.get("side", "RIGHT") != "RIGHT" or line not in lines.get(path, ()):
                raise ApiError(422, "Unprocessable Entity", ["Line could not be resolved"])
        login = self.login or self.bot_login
        kind = "User" if self.login else "Bot"
        review = self.add_review(int(number), text, login, state="COMMENTED")
        review.commit = commit
        for item in wanted:
            comment = ReviewComment(
                self.next_id(),
                int(number),
                review.id,
                item["path"],
                item["line"],
                item.get("body") or "",
                login,
                commit,
                type=kind,
                created=self.tick(),
            )
            self.review_comments[comment.id] = comment
        payload = self.review_payload(review)
        payload["user"] = _user(login, kind, self.url)
        return 200, payload, {}

    def _update_review(self, query: dict, body: Any, number: str, review_id: str) -> tuple[int, Any, dict]:
        """PUT .../reviews/{id}: a submitted review's body is replaced (its comments stay)."""
        self._pull(number)
        review = next((r for r in self.reviews if r.id == int(review_id) and r.number == int(number)), None)
        if review is None:
            raise ApiError(404, "Not Found")
        text = (body or {}).get("body")
        if not isinstance(text, str) or not text:
            raise ApiError(422, "Unprocessable Entity", ["Body is required"])
        review.body = text
        return 200, self.review_payload(review), {}

    def _delete_review_comment(self, query: dict, body: Any, comment_id: str) -> tuple[int, Any, dict]:
        if self.review_comments.pop(int(comment_id), None) is None:
            raise ApiError(404, "Not Found")
        return 204, None, {}

    def _compare(self, query: dict, body: Any, base: str, head: str) -> tuple[int, Any, dict]:
        base_sha, head_sha = self._commit(base), self._commit(head)
        merge_base, files = self._diff(base_sha, head_sha)
        ahead = int(self.git("rev-list", "--count", f"{merge_base}..{head_sha}").decode())
        behind = int(self.git("rev-list", "--count", f"{merge_base}..{base_sha}").decode())
        commits = self._ahead(merge_base, head_sha)
        headers: dict[str, str] = {}
        if "page" in query or "per_page" in query:  # paged: oldest first, files on the first page only
            path = f"/repos/{self.full_name}/compare/{base}...{head}"
            _, commits, headers = self.page(path, query, commits)
            if int(query.get("page", ["1"])[0]) != 1:
                files = []
        else:
            commits = commits[-250:]  # GitHub's docs: at most 250, the last being the newest
        return (
            200,
            {
                "url": f"{self.api}/compare/{base}...{head}",
                "html_url": f"{WEB}/{self.full_name}/compare/{base}...{head}",
                "status": "ahead" if not behind else "diverged",
                "ahead_by": ahead,
                "behind_by": behind,
                "total_commits": ahead,
                "base_commit": self._commit_payload(base_sha),
                "merge_base_commit": self._commit_payload(merge_base),
                "commits": [self._commit_payload(sha) for sha in commits],
                "files": files[: self.compare_file_limit],
            },
            headers,
        )

    def _ahead(self, merge_base: str, head_sha: str) -> list[str]:
        """The commits a comparison lists, oldest first."""
        return self.git("rev-list", "--reverse", f"{merge_base}..{head_sha}").decode().split()

    def _get_commit(self, query: dict, body: Any, ref: str) -> tuple[int, Any, dict]:
        return 200, self._commit_payload(self._commit(ref)), {}

    def _contents(self, query: dict, body: Any, path: str) -> tuple[int, Any, dict]:
        ref = self._commit(query.get("ref", ["HEAD"])[0])
        try:
            kind = self.git("cat-file", "-t", f"{ref}:{path}").decode().strip()
        except ApiError:
            raise ApiError(404, "Not Found") from None
        if kind == "tree":
            items = []
            for entry in self._tree_entries(f"{ref}:{path}", recursive=False):
                child = f"{path}/{entry['path']}"
                items.append(
                    {
                        "type": "dir" if entry["type"] == "tree" else "file",
                        "name": entry["path"],
                        "path": child,
                        "sha": entry["sha"],
                        "size": entry.get("size", 0),
                        "url": f"{self.api}/contents/{child}?ref={ref}",
                    }
                )
            return 200, items, {}
        data = self.git("cat-file", "blob", f"{ref}:{path}")
        sha = self.git("rev-parse", f"{ref}:{path}").decode().strip()
        large = len(data) > self.contents_limit
        encoded = base64.encodebytes(data).decode() if not large else ""
        return (
            200,
            {
                "type": "file",
                "encoding": "none" if large else "base64",
                "size": len(data),
                "name": path.rsplit("/", 1)[-1],
                "path": path,
                "content": encoded,
                "sha": sha,
                "url": f"{self.api}/contents/{path}?ref={ref}",
                "git_url": f"{self.api}/git/blobs/{sha}",
                "html_url": f"{WEB}/{self.full_name}/blob/{ref}/{path}",
                "download_url": None,
                "_links": {
                    "self": f"{self.api}/contents/{path}?ref={ref}",
                    "git": f"{self.api}/git/blobs/{sha}",
                    "html": f"{WEB}/{self.full_name}/blob/{ref}/{path}",
                },
            },
            {},
        )

    def _tree(self, query: dict, body: Any, sha: str) -> tuple[int, Any, dict]:
        recursive = query.get("recursive", ["0"])[0] not in ("0", "false", "")
        try:
            entries = self._tree_entries(sha, recursive)
            tree_sha = self.git("rev-parse", f"{sha}^{{tree}}").decode().strip()
        except ApiError:
            raise ApiError(404, "Not Found") from None
        # A huge repository: the recursive listing of the whole commit is cut (folders still list fully).
        truncated = recursive and self.truncate_trees and self.git("cat-file", "-t", sha).strip() == b"commit"
        if truncated:
            entries = [e for e in entries if "/" not in e["path"]]
        return (
            200,
            {
                "sha": tree_sha,
                "url": f"{self.api}/git/trees/{tree_sha}",
                "tree": entries,
                "truncated": truncated,
            },
            {},
        )

    def _blob(self, query: dict, body: Any, sha: str) -> tuple[int, Any, dict]:
        if not re.fullmatch(r"[0-9a-f]{40}", sha):
            raise ApiError(404, "Not Found")
        data = self.git("cat-file", "blob", sha)
        return (
            200,
            {
                "sha": sha,
                "node_id": f"B_{sha[:8]}",
                "size": len(data),
                "url": f"{self.api}/git/blobs/{sha}",
                "content": base64.encodebytes(data).decode(),
                "encoding": "base64",
            },
            {},
        )

    def _list_comments(self, query: dict, body: Any, number: str) -> tuple[int, Any, dict]:
        items = [self.comment_payload(c) for c in self.comments_on(int(number))]
        return self.page(f"/repos/{self.full_name}/issues/{number}/comments", query, items)

    def _create_comment(self, query: dict, body: Any, number: str) -> tuple[int, Any, dict]:
        if int(number) not in self.pulls:
            raise ApiError(404, "Not Found")
        text = (body or {}).get("body")
        if not isinstance(text, str) or not text:
            raise _invalid("IssueComment", "body", "missing_field")
        if len(text) > 65_536:
            raise _invalid("IssueComment", "body", "custom", "body is too long (maximum is 65536 characters)")
        login = self.login or self.bot_login
        kind = "User" if self.login else "Bot"
        comment = self.add_comment(int(number), text, login, kind, "NONE" if kind == "Bot" else "MEMBER")
        return 201, self.comment_payload(comment), {}

    def _comment(self, comment_id: str) -> IssueComment:
        comment = self.comments.get(int(comment_id))
        if comment is None:
            raise ApiError(404, "Not Found")
        return comment

    def _get_comment(self, query: dict, body: Any, comment_id: str) -> tuple[int, Any, dict]:
        return 200, self.comment_payload(self._comment(comment_id)), {}

    def _edit_comment(self, query: dict, body: Any, comment_id: str) -> tuple[int, Any, dict]:
        comment = self._comment(comment_id)
        text = (body or {}).get("body")
        if not isinstance(text, str) or not text:
            raise _invalid("IssueComment", "body", "missing_field")
        if len(text) > 65_536:
            raise _invalid("IssueComment", "body", "custom", "body is too long (maximum is 65536 characters)")
        # As on GitHub, a token that may write to the repository may edit anyone's comment.
        comment.body, comment.updated = text, self.tick()
        return 200, self.comment_payload(comment), {}

    def _delete_comment(self, query: dict, body: Any, comment_id: str) -> tuple[int, Any, dict]:
        self._comment(comment_id)
        del self.comments[int(comment_id)]
        return 204, None, {}

    def _react(self, query: dict, body: Any, comment_id: str) -> tuple[int, Any, dict]:
        self._comment(comment_id)
        content = (body or {}).get("content")
        if content not in REACTIONS:
            raise _invalid("Reaction", "content")
        self.reactions.append((int(comment_id), content))
        login = self.login or self.bot_login
        return (
            201,
            {
                "id": self.next_id(),
                "node_id": "REA_1",
                "content": content,
                "user": _user(login, "User" if self.login else "Bot", self.url),
                "created_at": _time(self.tick()),
            },
            {},
        )

    def _team_state(self, org: str, slug: str) -> list[str]:
        state = self.teams.get(f"{org}/{slug}")
        if state is None:
            raise ApiError(404, "Not Found")
        if isinstance(state, int):
            raise ApiError(state, "Resource not accessible by integration" if state == 403 else "Not Found")
        return state

    def _get_org(self, query: dict, body: Any, org: str) -> tuple[int, Any, dict]:
        return (
            200,
            {
                "login": org,
                "id": 7,
                "node_id": "O_7",
                "url": f"{self.url}/orgs/{org}",
                "type": "Organization",
            },
            {},
        )

    def _get_team(self, query: dict, body: Any, org: str, slug: str) -> tuple[int, Any, dict]:
        self._team_state(org, slug)
        return (
            200,
            {
                "id": 77,
                "node_id": "T_77",
                "slug": slug,
                "name": slug,
                "url": f"{self.url}/orgs/{org}/teams/{slug}",
            },
            {},
        )

    def _team_members(self, query: dict, body: Any, org: str, slug: str) -> tuple[int, Any, dict]:
        members = [_user(login, api=self.url) for login in self._team_state(org, slug)]
        return self.page(f"/orgs/{org}/teams/{slug}/members", query, members)


_ROUTES: list[tuple[str, str, Callable[..., tuple[int, Any, dict]]]] = [
    ("GET", r"/user", FakeGitHub._get_user),
    ("GET", r"{repo}", FakeGitHub._get_repo),
    ("GET", r"{repo}/pulls/(\d+)", FakeGitHub._get_pull),
    ("GET", r"{repo}/pulls/(\d+)/files", FakeGitHub._get_pull_files),
    ("GET", r"{repo}/pulls/(\d+)/reviews", FakeGitHub._get_reviews),
    ("POST", r"{repo}/pulls/(\d+)/reviews", FakeGitHub._create_review),
    ("PUT", r"{repo}/pulls/(\d+)/reviews/(\d+)", FakeGitHub._update_review),
    ("GET", r"{repo}/pulls/(\d+)/comments", FakeGitHub._list_review_comments),
    ("DELETE", r"{repo}/pulls/comments/(\d+)", FakeGitHub._delete_review_comment),
    ("GET", r"{repo}/compare/([^/]+?)\.\.\.([^/]+)", FakeGitHub._compare),
    ("GET", r"{repo}/contents/(.+)", FakeGitHub._contents),
    ("GET", r"{repo}/commits/([^/]+)", FakeGitHub._get_commit),
    ("GET", r"{repo}/git/trees/([^/]+)", FakeGitHub._tree),
    ("GET", r"{repo}/git/blobs/([^/]+)", FakeGitHub._blob),
    ("GET", r"{repo}/issues/(\d+)/comments", FakeGitHub._list_comments),
    ("POST", r"{repo}/issues/(\d+)/comments", FakeGitHub._create_comment),
    ("GET", r"{repo}/issues/comments/(\d+)", FakeGitHub._get_comment),
    ("PATCH", r"{repo}/issues/comments/(\d+)", FakeGitHub._edit_comment),
    ("DELETE", r"{repo}/issues/comments/(\d+)", FakeGitHub._delete_comment),
    ("POST", r"{repo}/issues/comments/(\d+)/reactions", FakeGitHub._react),
    ("GET", r"/orgs/([^/]+)", FakeGitHub._get_org),
    ("GET", r"/orgs/([^/]+)/teams/([^/]+)", FakeGitHub._get_team),
    ("GET", r"/orgs/([^/]+)/teams/([^/]+)/members", FakeGitHub._team_members),
]


class _Handler(BaseHTTPRequestHandler):
    owner: FakeGitHub
    protocol_version = "HTTP/1.1"
    # One write per answer (headers and body together), no Nagle delay: keeps each request ~1 ms.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        fake = self.owner
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        auth = self.headers.get("Authorization", "")
        record = Recorded(
            self.command,
            url.path,
            parse_qs(url.query),
            body,
            authorized=auth in (f"token {fake.token}", f"Bearer {fake.token}"),
        )
        with fake._lock:
            fake.requests.append(record)
        if fake.on_request is not None:
            fake.on_request(fake, record)
        if not record.authorized:
            status, payload, headers = 401, {"message": "Bad credentials", "documentation_url": DOCS}, {}
        else:
            status, payload, headers = fake.handle(self.command, url.path, record.query, body)
        record.status = status
        data = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        sent = {
            "Content-Type": "application/json; charset=utf-8",
            "Content-Length": str(len(data)),
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": "4999",
            **headers,  # an injected fault may say that no request is left
        }
        for name, value in sent.items():
            self.send_header(name, value)
        self.end_headers()
        if data:
            self.wfile.write(data)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve


@dataclass
class EventFiles:
    """The files a workflow run hands to an action, in one folder."""

    folder: Path
    event: Path = field(init=False)
    output: Path = field(init=False)
    summary: Path = field(init=False)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.event = self.folder / "event.json"
        self.output = self.folder / "github_output"
        self.summary = self.folder / "step_summary.md"
        self.output.touch()
        self.summary.touch()

    def outputs(self) -> dict[str, str]:
        """`$GITHUB_OUTPUT` parsed (heredoc and `name=value` forms)."""
        values: dict[str, str] = {}
        lines = iter(self.output.read_text(encoding="utf-8").splitlines())
        for line in lines:
            if "<<" in line:
                name, delimiter = line.split("<<", 1)
                collected = []
                for item in lines:
                    if item == delimiter:
                        break
                    collected.append(item)
                values[name] = "\n".join(collected)
            elif "=" in line:
                name, value = line.split("=", 1)
                values[name] = value
        return values


def pull_event(
    fake: FakeGitHub, number: int, action: str = "synchronize", event: str = "pull_request_target"
) -> tuple[str, dict[str, Any]]:
    return event, {
        "action": action,
        "number": number,
        "pull_request": fake.pull_payload(fake.pulls[number]),
        "repository": fake.repo_payload(),
        "sender": _user(fake.pulls[number].author, api=fake.url),
    }


def comment_event(
    fake: FakeGitHub, comment: IssueComment, action: str = "created"
) -> tuple[str, dict[str, Any]]:
    pull = fake.pulls.get(comment.number)
    issue: dict[str, Any] = {
        "number": comment.number,
        "title": pull.title if pull else "",
        "state": "open",
        "user": _user(pull.author if pull else "someone", api=fake.url),
    }
    if pull is not None:
        issue["pull_request"] = {
            "url": f"{fake.api}/pulls/{comment.number}",
            "html_url": f"{WEB}/{fake.full_name}/pull/{comment.number}",
        }
    return "issue_comment", {
        "action": action,
        "issue": issue,
        "comment": fake.comment_payload(comment),
        "repository": fake.repo_payload(),
        "sender": _user(comment.login, comment.type, fake.url),
    }


def action_env(
    fake: FakeGitHub, files: EventFiles, event: tuple[str, dict], inputs: dict[str, str]
) -> dict[str, str]:
    """The environment a workflow run gives the action for `event` on the fake: the event file
    written, the step's files, the token, `offline` (no registry), then `inputs` as `INPUT_<NAME>`."""
    name, payload = event
    files.event.write_text(json.dumps(payload), encoding="utf-8")
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": name,
        "GITHUB_EVENT_PATH": str(files.event),
        "GITHUB_REPOSITORY": fake.full_name,
        "GITHUB_API_URL": fake.url,
        "GITHUB_STEP_SUMMARY": str(files.summary),
        "GITHUB_OUTPUT": str(files.output),
        "RUNNER_TEMP": str(files.folder),
        "INPUT_GITHUB-TOKEN": fake.token,
        "INPUT_OFFLINE": "true",
    }
    env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
    return env
