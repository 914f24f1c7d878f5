"""Read files at any two refs of a local git repository, without checking anything out."""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, NamedTuple

from bot.catalog import msg
from bot.sources.snapshot import Oversized, SourceError, is_plain_path
from bot.yamlsafe import MAX_BYTES

_WINDOW = 8192  # bytes of requests sent to `git cat-file --batch` and not answered yet
_CHUNK = 1 << 20  # the bytes of an oversized blob are passed over this many at a time
_OID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")  # a full object id, SHA-1 or SHA-256


class GitError(SourceError):
    """The repository or a ref could not be used; `message` says why, in one line."""


def _git(repo: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False, timeout=60)
    except FileNotFoundError:
        raise GitError(msg("git-missing")) from None
    except subprocess.TimeoutExpired:
        raise GitError(msg("git-timeout", command=args[0], seconds=60)) from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(msg("git-failed", command=args[0], detail=message[-1] if message else ""))
    return done.stdout.decode("utf-8", "surrogateescape")


class Compared(NamedTuple):
    """The commits of a local review: what the base and head refs name, and where head forked
    from base (the base commit itself when the two share no history)."""

    base: str
    head: str
    merge_base: str


class _Request(NamedTuple):
    """One object asked of `git cat-file --batch`."""

    into: dict[str, bytes | None]  # where the answer goes
    key: str  # under which key
    line: bytes  # the request sent: the object's id and a newline
    kind: bytes = b"blob"  # the answer: the object's bytes when it is of this kind, else None


def _compared(repo: Path, base: str, head: str) -> Compared | None:
    """Whether `repo` is a repository, the commits both refs name and their merge base, from one
    `git rev-parse B^{commit}...H^{commit}`: it prints head, base, then each merge base after a
    `^`, the first one being `git merge-base`'s. None when that cannot tell all of it."""
    if any(not ref or ref.startswith("-") or ".." in ref for ref in (base, head)):
        return None  # not one ref each: `resolve` says what is wrong
    range_ = f"{base}^{{commit}}...{head}^{{commit}}"
    try:
        lines = _git(repo, "rev-parse", "--is-inside-work-tree", "--is-bare-repository", range_).split()
    except GitError:
        return None
    flags, shas, excluded = lines[:2], lines[2:4], lines[4:]
    if "true" not in flags or len(shas) != 2 or not all(_OID.fullmatch(sha) for sha in shas):
        return None
    if not all(line[:1] == "^" and _OID.fullmatch(line[1:]) for line in excluded):
        return None
    return Compared(shas[1], shas[0], excluded[0][1:] if excluded else shas[1])


def _message(commit: bytes) -> str:
    """A commit object's message as `git log -1 --format=%B` prints it: the object up to a NUL
    byte, decoded from its `encoding` header (UTF-8 when it has none, or as it is when it does
    not decode), what follows the first blank line, and a newline."""
    commit = commit.split(b"\0", 1)[0]
    headers = commit.split(b"\n\n", 1)[0].split(b"\n")
    named = [line.removeprefix(b"encoding ") for line in headers if line.startswith(b"encoding ")]
    try:
        text = commit.decode(named[0].decode("ascii") if named else "utf-8")
    except (LookupError, UnicodeDecodeError):
        text = commit.decode("utf-8", "surrogateescape")
    return text.partition("\n\n")[2] + "\n"


def _committer_day(commit: bytes) -> str | None:
    """The UTC day of a commit object's `committer … <email> <seconds> <zone>` header."""
    headers = commit.split(b"\n\n", 1)[0].split(b"\n")
    for line in headers:
        if line.startswith(b"committer "):
            fields = line.rsplit(b">", 1)[-1].split()
            if fields and fields[0].isdigit() and len(fields[0]) <= 12:
                with contextlib.suppress(ValueError, OverflowError, OSError):  # beyond year 9999
                    return datetime.fromtimestamp(int(fields[0]), UTC).date().isoformat()
            return None
    return None


