"""What a run executes (DESIGN.md §1 "what a run executes"): the runner's launcher
`runners/launch_<machine name up to the first _>.sh` and the benchmark script it starts.

The benchmark script is found as the launcher finds it: the launcher, read at the same ref, is
parsed with a real bash parser (tree-sitter-bash, through `bot.model.bash` and within its bounds:
a launcher beyond them is unresolved) and its statements are followed with the run's
variables (`EXP_NAME`, `PRECISION`, `FRAMEWORK`, `SPEC_DECODING`, `SCENARIO_SUBDIR`,
`IS_MULTINODE`, …, as InferenceX's benchmark workflows set them). Only assignments, `[[ … ]]`
tests (`-f` asks the ref's file list), `if`, `&&`/`||` lists and `$( [[ … ]] && printf … )`
are followed; nothing is executed, every other command is taken to do nothing, loops and
functions are not entered. The first `bash <benchmarks/…>` (or `exec bash`, `$(bash …)`) is the
script the run executes; the `-f` tests before it are the names the launcher tried.
"""

from __future__ import annotations

import fnmatch
import itertools
import posixpath
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from bot.model import bash
from bot.model.bash import ScriptTooLarge

if TYPE_CHECKING:
    from collections.abc import Callable

    from tree_sitter import Node as TSNode

LAUNCHERS = "runners/"
BENCHMARKS = "benchmarks/"
_WORKSPACE = "\x00ws"  # $GITHUB_WORKSPACE: the repository root
_UNKNOWN = "\x00?"  # a value the launcher's own commands would make: not followed
_QUIET = frozenset({"true", ":", "export", "local", "set", "shift", "cd", "shopt", "unset", "trap"})
_MAX_STEPS = 20_000  # statements followed per launcher and run (a launcher has about 1,000)
_MAX_LINKS = 8  # symlinks followed from a launcher to the file it is


class Launch(NamedTuple):
    """What one launcher starts for one run: the benchmark script (None: none by name, e.g. a
    multi-node run that hands its recipe to srtctl), the names it tried in order, whether that
    script exists at the ref, and whether the launcher itself does."""

    launcher: str
    script: str | None
    tried: tuple[str, ...]
    exists: bool
    launcher_exists: bool = True
    unresolved: bool = False  # the launcher builds the name from something prbot does not follow
    fails: bool = False  # the launcher exits with a failure status before it starts a script


class RunVars(NamedTuple):
    """The variables InferenceX's workflow hands a launcher for a run (those that name scripts)."""

    model_prefix: str
    precision: str
    framework: str
    spec_decoding: str
    agentic: bool
    multinode: bool
    model: str = ""
    image: str = ""
    disagg: str = ""
    config_file: str = ""
    tp: str = ""

    def env(self, machine: str) -> dict[str, str]:
        return {
            "EXP_NAME": f"{self.model_prefix}_x",
            "MODEL_PREFIX": self.model_prefix,
            "PRECISION": self.precision,
            "FRAMEWORK": self.framework,
            "SPEC_DECODING": self.spec_decoding,
            "SCENARIO_SUBDIR": "agentic/" if self.agentic else "fixed_seq_len/",
            "IS_AGENTIC": "1" if self.agentic else "0",
            "IS_MULTINODE": "true" if self.multinode else "false",
            "MODEL": self.model,
            "IMAGE": self.image,
            "DISAGG": self.disagg,
            "CONFIG_FILE": self.config_file,
            "TP": self.tp,
            "RUNNER_NAME": machine,
            "GITHUB_WORKSPACE": _WORKSPACE,
        }


def launcher_path(machine: str) -> str:
    """The launcher InferenceX's workflow runs on a machine (`launch_${RUNNER_NAME%%_*}.sh`)."""
    return f"{LAUNCHERS}launch_{machine.split('_', 1)[0]}.sh"


def machines(runners: Any, runner: str | None) -> list[str]:
    """The machines a master-config runner label runs on (runners.yaml `labels:`)."""
    labels = runners.get("labels") if isinstance(runners, dict) else None
    listed = labels.get(runner) if isinstance(labels, dict) and isinstance(runner, str) else None
    return [m for m in listed if isinstance(m, str) and m] if isinstance(listed, list) else []


