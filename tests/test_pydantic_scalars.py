"""Booleans and whole numbers are read as pydantic 2 (lax mode) reads them in upstream's models.

The expectations are pydantic 2.14.4's answers (`TypeAdapter(bool)` / `TypeAdapter(int)`), taken
by running it: what it takes reads the same here, what it refuses is refused. Where pydantic takes
an odd spelling (`"0-5"` as -5), prbot refuses it: never laxer than upstream.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.model import schema

REFUSED = "refused"

BOOLEANS: list[tuple[Any, Any]] = [
    (True, True),
    (False, False),
    ("true", True),
    ("TRUE", True),
    ("tRuE", True),
    ("Yes", True),
    ("on", True),
    ("t", True),
    ("Y", True),
    ("1", True),
    ("false", False),
    ("False", False),
    ("no", False),
    ("OFF", False),
    ("f", False),
    ("n", False),
    ("0", False),
    (1, True),
    (0, False),
    (1.0, True),
    (0.0, False),
    ("false ", REFUSED),  # pydantic strips nothing around a boolean
    (" false", REFUSED),
    ("false\n", REFUSED),
    ("yes ", REFUSED),
    ("ｔｒｕｅ", REFUSED),  # fullwidth letters
    ("１", REFUSED),
    ("", REFUSED),
    ("2", REFUSED),
    ("01", REFUSED),
    ("1.0", REFUSED),
    (2, REFUSED),
    (-1, REFUSED),
    (0.5, REFUSED),
    (float("nan"), REFUSED),
]

WHOLE: list[tuple[Any, Any]] = [
    (8, 8),
    (True, 1),
    (False, 0),
    (8.0, 8),
    (-0.0, 0),
    (2.0**62, 2**62),
    ("8", 8),
    (" 8", 8),
    ("\t8\n", 8),
    ("\u30008\u00a0", 8),  # Unicode whitespace around it is stripped
    ("+8", 8),
    ("-8", -8),
    ("0008", 8),
    ("8_000", 8000),
    ("0_8", 8),
    ("8.0", 8),
    ("8.000", 8),
    ("-8.0", -8),
    ("1" * 4300, int("1" * 4300)),
    ("８", REFUSED),  # a fullwidth digit
    ("٨", REFUSED),  # an Arabic-Indic digit
    ("８.0", REFUSED),
    ("\x1c8", REFUSED),  # a separator Python's strip takes and pydantic's does not
    ("_8", REFUSED),
    ("8_", REFUSED),
    ("1__0", REFUSED),
    ("8.", REFUSED),
    (".0", REFUSED),
    ("8.5", REFUSED),
    ("8.0_0", REFUSED),
    ("8e0", REFUSED),
    ("0x8", REFUSED),
    ("8 8", REFUSED),
    ("", REFUSED),
    (" ", REFUSED),
    ("1" * 4301, REFUSED),  # int_parsing_size
    (8.5, REFUSED),
    (2.0**63, REFUSED),  # beyond 64 bits
    (1e20, REFUSED),
    (float("inf"), REFUSED),
    (float("nan"), REFUSED),
    (None, REFUSED),
]


def _read(kind: schema.Kind, value: Any) -> Any:
    parsed = kind.accepts(value)
    return REFUSED if parsed is schema._NO else parsed


@pytest.mark.parametrize(("value", "expected"), BOOLEANS)
def test_a_boolean_reads_as_pydantic_reads_it(value: Any, expected: Any) -> None:
    parsed = _read(schema.BOOL, value)
    assert parsed == expected and type(parsed) is type(expected)


@pytest.mark.parametrize(("value", "expected"), WHOLE)
def test_a_whole_number_reads_as_pydantic_reads_it(value: Any, expected: Any) -> None:
    parsed = _read(schema.WHOLE, value)
    assert parsed == expected and type(parsed) is type(expected)


@pytest.mark.parametrize("value", ["0-5", "+0-5", "0_-5", "-0__5"])
def test_the_odd_spellings_pydantic_takes_are_refused(value: str) -> None:
    assert _read(schema.WHOLE, value) == REFUSED
