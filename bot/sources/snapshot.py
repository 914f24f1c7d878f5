"""The read-only view of a repository at one ref that the engine reviews."""

from __future__ import annotations

from typing import Protocol

from bot.catalog import Msg


class SourceError(Exception):
    """A file source could not give what was asked of it (git failed, the API refused): the review
    did not run on the real files, so the caller reports that instead of a review. `message` says
    why, as a catalog message (`bot.catalog`)."""

    def __init__(self, message: Msg) -> None:
        super().__init__(message.id)
        self.message = message


class Oversized(bytes):
    """A file too large to review, known by its size alone: no content was read, `len()` is the
    file's real size. A reader must refuse a file by `len(data) > limit` before it looks at the
    bytes; then an oversized file gets the same "too large" finding as its bytes would. Two are
    equal only when they are the same git blob (same content), never because both hold no bytes."""

    size: int
    blob: str  # the git blob SHA

    def __new__(cls, size: int, blob: str) -> Oversized:
        self = super().__new__(cls)
        self.size, self.blob = size, blob
        return self

    def __len__(self) -> int:
        return self.size

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Oversized) and other.blob == self.blob

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((Oversized, self.blob))

    def __repr__(self) -> str:
        return f"Oversized({self.size}, {self.blob!r})"


def is_plain_path(path: str) -> bool:
    """A repository path as git lists it: no empty, `.` or `..` part and no newline. Paths named
    by a PR (recipe references) are looked up only when plain, so that `./x` or `a/../x` never
    reaches a file under another name."""
    parts = path.split("/")
    return bool(path) and "\n" not in path and not any(p in ("", ".", "..") for p in parts)


class Snapshot(Protocol):
    """Files of a repository at one ref. Implementations never check out or execute anything."""

    @property
    def label(self) -> str:
        """A short name for messages: the ref or SHA."""
        ...

    def read(self, path: str) -> bytes | None:
        """The file's bytes, or None when it does not exist at this ref. A source that knows a
        file's size before reading it may return an `Oversized` for one over `bot.yamlsafe.MAX_BYTES`."""
        ...

    def list_files(self, prefix: str) -> list[str]:
        """Paths of all files under `prefix` (a folder path ending in '/', or '' for all)."""
        ...

    def prefetch(self, paths: list[str]) -> None:
        """A hint that these files are about to be read, in this order: git is asked for them at
        once and unpacks each while the ones before it are worked on; a source may also do
        nothing ahead (GitHub asks for one request at a time). Either way, `read` then gives the
        same bytes."""
        ...
