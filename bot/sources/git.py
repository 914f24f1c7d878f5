"""Read files at any two refs of a local git repository, without checking anything out."""

from __future__ import annotations

import contextlib
import subprocess
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from bot.catalog import msg
from bot.sources.snapshot import Oversized, SourceError, is_plain_path
from bot.yamlsafe import MAX_BYTES

_WINDOW = 8192  # bytes of requests sent to `git cat-file --batch` and not answered yet
_CHUNK = 1 << 20  # the bytes of an oversized blob are passed over this many at a time


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


@dataclass
class GitRepo:
    """A local repository; `snapshot(ref)` gives read-only views of single commits."""

    path: Path
    #: Blobs larger than this are never read: `read` gives an `Oversized` (their size alone).
    max_bytes: int = MAX_BYTES
    _cat: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _check: subprocess.Popen[bytes] | None = field(default=None, repr=False)  # `--batch-check`
    # Requests for `git cat-file --batch`: (where the answer goes, path, request line). Queued ones
    # are not sent yet; pending ones are sent and answered in this order.
    _queued: deque[tuple[dict[str, bytes | None], str, bytes]] = field(default_factory=deque, repr=False)
    _pending: deque[tuple[dict[str, bytes | None], str, bytes]] = field(default_factory=deque, repr=False)
    _unanswered: int = field(default=0, repr=False)

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

    def commit_message(self, sha: str) -> str:
        """The full message of a commit (`[skip-sweep]` in it holds InferenceX's sweep back)."""
        return _git(self.path, "log", "-1", "--format=%B", sha)

    def changed_files(self, base: str, head: str) -> list[str]:
        """Paths that differ between two commits (renames count as delete + add)."""
        out = _git(self.path, "diff", "--name-only", "--no-relative", "--no-renames", "-z", base, head)
        return [p for p in out.split("\0") if p]

    def list_files(self, sha: str, prefix: str) -> list[str]:
        # --full-tree: paths from the repository root, whatever folder `path` is (a subfolder
        # would otherwise list relative names, and every master config would look removed).
        args = ["ls-tree", "-r", "--full-tree", "--name-only", "-z", sha]
        if prefix:
            args += ["--", prefix]
        return [p for p in _git(self.path, *args).split("\0") if p]

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

        Each file's type and size are asked first (`_screen`): what is no file, or a blob over
        `max_bytes`, is answered at once, and only the others are asked of `git cat-file --batch`.
        Those requests go out in order while less than a window of them is unanswered (never
        enough to fill the pipe while git waits for us to read), and more follow as answers are
        read. So git unpacks the next files while the caller works on the first ones."""
        batch: list[tuple[str, bytes]] = []
        size = 0
        for path in paths:
            if not is_plain_path(path):
                into[path] = None
                continue
            line = f"{sha}:{path}\n".encode("utf-8", "surrogateescape")
            if batch and size + len(line) > _WINDOW:
                self._screen(into, batch)
                batch, size = [], 0
            batch.append((path, line))
            size += len(line)
        if batch:
            self._screen(into, batch)
        self._send()

    def _screen(self, into: dict[str, bytes | None], batch: list[tuple[str, bytes]]) -> None:
        """Ask `git cat-file --batch-check` what each `sha:path` is, at most a window of requests
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
                self._queued.append((into, path, oid + b"\n"))

    def collect(self, into: dict[str, bytes | None], path: str) -> None:
        """Read git's answers, in the order they come, until `path` has arrived in `into`."""
        cat = self._batch()
        assert cat.stdout
        while path not in into:
            if not self._pending:
                raise GitError(msg("git-cat-file-unasked", path=path))
            target, wanted, line = self._pending.popleft()
            self._unanswered -= len(line)
            target[wanted] = self._answer(cat.stdout)
            self._send()

    def _send(self) -> None:
        if not self._queued:
            return
        cat = self._batch()
        assert cat.stdin
        lines = []
        while self._queued and self._unanswered + len(self._queued[0][2]) <= _WINDOW:
            request = self._queued.popleft()
            self._pending.append(request)
            self._unanswered += len(request[2])
            lines.append(request[2])
        if lines:
            cat.stdin.write(b"".join(lines))
            cat.stdin.flush()

    def _answer(self, out: IO[bytes]) -> bytes | None:
        """One answer of `cat-file --batch`: `<oid> <type> <size>`, the bytes and a newline, of
        which only a blob is a file; or one line `<name> missing` (`ambiguous`), where the name may
        hold spaces. The size comes first: the bytes of a blob over `max_bytes` are passed over
        a chunk at a time, never held, and it is an `Oversized`, as the API's tree makes it."""
        line = out.readline()
        if not line:
            raise GitError(msg("git-cat-file-stopped"))
        line = line.rstrip(b"\n")
        if line.endswith((b" missing", b" ambiguous")):
            return None
        oid, kind, size_text = line.split(b" ")
        size = int(size_text)
        if size > self.max_bytes:
            left = size + 1  # and the newline after the bytes
            while left:
                chunk = out.read(min(left, _CHUNK))
                if not chunk:
                    raise GitError(msg("git-cat-file-stopped"))
                left -= len(chunk)
            return Oversized(size, oid.decode("ascii")) if kind == b"blob" else None
        data = out.read(size)
        out.read(1)
        return data if kind == b"blob" else None

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
    _paths: frozenset[str] | None = field(default=None, repr=False)

    def _all_paths(self) -> frozenset[str]:
        """Every file path of the commit, listed once (only when a folder is listed)."""
        if self._paths is None:
            self._paths = frozenset(self.repo.list_files(self.sha, ""))
        return self._paths

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
        return sorted(p for p in self._all_paths() if p.startswith(prefix))
