"""Bounded, line-aware YAML loading for untrusted pull-request content.

libyaml (pyyaml's C parser) turns the text into events; a handler per kind of event builds the Python
objects straight from those events, recording the 1-based line of every mapping key and sequence
item and noting duplicate keys instead of silently keeping the last one (a second `<<:` key in one
mapping too: it is merged, over the first, and noted). Scalars mean what they mean to
`yaml.safe_load` (YAML 1.1: `yes` is true, `0x1F` is 31), a tag on a mapping or a sequence is
refused as `yaml.safe_load` refuses it (or, for `!!set`, `!!omap` and `!!pairs`, which it builds
into a set or a list of pairs, as a value no reader here models), `<<:` merges follow the YAML merge-key
spec (see `_merged`), and an aliased node is shared, as pyyaml does. Skipping pyyaml's
node tree makes this about 1.7 times faster than `yaml.load(..., Loader=yaml.CSafeLoader)`.

Hostile files are refused with a clear reason (`YamlProblem.kind`): too large, NUL bytes, invalid
UTF-8 (`decode`), nested too deep, or aliases that would expand into a "billion laughs" (`load`,
counted while building, so nothing is ever expanded).
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any, NamedTuple

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

try:
    from yaml.cyaml import CParser as _Parser
except ImportError:  # pragma: no cover - only without libyaml
    from yaml import Loader as _Parser

MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_EXPANDED_NODES = 2_000_000
MERGE_TAG = "tag:yaml.org,2002:merge"
STR_TAG = "tag:yaml.org,2002:str"
VALUE_TAG = "tag:yaml.org,2002:value"  # pyyaml's `=` key
INT_TAG = "tag:yaml.org,2002:int"
#: The longest base-60 integer (`1:20:30`) read: pyyaml builds one in time quadratic in its length
#: (a 480 KB one took 33 s), as Python would a decimal one, which it refuses over 4,300 digits.
MAX_SEXAGESIMAL_CHARS = 4_300
#: A mapping key that is an integer of more digits refuses the file: every reader names keys in its
#: findings (`a.b.c`), and Python cannot write an integer of over 4,300 digits in decimal.
KEY_DIGITS = 4_000
_KEY_LIMIT = 10**KEY_DIGITS
MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"
_COLLECTION_TAGS = (MAP_TAG, SEQ_TAG)
#: Tags `yaml.safe_load` builds from a collection into something other than a dict or a list: a
#: Python set (`!!set`, from a mapping) or a list of pairs (`!!omap`, `!!pairs`, from a sequence).
_OTHER_COLLECTIONS = {  # tag → whether it is written on a mapping
    "tag:yaml.org,2002:set": True,
    "tag:yaml.org,2002:omap": False,
    "tag:yaml.org,2002:pairs": False,
}
_CONSTRUCTOR = SafeConstructor()
_RESOLVERS = Resolver.yaml_implicit_resolvers
_PLAIN_CACHE_SIZE = 50_000


class YamlProblem(Exception):
    """The file could not be read as YAML within the limits; `kind` names the reason."""

    def __init__(self, kind: str, detail: str, line: int | None = None, **params: object) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.line = line
        self.params = params  # the figures behind `detail`, for messages in every language


class LineDict(dict):
    """A mapping that remembers the source line of each key (`lines[key]`)."""

    __slots__ = ("lines",)
    lines: dict[Any, int]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lines = {}

    def line_of(self, key: Any) -> int | None:
        return self.lines.get(key)


class LineList(list):
    """A sequence that remembers the source line of each item (`lines[i]`)."""

    __slots__ = ("lines",)
    lines: list[int]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.lines = []

    def line_of(self, index: int) -> int | None:
        return self.lines[index] if 0 <= index < len(self.lines) else None


def frozen(value: Any) -> Any:
    """A loaded value as something hashable, equal exactly when the values are equal by value and
    type (`True`, `1` and `1.0` differ; mappings in any order). Never an integer's decimal text,
    which Python refuses past 4,300 digits."""
    kind = type(value)
    if kind is str:  # no other loaded value equals a string: it stands for itself
        return value
    if kind is int or kind is bool:  # the common scalars, before the other kinds are tried
        return (kind.__name__, value)
    if isinstance(value, dict):  # mostly string keys: those skip the call
        pairs = ((k if type(k) is str else frozen(k), frozen(v)) for k, v in value.items())
        return ("map", frozenset(pairs))
    if isinstance(value, list):
        return ("seq", tuple(frozen(v) for v in value))
    if isinstance(value, float):
        return ("float", value.hex())  # tells 0.0 from -0.0, and nan equals nan
    return (kind.__name__, value)


class Duplicate(NamedTuple):
    """A mapping key written twice in the same mapping."""

    key: str
    line: int
    first_line: int


class Loaded(NamedTuple):
    """A parsed document and what was noticed while parsing it."""

    data: Any
    duplicates: list[Duplicate]


def decode(data: bytes, *, max_bytes: int = MAX_BYTES) -> str:
    """UTF-8 text of a file within the size limit, or a YamlProblem saying why not."""
    if len(data) > max_bytes:
        detail = f"{len(data):,} bytes is over the {max_bytes:,}-byte limit"
        raise YamlProblem("too-large", detail, size=len(data), limit=max_bytes)
    if b"\x00" in data:
        raise YamlProblem(
            "nul-byte", "the file contains a NUL byte", data[: data.index(b"\x00")].count(b"\n") + 1
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise YamlProblem("invalid-utf8", f"invalid UTF-8 at byte {exc.start}", line) from None


_MERGE = object()  # the `<<` key
_NOTHING = object()  # no key yet (a mapping waiting for one), or not in the cache
_INVALID = object()  # a scalar pyyaml could not construct
_plain_values: dict[str, Any] = {}  # plain scalar text → its value (all immutable), shared by loads


def _construct(tag: str, event: ScalarEvent, line: int) -> Any:
    """A scalar with a non-string tag, built by pyyaml's own safe constructors."""
    constructor = _CONSTRUCTOR.yaml_constructors.get(tag)
    if constructor is None or tag in _COLLECTION_TAGS:
        raise YamlProblem("syntax", f"could not determine a constructor for the tag {tag!r}", line)
    node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
    try:  # `!!int ""`, `!!bool maybe`, `!!timestamp 2026-13-45` fail inside pyyaml
        too_long = tag == INT_TAG and ":" in event.value and len(event.value) > MAX_SEXAGESIMAL_CHARS
        value = _INVALID if too_long else constructor(_CONSTRUCTOR, node)
    except Exception:
        value = _INVALID
    if value is _INVALID or isinstance(value, types.GeneratorType):  # `!!set 1`: a collection tag
        kind = tag.rsplit(":", 1)[-1]
        raise YamlProblem("syntax", f"{event.value[:40]!r} is not a valid {kind}", line)
    return value


