"""Where compiled message templates are kept between runs, like Python's `__pycache__`.

Compiling a jinja template takes about a millisecond, and a large review uses some fifty, so runs
after the first load them from files instead (`_QuietCache`, a `jinja2.BytecodeCache`). The cache
lives in `$PRBOT_CACHE_DIR` (set it to an empty value for no cache), else `$XDG_CACHE_HOME/prbot`,
else `~/.cache/prbot`. An entry is checked against the template's text; the entries' names carry
the Python and jinja2 versions and the code that shapes a compiled template (it folds filters on
constants into the code), so a stale entry is never used. A cache that cannot be read
or written is not used, silently: it can only make a review faster, never change or fail one.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import CodeType
from typing import Any

import jinja2
from jinja2.bccache import Bucket

_MADE_BY = (
    "output/messages.py",
    "output/textsafe.py",
    "output/render.py",
    "catalog.py",
)  # the modules whose code shapes a compiled template or a cached walk of one (catalog.py)


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
def _fingerprint() -> str:
    here = Path(__file__).parent
    digest = hashlib.sha256(f"{sys.version}\0{jinja2.__version__}".encode())
    for name in _MADE_BY:
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:16]


class _QuietCache(jinja2.BytecodeCache):
    """Compiled templates in files, one per template (named by its cache key): the checksum of the
    template's text, then its code as `marshal` writes it. An entry that cannot be read, is
    damaged or holds another text is compiled again; one that cannot be written is not kept.

    jinja2's own file cache reads each entry with `marshal.load` on the open file, a call back into
    Python for every piece of it: reading the bytes first and `marshal.loads` is several times
    faster, a millisecond on each run of a large review."""

    def __init__(self, folder: Path, pattern: str) -> None:
        self.folder, self.pattern = folder, pattern

    def _path(self, bucket: Bucket) -> Path:
        return self.folder / (self.pattern % bucket.key)

    def load_bytecode(self, bucket: Bucket) -> None:
        checksum = bucket.checksum.encode("ascii")
        try:
            data = self._path(bucket).read_bytes()
            code = marshal.loads(data[len(checksum) :]) if data.startswith(checksum) else None
            if isinstance(code, CodeType):
                bucket.code = code
        except Exception:  # an unreadable or damaged entry, whatever the damage
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        path = self._path(bucket)
        temporary = path.with_name(f".tmp-{os.getpid()}-{path.name}")
        try:  # written whole, then renamed: a reader never sees half an entry
            temporary.write_bytes(bucket.checksum.encode("ascii") + marshal.dumps(bucket.code))
            os.replace(temporary, path)
        except OSError:
            temporary.unlink(missing_ok=True)


def bytecode_cache(kind: str) -> jinja2.BytecodeCache | None:
    """The cache for the templates of one jinja environment (`kind` tells them apart, as the
    same text compiles differently in each); None when caching is off."""
    folder = directory()
    if folder is None:
        return None
    return _QuietCache(folder, f"{kind}-{_fingerprint()}-%s.cache")


def get(kind: str, parts: tuple[str, ...], make: Callable[[], Any]) -> Any:
    """`make()`, or what an earlier run stored for the same `kind` and `parts`: for what jinja2
    does not cache, the parsed catalog and the names each message reads. Values must be
    marshallable (strings, and dicts and lists of them)."""
    folder = directory()
    if folder is None:
        return make()
    digest = hashlib.sha256(_fingerprint().encode())
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
