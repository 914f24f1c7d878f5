"""CODEOWNERS: where GitHub finds it, and who owns a path (DESIGN.md §2 `codeowners`).

The file is read as the `codeowners` package (0.9) read it, and its patterns mean what they meant
there (`bot/model/owner_patterns.py`), but they are matched without regular expressions: the
package's backtracking regexes let one rule such as `*a*a*a*a*a*b` and a long path hold the review
until its deadline. Each line is normalised first for two places where the package and GitHub
disagree:

- GitHub allows a comment at the end of a rule (`path @owner # note`); the package would read
  an `@handle` inside such a comment as one more owner, so the comment is cut off first;
- a pattern with an escaped space and no slash (`my\\ file.txt`) matches at any depth on GitHub,
  but the package anchors it at the root (its escape placeholder contains slashes), so such a
  pattern is given the equivalent `**/` prefix.

Line numbers are kept: the normalised text has exactly one line per original line.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

from bot.model.owner_patterns import Pattern, compile_pattern
from bot.sources.snapshot import Snapshot

#: Where GitHub looks for the file, in order; the first one found is used.
CODEOWNERS_PATHS: tuple[str, ...] = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
#: GitHub ignores a CODEOWNERS file larger than this.
MAX_BYTES = 3 * 1024 * 1024
#: Patterns that own every path (the "catch-all" rule whose owners are the default core team).
CATCH_ALL = ("*", "**", "/**")

_INLINE_COMMENT = re.compile(r"\s#.*$")
#: The package's placeholder for an escaped space, in patterns and in the paths matched.
_MASK = "/" * 20
_TEAM = re.compile(r"@\S+/\S+")
_USER = re.compile(r"@\S+")
_EMAIL = re.compile(r"\S+@\S+")


class OwnersError(Exception):
    """The CODEOWNERS text cannot be used; the message is one line for the user."""


class CodeownersFile(NamedTuple):
    """The CODEOWNERS file of one ref: its path and its text."""

    path: str
    text: str
    size: int


def find_codeowners(snapshot: Snapshot) -> CodeownersFile | None:
    """The first of `CODEOWNERS_PATHS` that exists at this ref, as GitHub picks it; None if none."""
    for path in CODEOWNERS_PATHS:
        data = snapshot.read(path)
        if data is not None:
            return CodeownersFile(path, data.decode("utf-8-sig", "replace"), len(data))
    return None


def handle_key(handle: str) -> str:
    """How handles compare: without the leading `@`, case-insensitive (GitHub logins and slugs are)."""
    return handle.strip().lstrip("@").casefold()


class Owner(NamedTuple):
    """One owner as written in the file: `@user`, `@org/team` or an e-mail address."""

    handle: str
    kind: Literal["user", "team", "email"]

    @property
    def key(self) -> str:
        return handle_key(self.handle)


class Rule(NamedTuple):
    """The line of CODEOWNERS that decides a path's owners (the last matching line)."""

    pattern: str
    line: int
    owners: tuple[Owner, ...]


_KINDS: dict[str, Literal["user", "team", "email"]] = {"USERNAME": "user", "TEAM": "team", "EMAIL": "email"}


def _normalise(line: str) -> tuple[str, str | None]:
    """The line as the package should see it, and the rule's pattern as written (None: no rule)."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return line, None
    # Split off the pattern (escaped spaces belong to it), then drop an end-of-line comment.
    match = re.match(r"(?:\\.|\S)+", stripped)
    pattern = match.group(0) if match else stripped
    rest = _INLINE_COMMENT.sub("", " " + stripped[len(pattern) :]).strip()
    effective = pattern
    body = pattern.rstrip("/")
    if "\\ " in pattern and "/" not in body and not pattern.startswith("**/"):
        effective = "**/" + pattern
    return f"{effective} {rest}".rstrip(), pattern


class _Line(NamedTuple):
    """A rule as the package parsed it: its compiled pattern, its owners (kind, handle), its line."""

    pattern: Pattern
    owners: tuple[tuple[str, str], ...]
    line: int


def _owner(word: str) -> tuple[str, str] | None:
    for kind, form in (("TEAM", _TEAM), ("USERNAME", _USER), ("EMAIL", _EMAIL)):
        if form.match(word):
            return kind, word
    return None


def _parse(text: str) -> list[_Line]:
    """The rules of a normalised CODEOWNERS text, last line first; GitLab's `[section]` lines are
    skipped, as the package skipped them."""
    rules: list[_Line] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("]") and line.startswith(("[", "^[")):
            continue
        words = line.replace("\\ ", _MASK).split()
        if not words:
            continue
        owners = tuple(found for word in words[1:] if (found := _owner(word)) is not None)
        rules.append(_Line(compile_pattern(words[0]), owners, number))
    rules.reverse()
    return rules


class OwnersFile:
    """A parsed CODEOWNERS text: `rule_for(path)` answers as GitHub would."""

    def __init__(self, text: str) -> None:
        lines: list[str] = []
        self._patterns: dict[int, str] = {}
        for number, line in enumerate(text.splitlines(), start=1):
            normalised, pattern = _normalise(line)
            lines.append(normalised)
            if pattern is not None:
                self._patterns[number] = pattern
        try:
            self._rules = _parse("\n".join(lines))
        except ValueError as exc:
            raise OwnersError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None

    def _rule(self, owners: tuple[tuple[str, str], ...], line: int) -> Rule:
        found = tuple(Owner(handle, _KINDS[kind]) for kind, handle in owners)
        return Rule(self._patterns.get(line, ""), line, tuple(dict.fromkeys(found)))

    def rule_for(self, path: str) -> Rule | None:
        """The last rule whose pattern matches `path` (it may list no owners); None when none does."""
        masked = path.replace(" ", _MASK)
        for rule in self._rules:  # last line first
            if rule.pattern.search(masked):
                return self._rule(rule.owners, rule.line)
        return None

    def catch_all(self) -> Rule | None:
        """The last catch-all rule (`*`), whose owners are the default core team; None if there is none."""
        for rule in self._rules:  # last line first
            if self._patterns.get(rule.line) in CATCH_ALL:
                return self._rule(rule.owners, rule.line)
        return None

    def teams(self) -> list[str]:
        """Every `@org/team` the rules name, each once, in the order of the file."""
        written = (owner for rule in reversed(self._rules) for owner in rule.owners)
        found = (Owner(handle, _KINDS[kind]) for kind, handle in written)
        teams: dict[str, str] = {}
        for owner in found:
            if owner.kind == "team":
                teams.setdefault(owner.key, owner.handle)  # slugs compare case-insensitively
        return list(teams.values())
