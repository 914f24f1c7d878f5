"""Integers of any size, shown shortened: `1234567890…0987654321 (4,335 digits)`.

A PR can write an integer of millions of digits (`0x` and 3,600 hex digits is 4,335 decimal
digits); Python refuses to turn one of over 4,300 digits into decimal text (the conversion takes
time quadratic in its length), orjson refuses any beyond 64 bits, and a float refuses one beyond
about 10^308. So what shows a PR value catches that refusal (`ValueError`, `OverflowError`, or
`LongNumber` for one merely too long to read) and shows it again with each long integer replaced
by its `Shortened` text, worked out in linear time: the exact decimal digits up to `EXACT_DIGITS`;
else the first and last `END_DIGITS` and the count, in decimal up to `DECIMAL_BITS`, beyond that
in hex (an integer that large came from a hex, octal or binary literal: YAML refuses a decimal one
over 4,300 digits).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

#: Integers of up to this many digits are shown whole.
EXACT_DIGITS = 40
#: A longer one shows this many digits at each end.
END_DIGITS = 10
#: Beyond this many bits (about 4,200 decimal digits, under Python's limit of 4,300) the digits
#: are hex: turning an integer into hex text takes linear time, into decimal quadratic.
DECIMAL_BITS = 14_000
_LIMIT = 10**EXACT_DIGITS


class LongNumber(Exception):
    """An integer too long to show whole: show the value again, shortened (`shown`)."""


class Digits(NamedTuple):
    """What a shortened integer shows: its sign, first and last digits, how many, and in which base."""

    negative: bool
    first: str
    last: str
    count: int
    hex: bool


class Shortened(str):
    """The text of a long integer, in place of the integer: printed without quotes inside a list."""

    def __repr__(self) -> str:
        return str(self)


def is_long(value: object) -> bool:
    """Whether `value` is an integer (not a bool) of more than EXACT_DIGITS digits."""
    return type(value) is int and not -_LIMIT < value < _LIMIT


def check(value: object) -> None:
    """Raise LongNumber for an integer too long to show whole, alone or in a list, tuple or mapping."""
    if type(value) is int:
        if not -_LIMIT < value < _LIMIT:
            raise LongNumber
    elif isinstance(value, list | tuple):
        for item in value:
            check(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            check(key)
            check(item)


def digits(value: int) -> Digits:
    """The digits a shortened integer shows, in time linear in its length."""
    size = abs(value)
    as_hex = size.bit_length() > DECIMAL_BITS
    text = format(size, "x") if as_hex else str(size)
    return Digits(value < 0, text[:END_DIGITS], text[-END_DIGITS:], len(text), as_hex)


def shown(data: Any, show: Callable[[int], str]) -> Any:
    """`data` with every long integer in it, at any depth of lists, tuples, sets, mappings (keys
    too) and dataclass records, replaced by `Shortened(show(value))`; anything else is kept as it is."""
    if is_long(data):
        return Shortened(show(data))
    if isinstance(data, dict):
        return {shown(k, show): shown(v, show) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [shown(item, show) for item in data]
    if isinstance(data, set | frozenset):
        return sorted((shown(item, show) for item in data), key=repr)
    if dataclasses.is_dataclass(data) and not isinstance(data, type):  # a typed record: its fields
        return dataclasses.replace(
            data, **{f.name: _field(getattr(data, f.name), show) for f in dataclasses.fields(data)}
        )
    return data


def _field(value: Any, show: Callable[[int], str]) -> Any:
    """A record's field, shown: a tuple stays a tuple."""
    done = shown(value, show)
    return tuple(done) if isinstance(value, tuple) else done
