"""`MODELS.md`'s dated per-model retirements: the rows of its "Model support matrix" table (the one
whose header has a `Prefix` and an `Active scenarios` column) whose active scenarios say the model
has no active scenario and was retired on a date (`None (retired 2026-07-18, …)`, `— (retired …)`),
or is `fully retired` on or after one (`… fully retired after 2026-08-06`: retired the next day).
Prose elsewhere, and a retirement without a date, are not read. Hostile input: the text is at most
the reader's size limit, read line by line with patterns that cannot backtrack; nothing here raises.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import NamedTuple

MAX_CELL = 160  # characters of the retiring cell quoted in a finding

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


def retirements(text: str) -> list[Retirement] | None:
    """Every dated retirement of the support matrix, in the file's order; None when the file has no
    support matrix table."""
    found: list[Retirement] = []
    columns: tuple[int, int] | None = None
    tables = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not line.lstrip().startswith("|"):
            columns = None
            continue
        cells = _cells(line)
        if columns is None:
            names = [c.strip("*` ").lower() for c in cells]
            if "prefix" in names and "active scenarios" in names:
                columns = (names.index("prefix"), names.index("active scenarios"))
                tables += 1
            continue
        if all(set(c) <= set(":- ") for c in cells):
            continue  # the header's separator
        prefix_at, active_at = columns
        if max(prefix_at, active_at) >= len(cells):
            continue
        effective = _retired_on(cells[active_at])
        if effective is None:
            continue
        cell = cells[active_at]
        quoted = cell[:MAX_CELL] + ("…" if len(cell) > MAX_CELL else "")
        prefixes = _PREFIX.findall(cells[prefix_at])
        found += [Retirement(prefix, effective, number, quoted) for prefix in prefixes]
    if not tables:
        return None
    return found