def _tagged(tag: str, event: ScalarEvent, line: int) -> Any:
    """The value of a scalar with a known tag, written (`!!int 5`) or resolved (`5`)."""
    if tag == MERGE_TAG:
        return _MERGE
    if tag in (STR_TAG, VALUE_TAG):  # pyyaml reads a `=` key as the string "="
        return event.value
    return _construct(tag, event, line)


def _plain(event: ScalarEvent, line: int) -> Any:
    """The value of an untagged plain scalar, resolved as pyyaml's implicit resolvers do (and
    remembered: the same text always means the same immutable value)."""
    text = event.value
    candidates = _RESOLVERS.get(text[0] if text else "", ())
    value = _tagged(next((tag for tag, regexp in candidates if regexp.match(text)), STR_TAG), event, line)
    if len(_plain_values) >= _PLAIN_CACHE_SIZE:
        _plain_values.clear()
    _plain_values[text] = value
    return value


def _merged(own: LineDict, sources: list[tuple[Any, int]]) -> LineDict:
    """`own` with its `<<:` sources under it, as the merge-key spec says and pyyaml did before
    6.0.4 (yaml/pyyaml#953): the first mapping of a `<<: [a, b]` list wins over the next, a later
    `<<:` key wins over an earlier one, and keys written in the mapping itself win over all."""
    merged = LineDict()
    for source, line in sources:
        parts = source if isinstance(source, LineList) else [source]
        for part in reversed(parts):
            if not isinstance(part, LineDict):
                detail = "expected a mapping or list of mappings for merging"
                raise YamlProblem("syntax", detail, line)
            merged.update(part)
            merged.lines.update(part.lines)
    merged.update(own)
    merged.lines.update(own.lines)
    return merged


