"""`MODELS.md`'s dated per-model retirements: the rows of its "Model support matrix" table (the one
whose header has a `Prefix` and an `Active scenarios` column) whose active scenarios say the model
has no active scenario and was retired on a date (`None (retired 2026-07-18, …)`, `— (retired …)`),
or is `fully retired` on or after one (`… fully retired after 2026-08-06`: retired the next day).
Prose elsewhere, and a retirement without a date, are not read. The same table's `Deprecated
scenarios` column, item by item, gives each model's deprecated scenarios and precisions
(`deprecations`). Hostile input: the text is at most
the reader's size limit, read line by line with patterns that cannot backtrack; nothing here raises.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import NamedTuple

MAX_CELL = 160  # characters of the retiring cell (or deprecated item) quoted in a finding
MAX_DEPRECATED = 4000  # characters of a deprecated-scenarios cell the reader maps item by item

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DATE = r"(\d{4}-\d{2}-\d{2}|[A-Z][a-z]{2,8}\.? \d{1,2}, \d{4})"
_RETIRED = re.compile(r"\bretired\s+(after\s+|on\s+|since\s+)?" + _DATE, re.IGNORECASE)
_FULLY = re.compile(r"\bfully\s+retired\s+(after\s+|on\s+|since\s+)?" + _DATE, re.IGNORECASE)
_NONE = re.compile(r"(none|—|–|-|n/a)(\s|\(|$)", re.IGNORECASE)
_PREFIX = re.compile(r"`([^`\s]{1,64})`")


class Retirement(NamedTuple):
    """A model prefix `MODELS.md` retires: the first day it is retired, the row's line and the
    active-scenarios cell that says so."""

    prefix: str
    effective: date
    line: int
    cell: str


def _day(text: str) -> date | None:
    try:
        if text[:1].isdigit():
            return date.fromisoformat(text)
        month, day, year = text.replace(",", "").replace(".", "").split()
        for index, name in enumerate(_MONTHS, 1):
            if month.lower().startswith(name):
                return date(int(year), index, int(day))
    except ValueError:
        return None
    return None


def _cells(line: str) -> list[str]:
    """A markdown table row's cells (an escaped `\\|` stays inside its cell)."""
    inner = line.strip().removeprefix("|").removesuffix("|")
    return [c.replace("\\|", "|").strip() for c in re.split(r"(?<!\\)\|", inner)]


def _retired_on(cell: str) -> date | None:
    """The first day of a model's retirement, when its active-scenarios cell says the model has no
    active scenario (`None` / `—` first) or is `fully retired` (a precision or an arm retired while
    other scenarios run, `bf16 recipes retired 2026-08-03`, is not the model's retirement)."""
    whole = _NONE.match(cell) is not None
    match = _RETIRED.search(cell) if whole else _FULLY.search(cell)
    if match is None:
        return None
    day = _day(match[2])
    if day is None:
        return None
    return day + timedelta(days=1) if (match[1] or "").strip().lower() == "after" else day


def _matrix(text: str, column: str) -> tuple[int, list[tuple[int, list[str], str]]]:
    """The support matrix tables (a header with `Prefix`, `Active scenarios` and `column`): how
    many there are, and each body row's line, the model prefixes it names and its `column` cell."""
    rows: list[tuple[int, list[str], str]] = []
    at: tuple[int, int] | None = None
    tables = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not line.lstrip().startswith("|"):
            at = None
            continue
        cells = _cells(line)
        if at is None:
            names = [c.strip("*` ").lower() for c in cells]
            if "prefix" in names and "active scenarios" in names and column in names:
                at = (names.index("prefix"), names.index(column))
                tables += 1
            continue
        if all(set(c) <= set(":- ") for c in cells) or max(at) >= len(cells):
            continue  # the header's separator, or a short row
        rows.append((number, _PREFIX.findall(cells[at[0]]), cells[at[1]]))
    return tables, rows


def _quoted(cell: str) -> str:
    """A cell as a finding quotes it: at most MAX_CELL characters."""
    return cell[:MAX_CELL] + ("…" if len(cell) > MAX_CELL else "")


def retirements(text: str) -> list[Retirement] | None:
    """Every dated retirement of the support matrix, in the file's order; None when the file has no
    support matrix table."""
    tables, rows = _matrix(text, "active scenarios")
    if not tables:
        return None
    found: list[Retirement] = []
    for number, prefixes, cell in rows:
        effective = _retired_on(cell)
        if effective is not None:
            found += [Retirement(prefix, effective, number, _quoted(cell)) for prefix in prefixes]
    return found


