"""Bounded, line-aware YAML loading for untrusted pull-request content.

pyyaml's C parser does the parsing; a small constructor subclass records the 1-based line of
every mapping key and sequence item, and notes duplicate keys instead of silently keeping the
last one. Before anything is built, the input is checked against limits so that a hostile file
(huge, deeply nested, an alias "billion laughs", invalid UTF-8, NUL bytes) is refused quickly
with a clear reason rather than taking the runner down.
"""

from __future__ import annotations

import re
import types
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

try:
    _BaseLoader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - only without libyaml
    _BaseLoader = yaml.SafeLoader

MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_EXPANDED_NODES = 2_000_000
MERGE_TAG = "tag:yaml.org,2002:merge"
STR_TAG = "tag:yaml.org,2002:str"
MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"
_INVALID = object()  # a scalar pyyaml could not construct


class YamlProblem(Exception):
    """The file could not be read as YAML within the limits; `kind` names the reason."""

    def __init__(self, kind: str, detail: str, line: int | None = None) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.line = line


class LineDict(dict):
    """A mapping that remembers the source line of each key (`lines[key]`)."""

    lines: dict[Any, int]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lines = {}

    def line_of(self, key: Any) -> int | None:
        return self.lines.get(key)


class LineList(list):
    """A sequence that remembers the source line of each item (`lines[i]`)."""

    lines: list[int]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.lines = []

    def line_of(self, index: int) -> int | None:
        return self.lines[index] if 0 <= index < len(self.lines) else None


@dataclass(frozen=True)
class Duplicate:
    """A mapping key written twice in the same mapping."""

    key: str
    line: int
    first_line: int


@dataclass
class Loaded:
    """A parsed document and what was noticed while parsing it."""

    data: Any
    duplicates: list[Duplicate] = field(default_factory=list)


class _LineLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    line_offset = 0

    def __init__(self, stream: str, line_offset: int = 0) -> None:
        super().__init__(stream)
        self.line_offset = line_offset
        self.duplicates: list[Duplicate] = []
        self._built: dict[int, Any] = {}

    # The safe loader has no path resolvers, so pyyaml's per-node bookkeeping for them is skipped,
    # and plain scalars are tagged by the same implicit resolvers, looked up by first character.
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is not ScalarNode:
            return super().resolve(kind, value, implicit)
        if implicit[0]:
            for tag, regexp in self.yaml_implicit_resolvers.get(value[0] if value else "", ()):
                if regexp.match(value):
                    return tag
        return STR_TAG

    def build(self, node: Node) -> Any:
        """Python objects with line numbers for a composed node tree.

        A direct recursive walk: strings are taken as they are, other scalars go through pyyaml's
        own constructors (ints with `_`, bools, nulls, timestamps), `<<:` merges are flattened by
        pyyaml, and an aliased node is built once and shared, as pyyaml does.
        """
        built = self._built.get(id(node))
        if built is not None:
            return built
        if isinstance(node, ScalarNode):
            if node.tag == STR_TAG:
                return node.value
            constructor = self.yaml_constructors.get(node.tag)
            if constructor is None or node.tag in (MAP_TAG, SEQ_TAG):
                return self.construct_object(node, deep=True)  # raises a clear error for unknown tags
            try:  # `!!int ""`, `!!bool maybe`, `!!timestamp 2026-13-45` fail inside pyyaml
                value = constructor(self, node)
            except Exception:
                value = _INVALID
            if value is _INVALID or isinstance(value, types.GeneratorType):  # `!!omap 1`: a collection tag
                kind = node.tag.rsplit(":", 1)[-1]
                problem = f"{node.value[:40]!r} is not a valid {kind}"
                raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark)
            return value
        if isinstance(node, SequenceNode):
            items = LineList()
            self._built[id(node)] = items
            items.extend(self.build(child) for child in node.value)
            items.lines = [child.start_mark.line + 1 + self.line_offset for child in node.value]
            return items
        if not isinstance(node, MappingNode):
            return self.construct_object(node, deep=True)
        mapping = LineDict()
        self._built[id(node)] = mapping
        seen: dict[tuple[str, str], int] = {}
        for key_node, _ in node.value:
            if isinstance(key_node, ScalarNode) and key_node.tag != MERGE_TAG:
                ident, line = (key_node.tag, key_node.value), key_node.start_mark.line + 1 + self.line_offset
                if ident in seen:
                    self.duplicates.append(Duplicate(key_node.value, line, seen[ident]))
                else:
                    seen[ident] = line
        self.flatten_mapping(node)
        lines = mapping.lines
        for key_node, value_node in node.value:
            key = self.build(key_node)
            try:
                hash(key)
            except TypeError as exc:
                raise yaml.constructor.ConstructorError(
                    None, None, "found an unhashable mapping key", key_node.start_mark
                ) from exc
            mapping[key] = self.build(value_node)
            lines[key] = key_node.start_mark.line + 1 + self.line_offset
        return mapping


