"""Bounded, line-aware YAML loading for untrusted pull-request content.

pyyaml's C parser does the parsing; a small constructor subclass records the 1-based line of
every mapping key and sequence item, and notes duplicate keys instead of silently keeping the
last one. Before anything is built, the input is checked against limits so that a hostile file
(huge, deeply nested, an alias "billion laughs", invalid UTF-8, NUL bytes) is refused quickly
with a clear reason rather than taking the runner down.
"""

from __future__ import annotations

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

    def _line(self, node: Node) -> int:
        return node.start_mark.line + 1 + self.line_offset

    def _note_duplicates(self, node: MappingNode) -> None:
        seen: dict[tuple[str, str], int] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == MERGE_TAG:
                continue
            ident = (key_node.tag, key_node.value)
            if ident in seen:
                self.duplicates.append(Duplicate(key_node.value, self._line(key_node), seen[ident]))
            else:
                seen[ident] = self._line(key_node)

    def construct_line_mapping(self, node: MappingNode) -> LineDict:
        self._note_duplicates(node)
        self.flatten_mapping(node)
        mapping = LineDict()
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError as exc:
                raise yaml.constructor.ConstructorError(
                    None, None, "found an unhashable mapping key", key_node.start_mark
                ) from exc
            mapping[key] = self.construct_object(value_node, deep=True)
            mapping.lines[key] = self._line(key_node)
        return mapping

    def construct_yaml_map(self, node: MappingNode):  # type: ignore[override]
        data = LineDict()
        yield data
        built = self.construct_line_mapping(node)
        data.update(built)
        data.lines = built.lines

    def construct_yaml_seq(self, node: SequenceNode):  # type: ignore[override]
        data = LineList()
        yield data
        data.extend(self.construct_sequence(node, deep=True))
        data.lines = [self._line(item) for item in node.value]


_LineLoader.add_constructor("tag:yaml.org,2002:map", _LineLoader.construct_yaml_map)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _LineLoader.construct_yaml_seq)


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


def _nesting_bound(text: str) -> int:
    """A cheap upper bound of the nesting depth: indentation, open brackets and dashes per line."""
    bound = 0
    brackets = 0
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        opens = line.count("[") + line.count("{")
        depth = (len(line) - len(stripped)) + brackets + opens + stripped.count("- ") + stripped.count(":")
        bound = max(bound, depth)
        brackets = max(0, brackets + opens - line.count("]") - line.count("}"))
    return bound


def _check_depth(text: str, max_depth: int) -> None:
    """Refuse documents nested deeper than `max_depth`, walking parser events only when needed."""
    if _nesting_bound(text) <= max_depth:
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
    except yaml.MarkedYAMLError as exc:
        # Newer libyaml refuses deep flow nesting itself; other syntax errors are reported by `load`.
        if "nesting depth" in str(exc.problem or "") or "level" in str(exc.context or ""):
            line = exc.problem_mark.line + 1 if exc.problem_mark else None
            raise YamlProblem("too-deep", f"nesting deeper than {max_depth} levels", line) from None


def _check_expansion(root: Node, limit: int) -> None:
    """Refuse alias bombs: the tree the aliases would unfold into must stay under `limit` nodes."""
    sizes: dict[int, int] = {}
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
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
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
        _check_expansion(node, max_nodes)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + line_offset if mark else None
        raise YamlProblem("syntax", " ".join(str(exc.problem or exc).split()), line) from None
    except yaml.YAMLError as exc:
        raise YamlProblem("syntax", " ".join(str(exc).split())) from None
    except RecursionError:
        raise YamlProblem("too-deep", "nesting too deep to build") from None
    finally:
        loader.dispose()
    return Loaded(data, loader.duplicates)


def load_bytes(data: bytes, **kwargs: Any) -> Loaded:
    """`decode` then `load`."""
    return load(decode(data), **kwargs)
