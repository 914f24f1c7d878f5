"""Neutralise text taken from a pull request before it is placed in markdown, logs or JSON.

Everything a PR author controls (config keys, values, titles, file names) passes through one of
these functions on its way into the comment, so that it cannot ping people (`@org/team`), inject
HTML (`<img>`, `<details>`), break out of a code span or list item, or smuggle a workflow command
(`::set-output`) into the job log.
"""

from __future__ import annotations

import re
import unicodedata

MAX_VALUE_CHARS = 300
_ZWSP = "\u200b"
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def clip(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    """Drop control characters, fold newlines and cut over-long values with an ellipsis."""
    if len(text) <= limit and text.isprintable():  # the common case: nothing to drop or fold
        return text
    text = _CONTROL.sub("", text.replace("\r\n", " ").replace("\n", " ").replace("\t", " "))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plain(value: object) -> str:
    """A PR value as plain text for the JSON report: clipped, no control characters."""
    return clip(str(value))


def _no_mentions(text: str) -> str:
    return text.replace("@", "@" + _ZWSP)


def md_text(value: object) -> str:
    """A PR value as inert inline markdown text."""
    text = clip(str(value))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return _no_mentions(text)


def md_code(value: object) -> str:
    """A PR value as an inline code span that no backtick inside it can close early.

    Pipes are kept as they are: the comment has no tables, and inside a code span outside a
    table a `\\|` would show its backslash."""
    text = clip(str(value))
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fence_for(body: str) -> str:
    """A backtick fence longer than any backtick run in `body` (at least three)."""
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    return "`" * max(3, longest + 1)


def log_line(value: object) -> str:
    """A PR value safe to print in a GitHub Actions log: no line breaks, no `::` command openers."""
    text = clip(str(value), 1000)
    return text.replace("::", ":" + _ZWSP + ":")


def is_printable(text: str) -> bool:
    """True when the text has no control or unassigned characters (tabs and newlines aside)."""
    return all(ch in "\t\n" or unicodedata.category(ch)[0] != "C" for ch in text)
