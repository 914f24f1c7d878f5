"""A changelog `config-keys` item matched against a key without backtracking (pure).

InferenceX's sweep (`utils/process_changelog.py`) turns an item holding `*` into a regular
expression: every other character literal, each `*` as `.*`, the whole key to match. `.` stops at
a newline, so a `*` stands for any text without a line break; `?` and `[` are plain characters.
A regex engine tries every split of the key between the stars, so `*********zz` against a long
key takes minutes. The same language is decided here in one pass: the text between stars must
appear in order, each piece at its first place after the previous one.

Why the first place is enough: a later place for a piece leaves less of the key for the pieces
after it, and whatever text a star may cover after the later place it may also cover after the
first (the key between the two places holds no line break, or the later place would need a star
to cover one). A piece that itself holds a line break occurs only once where it can be placed.
"""

from __future__ import annotations

from functools import lru_cache

STAR = "*"


@lru_cache(maxsize=1024)
def _pieces(pattern: str) -> tuple[str, ...]:
    return tuple(pattern.split(STAR))


def _covers(key: str, start: int, end: int) -> bool:
    """Whether a star may stand for `key[start:end]` (text without a line break)."""
    return key.find("\n", start, end) < 0


def matches(pattern: str, key: str) -> bool:
    """Whether `key` is `pattern` with each `*` replaced by some text without a line break."""
    pieces = _pieces(pattern)
    if len(pieces) == 1:
        return pattern == key
    first, *middle, last = pieces
    if len(first) + len(last) > len(key) or not key.startswith(first) or not key.endswith(last):
        return False
    position, end = len(first), len(key) - len(last)
    for piece in middle:
        if not piece:
            continue
        found = key.find(piece, position, end)
        if found < 0 or not _covers(key, position, found):
            return False
        position = found + len(piece)
    return _covers(key, position, end)
