"""The read-only view of a repository at one ref that the engine reviews."""

from __future__ import annotations

from typing import Protocol


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
        """The file's bytes, or None when it does not exist at this ref."""
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