def launchers(runners: Any, runner: str | None, files: frozenset[str]) -> list[str]:
    """The distinct launchers a runner label's machines run, in order. A label runners.yaml does
    not list (its machines carry it in GitHub only) runs the launchers named after it
    (`h200-dgxc` → `launch_h200-dgxc*.sh`, `cluster:` dropped); with none of those its machines,
    and so its launchers, are not known (none)."""
    found = [launcher_path(m) for m in machines(runners, runner)]
    if not found and isinstance(runner, str) and runner:
        name = runner.removeprefix("cluster:")
        found = sorted(f for f in files if f.startswith(f"{LAUNCHERS}launch_{name}") and f.endswith(".sh"))
    return list(dict.fromkeys(found))


def parse(data: bytes) -> Node:
    """A shell file's syntax tree, parsed by `bot.model.bash` within its bounds (ScriptTooLarge
    beyond them), its nodes read once (cached by its bytes: runs share launchers)."""
    if len(data) > bash.MAX_BYTES:
        raise ScriptTooLarge(f"{len(data)} bytes (limit {bash.MAX_BYTES})")
    return _wrapped(bytes(data))


@lru_cache(maxsize=256)
def _wrapped(data: bytes) -> Node:
    return Node(bash.parse(data))


class Node:
    """A node of tree-sitter's tree whose parts are read from it once, when first asked for:
    tree-sitter makes a new Python object on every access, and a launcher's statements are walked
    once per distinct run (about 1,400 walks of 17 launchers in the largest PR's review). The same
    child is the same object every time it is asked for (`in` finds it)."""

    __slots__ = (
        "_children",
        "_fields",
        "_named",
        "_node",
        "_str",
        "is_named",
        "type",
    )

    def __init__(self, node: TSNode) -> None:
        self._node = node
        self.type: str = node.type
        self.is_named: bool = node.is_named
        self._children: list[Node] | None = None
        self._named: list[Node] | None = None
        self._fields: dict[str, list[Node]] = {}
        self._str: str | None = None

    @property
    def children(self) -> list[Node]:
        if self._children is None:
            self._children = [Node(child) for child in self._node.children]
            for i, child in enumerate(self._children):
                name = self._node.field_name_for_child(i)
                if name is not None:
                    self._fields.setdefault(name, []).append(child)
        return self._children

    @property
    def named_children(self) -> list[Node]:
        if self._named is None:
            self._named = [child for child in self.children if child.is_named]
        return self._named

    @property
    def string(self) -> str:
        """The node's source text."""
        if self._str is None:
            self._str = (self._node.text or b"").decode("utf-8", "replace")
        return self._str

    def children_by_field_name(self, name: str) -> list[Node]:
        if self._children is None:
            self.children  # noqa: B018 - reads the children and their field names
        return self._fields.get(name, [])

    def child_by_field_name(self, name: str) -> Node | None:
        found = self.children_by_field_name(name)
        return found[0] if found else None


class _Stop(Exception):
    """The launcher reached the benchmark script (or `exit`): nothing after it names one."""


