"""Claims in a PR's own text: the settings it states and the concurrencies it says are as before.

Pure parsing, no review state: `consistency` checks what is found here against the `changes`
view (DESIGN.md §2 `consistency`). A claim is scoped by the concurrencies named in its sentence,
or else in its line (a bullet). The text read and the claims kept are bounded, so a hostile
description costs little; what was left out is counted, never silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from bot.model import schema

MAX_CHARS = 100_000  # of all the texts together, read in order
MAX_CLAIMS = 50  # setting claims plus concurrencies said to be as before
_MAX_SHOWN = 80  # characters of a claim kept to quote it

_MENTION = re.compile(
    r"(?<![\w-])[Cc](\d{1,6})(?![\w-])|\bconc(?:urrency|urrencies)?[\s=:]*(\d{1,6})\b", re.IGNORECASE
)
_CHAIN = re.compile(r"(?<![\w-])[Cc](\d{1,6})((?:/[Cc]?\d{1,6})+)")
# The patterns below are compiled on first use (re keeps them): most reviews never need them.
_MARKUP = r"[`*]"  # code spans and emphasis: `NAME`=`1`, **C1:**
_SENTENCE_END = r"(?<=[.!?])\s+|[;。；！？]"
_NAME = r"(?<![\w-])[A-Za-z_][A-Za-z0-9_-]{0,80}"
_QUOTED = r"'[^'\n]{0,80}'|\"[^\"\n]{0,80}\"|\[[^\]\n]{0,80}\]"
# After `=` or `:`; Chinese punctuation ends a value too (`A=1、B=2`, as zh descriptions list them).
_ANY = rf"{_QUOTED}|[^\s,;()\[\]'\"、，；（）。]{{1,80}}"
# After a space, only what looks like a value: a number (not a range such as `4-64`), a boolean.
_LIKE = rf"{_QUOTED}|[-+]?\d[\w.]{{0,40}}(?![\w.\-–])|(?i:true|false)\b"
# `NAME=VALUE`, `NAME: VALUE`, `NAME VALUE`; `NAME OLD → NEW`, `NAME from OLD to NEW` state NEW.
_GAP, _SPACE = r"[ \t]{0,3}", r"[ \t]{1,3}"
_STATED = rf"{_GAP}[=:]{_GAP}(?P<any>{_ANY})|{_SPACE}(?P<from>from{_SPACE})?(?P<like>{_LIKE})"
_NEW = rf"{_GAP}(?:→|->|=>){_GAP}(?P<new>{_ANY})|{_SPACE}to{_SPACE}(?P<to>{_LIKE})"
_VALUE = rf"(?:{_STATED})(?:{_NEW})?"
# "C4, C14 and C16 serve exactly as before": the concurrencies must be what the phrase is about.
_LIST_SEP = r"(?:,[ \t]*(?:and[ \t]+)?|[ \t]*[/、&和][ \t]*|[ \t]+and[ \t]+)"
_LISTED = rf"(?:[Cc]|conc(?:urrency)?[ \t]?)\d{{1,6}}(?:{_LIST_SEP}[Cc]?\d{{1,6}}){{0,30}}"
_LINKS = r"(?:(?:serves?|runs?|stays?|remains?|is|are|keeps?|will|still|otherwise|all|both)[ \t]+){0,3}"
_PHRASE = (
    r"(?:exactly[ \t]+)?(?:the[ \t]+)?same[ \t]+as[ \t]+before|(?:exactly[ \t]+)?as[ \t]+before"
    r"|unchanged|(?:their|its)[ \t]+settings|保持不变|不变|与之前相同|和之前一样"
)
_AS_BEFORE = rf"(?i)\b(?:{_PHRASE})"
# The list of concurrencies that ends just before the phrase (looked for in a short window).
_LISTED_BEFORE = rf"(?i)(?<![\w-])(?P<listed>{_LISTED})[ \t]*:?[ \t]*{_LINKS}\Z"
_WINDOW = 120
# A sentence about the runs other than those its line names.
_OTHERS = (
    r"(?i)\b(?:every|all|each|any|the)[ \t]+other\b|\bother[ \t]+(?:points?|concurrenc\w*|runs?|variants?)\b"
    r"|\belsewhere\b|\bthe[ \t]+rest\b|其他|其余|其它"
)


def mentioned_concurrencies(text: str) -> list[int]:
    """Concurrencies named in free text: `C2`, `C1/C2`, `C1/2`, `conc 2`, `concurrency 2`."""
    found: set[int] = set()
    for match in _MENTION.finditer(text):
        found.add(int(match.group(1) or match.group(2)))
    for match in _CHAIN.finditer(text):
        found.update(int(part.lstrip("Cc")) for part in match.group(2).split("/") if part)
    return sorted(found)


def setting_name(name: str) -> str:
    """A setting's name as claims match it: `-` and `_` alike (serving args accept both)."""
    return name.replace("-", "_")


class SettingClaim(NamedTuple):
    """`NAME=VALUE` as the text states it; `scope` is empty when no concurrency is named."""

    name: str
    value: str
    quote: str  # the claim as written (cut to a short length)
    scope: tuple[int, ...]
    part: int  # which of the parsed texts it is in