@dataclass
class GitRepo:
    """A local repository; `snapshot(ref)` gives read-only views of single commits."""

    path: Path
    #: Blobs larger than this are never read: `read` gives an `Oversized` (their size alone).
    max_bytes: int = MAX_BYTES
    _cat: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _check: subprocess.Popen[bytes] | None = field(default=None, repr=False)  # `--batch-check`
    # Requests for `git cat-file --batch`. Queued ones are not sent yet; pending ones are sent and
    # answered in this order.
    _queued: deque[_Request] = field(default_factory=deque, repr=False)
    _pending: deque[_Request] = field(default_factory=deque, repr=False)
    _unanswered: int = field(default=0, repr=False)
    _trees: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)  # `tree`'s answers

    @classmethod
    def open(cls, path: str | Path) -> GitRepo:
        repo = Path(path)
        if not repo.is_dir():
            raise GitError(msg("git-not-a-folder", path=str(repo)))
        try:
            inside = _git(repo, "rev-parse", "--is-inside-work-tree", "--is-bare-repository")
        except GitError:
            raise GitError(msg("git-not-a-repository", path=str(repo))) from None
        if "true" not in inside:
            raise GitError(msg("git-not-a-repository", path=str(repo)))
        return cls(repo)

    @classmethod
    def open_compared(cls, path: str | Path, base: str, head: str) -> tuple[GitRepo, Compared]:
        """`open(path)`, `resolve(head)`, `resolve(base)` and their `merge_base`, all from one
        git process when the folder is a repository and both refs name commits; else one by
        one, so that the error says which of them is wrong."""
        folder = Path(path)
        found = _compared(folder, base, head) if folder.is_dir() else None
        if found is not None:
            return cls(folder), found
        repo = cls.open(folder)
        head_sha, base_sha = repo.resolve(head), repo.resolve(base)
        return repo, Compared(base_sha, head_sha, repo.merge_base(base_sha, head_sha))

    def resolve(self, ref: str) -> str:
        """The commit SHA a ref names, or a GitError saying the ref is unknown."""
        if ref.startswith("-"):
            raise GitError(msg("git-unknown-ref", ref=ref, repo=""))
        try:
            return _git(
                self.path, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"
            ).strip()
        except GitError:
            raise GitError(msg("git-unknown-ref", ref=ref, repo=str(self.path))) from None

    def merge_base(self, base: str, head: str) -> str:
        """Where head forked from base (what a pull request is compared against); base if none."""
        try:
            return _git(self.path, "merge-base", base, head).strip() or base
        except GitError:
            return base

    def remote_url(self, name: str) -> str:
        """The URL of a remote; "" when there is no such remote."""
        try:
            return _git(self.path, "remote", "get-url", name).strip()
        except GitError:
            return ""

    def _commit(self, sha: str) -> bytes:
        found: dict[str, bytes | None] = {}
        self._queued.append(_Request(found, sha, f"{sha}\n".encode("ascii"), b"commit"))
        self._send()
        self.collect(found, sha)
        commit = found[sha]
        if commit is None:
            raise GitError(msg("git-unknown-ref", ref=sha, repo=str(self.path)))
        return commit

    def commit_message(self, sha: str) -> str:
        """The full message of a commit, as `git log -1 --format=%B` prints it (`[skip-sweep]` in
        it holds InferenceX's sweep back), read through the `git cat-file --batch` process."""
        return _message(self._commit(sha))

    def commit_date(self, sha: str) -> str | None:
        """A commit's committer date as a UTC day (`YYYY-MM-DD`, as `git log -1 --format=%cs`
        with `TZ=UTC`); None when its `committer` header has no readable time."""
        return _committer_day(self._commit(sha))

    def changed_files(self, base: str, head: str) -> list[str]:
        """Paths whose mode, type or contents differ between two commits (renames count as
        delete + add), by path bytes: what `git diff --name-only --no-renames` lists, found in
        both commits' `tree`s."""
        old, new = self.tree(base), self.tree(head)
        changed = {path for path, _ in old.items() ^ new.items()}
        return sorted(changed, key=lambda path: path.encode("utf-8", "surrogateescape"))

    def tree(self, sha: str) -> dict[str, str]:
        """Every path of a commit (files, symlinks, submodules) and its `<mode> <type> <id>`: one
        `git ls-tree -r` per commit, kept."""
        if sha not in self._trees:
            # --full-tree: paths from the repository root, whatever folder `path` is (a subfolder
            # would otherwise list relative names, and every master config would look removed).
            out = _git(self.path, "ls-tree", "-r", "--full-tree", "-z", sha).split("\0")
            entries = (line.partition("\t") for line in out if line)  # `<mode> <type> <id>\t<path>`
            self._trees[sha] = {path: entry for entry, _, path in entries}
        return self._trees[sha]

    def list_files(self, sha: str, prefix: str) -> list[str]:
        """The paths of a commit that start with `prefix`, sorted."""
        return sorted(path for path in self.tree(sha) if path.startswith(prefix))

    def read(self, sha: str, path: str) -> bytes | None:
        """Blob contents through one long-lived `git cat-file --batch` process (an `Oversized`
        for a blob over `max_bytes`, whose bytes are never read)."""
        return self.read_many(sha, [path]).get(path)

    def read_many(self, sha: str, paths: list[str]) -> dict[str, bytes | None]:
        """Several blobs at once: every request is sent before the first answer is awaited."""
        found: dict[str, bytes | None] = {}
        self.request(found, sha, paths)
        for path in paths:
            self.collect(found, path)
        return found

    def request(self, into: dict[str, bytes | None], sha: str, paths: list[str]) -> None:
        """Ask git for files without waiting: each answer lands in `into` when `collect` reaches it.

        The commit's listing (`tree`) tells what each path is: no file, a submodule or a folder
        is answered at once (None). A file's blob is then asked for by its id, its size first
        (`_screen`): one over `max_bytes` is answered at once (`Oversized`), and only the others
        are asked of `git cat-file --batch`. (By id, not as `sha:path`: git then looks nothing up
        in the commit's trees again, which took it about 0.1 ms a file.)
        Those requests go out in order while less than a window of them is unanswered (never
        enough to fill the pipe while git waits for us to read), and more follow as answers are
        read. So git unpacks the next files while the caller works on the first ones."""
        batch: list[tuple[str, bytes]] = []
        size = 0
        tree = self.tree(sha)
        for path in paths:
            entry = tree.get(path) if is_plain_path(path) else None  # `<mode> <type> <id>`
            _mode, kind, oid = entry.split(" ") if entry else ("", "", "")
            if kind != "blob":  # no such file, or a submodule
                into[path] = None
                continue
            line = f"{oid}\n".encode("ascii")
            if batch and size + len(line) > _WINDOW:
                self._screen(into, batch)
                batch, size = [], 0
            batch.append((path, line))
            size += len(line)
        if batch:
            self._screen(into, batch)
        self._send()

    def _screen(self, into: dict[str, bytes | None], batch: list[tuple[str, bytes]]) -> None:
        """Ask `git cat-file --batch-check` the size of each blob, at most a window of requests
        at a time (so that its answers never fill the pipe while it waits for us): a blob within
        `max_bytes` is queued for `--batch` by its id; a larger one is an `Oversized`, known by its
        size alone (git never even unpacks it); anything else, or nothing, is None."""
        check = self._process("_check", "--batch-check")
        assert check.stdin and check.stdout
        try:
            check.stdin.write(b"".join(line for _, line in batch))
            check.stdin.flush()
        except OSError:
            raise GitError(msg("git-cat-file-stopped")) from None
        for path, _line in batch:
            answer = check.stdout.readline()
            if not answer:
                raise GitError(msg("git-cat-file-stopped"))
            answer = answer.rstrip(b"\n")
            if answer.endswith((b" missing", b" ambiguous")):
                into[path] = None
                continue
            oid, kind, size = answer.split(b" ")
            if kind != b"blob":
                into[path] = None
            elif int(size) > self.max_bytes:
                into[path] = Oversized(int(size), oid.decode("ascii"))
            else:
                self._queued.append(_Request(into, path, oid + b"\n"))

    def collect(self, into: dict[str, bytes | None], path: str) -> None:
        """Read git's answers, in the order they come, until `path` has arrived in `into`."""
        cat = self._batch()
        assert cat.stdout
        while path not in into:
            if not self._pending:
                raise GitError(msg("git-cat-file-unasked", path=path))
            request = self._pending.popleft()
            self._unanswered -= len(request.line)
            request.into[request.key] = self._answer(cat.stdout, request.kind)
            self._send()

    def _send(self) -> None:
        if not self._queued:
            return
        cat = self._batch()
        assert cat.stdin
        lines = []
        while self._queued and self._unanswered + len(self._queued[0].line) <= _WINDOW:
            request = self._queued.popleft()
            self._pending.append(request)
            self._unanswered += len(request.line)
            lines.append(request.line)
        if lines:
            cat.stdin.write(b"".join(lines))
            cat.stdin.flush()

    def _answer(self, out: IO[bytes], wanted: bytes) -> bytes | None:
        """One answer of `cat-file --batch`: `<oid> <type> <size>`, the bytes and a newline, which
        are the answer when the type is `wanted` (a blob: a file); or one line `<name> missing`
        (`ambiguous`), where the name may hold spaces. The size comes first: the bytes of a blob
        over `max_bytes` are passed over a chunk at a time, never held, and it is an `Oversized`,
        as the API's tree makes it (a commit is read whole, as `git log` would)."""
        line = out.readline()
        if not line:
            raise GitError(msg("git-cat-file-stopped"))
        line = line.rstrip(b"\n")
        if line.endswith((b" missing", b" ambiguous")):
            return None
        oid, kind, size_text = line.split(b" ")
        size = int(size_text)
        if size > self.max_bytes and wanted == b"blob":
            left = size + 1  # and the newline after the bytes
            while left:
                chunk = out.read(min(left, _CHUNK))
                if not chunk:
                    raise GitError(msg("git-cat-file-stopped"))
                left -= len(chunk)
            return Oversized(size, oid.decode("ascii")) if kind == b"blob" else None
        data = out.read(size)
        out.read(1)
        return data if kind == wanted else None

    def _batch(self) -> subprocess.Popen[bytes]:
        if self._cat is not None and self._cat.poll() is not None and (self._pending or self._queued):
            self.close()  # its unanswered requests are lost with it: say so rather than start over
            raise GitError(msg("git-cat-file-stopped"))
        return self._process("_cat", "--batch")

    def _process(self, name: str, mode: str) -> subprocess.Popen[bytes]:
        """The long-lived `git cat-file` process kept in attribute `name`, started when needed."""
        process: subprocess.Popen[bytes] | None = getattr(self, name)
        if process is None or process.poll() is not None:
            process = subprocess.Popen(
                ["git", "-C", str(self.path), "cat-file", mode],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            setattr(self, name, process)
        return process

    def close(self) -> None:
        for name in ("_cat", "_check"):
            process: subprocess.Popen[bytes] | None = getattr(self, name)
            if process is None:
                continue
            for pipe in (process.stdin, process.stdout):  # unread answers are dropped
                if pipe:
                    with contextlib.suppress(OSError):  # git may be gone already
                        pipe.close()
            process.wait()  # git exits at the end of its input (a wait with a timeout would poll)
            setattr(self, name, None)
        self._queued.clear()
        self._pending.clear()
        self._unanswered = 0

    def snapshot(self, sha: str, label: str | None = None) -> GitSnapshot:
        return GitSnapshot(self, sha, label or sha[:12])


@dataclass
class GitSnapshot:
    """The files of one commit (implements `bot.sources.snapshot.Snapshot`)."""

    repo: GitRepo
    sha: str
    label: str
    _cache: dict[str, bytes | None] = field(default_factory=dict, repr=False)
    _asked: set[str] = field(default_factory=set, repr=False)  # requested of git, maybe not read yet

    def read(self, path: str) -> bytes | None:
        if path not in self._cache:
            self.prefetch([path])
            self.repo.collect(self._cache, path)
        return self._cache[path]

    def prefetch(self, paths: list[str]) -> None:
        """Ask git for the files not asked for yet, without waiting: `read` then takes each one as
        it arrives, while git unpacks the next (an absent file answers `missing`)."""
        new = [p for p in dict.fromkeys(paths) if p not in self._asked]
        self._asked.update(new)
        self.repo.request(self._cache, self.sha, new)

    def list_files(self, prefix: str) -> list[str]:
        return self.repo.list_files(self.sha, prefix)