class _Follow:
    """One launcher followed for one run. `read` keeps the run's variables the walk read before
    assigning them, with their values (None: unset), and `looked` the paths it tested, with the
    answers: the walk depends on nothing else of the run or of the ref's files."""

    def __init__(self, env: dict[str, str], files: frozenset[str]) -> None:
        self.start = env
        self.env = dict(env)
        self.read: dict[str, str | None] = {}
        self.assigned: set[str] = set()
        self.files = files
        self.looked: dict[str, bool] = {}
        self.tried: list[str] = []
        self.script: str | None = None
        self.fails = False
        self.absent: str | None = None  # the last benchmark script tested for, when it is missing
        self.steps = 0
        self.out: list[str] | None = None  # what printf/echo write inside `$( … )`

    # -- statements
    def block(self, nodes: list[Node]) -> bool:
        status = True
        for node in nodes:
            status = self.statement(node)
        return status

    def statement(self, node: Node) -> bool:
        self.steps += 1
        if self.steps > _MAX_STEPS:
            raise _Stop
        kind = node.type
        if kind in ("variable_assignment", "declaration_command"):
            return self.assign(node)
        if kind == "if_statement":
            return self.if_(node)
        if kind == "list":
            return self.list_(node)
        if kind == "test_command":
            return self.test(node.named_children[0]) if node.named_children else False
        if kind == "negated_command":
            return not self.block(node.named_children)
        if kind in ("compound_statement", "subshell", "program"):
            return self.block(node.named_children)
        if kind == "command":
            return self.command(node)
        if kind == "redirected_statement":
            body = node.child_by_field_name("body")
            return self.statement(body) if body is not None else True
        if kind == "pipeline" and self.out is not None:
            self.out.append(_UNKNOWN)  # what a pipeline prints is not known
        return True  # loops, functions, case, pipelines: not entered

    def assign(self, node: Node) -> bool:
        if node.type == "declaration_command":
            for child in node.named_children:
                if child.type == "variable_assignment":
                    self.assign(child)
            return True
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is not None and name.type == "variable_name":
            text = self.value(value) if value is not None else ""
            self.assigned.add(_text(name))
            self.env[_text(name)] = text
        return True

    def if_(self, node: Node) -> bool:
        conditions = [c for c in node.children_by_field_name("condition") if c.is_named]
        taken = self.block(conditions)
        body = [
            c
            for c in node.named_children
            if c.type not in ("elif_clause", "else_clause", "comment") and c not in conditions
        ]
        if taken:
            return self.block(body)
        for clause in node.named_children:
            if clause.type == "elif_clause":
                conds = [c for c in clause.children_by_field_name("condition") if c.is_named]
                if self.block(conds):
                    return self.block([c for c in clause.named_children if c not in conds])
            elif clause.type == "else_clause":
                return self.block(clause.named_children)
        return True

    def list_(self, node: Node) -> bool:
        parts = [c for c in node.children if c.type != "comment"]
        status = self.statement(parts[0])
        for op, right in zip(parts[1::2], parts[2::2], strict=False):
            if (op.type == "&&") == status:
                status = self.statement(right)
        return status

    def command(self, node: Node) -> bool:
        name_node = node.child_by_field_name("name")
        name = self.value(name_node) if name_node is not None else ""
        args = [c for c in node.children_by_field_name("argument")]
        words = [self.value(a) for a in args]
        if name == "exec" and words:
            name, words = words[0], words[1:]
        if name == "exit":
            # `[[ -f "$SCRIPT" ]] || { echo …; exit 1; }`: the launcher gives up on a script it
            # looked for; any other exit (a failed job, a missing variable) is not judged here.
            self.fails = self.script is None and self.absent is not None and words[:1] not in (["0"], [])
            raise _Stop
        if name in ("[", "test"):
            return _bracket(words[:-1] if name == "[" and words[-1:] == ["]"] else words, self.has)
        if name in ("printf", "echo"):
            if self.out is not None:
                text = words[0] if name == "printf" and words else " ".join(words)
                self.out.append(text if name == "printf" else text + "\n")
            return True
        if self.out is not None and name not in _QUIET:
            self.out.append(_UNKNOWN)  # what another program prints is not known
        # `bash <script>`, also as the command another one starts (`srun … bash "$SCRIPT"`,
        # `docker run --entrypoint=/bin/bash <image> <script>`).
        line = [name, *words]
        entrypoint = any(w.startswith("--entrypoint=") and w.endswith("bash") for w in words)
        for word, after in itertools.pairwise(line):
            path = _repo_path(after) if word in ("bash", "/bin/bash") or entrypoint else None
            if path is not None and path.startswith(BENCHMARKS) and path.endswith(".sh"):
                self.script = path
                raise _Stop
        return True

    # -- tests
    def test(self, node: Node) -> bool:
        kind = node.type
        if kind == "parenthesized_expression":
            return self.test(node.named_children[0])
        if kind == "unary_expression":
            op = node.children[0]
            operand = node.named_children[-1]
            if op.type == "!":
                return not self.test(operand)
            value = self.value(operand)
            flag = _text(op)
            if flag in ("-f", "-e", "-s", "-r"):
                path = _repo_path(value)
                if path is None:
                    return False
                found = self.has(path)
                if path.startswith(BENCHMARKS) and path.endswith(".sh"):
                    self.tried.append(path)
                    self.absent = None if found else path
                return found
            if flag == "-d":
                path = _repo_path(value)
                return path is not None and self.has(path.rstrip("/") + "/")
            if flag == "-n":
                return value != ""
            if flag == "-z":
                return value == ""
            return False
        if kind == "binary_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            op = node.child_by_field_name("operator")
            opname = _text(op) if op is not None else ""
            if opname == "&&":
                return self.test(left) and self.test(right)
            if opname == "||":
                return self.test(left) or self.test(right)
            if left is None or right is None:
                return False
            a, b = self.value(left), self.value(right)
            if _UNKNOWN in a or _UNKNOWN in b:
                return False
            if opname in ("==", "="):
                return _matches(a, b, right)
            if opname == "!=":
                return not _matches(a, b, right)
            if opname == "=~":
                try:
                    return re.search(b, a) is not None
                except re.error:
                    return False
            return False
        return self.value(node) != ""

    def has(self, path: str) -> bool:
        """Whether the ref has the file (a folder: `path/`), noting the answer."""
        if path not in self.looked:
            self.looked[path] = has(self.files, path)
        return self.looked[path]

    # -- words
    def lookup(self, name: str) -> str | None:
        """A variable's value (None: unset), noting a run's variable the walk reads."""
        if name not in self.assigned and name not in self.read:
            self.read[name] = self.start.get(name)
        return self.env.get(name)

    def value(self, node: Node) -> str:
        kind = node.type
        if kind in ("word", "number"):
            return bash.unescape(_text(node))
        if kind == "raw_string":
            return _text(node)[1:-1]
        if kind == "string_content":
            return bash.unescape(_text(node), bash.DOUBLE_QUOTED)
        if kind in ("extglob_pattern", "regex"):
            return _text(node)
        if kind in ("string", "concatenation"):
            parts = []
            for child in node.children:
                if child.type == '"':
                    continue
                if child.is_named:
                    parts.append(self.value(child))
                else:
                    parts.append(_text(child))
            return "".join(parts)
        if kind == "simple_expansion":
            return self.lookup(_text(node)[1:]) or ""
        if kind == "expansion":
            return self.expansion(node)
        if kind == "command_substitution":
            return self.substitution(node)
        if kind == "command_name":
            return self.value(node.named_children[0]) if node.named_children else ""
        return _UNKNOWN

    def expansion(self, node: Node) -> str:
        named = node.named_children
        if not named or named[0].type != "variable_name":
            return _UNKNOWN
        value = self.lookup(_text(named[0])) or ""
        ops = [c for c in node.children if not c.is_named and c.type not in ("${", "}")]
        if not ops:
            return value if len(named) == 1 else _UNKNOWN
        op = ops[0].type
        arg = "".join(self.value(c) for c in named[1:]) if len(named) > 1 else ""
        if op in (":-", "-"):
            return value if value or (op == "-" and self.lookup(_text(named[0])) is not None) else arg
        if op in ("%%", "%", "##", "#"):
            return _strip(value, arg, op)
        return _UNKNOWN

    def substitution(self, node: Node) -> str:
        saved, self.out = self.out, []
        try:
            for child in node.named_children:
                self.statement(child)
            return "".join(self.out).rstrip("\n")
        except _Stop:
            raise
        finally:
            self.out = saved