class AsBefore(NamedTuple):
    """A concurrency the text says serves "exactly as before" (or "unchanged")."""

    concurrency: int
    part: int


@dataclass
class Claims:
    """What the texts claim, the names they mention, and how much was left unread."""

    settings: list[SettingClaim] = field(default_factory=list)
    as_before: list[AsBefore] = field(default_factory=list)
    named: set[str] = field(default_factory=set)  # every name-like word, lower case, `_` for `-`
    cut: bool = False  # the texts were longer than MAX_CHARS
    skipped: int = 0  # claims found beyond MAX_CLAIMS

    @property
    def count(self) -> int:
        return len(self.settings) + len(self.as_before)

    def names(self, name: str) -> bool:
        """Whether the texts mention a setting of this name anywhere."""
        return setting_name(name).lower() in self.named


def _bounded(texts: Iterable[str]) -> tuple[list[str], bool]:
    """The texts, cut so that together they hold at most MAX_CHARS characters."""
    kept, left = [], MAX_CHARS
    for text in texts:
        kept.append(text[:left])
        left -= len(kept[-1])
        if len(text) > len(kept[-1]):
            return kept, True
    return kept, False


def _sentences(text: str) -> Iterable[tuple[str, tuple[int, ...]]]:
    """Each sentence with its scope: the concurrencies it names, or else those of its line, unless
    it speaks of the others ("every other point keeps …" in a bullet about C1 is not about C1):
    then no concurrency in particular."""
    for line in text.splitlines():
        in_line = tuple(mentioned_concurrencies(line))
        for sentence in re.split(_SENTENCE_END, line):
            named = tuple(mentioned_concurrencies(sentence))
            yield sentence, named or (() if re.search(_OTHERS, sentence) else in_line)


def _plain(value: str) -> str:
    return value.rstrip(".:") if value[:1] not in "'\"[" else value


def _setting_claims(sentence: str, known: Callable[[str], bool]) -> Iterable[tuple[str, str, str]]:
    """(name, value, quote) for every known setting the sentence gives a value."""
    for name in re.finditer(_NAME, sentence):
        if not known(name.group()):
            continue
        value = re.compile(_VALUE).match(sentence, name.end())
        if value is None or (value.group("from") and not (value.group("new") or value.group("to"))):
            continue  # no value, or only the old one
        stated = value.group("new") or value.group("to") or value.group("any") or value.group("like")
        if stated.startswith("$") or known(stated):
            continue  # `cuda-graph-max-bs=CONC`: a reference to another setting, not a value
        plain = _plain(stated)
        end = value.end() - (len(stated) - len(plain))
        yield name.group(), plain, sentence[name.start() : end][:_MAX_SHOWN]


def parse(texts: Iterable[str], known: Callable[[str], bool]) -> Claims:
    """The claims of the texts (title, body, changelog descriptions), in order; `known` says
    which names are settings (any other `NAME=VALUE` is not a claim)."""
    parts, cut = _bounded(texts)
    claims = Claims(cut=cut)
    looked = 0  # "as before" phrases looked at
    for index, text in enumerate(parts):
        text = re.sub(_MARKUP, "", text)
        claims.named.update(setting_name(word).lower() for word in re.findall(_NAME, text))
        for sentence, scope in _sentences(text):
            found: list[SettingClaim | AsBefore] = [
                SettingClaim(n, v, q, scope, index) for n, v, q in _setting_claims(sentence, known)
            ]
            for phrase in re.finditer(_AS_BEFORE, sentence):
                looked += 1
                if looked > MAX_CLAIMS:
                    claims.skipped += 1  # each look costs up to a window's worth of matching
                    continue
                found += [AsBefore(c, index) for c in _listed_before(sentence[: phrase.start()])]
            _keep(claims, found)
    return claims


def _listed_before(text: str) -> list[int]:
    """The concurrencies of the list that `text` ends with ("C4, C14 and C16 serve exactly")."""
    listed = re.search(_LISTED_BEFORE, text[-_WINDOW:])
    return [int(c) for c in re.findall(r"\d{1,6}", listed.group("listed"))] if listed else []


def _keep(claims: Claims, found: list[SettingClaim | AsBefore]) -> None:
    """Add claims up to MAX_CLAIMS (each once); count the rest as skipped."""
    for claim in found:
        if claim in claims.settings or claim in claims.as_before:
            continue
        if claims.count >= MAX_CLAIMS:
            claims.skipped += 1
        elif isinstance(claim, SettingClaim):
            claims.settings.append(claim)
        else:
            claims.as_before.append(claim)


def _canonical(value: Any) -> str:
    """A value as claims compare it: quotes, spaces and case dropped, numbers as floats, lists
    item by item (`[1, 2]`, `'[1,2]'` and `[1,2]` are the same)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ",".join(_canonical(item) for item in value) + "]"
    text = re.sub(r"\s+", "", schema.text(value)).strip("'\"").lower()
    if text.startswith("[") and text.endswith("]"):
        return "[" + ",".join(_canonical(item) for item in text[1:-1].split(",") if item) + "]"
    try:
        return repr(float(text))
    except ValueError:
        return text


def same_value(stated: str, value: Any) -> bool:
    """Whether a value stated in the text is the value a run has."""
    return _canonical(stated) == _canonical(value)