def decode(data: bytes, *, max_bytes: int = MAX_BYTES) -> str:
    """UTF-8 text of a file within the size limit, or a YamlProblem saying why not."""
    if len(data) > max_bytes:
        raise YamlProblem("too-large", f"{len(data):,} bytes is over the {max_bytes:,}-byte limit")
    if b"\x00" in data:
        raise YamlProblem(
            "nul-byte", "the file contains a NUL byte", data[: data.index(b"\x00")].count(b"\n") + 1
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise YamlProblem("invalid-utf8", f"invalid UTF-8 at byte {exc.start}", line) from None


# An anchor (`&name`) starts a token: at a line start or after a space, `[`, `{` or `,`. A URL's
# `a=1&b=2` is not one; a false match only costs the expansion walk.
_ANCHOR = re.compile(r"(?:^|[\s\[{,])&\S", re.MULTILINE)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _shallow(text: str, max_depth: int) -> bool:
    """A cheap sufficient test that nesting stays within `max_depth`: the deepest run of open flow
    brackets plus the longest leading run of spaces and dashes (each block level needs one)."""
    depth = peak = 0
    for bracket in _NOT_BRACKET.sub("", text):
        depth = depth + 1 if bracket in "[{" else max(0, depth - 1)
        peak = max(peak, depth)
    if peak >= max_depth:
        return False
    return re.search(rf"^[ \-]{{{max_depth - peak},}}", text, re.MULTILINE) is None


def _check_depth(text: str, max_depth: int) -> None:
    """Refuse documents nested deeper than `max_depth`, walking parser events only when needed."""
    if _shallow(text, max_depth):
        return
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_BaseLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > max_depth:
                    line = event.start_mark.line + 1
                    raise YamlProblem("too-deep", f"nesting deeper than {max_depth} levels", line)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as exc:  # ReaderError (control characters) is not a MarkedYAMLError
        # Newer libyaml refuses deep flow nesting itself; other syntax errors are reported by `load`.
        problem, context = getattr(exc, "problem", None), getattr(exc, "context", None)
        if "nesting depth" in str(problem or "") or "level" in str(context or ""):
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark else None
            raise YamlProblem("too-deep", f"nesting deeper than {max_depth} levels", line) from None


def _check_expansion(root: Node, limit: int) -> None:
    """Refuse alias bombs: the tree the aliases would unfold into must stay under `limit` nodes."""
    sizes: dict[int, int] = {}
    path: set[int] = set()  # nodes being expanded: the current path from the root
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in sizes:
            continue
        children: list[Node] = []
        if isinstance(node, SequenceNode):
            children = list(node.value)
        elif isinstance(node, MappingNode):
            children = [part for pair in node.value for part in pair]
        if not done:
            path.add(id(node))
            stack.append((node, True))
            for child in children:
                if id(child) in path:  # `&a [*a]`: an alias inside the node it names never ends
                    detail = "aliases loop back into the node they name, so they would expand forever"
                    raise YamlProblem("alias-bomb", detail, child.start_mark.line + 1)
                if id(child) not in sizes:
                    stack.append((child, False))
            continue
        path.discard(id(node))
        total = 1 + sum(sizes.get(id(child), 1) for child in children)
        if total > limit:
            raise YamlProblem(
                "alias-bomb", f"aliases would expand to more than {limit:,} nodes", node.start_mark.line + 1
            )
        sizes[id(node)] = total


def load(
    text: str,
    *,
    line_offset: int = 0,
    max_depth: int = MAX_DEPTH,
    max_nodes: int = MAX_EXPANDED_NODES,
) -> Loaded:
    """Parse one YAML document with line numbers, within the depth and alias-expansion limits."""
    _check_depth(text, max_depth)
    loader = _LineLoader(text, line_offset)
    try:
        node = loader.get_single_node()
        if node is None:
            return Loaded(None)
        if _ANCHOR.search(text):  # without anchors there are no aliases to expand
            _check_expansion(node, max_nodes)
        data = loader.build(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + line_offset if mark else None
        raise YamlProblem("syntax", " ".join(str(exc.problem or exc).split()), line) from None
    except yaml.YAMLError as exc:
        position = getattr(exc, "position", None)  # a ReaderError (control character) has no mark
        line = text[:position].count("\n") + 1 + line_offset if isinstance(position, int) else None
        raise YamlProblem("syntax", " ".join(str(exc).split()), line) from None
    except RecursionError:
        raise YamlProblem("too-deep", "nesting too deep to build") from None
    finally:
        loader.dispose()
    return Loaded(data, loader.duplicates)


def load_bytes(data: bytes, **kwargs: Any) -> Loaded:
    """`decode` then `load`."""
    return load(decode(data), **kwargs)