def has(files: frozenset[str], path: str) -> bool:
    """Whether `files` holds the file, or for `path/` a file in that folder."""
    return path in (_folders(files) if path.endswith("/") else files)


@lru_cache(maxsize=8)
def _folders(files: frozenset[str]) -> frozenset[str]:
    """Every folder that holds one of `files`, as `path/`."""
    return frozenset(f[: i + 1] for f in files for i, ch in enumerate(f) if ch == "/")


def _bracket(words: list[str], has: Callable[[str], bool]) -> bool:
    """`[ … ]` / `test …` of one flag or one comparison (anything else: false)."""
    if any(_UNKNOWN in w for w in words):
        return False
    if len(words) == 1:
        return words[0] != ""
    if len(words) == 2:
        flag, value = words
        if flag == "-n":
            return value != ""
        if flag == "-z":
            return value == ""
        if flag in ("-f", "-e"):
            path = _repo_path(value)
            return path is not None and has(path)
        return False
    if len(words) == 3 and words[1] in ("=", "==", "!="):
        return (words[0] == words[2]) == (words[1] != "!=")
    return False


def _text(node: Node) -> str:
    return node.string


def _matches(value: str, pattern: str, node: Node) -> bool:
    """`[[ a == b ]]`: an unquoted right side is a glob pattern."""
    if node.type in ("string", "raw_string") or not any(ch in pattern for ch in "*?["):
        return value == pattern
    return fnmatch.fnmatchcase(value, pattern)


def _strip(value: str, pattern: str, op: str) -> str:
    """`${v%%p}`, `${v%p}`, `${v##p}`, `${v#p}` with a glob `p`."""
    spans = range(len(value) + 1)
    if op in ("%%", "%"):
        order = spans if op == "%%" else reversed(spans)
        for i in order:
            if fnmatch.fnmatchcase(value[i:], pattern):
                return value[:i]
        return value
    order = reversed(spans) if op == "##" else spans
    for i in order:
        if fnmatch.fnmatchcase(value[:i], pattern):
            return value[i:]
    return value


