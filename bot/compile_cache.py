"""A disk cache for the message catalog and its compiled templates, like Python's `__pycache__`.

Compiling a jinja template takes about a millisecond, and a large review uses some fifty, so runs
after the first load them with `marshal` instead; the catalog's YAML is kept the same way, parsed.
The cache lives in `$PRBOT_CACHE_DIR` (set it to an empty value for no cache), else
`$XDG_CACHE_HOME/prbot`, else `~/.cache/prbot`. An entry's name is a hash of everything it was
made from (the template text, the code that compiles it, and the jinja2 and Python versions), so a
stale entry is never used. A cache that cannot be read or written is not used, silently: it can
only make a review faster, never change or fail one.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

_MADE_BY = ("messages.py", "textsafe.py")  # the modules whose code shapes a compiled template


@cache
def directory() -> Path | None:
    """The cache folder, created if needed; None when caching is off or impossible."""
    configured = os.environ.get("PRBOT_CACHE_DIR")
    if configured is not None:
        if not configured:
            return None
        folder = Path(configured)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        folder = Path(base) / "prbot"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        status = folder.stat()
    except OSError:
        return None
    # The entries are code: use only a folder that this user owns and nobody else can write to.
    if hasattr(os, "getuid") and (status.st_uid != os.getuid() or status.st_mode & 0o022):
        return None
    return folder if os.access(folder, os.W_OK | os.X_OK) else None


@cache
def _fingerprint() -> bytes:
    here = Path(__file__).parent
    digest = hashlib.sha256(f"{sys.version}\0{jinja2.__version__}".encode())
    for name in _MADE_BY:
        digest.update((here / name).read_bytes())
    return digest.digest()


def get(kind: str, parts: tuple[str, ...], make: Callable[[], Any]) -> Any:
    """`make()`, or what an earlier run stored for the same `kind` and `parts`. Values must be
    marshallable (code objects, strings, lists of strings)."""
    folder = directory()
    if folder is None:
        return make()
    digest = hashlib.sha256(_fingerprint())
    for part in (kind, *parts):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    path = folder / f"{kind}-{digest.hexdigest()[:32]}.bin"
    try:
        return marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        pass
    value = make()
    temporary = folder / f".tmp-{os.getpid()}-{path.name}"
    try:  # written whole, then renamed: a reader never sees half an entry
        temporary.write_bytes(marshal.dumps(value))
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
    return value
