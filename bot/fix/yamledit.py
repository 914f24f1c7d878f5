"""Byte-exact edits of YAML files: one scalar replaced in place, or an entry appended (pure).

Why not load and dump with ruamel.yaml's round-trip mode: its dump re-emits the whole document,
and on the seed example's recipe alone it writes `null` as an empty value and re-indents every
nested sequence, so far more than the fixed line would change. So ruamel.yaml only *reads*:
`compose` gives the exact start and end of every scalar, the new value is spliced in between,
and the result is composed again to confirm that the same key now holds the new value. Every
other character of the file is untouched by construction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:-]*")


def _compose(text: str) -> Node | None:
    try:
        return YAML(typ="rt", pure=True).compose(text)
    except (YAMLError, RecursionError, ValueError):
        return None


def _pairs(root: Node | None) -> Iterator[tuple[ScalarNode, Node]]:
    """Every (key, value) of every mapping, each node visited once (aliases share nodes)."""
    stack, seen = [root] if root is not None else [], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if isinstance(key, ScalarNode):
                    yield key, value
                stack += [key, value]
        elif isinstance(node, SequenceNode):
            stack += node.value


def _value_at(root: Node | None, key: str, line: int) -> ScalarNode | None:
    """The one-line scalar value of the only `key` written on `line` (1-based), if exactly one."""
    found = [
        value
        for k, value in _pairs(root)
        if k.value == key
        and k.start_mark.line == line - 1
        and isinstance(value, ScalarNode)
        and value.start_mark.line == value.end_mark.line == line - 1
        and value.style in (None, "'", '"')
    ]
    return found[0] if len(found) == 1 else None


def _token(value: str, style: str | None) -> str | None:
    """`value` written in the quoting style the old value used; None if that style cannot hold it."""
    if style == "'":
        return "'" + value.replace("'", "''") + "'"
    if style == '"':
        return json.dumps(value, ensure_ascii=False)
    return value if _PLAIN.fullmatch(value) else None


def replace_scalar(text: str, key: str, line: int, value: str) -> str | None:
    """`text` with the value of `key` on `line` replaced by `value`, quoted as before; None when
    that line holds no single one-line value of `key`, or the edited file would not read back so."""
    old = _value_at(_compose(text), key, line)
    token = _token(value, old.style) if old is not None else None
    if old is None or token is None:
        return None
    start, end = old.start_mark.index, old.end_mark.index
    edited = text[:start] + token + text[end:]
    new = _value_at(_compose(edited), key, line)
    return edited if new is not None and new.value == value else None


def yaml_string(text: str) -> str:
    """`text` as a YAML scalar: plain when a YAML reader gives back this same string (not a number,
    boolean or mapping), else double-quoted."""
    plain = _PLAIN.fullmatch(text) is not None and not text.endswith(":")
    return text if plain and yaml.safe_load(text) == text else json.dumps(text, ensure_ascii=False)


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