def _repo_path(value: str) -> str | None:
    """A path the launcher names, from the repository root (None: outside it, or unknown)."""
    if _UNKNOWN in value:
        return None
    if value.startswith(_WORKSPACE):
        value = value[len(_WORKSPACE) :]
    elif value.startswith("/"):
        return None
    path = posixpath.normpath(value.lstrip("/"))
    return None if path.startswith("..") or path == "." else path


def link_target(path: str, data: bytes, files: frozenset[str]) -> str | None:
    """The file a symlinked launcher is (`launch_b200-dgxc-slurm.sh` → `launch_b200-dgxc.sh`), or
    None for a launcher that is a file. A source gives a symlink's bytes as git stores them: its
    target, relative to its folder, on one line without a newline. Bytes that are one such name
    of another file under `runners/` or `benchmarks/` are taken as that (as a script, such a file
    would only run a command of that name from PATH, which holds no repository folder)."""
    if not data or len(data) > 4096 or b"\n" in data or b"\0" in data or data.startswith(b"/"):
        return None
    try:
        target = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if target.split() != [target]:
        return None
    found = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    return found if found != path and found in files else None


def resolved(launcher: str, read: Callable[[str], bytes | None], files: frozenset[str]) -> bytes | None:
    """A launcher's bytes, through its symlinks (at most `_MAX_LINKS`; a longer chain, as a loop,
    is missing, as bash finds it)."""
    return resolve(launcher, read, files)[1]


def resolve(
    launcher: str, read: Callable[[str], bytes | None], files: frozenset[str]
) -> tuple[str, bytes | None]:
    """The file a launcher is, through its symlinks, and its bytes (None: missing)."""
    path, data = launcher, read(launcher)
    for _ in range(_MAX_LINKS + 1):
        target = link_target(path, data, files) if data is not None else None
        if target is None:
            return path, data
        path, data = target, read(target)
    return path, None


def follow(launcher: str, data: bytes | None, env: dict[str, str], files: frozenset[str]) -> Launch:
    """The benchmark script a launcher (its bytes; None: missing) starts for a run's variables,
    `files` being the ref's files under `benchmarks/`."""
    return _walk(launcher, data, env, files)[0]


def _walk(
    launcher: str, data: bytes | None, env: dict[str, str], files: frozenset[str]
) -> tuple[Launch, _Follow]:
    """`follow`, and the walk (what it read and tested)."""
    walk = _Follow(env, files)
    if data is None:
        return Launch(launcher, None, (), False, launcher_exists=False), walk
    try:
        walk.block(parse(data).named_children)
    except _Stop:
        pass
    except (RecursionError, ScriptTooLarge):  # a launcher beyond the bounds of `bot.model.bash`
        return Launch(launcher, None, tuple(walk.tried), False, unresolved=True), walk
    script = walk.script
    tried = tuple(dict.fromkeys([*walk.tried, *([script] if script else [])]))
    return Launch(launcher, script, tried, script is not None and script in files, fails=walk.fails), walk


class Followed:
    """The launchers followed in one review, for both refs. A walk depends only on the launcher's
    bytes, the run's variables it read before assigning them and the answers of the file tests it
    made, so a run whose variables and files give the same answers starts what that walk found: a
    launcher is walked once per distinct set of what it reads and tests, for both refs (the runs
    of a launcher mostly differ only in what it reads after naming the script: about 1,400
    distinct runs of 17 launchers in the largest PR, at two refs)."""

    def __init__(self) -> None:
        # launcher bytes → the names a walk read → their values → (the tests it made, its launch)
        self._walks: dict[bytes, dict[tuple[str, ...], dict[tuple[str | None, ...], list[_Seen]]]] = {}

    def follow(self, launcher: str, data: bytes | None, env: dict[str, str], files: frozenset[str]) -> Launch:
        if data is None:
            return follow(launcher, data, env, files)
        walks = self._walks.setdefault(bytes(data), {})
        for names, seen in walks.items():
            for looked, launch in seen.get(tuple(env.get(name) for name in names), ()):
                if all(has(files, path) == answer for path, answer in looked.items()):
                    exists = launch.script is not None and launch.script in files
                    return launch._replace(launcher=launcher, exists=exists)
        launch, walk = _walk(launcher, data, env, files)
        values = walks.setdefault(tuple(walk.read), {}).setdefault(tuple(walk.read.values()), [])
        values.append(_Seen(walk.looked, launch))
        return launch


class _Seen(NamedTuple):
    looked: dict[str, bool]
    launch: Launch