_SPLIT_DEPTH = re.compile(r"[(),]")
_FOOTNOTE = re.compile(r"\[\^[^\]\n]{0,40}\]")
_LINK = re.compile(r"\[([^\]\n]{0,80})\]\([^)\s]{0,300}\)")
_SEQ = re.compile(r"single-turn (\d{1,3})k(\d{1,3})k", re.IGNORECASE)
_AGENTIC = re.compile(r"agentic coding(?: non-([a-z][a-z0-9.-]{0,20}) arm)?", re.IGNORECASE)
_PRECISION = re.compile(r"(?:all )?([a-z]{2,4}\d{1,2}) recipes", re.IGNORECASE)
_DATED = re.compile(r"(?:removed|deprecated|retired)\s+(after\s+|on\s+|since\s+|from\s+)?" + _DATE, re.I)
_ALWAYS = re.compile(r"deprecated from day 0", re.IGNORECASE)


class Deprecation(NamedTuple):
    """One item of a model's `Deprecated scenarios` cell: the runs it deprecates (a scenario, with
    its sequence lengths and the spec-decoding arm it names, or a precision), from when, and why
    it cannot be mapped onto configs exactly (`unread`: then it is reported, never guessed)."""

    prefix: str
    line: int
    item: str
    scenario: str | None = None  # `fixed-seq-len` / `agentic-coding`
    seq: tuple[int, int] | None = None  # (isl, osl) of a fixed-seq-len scenario
    arm: str | None = None  # `mtp` for "non-MTP arm": the arm deprecated is the one without it
    precision: str | None = None
    effective: date | None = None  # the first day; None: deprecated whatever the day
    unread: str | None = None  # `item` (not understood) / `qualifier` (a part it cannot map)


def _items(cell: str) -> list[str]:
    """The cell's comma-separated items (a comma inside parentheses stays in its item)."""
    items, depth, start = [], 0, 0
    for match in _SPLIT_DEPTH.finditer(cell):
        sign = match[0]
        if sign == "(":
            depth += 1
        elif sign == ")":
            depth = max(depth - 1, 0)
        elif depth == 0:
            items.append(cell[start : match.start()])
            start = match.end()
    items.append(cell[start:])
    return [i.strip() for i in items if i.strip()]


def _qualifiers(item: str) -> tuple[str, list[str]]:
    """An item's words before its first parenthesis, and its top-level parenthesised parts."""
    head, _, _ = item.partition("(")
    parts, depth, start = [], 0, 0
    for index, sign in enumerate(item):
        if sign == "(":
            depth += 1
            if depth == 1:
                start = index + 1
        elif sign == ")" and depth:
            depth -= 1
            if depth == 0:
                parts.append(item[start:index].strip())
    return head.strip(), parts


def _deprecation(prefix: str, number: int, item: str) -> Deprecation:
    plain = _LINK.sub(r"\1", _FOOTNOTE.sub("", item)).strip()
    found = Deprecation(prefix, number, _quoted(plain))
    head, parts = _qualifiers(plain)
    if seq := _SEQ.fullmatch(head):
        found = found._replace(scenario="fixed-seq-len", seq=(int(seq[1]) * 1024, int(seq[2]) * 1024))
    elif agentic := _AGENTIC.fullmatch(head):
        found = found._replace(scenario="agentic-coding", arm=agentic[1].lower() if agentic[1] else None)
    elif precision := _PRECISION.fullmatch(head):
        found = found._replace(precision=precision[1].lower())
    else:
        return found._replace(unread="item")
    for part in parts:
        dated = _DATED.match(part)
        day = _day(dated[2]) if dated else None
        if day is not None and found.effective is None:
            after = (dated[1] or "").strip().lower() == "after"
            found = found._replace(effective=day + timedelta(days=1) if after else day)
        elif not _ALWAYS.fullmatch(part):
            return found._replace(unread="qualifier")
    return found


def deprecations(text: str) -> list[Deprecation]:
    """Every item of the support matrix's `Deprecated scenarios` column, per prefix, in the file's
    order (none when the file has no such table or column)."""
    found: list[Deprecation] = []
    for number, prefixes, cell in _matrix(text, "deprecated scenarios")[1]:
        if len(cell) > MAX_DEPRECATED:  # not read: a cut item could lose the qualifier narrowing it
            found += [Deprecation(p, number, cell[:MAX_CELL] + "…", unread="item") for p in prefixes]
            continue
        found += [_deprecation(p, number, item) for item in _items(cell) for p in prefixes]
    return found
