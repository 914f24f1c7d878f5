"""A CODEOWNERS pattern matched against a path without backtracking (pure).

The patterns mean what they meant when the `codeowners` package (0.9) turned each into a regular
expression searched in the path (its `path_to_regex`, ported from hmarr/codeowners): a pattern
with a `/` before its last character is anchored at the root, else it may start after any `/`;
`*` and `?` stand for text and one character within a folder; `**` at a folder boundary for any
folders (`**/`, `/**/`) or anything (a trailing `/**`, a lone `**`); `[…]` for one of the
characters listed (each literally: no ranges); `\\` makes the next character literal; a trailing
`/` matches a folder and what is under it, a trailing `/*` only the files directly in it, and
any other pattern a file or a folder and what is under it.

Python's regular expressions try every way a pattern like `*a*a*a*a*a*b` can split a path, so
one such rule and a 400-character path took the review to its deadline. Here the pattern is a
list of steps and the path is read once, left to right, keeping the set of steps reached so far
(a Thompson simulation): the time is at most the path's length times the pattern's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple


class _Step(NamedTuple):
    """One step of a pattern: a character (`chars` holds it), one character out of `chars`, any
    one character but `/` (`chars` None), or a repeat: `star` (any text but `/`), `anything` (any
    text but a line break, as the regex `.*`) or `folders` (`(?:.*/)?`: nothing, or any text but
    a line break that ends in `/`), always followed by its `inside` step (in that text, before its
    `/`: it cannot match nothing any more)."""

    kind: str  # "one", "star", "anything", "folders", "inside"
    chars: frozenset[str] | None = None


@dataclass(frozen=True)
class Pattern:
    """A compiled pattern: `search(path)` says whether it matches, as the regex search did."""

    steps: tuple[_Step, ...]
    anchored: bool  # only from the start of the path (else also after any `/`)
    end: str  # "folder" (a `/` must follow), "exact" (the path must end) or "either"

    @cached_property
    def _literal(self) -> str | None:
        """The text the pattern is, when it has no wildcard (most rules): matched with `startswith`."""
        if all(step.kind == "one" and step.chars is not None and len(step.chars) == 1 for step in self.steps):
            return "".join(min(step.chars or ()) for step in self.steps)
        return None

    def search(self, path: str) -> bool:
        literal = self._literal
        if literal is not None:
            start = 0
            while start >= 0:
                if path.startswith(literal, start) and self._ends(path, start + len(literal)):
                    return True
                start = -1 if self.anchored else path.find("/", start) + 1 or -1
            return False
        last, closed = len(self.steps), self._closed
        start = states = closed[0]
        for position, char in enumerate(path):
            if last in states and self._ends(path, position):
                return True
            reached: set[int] = set()
            for index in states:
                if index < last:
                    for following in self._advance(index, char):
                        reached |= closed[following]
            if char == "/" and not self.anchored:
                reached |= start  # `(?:\A|/)`: the pattern may also start after any slash
            elif not reached and self.anchored:
                return False
            states = reached
        return last in states and self._ends(path, len(path))

    def _ends(self, path: str, position: int) -> bool:
        at_end = position == len(path)
        if self.end == "exact":
            return at_end
        slash = not at_end and path[position] == "/"
        return slash if self.end == "folder" else at_end or slash

    def _advance(self, index: int, char: str) -> tuple[int, ...]:
        step = self.steps[index]
        if step.kind == "one":
            fits = char != "/" if step.chars is None else char in step.chars
            return (index + 1,) if fits else ()
        if step.kind == "star":
            return (index,) if char != "/" else ()
        if step.kind == "anything":
            return (index,) if char != "\n" else ()
        if char == "\n":  # folders or inside: the text before a `/` has no line break
            return ()
        inside = index + 1 if step.kind == "folders" else index
        return (inside, inside + 1) if char == "/" else (inside,)

    @cached_property
    def _closed(self) -> tuple[frozenset[int], ...]:
        """For each step, the steps reached from it without reading a character: every repeat
        that may match nothing is stepped over (`folders` past its `inside` step too)."""
        closed: list[frozenset[int]] = []
        for index in range(len(self.steps) + 1):
            reached, at = {index}, index
            while at < len(self.steps) and self.steps[at].kind in ("star", "anything", "folders"):
                at += 2 if self.steps[at].kind == "folders" else 1
                reached.add(at)
            closed.append(frozenset(reached))
        return tuple(closed)


def _one(char: str) -> _Step:
    return _Step("one", frozenset(char))


def compile_pattern(pattern: str) -> Pattern:
    """The pattern as steps; a ValueError for a `[…]` that is never closed, is empty or holds a
    wildcard (the package turned those into a regex that errs or means something else)."""
    slash = pattern.find("/")
    anchored = slash > -1 and slash != len(pattern) - 1
    end = "folder" if pattern.endswith("/") else "exact" if pattern.endswith("/*") else "either"
    text = pattern.strip("/")
    steps: list[_Step] = []
    listed: set[str] | None = None  # the characters of a `[…]` being read
    index = 0
    while index < len(text):
        char = text[index]
        index += 1
        if char == "\\":  # the next character as itself (nothing, at the end)
            if index < len(text) and listed is not None:
                listed.add(text[index])
            elif index < len(text):
                steps.append(_one(text[index]))
            index += 1
            continue
        if listed is not None:
            if char in "*?":
                raise ValueError(f"a wildcard inside a character class in pattern {pattern}")
            if char != "]":
                listed.add(char)
            elif not listed:
                raise ValueError(f"an empty character class in pattern {pattern}")
            else:
                steps.append(_Step("one", frozenset(listed)))
                listed = None
        elif char == "*":
            step = _globstar(text, index - 1) or _Step("star")
            if step.kind == "star" and steps and steps[-1].kind == "star":
                continue  # `**` within a name is one star: the same text, one step fewer
            steps.append(step)
            if step.kind != "star":
                index += 2  # the second `*` and the `/` after it (if any)
            if step.kind == "folders":
                steps.append(_Step("inside"))
        elif char == "?":
            steps.append(_Step("one"))
        elif char == "[":
            listed = set()
        else:
            steps.append(_one(char))
    if listed is not None:
        raise ValueError(f"unterminated character class in pattern {pattern}")
    return Pattern(tuple(steps), anchored, end)


def _globstar(text: str, index: int) -> _Step | None:
    """`**` at a folder boundary: `folders` when a `/` follows, else `anything`; None otherwise."""
    if text[index + 1 : index + 2] != "*":
        return None
    after = text[index + 2 : index + 3]
    if (index == 0 or text[index - 1] == "/") and after in ("", "/"):
        return _Step("folders" if after == "/" else "anything")
    return None
