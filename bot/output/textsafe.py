"""Neutralise text taken from a pull request before it is placed in markdown, logs or JSON.

Everything a PR author controls (config keys, values, titles, file names, registry answers) passes
through one of these functions on its way out, so that it cannot ping people (`@org/team`), inject
HTML (`<img>`, `<details>`), break out of a code span or list item, form a link (`https://…`,
`www.…`, an e-mail address) or a GitHub reference (`#7`, `acme/other#5`, `GH-7`, a commit SHA),
or smuggle a workflow command (`::set-output`) into the job log. Secrets (the action's token,
registry passwords, anything shaped like a GitHub token) are cut out first, before any escaping
can disguise them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cache

MAX_VALUE_CHARS = 300
MIN_SECRET_CHARS = 4
REDACTED = "***"
_ZWSP = "\u200b"
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# Classic, OAuth, user, installation and refresh tokens, and fine-grained personal access tokens.
_TOKEN_SHAPES = r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9_]{16,}|github_pat_[A-Za-z0-9_]{16,})"
# What GitHub turns into a link: a URL scheme's `://`, `www.`, an issue reference (`#7`, also in
# `owner/repo#7`, `GH-7`) and a run of 7 or more hex digits (a commit SHA). Addresses are broken
# at their `@` with the mentions.
_LINKISH = re.compile(
    r"://|www\.|#(?=\d)|(?<![0-9a-z_])gh-(?=\d)|(?<![0-9a-z_])[0-9a-f]{7,}(?![0-9a-z_])", re.IGNORECASE
)
_SHA_PIECE = 6  # a run of hex digits is cut into pieces too short to name a commit
_HEX_AS_X = bytes.maketrans(b"0123456789abcdef", b"x" * 16)
_secrets: set[str] = set()
_redactor = re.compile(_TOKEN_SHAPES)


def add_secrets(secrets: Iterable[str | None]) -> None:
    """Never show these values (the token, registry passwords): every function here, through
    `clip`, replaces them with `***`, as it does anything shaped like a GitHub token."""
    global _redactor
    new = {s for s in secrets if s and len(s) >= MIN_SECRET_CHARS} - _secrets
    if new:
        _secrets.update(new)
        known = sorted(_secrets, key=len, reverse=True)  # the longest first: no part of one is left
        _redactor = re.compile("|".join([*map(re.escape, known), _TOKEN_SHAPES]))


def redact(text: str) -> str:
    """The text with every registered secret and every GitHub-token-shaped word replaced by `***`."""
    if "gh" in text or "github_pat_" in text or (_secrets and any(secret in text for secret in _secrets)):
        return _redactor.sub(REDACTED, text)
    return text  # the common case, found without the (slower) regular expression


def clip(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    """Redact secrets, drop control characters, fold newlines and cut over-long values with an ellipsis."""
    text = redact(text)
    if len(text) <= limit and text.isprintable():  # the common case: nothing to drop or fold
        return text
    text = _CONTROL.sub("", text.replace("\r\n", " ").replace("\n", " ").replace("\t", " "))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plain(value: object) -> str:
    """A PR value as plain text for the JSON report: clipped, no control characters."""
    return clip(str(value))


def _no_mentions(text: str) -> str:
    return text.replace("@", "@" + _ZWSP)


def _break_link(match: re.Match[str]) -> str:
    found = match.group(0)
    if found == "://":
        return ":" + _ZWSP + "//"
    if found.lower() == "www.":
        return found[:3] + _ZWSP + "."
    if found == "#" or found.endswith("-"):  # `#` or `GH-`, before a digit
        return found + _ZWSP
    return _ZWSP.join(found[i : i + _SHA_PIECE] for i in range(0, len(found), _SHA_PIECE))  # hex digits


def _may_link(text: str) -> bool:
    """A quick look for what `_LINKISH` finds, which most text has none of (a false alarm only
    costs the full search). On bytes: folding ASCII case there is several times faster."""
    data = text.encode("utf-8", "surrogatepass").lower()
    return (
        b"://" in data
        or b"#" in data
        or b"www." in data
        or b"gh-" in data
        or b"x" * 7 in data.translate(_HEX_AS_X)
    )


def _no_links(text: str) -> str:
    return _LINKISH.sub(_break_link, text) if _may_link(text) else text


def md_text(value: object) -> str:
    """A PR value as inert inline markdown text: it reads the same, but nothing in it is markup or
    a mention. Links and references are broken in the whole message it is placed in (`no_links`,
    which `bot.output.messages.render` applies to every markdown message), where a value next to
    template text is seen as GitHub will see it."""
    text = clip(str(value))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return _no_mentions(text)


def _longest_backticks(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def md_code(value: object) -> str:
    """A PR value as an inline code span that no backtick inside it can close early. GitHub links
    nothing inside a code span, so the value is shown exactly as it is.

    Pipes are kept as they are: the comment has no tables, and inside a code span outside a
    table a `\\|` would show its backslash."""
    text = clip(str(value))
    fence = "`" * (_longest_backticks(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_OPENER = re.compile(r"\\.|`+", re.DOTALL)  # a backslash escape, or a run of backticks


def code_spans(markdown: str) -> Iterator[tuple[int, int]]:
    """Where the inline code spans of one line of markdown start and end, paired as CommonMark pairs
    them: a run of N backticks is closed by the next run of exactly N, and a backslash-escaped
    backtick opens nothing."""
    at = 0
    while opener := _OPENER.search(markdown, at):
        at = opener.end()
        if opener.group(0)[0] == "\\":
            continue
        closer = _closer(len(opener.group(0))).search(markdown, at)
        if closer:
            yield opener.start(), closer.end()
            at = closer.end()


@cache
def _closer(width: int) -> re.Pattern[str]:
    return re.compile(rf"(?<!`)`{{{width}}}(?!`)")


def no_links(markdown: str) -> str:
    """Markdown (a rendered message: template text and escaped values) with every autolink and
    GitHub reference outside its code spans broken: the one place where PR values placed in
    markdown lose their links, seen whole, so that catalog text such as `entry #{{ index }}`
    (the number comes from the PR) cannot form one either."""
    if not _may_link(markdown):
        return markdown
    out: list[str] = []
    at = 0
    for start, end in code_spans(markdown) if "`" in markdown else []:
        out += [_no_links(markdown[at:start]), markdown[start:end]]
        at = end
    out.append(_no_links(markdown[at:]))
    return "".join(out)


def cut_markdown(markdown: str, limit: int, ending: str = "…") -> str:
    """One line of markdown cut to at most `limit` characters, `ending` included, where no code
    span and no backslash escape is cut in two: what was inside code stays inside code."""
    if len(markdown) <= limit:
        return markdown
    cut = max(0, limit - len(ending))
    for start, end in code_spans(markdown):
        if start >= cut:
            break
        if cut < end:
            cut = start
            break
    head = markdown[:cut]
    if (len(head) - len(head.rstrip("\\"))) % 2:  # a trailing backslash would escape the ending
        head = head[:-1]
    return head + ending


def fence_for(body: str) -> str:
    """A backtick fence longer than any backtick run in `body` (at least three)."""
    return "`" * max(3, _longest_backticks(body) + 1)


def log_line(value: object) -> str:
    """A PR value safe to print in a GitHub Actions log: no secrets, no line breaks, no `::`
    command openers."""
    text = clip(str(value), 1000)
    return text.replace("::", ":" + _ZWSP + ":")