@dataclass(slots=True)
class _Frame:
    """A mapping or sequence being built, and what is known of it so far."""

    value: LineDict | LineList
    is_map: bool
    line: int  # where it starts
    anchor: str | None
    size: int = 1  # its nodes once aliases are expanded, itself included
    height: int = 1  # its levels of nesting once aliases are expanded (an alias can hide depth)
    key: Any = _NOTHING  # a mapping's key waiting for its value, with its line and its text
    key_line: int = 0
    key_text: str = ""
    merges: list[tuple[Any, int]] | None = None  # a mapping's `<<:` values, with their lines
    merge_line: int = 0  # where its first `<<:` key is


_Node = tuple[Any, int, int, int]  # a finished node: its value, line, expanded size and height


def _collection_tag(tag: str, is_map: bool, line: int) -> None:
    """Refuse a tag on a mapping or a sequence as `yaml.safe_load` does (with its words), or, for
    the tags it builds into a set or a list of pairs, as a value no InferenceX file holds and prbot
    does not review: a tagged collection never loads as the plain one it is written as."""
    found = "mapping" if is_map else "sequence"
    if tag in _OTHER_COLLECTIONS:
        if _OTHER_COLLECTIONS[tag] == is_map:
            raise YamlProblem("collection-tag", f"{tag} on a {found}", line, tag=tag.rsplit(":", 1)[-1])
        wanted = "mapping" if _OTHER_COLLECTIONS[tag] else "sequence"
        raise YamlProblem("syntax", f"expected a {wanted} node, but found {found} ({tag})", line)
    if tag in _COLLECTION_TAGS:
        wanted = "mapping" if tag == MAP_TAG else "sequence"
        raise YamlProblem("syntax", f"expected a {wanted} node, but found {found} ({tag})", line)
    if tag in _CONSTRUCTOR.yaml_constructors:  # a scalar's tag: `!!str {…}`, `!!int […]`
        raise YamlProblem("syntax", f"expected a scalar node, but found {found} ({tag})", line)
    raise YamlProblem("syntax", f"could not determine a constructor for the tag {tag[:80]!r}", line)


