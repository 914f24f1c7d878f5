"""Benchmark and launcher shell scripts, read with a real bash grammar (tree-sitter's
`tree-sitter-bash`), never with a regular expression over raw text: every command a script runs,
its words with variables and arrays expanded to what they were assigned, each word's line, and the
`if` / `case` / `&&` branches it is gated on.

Bounded work on hostile input: the size and node limits of `bot.model.bash` (which parses every
shell file, once per review, for this reader and for the launchers' `bot.model.scripts`), a node
budget for the walk, a depth limit for expansions and for `bash -c "…"` strings, and nothing is ever
executed. tree-sitter is imported only when a script is read, so a review that changes none does
not pay for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from bot.model import bash
from bot.model.bash import MAX_BYTES as MAX_BYTES  # the limit the `scripts` check names
from bot.model.bash import MAX_NODES, ScriptTooLarge

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_EXPANSION_DEPTH = 8  # a variable whose value names a variable whose value …
MAX_WORDS = 4_000  # words of one command after expansion
MAX_NESTING = 2  # `bash -c "…"` inside `bash -c "…"`
MAX_EXPANDED = 200_000  # words produced by expanding variables, in the whole script


class Gate(NamedTuple):
    """A branch a command or a word is inside: its condition as written, which side, and the
    variables the condition reads (`$EP_SIZE`, `${EP_SIZE:-1}`, `(( EP_SIZE > 1 ))`)."""

    condition: str
    taken: bool  # True: the `then` side (or the matching `case` item); False: `else`
    line: int
    reads: tuple[str, ...] = ()


class Word(NamedTuple):
    """One word of a command after expansion: its text (quotes removed; an expansion that could not
    be resolved stays as written, e.g. `$MODEL`), its line, the branches that put it there (those
    of the assignment it came from), and the variable it came from."""

    text: str
    line: int
    gates: tuple[Gate, ...] = ()
    via: str | None = None
    unresolved: bool = False  # a whole-word expansion of a variable the script never assigns


class Heredoc(NamedTuple):
    """A here-document fed to a command (`python3 - <<EOF`, `cat > f <<EOF`)."""

    line: int
    body: str


@dataclass(frozen=True)
class Command:
    """One simple command: its words (expanded), where it is and what it is gated on."""

    words: tuple[Word, ...]
    line: int
    end_line: int
    gates: tuple[Gate, ...]
    literal_lines: tuple[tuple[int, str], ...]  # (line, text) of each word as written in the command
    heredocs: tuple[Heredoc, ...] = ()
    redirects: tuple[str, ...] = ()  # targets of `>` / `>>`

    @property
    def texts(self) -> list[str]:
        return [w.text for w in self.words]

    def program(self) -> tuple[str, int] | None:
        """What this command runs, when it is a serving engine or the benchmark client: ("vllm",
        "sglang", "atom", "trtllm" or "client", index of the first argument)."""
        return _program(self.texts)

    def arguments(self) -> tuple[Word, ...]:
        found = self.program()
        return self.words[found[1] :] if found else ()


class Assignment(NamedTuple):
    """A variable set by the script (`X=…`, `X+=(…)`, `export X=…`): its value as words (an array's
    items expanded, a string's text as one word), its line and the branches it is in."""

    name: str
    words: tuple[Word, ...]
    line: int
    gates: tuple[Gate, ...]


@dataclass
class Script:
    """What a script runs and sets: its commands and assignments in source order."""

    commands: list[Command] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    errors: int = 0  # syntax errors tree-sitter recovered from

    def runs(self, kind: str) -> list[Command]:
        """The commands that run `kind` (see `Command.program`)."""
        return [c for c in self.commands if (p := c.program()) is not None and p[0] == kind]


_WRAPPERS = {"exec", "nohup", "env", "time", "stdbuf", "numactl", "taskset", "timeout", "sudo", "setsid"}
_PYTHONS = ("python", "python3")
_MODULES = {
    "sglang.launch_server": "sglang",
    "atom.entrypoints.openai_server": "atom",
    "vllm.entrypoints.openai.api_server": "vllm",
}


def _program(words: list[str]) -> tuple[str, int] | None:
    i = 0
    while i < min(len(words), 12) and (words[i] in _WRAPPERS or (i and words[i].startswith("-"))):
        i += 1  # wrappers and their options (`numactl --interleave=all vllm serve`)
    if i >= len(words):
        return None
    first = words[i].rsplit("/", 1)[-1]
    if first == "vllm" and i + 1 < len(words) and words[i + 1] == "serve":
        return "vllm", i + 2
    if first == "trtllm-serve":
        return "trtllm", i + 1
    if first == "run_benchmark_serving":
        return "client", i + 1
    if first == "sglang" and i + 1 < len(words) and words[i + 1] == "serve":
        return "sglang", i + 2
    if first.startswith(_PYTHONS) and i + 2 < len(words) and words[i + 1] == "-m":
        kind = _MODULES.get(words[i + 2])
        if kind:
            return kind, i + 3
    return None


def parse(data: bytes) -> Script:
    """Every command of the script, with its gates and expanded words. Raises ScriptTooLarge."""
    reader = _Reader()
    reader.read(data, 0, (), 0)
    return reader.script


class _Assignment(NamedTuple):
    name: str
    values: tuple[Node, ...]  # array items, or the one value
    array: bool
    append: bool
    gates: tuple[Gate, ...]
    line_offset: int


def _variables(nodes: list[Node]) -> tuple[str, ...]:
    """The variables a condition reads: its `variable_name` nodes (at most 64 distinct)."""
    found: dict[str, None] = {}
    stack = list(nodes)
    while stack and len(found) < 64:
        node = stack.pop()
        if node.type == "variable_name":
            found[bash.text(node)] = None
        stack.extend(node.children)
    return tuple(found)


def _expansion_name(node: Node) -> str | None:
    """The variable a whole-word expansion reads: `$X`, `${X}`, `${X[@]}`, `"$X"`, `"${X[@]}"`."""
    if node.type == "string":
        inner = [c for c in node.children if c.type != '"']
        return _expansion_name(inner[0]) if len(inner) == 1 else None
    if node.type == "simple_expansion":
        names = [c for c in node.children if c.type == "variable_name"]
        return bash.text(names[0]) if names else None
    if node.type == "expansion":
        kids = [c for c in node.children if c.type not in ("${", "}")]
        if len(kids) != 1:
            return None  # `${X:-default}`, `${#X}`, … are not plain reads
        kid = kids[0]
        if kid.type == "variable_name":
            return bash.text(kid)
        if kid.type == "subscript":
            name = kid.child_by_field_name("name")
            index = kid.child_by_field_name("index")
            if name is not None and index is not None and index.text in (b"@", b"*"):
                return bash.text(name)
    return None


class _Reader:
    def __init__(self) -> None:
        self.script = Script()
        self.assignments: dict[str, list[_Assignment]] = {}
        self.nodes = 0
        self.expanded = 0

    def read(self, data: bytes, line_offset: int, outer: tuple[Gate, ...], nesting: int) -> None:
        root = bash.parse(data)
        self.script.errors += int(root.has_error)
        stack: list[tuple[Node, tuple[Gate, ...]]] = [(root, outer)]
        while stack:
            node, gates = stack.pop()
            self.nodes += 1
            if self.nodes > MAX_NODES:
                raise ScriptTooLarge(f"more than {MAX_NODES} syntax nodes")
            kind = node.type
            if kind == "variable_assignment":
                self._assign(node, gates, line_offset)
                continue
            if kind == "command":
                self._command(node, gates, line_offset, nesting)
            if kind == "redirected_statement":
                body = node.child_by_field_name("body")
                if body is not None and body.type == "command":
                    self._command(body, gates, line_offset, nesting, node)
                    children = [c for c in node.children if c.id != body.id]
                    stack.extend((c, gates) for c in reversed(children))
                    continue
            stack.extend(reversed(self._children(node, gates, line_offset)))

    def _children(
        self, node: Node, gates: tuple[Gate, ...], offset: int
    ) -> list[tuple[Node, tuple[Gate, ...]]]:
        """The node's children, each with the gates it runs under."""
        kind = node.type
        if kind in ("if_statement", "elif_clause"):
            return self._if(node, gates, offset)
        if kind == "case_statement":
            value = node.child_by_field_name("value")
            subject = bash.text(value) if value is not None else ""
            out = []
            for item in node.children:
                if item.type != "case_item":
                    continue
                patterns = "|".join(
                    bash.text(c)
                    for i, c in enumerate(item.children)
                    if item.field_name_for_child(i) == "value"
                )
                gate = Gate(
                    f"{subject} matches {patterns}",
                    True,
                    item.start_point[0] + 1 + offset,
                    _variables([value] if value is not None else []),
                )
                out += [(c, (*gates, gate)) for c in item.children]
            return out
        if kind == "list" and len(node.children) == 3 and node.children[1].type in ("&&", "||"):
            left, op, right = node.children
            gate = Gate(
                bash.text(left),
                op.type == "&&",
                left.start_point[0] + 1 + offset,
                _variables([left]),
            )
            return [(left, gates), (right, (*gates, gate))]
        if kind == "function_definition":
            name = node.child_by_field_name("name")
            label = bash.text(name) if name is not None else "?"
            gate = Gate(f"function {label}", True, node.start_point[0] + 1 + offset)
            return [(c, (*gates, gate)) for c in node.children]
        return [(c, gates) for c in node.children]

    def _if(self, node: Node, gates: tuple[Gate, ...], offset: int) -> list[tuple[Node, tuple[Gate, ...]]]:
        out: list[tuple[Node, tuple[Gate, ...]]] = []
        condition: list[Node] = []
        phase = "keyword"
        previous: list[Gate] = []  # earlier conditions of this if/elif chain, not taken
        for child in node.children:
            if child.type in ("if", "elif"):
                phase = "condition"
                continue
            if child.type == "then":
                phase = "body"
                text = " ".join(bash.text(c) for c in condition if c.type != ";")
                line = (condition[0].start_point[0] if condition else node.start_point[0]) + 1 + offset
                taken = Gate(text, True, line, _variables(condition))
                out += [(c, gates) for c in condition]
                previous.append(taken)
                continue
            if phase == "condition":
                condition.append(child)
            elif child.type in ("elif_clause", "else_clause"):
                not_taken = tuple(g._replace(taken=False) for g in previous)
                if child.type == "else_clause":
                    out += [(c, (*gates, *not_taken)) for c in child.children]
                else:
                    out += [(child, (*gates, *not_taken))]
            elif phase == "body" and child.type != "fi":
                out.append((child, (*gates, previous[-1])))
        return out

    def _assign(self, node: Node, gates: tuple[Gate, ...], offset: int) -> None:
        name_node = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name_node is None or name_node.type != "variable_name":
            return
        name = bash.text(name_node)
        append = any(c.type == "+=" for c in node.children)
        if value is None:
            values: tuple[Node, ...] = ()
            array = False
        elif value.type == "array":
            values = tuple(c for c in value.children if c.type not in ("(", ")", "comment"))
            array = True
        else:
            values, array = (value,), False
        record = _Assignment(name, values, array, append, gates, offset)
        line = node.start_point[0] + 1 + offset
        if array:
            words = tuple(w for v in values for w in self._expand(v, offset, 0, {name}))
        else:
            words = tuple(Word(bash.word(v), v.start_point[0] + 1 + offset) for v in values)
        self.script.assignments.append(Assignment(name, words, line, gates))
        if not append and not gates:
            self.assignments[name] = [record]  # an unconditional assignment replaces what came before
        else:
            self.assignments.setdefault(name, []).append(record)

    def _command(
        self, node: Node, gates: tuple[Gate, ...], offset: int, nesting: int, outer: Node | None = None
    ) -> None:
        parts = [
            c
            for c in node.children
            if c.type not in ("variable_assignment", "file_redirect", "herestring_redirect")
        ]
        words: list[Word] = []
        literal: list[tuple[int, str]] = []
        for part in parts:
            target = part.children[0] if part.type == "command_name" and part.children else part
            literal.append((target.start_point[0] + 1 + offset, bash.text(target)))
            words += self._expand(target, offset, 0, set())
            if len(words) > MAX_WORDS:
                raise ScriptTooLarge(f"a command of more than {MAX_WORDS} words")
        heredocs, redirects = [], []
        for red in (outer or node).children:
            if red.type == "heredoc_redirect":
                body = next((c for c in red.children if c.type == "heredoc_body"), None)
                if body is not None:
                    heredocs.append(Heredoc(body.start_point[0] + 1 + offset, bash.text(body)))
            elif red.type == "file_redirect":
                dest = red.child_by_field_name("destination")
                if dest is not None:
                    redirects.append(bash.word(dest))
        command = Command(
            tuple(words),
            node.start_point[0] + 1 + offset,
            node.end_point[0] + 1 + offset,
            gates,
            tuple(literal),
            tuple(heredocs),
            tuple(redirects),
        )
        self.script.commands.append(command)
        self._nested(parts, command, offset, nesting)

    def _nested(self, parts: list[Node], command: Command, offset: int, nesting: int) -> None:
        """`bash -c "…"` (also behind `srun … bash -c`): the string is a script of its own."""
        texts = command.texts
        if nesting >= MAX_NESTING:
            return
        for i, text in enumerate(texts[:-2]):
            if text.rsplit("/", 1)[-1] in ("bash", "sh") and texts[i + 1] in ("-c", "-lc", "-ec", "-xc"):
                source = parts[-1] if parts else None
                for part in parts:
                    if bash.word(part) == texts[i + 2]:
                        source = part
                        break
                if source is None:
                    return
                line = source.start_point[0] + offset
                self.read(texts[i + 2].encode(), line, command.gates, nesting + 1)
                return

    def _expand(self, node: Node, offset: int, depth: int, seen: set[str]) -> list[Word]:
        """The words one word of the source becomes: a whole-word read of a variable the script
        assigns becomes every value it may hold (each gated by its assignment's branch)."""
        line = node.start_point[0] + 1 + offset
        name = _expansion_name(node)
        if name is None or depth >= MAX_EXPANSION_DEPTH or name in seen:
            return [Word(bash.word(node), line)]
        records = self.assignments.get(name, [])  # those read so far: the walk is in source order
        if not records:
            return [Word(bash.word(node), line, unresolved=True)]
        quoted_scalar = node.type == "string"
        out: list[Word] = []
        for record in records:
            for value in record.values:
                if record.array or _expansion_name(value) is not None:
                    expanded = self._expand(value, record.line_offset, depth + 1, seen | {name})
                else:
                    text = bash.word(value)
                    vline = value.start_point[0] + 1 + record.line_offset
                    pieces = [text] if quoted_scalar and text.strip() == text else text.split()
                    expanded = [Word(p, vline) for p in pieces]
                self.expanded += len(expanded)
                if self.expanded > MAX_EXPANDED:
                    raise ScriptTooLarge(f"variables expanding to more than {MAX_EXPANDED} words")
                out += [
                    Word(w.text, w.line, (*record.gates, *w.gates), w.via or name, w.unresolved)
                    for w in expanded
                ]
        return out
