"""Read files at any two refs of a local git repository, without checking anything out."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from bot.sources.snapshot import is_plain_path

_BATCH = 64  # requests per write to `git cat-file --batch` (a few KiB)


class GitError(Exception):
    """The repository or a ref could not be used; the message is one line for the user."""


def _git(repo: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False, timeout=60)
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} did not finish within 60 s") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(message[-1] if message else f"git {args[0]} failed")
    return done.stdout.decode("utf-8", "surrogateescape")


@dataclass
class GitRepo:
    """A local repository; `snapshot(ref)` gives read-only views of single commits."""

    path: Path
    _cat: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @classmethod
    def open(cls, path: str | Path) -> GitRepo:
        repo = Path(path)
        if not repo.is_dir():
            raise GitError(f"{repo} is not a folder")
        try:
            inside = _git(repo, "rev-parse", "--is-inside-work-tree", "--is-bare-repository")
        except GitError:
            raise GitError(f"{repo} is not a git repository") from None
        if "true" not in inside:
            raise GitError(f"{repo} is not a git repository")
        return cls(repo)

    def resolve(self, ref: str) -> str:
        """The commit SHA a ref names, or a GitError saying the ref is unknown."""
        if ref.startswith("-"):
            raise GitError(f"unknown ref {ref!r}")
        try:
            return _git(
                self.path, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"
            ).strip()
        except GitError:
            raise GitError(f"unknown ref {ref!r} in {self.path}") from None

    def merge_base(self, base: str, head: str) -> str:
        """Where head forked from base (what a pull request is compared against); base if none."""
        try:
            return _git(self.path, "merge-base", base, head).strip() or base
        except GitError:
            return base

    def changed_files(self, base: str, head: str) -> list[str]:
        """Paths that differ between two commits (renames count as delete + add)."""
        out = _git(self.path, "diff", "--name-only", "--no-renames", "-z", base, head)
        return [p for p in out.split("\0") if p]

    def list_files(self, sha: str, prefix: str) -> list[str]:
        args = ["ls-tree", "-r", "--name-only", "-z", sha]
        if prefix:
            args += ["--", prefix]
        return [p for p in _git(self.path, *args).split("\0") if p]

    def read(self, sha: str, path: str) -> bytes | None:
        """Blob contents through one long-lived `git cat-file --batch` process."""
        return self.read_many(sha, [path]).get(path)

    def read_many(self, sha: str, paths: list[str]) -> dict[str, bytes | None]:
        """Several blobs in one exchange with `git cat-file --batch`: the requests go out in slices
        (small enough never to fill the pipe while git waits for us to read), then the answers
        come back in order. One round trip per slice instead of one per file."""
        found: dict[str, bytes | None] = {path: None for path in paths if not is_plain_path(path)}
        wanted = [path for path in paths if is_plain_path(path)]
        cat = self._batch()
        assert cat.stdin and cat.stdout
        for start in range(0, len(wanted), _BATCH):
            batch = wanted[start : start + _BATCH]
            cat.stdin.write("".join(f"{sha}:{path}\n" for path in batch).encode("utf-8", "surrogateescape"))
            cat.stdin.flush()
            for path in batch:
                found[path] = self._answer(cat.stdout)
        return found

    @staticmethod
    def _answer(out: IO[bytes]) -> bytes | None:
        """One answer of `cat-file --batch`: `<oid> <type> <size>`, the bytes and a newline, of
        which only a blob is a file; or one line `<name> missing` (`ambiguous`), where the name may
        hold spaces."""
        line = out.readline().rstrip(b"\n")
        if line.endswith((b" missing", b" ambiguous")):
            return None
        _oid, kind, size = line.split(b" ")
        data = out.read(int(size))
        out.read(1)
        return data if kind == b"blob" else None

    def _batch(self) -> subprocess.Popen[bytes]:
        if self._cat is None or self._cat.poll() is not None:
            self._cat = subprocess.Popen(
                ["git", "-C", str(self.path), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        return self._cat

    def close(self) -> None:
        if self._cat is not None:
            if self._cat.stdin:
                self._cat.stdin.close()
            self._cat.wait()  # git exits at the end of its input (a wait with a timeout would poll)
            self._cat = None

    def snapshot(self, sha: str, label: str | None = None) -> GitSnapshot:
        return GitSnapshot(self, sha, label or sha[:12])


@dataclass
class GitSnapshot:
    """The files of one commit (implements `bot.sources.snapshot.Snapshot`)."""

    repo: GitRepo
    sha: str
    label: str
    _cache: dict[str, bytes | None] = field(default_factory=dict, repr=False)
    _paths: frozenset[str] | None = field(default=None, repr=False)

    def _all_paths(self) -> frozenset[str]:
        """Every file path of the commit, listed once (only when a folder is listed)."""
        if self._paths is None:
            self._paths = frozenset(self.repo.list_files(self.sha, ""))
        return self._paths

    def read(self, path: str) -> bytes | None:
        if path not in self._cache:
            self.prefetch([path])
        return self._cache[path]

    def prefetch(self, paths: list[str]) -> None:
        """Read the files not read yet in one exchange with git (an absent one answers `missing`)."""
        new = [p for p in dict.fromkeys(paths) if p not in self._cache]
        self._cache.update(self.repo.read_many(self.sha, new))

    def list_files(self, prefix: str) -> list[str]:
        return sorted(p for p in self._all_paths() if p.startswith(prefix))
