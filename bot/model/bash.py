"""Shell files parsed with tree-sitter's bash grammar (`tree-sitter-bash`): the one place a syntax
tree of a shell file comes from, for both of its readers, the launchers followed for a run
(`bot.model.scripts`) and the scripts the `scripts` check reads (`bot.model.shell`).

One set of bounds on hostile input: a size limit (checked by `len()` before any byte is looked at,
so an `Oversized` file is refused as its bytes would be), which also bounds tree-sitter's time (of
the hostile 256 KB inputs tried, random bytes parse slowest, in ~0.3 s), and a limit of syntax nodes
for the readers' walks; nothing is ever executed. A file's tree is kept by its bytes (within a
total size), so a file both readers read, or that is the same at both refs, is parsed once per
review; a refusal is kept too. tree-sitter is imported on the first parse: a review with no shell
file to read never loads it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

MAX_BYTES = 256 * 1024  # the largest InferenceX script is ~90 KB (benchmark_lib.sh)
MAX_NODES = 400_000  # syntax nodes of one file (and walked by a reader, nested scripts included)
CACHE_BYTES = 4 * 1024 * 1024  # source bytes whose trees are kept (a tree takes ~20 bytes per byte)
DOUBLE_QUOTED = '"\\$`\n'  # the characters a backslash escapes inside "…"


class ScriptTooLarge(Exception):
    """The file is beyond what a review reads (size or syntax nodes)."""


class _Trees:
    """Trees (or why a file was refused) by the bytes they were parsed from, the least recently
    used dropped first once their sources pass `CACHE_BYTES`."""

    def __init__(self) -> None:
        self.found: OrderedDict[bytes, Node | str] = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()
        self.parser: Parser | None = None

    def get(self, data: bytes) -> Node:
        with self.lock:
            found = self.found.get(data)
            if found is None:
                found = self._parse(data)
                self.found[data] = found
                self.size += len(data)
                while self.size > CACHE_BYTES and len(self.found) > 1:
                    old, _ = self.found.popitem(last=False)
                    self.size -= len(old)
            else:
                self.found.move_to_end(data)
        if isinstance(found, str):
            raise ScriptTooLarge(found)
        return found

    def _parse(self, data: bytes) -> Node | str:
        if self.parser is None:
            import tree_sitter
            import tree_sitter_bash

            self.parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        root = self.parser.parse(data).root_node
        if root.descendant_count > MAX_NODES:
            return f"more than {MAX_NODES} syntax nodes"
        return root


_TREES = _Trees()


def parse(data: bytes) -> Node:
    """The syntax tree of a shell file's bytes (the root node; tree-sitter recovers from syntax
    errors, marking them in the tree). Raises ScriptTooLarge beyond the bounds."""
    if len(data) > MAX_BYTES:
        raise ScriptTooLarge(f"{len(data)} bytes (limit {MAX_BYTES})")
    return _TREES.get(bytes(data))


def text(node: Node) -> str:
    """A node's source text (bytes that are not UTF-8 replaced)."""
    return node.text.decode("utf-8", "replace") if node.text is not None else ""


def word(node: Node) -> str:
    """A word's text as bash passes it, expansions kept as written: quotes removed, backslash
    escapes resolved."""
    kind = node.type
    raw = text(node)
    if kind == "raw_string":
        return raw[1:-1]
    if kind == "string":
        inner = raw[1:-1] if raw.startswith('"') and raw.endswith('"') else raw
        return unescape(inner, DOUBLE_QUOTED)
    if kind == "concatenation":
        return "".join(word(c) for c in node.children)
    if kind in ("word", "number"):
        return unescape(raw)
    return raw


def unescape(value: str, escapable: str | None = None) -> str:
    """`value` with each backslash before a character of `escapable` (None: any, as in an unquoted
    word) removed; a backslash-newline is a line continuation and leaves nothing."""
    if "\\" not in value:
        return value
    out, i = [], 0
    while i < len(value):
        if value[i] == "\\" and i + 1 < len(value) and (escapable is None or value[i + 1] in escapable):
            if value[i + 1] != "\n":
                out.append(value[i + 1])
            i += 2
            continue
        out.append(value[i])
        i += 1
    return "".join(out)