class _Builder:
    """Python objects from libyaml's events for one document, within the limits.

    A handler per kind of event: `_scalar` gives a scalar's value, `_start` opens a collection,
    `_end` closes it and `_alias` looks up what an alias names, and `_root` puts each finished
    node into the collection being built. The collections are kept on a stack, not the call
    stack, so no nesting can raise RecursionError. A Python call costs about as much as libyaml's
    work for a small event, so an event makes only one: `_root` does the placing itself.
    """

    def __init__(self, text: str, line_offset: int, max_depth: int, max_nodes: int) -> None:
        self.parser = _Parser(text)
        self.offset = line_offset + 1
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.duplicates: list[Duplicate] = []
        self.stack: list[_Frame] = []  # the collections being built, outermost first
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # name → (value, expanded size, height)
        self.open_anchors: set[str] = set()  # anchors of collections still being built
        self.handlers = {
            MappingStartEvent: self._start,
            SequenceStartEvent: self._start,
            MappingEndEvent: self._end,
            SequenceEndEvent: self._end,
            AliasEvent: self._alias,
        }

    def document(self) -> Any:
        get = self.parser.get_event
        get()  # StreamStartEvent
        if type(get()) is StreamEndEvent:
            return None
        root = self._root(get)
        get()  # DocumentEndEvent
        event = get()
        if type(event) is DocumentStartEvent:
            raise YamlProblem("syntax", "expected a single document in the stream", self._line(event))
        return root

    def _root(self, get: Any) -> Any:
        """The document's root: each node, once its last event is in, goes into the collection
        that holds it (a sequence's next item, or a mapping's next key or the value of its key)."""
        handlers, stack, duplicates, offset = self.handlers, self.stack, self.duplicates, self.offset
        plain_values = _plain_values
        while True:
            event = get()
            kind = type(event)
            if kind is ScalarEvent:  # two events in three: their node is built here
                line, size, height = event.start_mark.line + offset, 1, 0
                value = _NOTHING
                if event.tag is None and event.anchor is None:  # no call for the common cases:
                    # a plain scalar seen before (from the cache), or a quoted one (its text)
                    value = plain_values.get(event.value, _NOTHING) if event.implicit[0] else event.value
                if value is _NOTHING:
                    value = self._scalar(event, line)
            else:
                node = handlers[kind](event)
                if node is None:
                    continue
                value, line, size, height = node
            frame = stack[-1] if stack else None
            if value is _MERGE and (frame is None or not frame.is_map or frame.key is not _NOTHING):
                raise YamlProblem("syntax", "`<<` (merge) is only allowed as a mapping key", line)
            if frame is None:
                return value
            frame.size += size
            if height >= frame.height:
                frame.height = height + 1
            into = frame.value
            if not frame.is_map:
                into.append(value)
                into.lines.append(line)
                continue
            key = frame.key
            if key is _NOTHING:
                if type(value) is str:  # the common case: the key is its own text
                    frame.key_text = value
                elif isinstance(value, (LineDict, LineList)):
                    raise YamlProblem("syntax", "found an unhashable mapping key", line)
                elif type(value) is int and not -_KEY_LIMIT < value < _KEY_LIMIT:
                    detail = f"a mapping key is an integer of over {KEY_DIGITS:,} digits"
                    raise YamlProblem("long-key", detail, line, digits=KEY_DIGITS)
                else:
                    frame.key_text = event.value if type(event) is ScalarEvent else str(value)
                frame.key, frame.key_line = value, line
                continue
            frame.key = _NOTHING
            if key is _MERGE:
                if frame.merges is None:
                    frame.merges, frame.merge_line = [], frame.key_line
                else:  # a second `<<:` key is a duplicate key like any other (ruamel refuses it)
                    duplicates.append(Duplicate(frame.key_text, frame.key_line, frame.merge_line))
                frame.merges.append((value, line))
                continue
            if key in into:
                duplicates.append(Duplicate(frame.key_text, frame.key_line, into.lines[key]))
            into[key] = value
            into.lines[key] = frame.key_line

    def _line(self, event: Any) -> int:
        return event.start_mark.line + self.offset

    def _scalar(self, event: ScalarEvent, line: int) -> Any:
        """A scalar's value: a plain one as pyyaml resolves it, a quoted one its text, a tagged
        one what its tag makes of it."""
        tag = event.tag
        if tag is not None and tag != "!":
            value = _tagged(tag, event, line)
        elif not event.implicit[0]:  # quoted
            value = event.value
        else:
            value = _plain_values.get(event.value, _NOTHING)
            if value is _NOTHING:
                value = _plain(event, line)
        if event.anchor is not None:
            self._new_anchor(event.anchor, line)
            self.anchors[event.anchor] = (value, 1, 0)
        return value

    def _start(self, event: MappingStartEvent | SequenceStartEvent) -> None:
        """A new collection, within the nesting limit, with no tag but its own kind's."""
        line = event.start_mark.line + self.offset
        if len(self.stack) >= self.max_depth:
            raise YamlProblem("too-deep", f"nesting deeper than {self.max_depth} levels", line)
        is_map = type(event) is MappingStartEvent
        if event.tag is not None and event.tag != "!" and event.tag != (MAP_TAG if is_map else SEQ_TAG):
            _collection_tag(event.tag, is_map, line)
        if event.anchor is not None:
            self._new_anchor(event.anchor, line)
            self.open_anchors.add(event.anchor)
        # Made without the Python-level __init__ (a call per collection, thousands per file).
        value = dict.__new__(LineDict) if is_map else list.__new__(LineList)
        value.lines = {} if is_map else []
        self.stack.append(_Frame(value, is_map, line, event.anchor))

    def _end(self, event: MappingEndEvent | SequenceEndEvent) -> _Node:
        """The finished collection, its `<<:` sources merged in, within the expansion limit."""
        frame = self.stack.pop()
        value = _merged(frame.value, frame.merges) if frame.merges else frame.value
        if frame.size > self.max_nodes and self.anchors:  # only aliases can multiply a file's size
            detail = f"aliases would expand to more than {self.max_nodes:,} nodes"
            raise YamlProblem("alias-bomb", detail, frame.line)
        if frame.anchor is not None:
            self.open_anchors.discard(frame.anchor)
            self.anchors[frame.anchor] = (value, frame.size, frame.height)
        return value, frame.line, frame.size, frame.height

    def _alias(self, event: AliasEvent) -> _Node:
        """The node an alias names, shared, and as deep here as it is where it was written."""
        line = event.start_mark.line + self.offset
        name = event.anchor
        if name in self.open_anchors:  # `&a [*a]`: an alias inside the node it names never ends
            detail = "aliases loop back into the node they name, so they would expand forever"
            raise YamlProblem("alias-bomb", detail, line)
        if name not in self.anchors:
            raise YamlProblem("syntax", f"found undefined alias {name!r}", line)
        value, size, height = self.anchors[name]
        if len(self.stack) + height > self.max_depth:  # an alias's nesting counts where it is used
            detail = f"aliases expand to nesting deeper than {self.max_depth} levels"
            raise YamlProblem("too-deep", detail, line)
        return value, line, size, height

    def _new_anchor(self, name: str, line: int) -> None:
        """pyyaml refuses an anchor name used twice in one document; so do we."""
        if name in self.anchors or name in self.open_anchors:
            raise YamlProblem("syntax", f"found duplicate anchor {name!r}", line)


def load(
    text: str,
    *,
    line_offset: int = 0,
    max_depth: int = MAX_DEPTH,
    max_nodes: int = MAX_EXPANDED_NODES,
) -> Loaded:
    """Parse one YAML document with line numbers, within the depth and alias-expansion limits."""
    builder = _Builder(text, line_offset, max_depth, max_nodes)
    try:
        data = builder.document()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + line_offset if mark else None
        problem = " ".join(str(exc.problem or exc).split())
        if "nesting depth" in problem:  # newer libyaml refuses deep flow nesting itself
            raise YamlProblem("too-deep", f"nesting deeper than {max_depth} levels", line) from None
        column = mark.column + 1 if mark else None
        raise YamlProblem("syntax", problem, line, column=column) from None
    except yaml.YAMLError as exc:
        position = getattr(exc, "position", None)  # a ReaderError (control character) has no mark
        line = text[:position].count("\n") + 1 + line_offset if isinstance(position, int) else None
        raise YamlProblem("syntax", " ".join(str(exc).split()), line) from None
    return Loaded(data, builder.duplicates)


def load_bytes(data: bytes, **kwargs: Any) -> Loaded:
    """`decode` then `load`."""
    return load(decode(data), **kwargs)
