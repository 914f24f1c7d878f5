"""Byte-exact edits of YAML files: scalars replaced in place, or an entry appended (pure).

Why not load and dump (ruamel.yaml's round-trip mode, say): a dump re-emits the whole document,
and on the seed example's recipe alone it writes `null` as an empty value and re-indents every
nested sequence, so far more than the fixed line would change. So the file is only *read*:
libyaml's parser (the one the review reads it with) gives the exact start and end of every
scalar, each new value is spliced in between, and the result is parsed again to confirm that
every key now holds its new value. Every other character of the file is untouched by
construction.

All the edits of one file are located in one pass and confirmed in one more, so fixing a file
costs two parses however many values change (a pass over 4 MB takes about a second).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any, NamedTuple

import yaml
from yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    MappingStartEvent,
    ScalarEvent,
)

try:
    from yaml.cyaml import CParser as _Parser
    from yaml.cyaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - only without libyaml
    from yaml import Loader as _Parser
    from yaml import SafeLoader as _SafeLoader

_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:-]*")
_BOM = "\ufeff"  # libyaml skips it without counting it in its positions
_QUOTES = ("'", '"')


class Place(NamedTuple):
    """Where a value is: the mapping key and the 1-based line that key is written on."""

    key: str
    line: int


class _Value(NamedTuple):
    """A one-line scalar as written: `text[start:end]`, its quoting and what it reads as."""

    start: int
    end: int
    style: str
    value: str


def _as_written(text: str, event: ScalarEvent, offset: int) -> _Value | None:
    """The scalar of `event` when it can be replaced alone: one line, plain or quoted, neither
    anchored (aliases elsewhere share it) nor tagged, and its text where the parser says."""
    start, end = event.start_mark.index + offset, event.end_mark.index + offset
    style = event.style or ""
    if event.anchor is not None or event.tag is not None or style not in ("", *_QUOTES):
        return None
    if event.start_mark.line != event.end_mark.line:
        return None
    written = text[start:end]
    ok = written == event.value if not style else len(written) >= 2 and written[0] == written[-1] == style
    return _Value(start, end, style, event.value) if ok else None


def _values(text: str, places: Collection[Place]) -> dict[Place, list[_Value | None]] | None:
    """Every value written at each of `places`, in one pass over the parser's events (None for
    one that cannot be replaced alone); None when `text` is not YAML."""
    found: dict[Place, list[_Value | None]] = {place: [] for place in places}
    keys = {place.key for place in places}
    offset = 1 if text.startswith(_BOM) else 0
    # Per open collection: [is a mapping, its next node is a value, the key event of that value].
    stack: list[list[Any]] = []
    parser = _Parser(text[offset:])
    try:
        while (event := parser.get_event()) is not None:
            if isinstance(event, CollectionStartEvent):
                stack.append([isinstance(event, MappingStartEvent), False, None])
                continue
            if isinstance(event, CollectionEndEvent):
                stack.pop()
            elif not isinstance(event, (ScalarEvent, AliasEvent)):
                continue
            if not stack or not stack[-1][0]:
                continue
            frame = stack[-1]
            node = event if isinstance(event, ScalarEvent) else None
            if not frame[1]:
                frame[1], frame[2] = True, node if node is not None and node.value in keys else None
                continue
            key, frame[1], frame[2] = frame[2], False, None
            place = Place(key.value, key.start_mark.line + 1) if key is not None else None
            if place in found and node is not None and node.start_mark.line == key.start_mark.line:
                found[place].append(_as_written(text, node, offset))
    except yaml.YAMLError:
        return None
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()
    return found


def _token(value: str, style: str) -> str | None:
    """`value` written in the quoting style the old value used; None if that style cannot hold it."""
    if style == "'":
        return "'" + value.replace("'", "''") + "'"
    if style == '"':
        return json.dumps(value, ensure_ascii=False)
    return value if _PLAIN.fullmatch(value) else None


def _spliced(text: str, splices: list[tuple[_Value, str]]) -> str:
    """`text` with each value's characters replaced by its token (the values do not overlap)."""
    parts, position = [], 0
    for old, token in sorted(splices, key=lambda splice: splice[0].start):
        parts += [text[position : old.start], token]
        position = old.end
    parts.append(text[position:])
    return "".join(parts)


def replace_scalars(text: str, edits: Mapping[Place, str]) -> tuple[str, set[Place]]:
    """`text` with the value at each place replaced by its new value, quoted as before, and the
    places so edited. A place is left as it is when it does not hold exactly one one-line value
    of its key, or its new value would not read back so; the others are still edited."""
    located = _values(text, edits)
    if located is None:
        return text, set()
    splices: dict[Place, tuple[_Value, str]] = {}
    for place, found in located.items():
        old = found[0] if len(found) == 1 else None
        token = _token(edits[place], old.style) if old is not None else None
        if old is not None and token is not None:
            splices[place] = (old, token)
    # Confirm by one more parse; what did not read back is dropped and the rest confirmed again.
    for _ in range(2):
        if not splices:
            break
        edited = _spliced(text, list(splices.values()))
        confirmed = _values(edited, splices) or {}
        kept = {
            place: splice
            for place, splice in splices.items()
            if [v.value if v else None for v in confirmed.get(place, [])] == [edits[place]]
        }
        if kept == splices:
            return edited, set(splices)
        splices = kept
    return text, set()


def yaml_string(text: str) -> str:
    """`text` as a YAML scalar: plain when a YAML reader gives back this same string (not a number,
    boolean or mapping), else double-quoted."""
    plain = _PLAIN.fullmatch(text) is not None and not text.endswith(":")
    return (
        text
        if plain and yaml.load(text, Loader=_SafeLoader) == text
        else json.dumps(text, ensure_ascii=False)
    )


def item_indent(data: bytes) -> bytes:
    """The indentation of list items inside the file's entries (`    - ` in InferenceX's)."""
    match = re.search(rb"^- config-keys:[^\n]*\n( +)- ", data, re.MULTILINE)
    return match[1] if match else b"    "


def entry_lines(
    keys: list[str], description: list[str], pr_link: str, indent: bytes, scenarios: Sequence[str] = ()
) -> bytes:
    """A changelog entry: `config-keys`, `scenario-type` (when `scenarios`), `description` and
    `pr-link`, fields at two spaces."""
    lines = [b"- config-keys:"]
    lines += [indent + b"- " + yaml_string(key).encode() for key in keys]
    if scenarios:
        lines.append(b"  scenario-type:")
        lines += [indent + b"- " + yaml_string(scenario).encode() for scenario in scenarios]
    lines.append(b"  description:")
    lines += [indent + b"- " + json.dumps(line, ensure_ascii=False).encode() for line in description]
    lines.append(b"  pr-link: " + yaml_string(pr_link).encode())
    return b"\n".join(lines) + b"\n"


def append_entry(data: bytes, entry: bytes) -> bytes:
    """`data` with `entry` appended as InferenceX's gate wants the bytes (DESIGN.md §2 `changelog`):
    `data` stays an exact prefix, one empty line comes before the entry unless `data` already
    ends with one, and the file ends with the entry's single final newline."""
    if not data:
        return entry
    ending = b"" if data.endswith(b"\n") else b"\n"
    blank = b"" if data.endswith(b"\n\n") else b"\n"
    return data + ending + blank + entry
