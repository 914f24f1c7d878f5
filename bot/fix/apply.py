"""Writing a plan to the working tree, and showing it as a diff (the I/O of `prbot fix`).

A file is written only when its working-tree copy is a regular file inside the repository whose
bytes are exactly the head's: anything else (uncommitted work, a symbolic link, a checkout of
another commit) stops the whole fix before the first write, so no work is ever lost.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from pathlib import Path

from bot.catalog import Msg, msg

NO_NEWLINE = "\\ No newline at end of file\n"


class FixError(Exception):
    """Why the fix stopped: a catalog message, printed in the chosen languages, exit status 2."""

    def __init__(self, message: Msg) -> None:
        super().__init__(message.id)
        self.message = message


def worktree_root(repo: str) -> Path:
    """The top folder of the working tree that `repo` is in (a bare repository has none)."""
    try:
        done = subprocess.run(
            ["git", "-C", repo, "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        top = done.stdout.strip() if done.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        top = ""
    if not top:
        raise FixError(msg("fix-error-no-worktree", repo=repo))
    return Path(top).resolve()


def _target(root: Path, path: str) -> Path:
    """The working-tree file of a repository path; a symbolic link anywhere on the way is refused."""
    target = root
    for part in path.split("/"):
        target = target / part
        if target.is_symlink():
            raise FixError(msg("fix-error-not-regular", file=path))
    if not target.is_file():
        raise FixError(msg("fix-error-not-regular", file=path))
    return target


def check_clean(root: Path, files: dict[str, bytes], head: str) -> None:
    """Refuse (FixError) unless every file to write holds exactly its bytes at `head`."""
    for path, committed in files.items():
        try:
            target = _target(root, path)
            # A size that differs says "changed" without reading a file of any size.
            work = target.read_bytes() if target.stat().st_size == len(committed) else None
        except OSError as exc:
            raise FixError(msg("fix-error-read", file=path, error=exc.strerror or str(exc))) from None
        if work != committed:
            raise FixError(msg("fix-error-dirty", file=path, head=head))


def write(root: Path, path: str, data: bytes) -> None:
    """Replace a file's bytes at once (a new file moved over the old one), keeping its mode."""
    target = _target(root, path)
    try:
        mode = target.stat().st_mode & 0o7777
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".prbot-fix-")
    except OSError as exc:
        raise FixError(msg("fix-error-write", file=path, error=exc.strerror or str(exc))) from None
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise FixError(msg("fix-error-write", file=path, error=exc.strerror or str(exc))) from None


def _lines(data: bytes) -> list[str]:
    lines = data.decode("utf-8", "replace").splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n" + NO_NEWLINE
    return lines


def _range(start: int, stop: int) -> str:
    """A hunk's line range as `diff -u` writes it (`3,4`; `3` for one line; `2,0` for none)."""
    length = stop - start
    first = start + 1 if length else start
    return f"{first}" if length == 1 else f"{first},{length}"


Opcode = tuple[str, int, int, int, int]  # as difflib's: tag, before[i1:i2], after[j1:j2]


def _opcodes(before: list[str], after: list[str]) -> list[Opcode]:
    """The lines that changed, in linear time. A fix replaces values on their own lines or adds
    lines at the end of a file, so past the common start and end, lines are paired one to one and
    what one side has more is added (or removed) at the end. (difflib's matcher looks for the
    longest matching blocks: on a recipe of many equal lines that is minutes, 4,000 lines 46 s.)"""
    start = 0
    while start < min(len(before), len(after)) and before[start] == after[start]:
        start += 1
    end_a, end_b = len(before), len(after)
    while end_a > start and end_b > start and before[end_a - 1] == after[end_b - 1]:
        end_a, end_b = end_a - 1, end_b - 1
    paired = min(end_a, end_b) - start
    changes = [(i, i + 1, i, i + 1) for i in range(start, start + paired) if before[i] != after[i]]
    if end_a != end_b:
        changes.append((start + paired, end_a, start + paired, end_b))
    out: list[Opcode] = []
    for i1, i2, j1, j2 in changes:
        if out and out[-1][2] == i1:  # next to the one before: one block of `-` lines, then `+`
            i1, j1 = out.pop()[1::2]
        out.append(("replace", i1, i2, j1, j2))
    return out


def _hunks(changes: list[Opcode], context: int = 3) -> list[list[Opcode]]:
    """Changes grouped as `diff -u` shows them: together when at most 2 × context equal lines
    stand between them."""
    groups: list[list[Opcode]] = []
    for change in changes:
        if groups and change[1] - groups[-1][-1][2] <= 2 * context:
            groups[-1].append(change)
        else:
            groups.append([change])
    return groups


def unified_diff(path: str, old: bytes, new: bytes, context: int = 3) -> str:
    """`git diff`-style text of one file's change, in linear time (see `_opcodes`)."""
    before, after = _lines(old), _lines(new)
    out = [f"--- a/{path}\n", f"+++ b/{path}\n"]
    for group in _hunks(_opcodes(before, after), context):
        first, last = group[0], group[-1]
        a_start = max(0, first[1] - context)
        a_end = min(len(before), last[2] + context)
        b_start, b_end = first[3] - (first[1] - a_start), last[4] + (a_end - last[2])
        out.append(f"@@ -{_range(a_start, a_end)} +{_range(b_start, b_end)} @@\n")
        position = a_start
        for _tag, i1, i2, j1, j2 in group:
            out += [" " + line for line in before[position:i1]]
            out += ["-" + line for line in before[i1:i2]]
            out += ["+" + line for line in after[j1:j2]]
            position = i2
        out += [" " + line for line in before[position:a_end]]
    return "".join(out)
