"""Writing a plan to the working tree, and showing it as a diff (the I/O of `prbot fix`).

A file is written only when its working-tree copy is a regular file inside the repository whose
bytes are exactly the head's: anything else (uncommitted work, a symbolic link, a checkout of
another commit) stops the whole fix before the first write, so no work is ever lost.
"""

from __future__ import annotations

import contextlib
import difflib
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
            work = _target(root, path).read_bytes()
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


def unified_diff(path: str, old: bytes, new: bytes) -> str:
    """`git diff`-style text of one file's change. difflib's own `unified_diff` treats lines
    repeated across a 200-line recipe as junk and would show whole blocks moving; this matcher
    keeps them, so the diff is the changed lines only."""
    before, after = _lines(old), _lines(new)
    out = [f"--- a/{path}\n", f"+++ b/{path}\n"]
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for group in matcher.get_grouped_opcodes(3):
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in before[i1:i2]]
                continue
            out += ["-" + line for line in before[i1:i2]]
            out += ["+" + line for line in after[j1:j2]]
    return "".join(out)
