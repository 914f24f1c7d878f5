"""The shapes InferenceX's generator accepts: master-config entries, runners.yaml and changelog entries.

InferenceX validates its inputs with strict models before it generates a sweep (its
`utils/matrix_logic/validation.py`; upstream commit 843c6254f): a field it does not define, a
missing required field, a value of the wrong type or a broken cross-field rule refuses the whole
PR. This module states the same contract as data — one `Shape` per kind of mapping, one `Spec` per
field, plus the cross-field `rules` of each shape — and walks a parsed document (the `LineDict` /
`LineList` objects `bot.yamlsafe` builds) against it, returning a `Problem` per violation, at the
field's line. Types are read as upstream reads them: `"8"` and `8.0` are whole numbers, `"yes"` and
`1` are booleans, but a number is never a string; `pp`, `dcp-size` and `pcp-size` must be written as
real whole numbers. The strings taken are exactly pydantic 2's (lax mode): `"false "` and `"８"` are
refused, as it refuses them (checked against pydantic 2.14 on some 90,000 strings; its few odder
spellings such as `"0-5"` for -5 are refused here).

The newer `inferencex-e2e/` layout adds fields its own models accept (`srt-recipe`,
`srt-recipe-dir`, `eval-srt-recipe`, an aggregated `worker` with `num-nodes`, `power`,
`require-power`, `trace-source`; `clusters:` in runners.yaml, whose records have more fields than
the two read here). They are accepted in either layout: no PR of the older layout uses them.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

from bot.model.problems import Problem
from bot.yamlsafe import LineDict, LineList

CLUSTER_PREFIX = "cluster:"
_TRUE_WORDS = {"1", "on", "t", "true", "y", "yes"}
_FALSE_WORDS = {"0", "off", "f", "false", "n", "no"}
_VALUE_SHOWN = 60  # characters of a value a message quotes
#: What pydantic 2 (Rust's `str::trim`) strips around a number: Unicode whitespace, which is
#: Python's `str.isspace` without the four separators U+001C to U+001F.
_WHITESPACE = "".join(c for c in map(chr, range(0x3001)) if c.isspace() and c not in "\x1c\x1d\x1e\x1f")
#: pydantic also takes a few odder spellings (`0-5` is -5), which are refused here.
_WHOLE_TEXT = re.compile(r"(?P<sign>[+-]?)(?P<digits>[0-9](?:_?[0-9])*)(?:\.0+)?", re.ASCII)
_MAX_DIGITS = 4_300  # pydantic refuses an integer of more digits (`int_parsing_size`)
_MAX_TEXT = 10_000  # a longer string is not read at all (it could only be refused)
_FLOAT_INT_LIMIT = 2**63  # pydantic refuses a float outside 64 bits as an integer


# ---------------------------------------------------------------- value kinds


class Kind(NamedTuple):
    """A kind of value: `accepts` reads it as upstream's lax parser does and returns the parsed
    value, or `_NO` when the value is not of this kind. `name` is the `expected` parameter of the
    message (a word the catalog translates)."""

    name: str
    accepts: Callable[[Any], Any]


class _No:
    """Marks a value a Kind does not accept (None is a legitimate parsed value)."""


_NO = _No()


def _whole(value: Any) -> Any:
    """A whole number as pydantic 2's lax mode reads one: an int (a bool counts), an integral float
    within 64 bits, or a string of ASCII digits (a sign, single `_` between digits, a `.0…` tail,
    whitespace around it; no other script's digits such as `８`)."""
    if type(value) is int:
        return value
    if isinstance(value, int):  # a bool
        return int(value)
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < _FLOAT_INT_LIMIT else _NO
    if isinstance(value, str) and len(value) <= _MAX_TEXT:
        written = _WHOLE_TEXT.fullmatch(value.strip(_WHITESPACE))
        if written is None:
            return _NO
        digits = written["digits"].replace("_", "").lstrip("0") or "0"
        return int(written["sign"] + digits) if len(digits) <= _MAX_DIGITS else _NO
    return _NO


def _strict_positive(value: Any) -> Any:
    """Written as a whole number above zero (no string, no bool, no float)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else _NO


def _positive(value: Any) -> Any:
    number = _whole(value)
    return number if number is not _NO and number > 0 else _NO


def _boolean(value: Any) -> Any:
    """A boolean as pydantic 2's lax mode reads one: a bool, 0 or 1, or one of its words in any
    ASCII case, with nothing around it (`"false "` is refused)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.isascii():
        word = value.lower()
        return True if word in _TRUE_WORDS else False if word in _FALSE_WORDS else _NO
    return _NO


def _text(value: Any) -> Any:
    return value if isinstance(value, str) else _NO


def _name(value: Any) -> Any:
    """A non-empty string."""
    return value if isinstance(value, str) and value else _NO


def _version(value: Any) -> Any:
    """A component's own version: non-empty, and not the image it ships in (`image:…`)."""
    return value if isinstance(value, str) and value and not value.startswith("image:") else _NO


def _share(value: Any) -> Any:
    """A fraction in (0, 1]."""
    if isinstance(value, int) and not 0 < value <= 1:
        return _NO  # a whole number out of range, however long (`float` refuses one of over 308 digits)
    if isinstance(value, bool | int | float):
        number = float(value)
    elif isinstance(value, str) and len(value) <= 64:
        try:
            number = float(value.strip())
        except ValueError:
            return _NO
    else:
        return _NO
    return number if 0 < number <= 1 else _NO


def _one_of(*allowed: Any) -> Callable[[Any], Any]:
    def accepts(value: Any) -> Any:
        for choice in allowed:  # `True == 1` is upstream's reading too; a string is only itself
            same_kind = type(value) is type(choice) or (isinstance(choice, bool) and type(value) is int)
            if same_kind and value == choice:
                return choice
        return _NO

    return accepts


def _list_of(item: Kind, *, non_empty: bool = False) -> Callable[[Any], Any]:
    def accepts(value: Any) -> Any:
        if not isinstance(value, list) or (non_empty and not value):
            return _NO
        parsed = [item.accepts(v) for v in value]
        return _NO if any(p is _NO for p in parsed) else parsed

    return accepts


WHOLE = Kind("whole", _whole)
STRICT_POSITIVE = Kind("strict-positive", _strict_positive)
POSITIVE = Kind("positive", _positive)
BOOL = Kind("bool", _boolean)
TEXT = Kind("text", _text)
NAME = Kind("name", _name)
VERSION = Kind("version", _version)
SHARE = Kind("share", _share)
SPEC_DECODING = Kind("spec-decoding", _one_of("mtp", "draft_model", "none"))
KV_OFFLOADING = Kind("kv-offloading", _one_of("none", "dram"))
SCENARIO = Kind("scenario", _one_of("fixed-seq-len", "agentic-coding"))
SCENARIO_TYPES = Kind("scenario-types", _list_of(SCENARIO, non_empty=True))
WHOLE_LIST = Kind("whole-list", _list_of(WHOLE))
TEXT_LIST = Kind("text-list", _list_of(TEXT))
NON_EMPTY_TEXT_LIST = Kind("non-empty-text-list", _list_of(TEXT, non_empty=True))
FALSE = Kind("false", _one_of(False))
TRUE = Kind("true", _one_of(True))


# ---------------------------------------------------------------- shapes


class Spec(NamedTuple):
    """One field: its kind (a `Kind`, a nested `Shape`, or a list of a `Shape`), whether it must be
    present, and whether an explicit null is accepted (upstream's optional fields)."""

    kind: Kind | Shape | ListOf
    required: bool = False
    nullable: bool = False
    message: str | None = None  # a message of its own for a wrong value, instead of schema-wrong-type


class ListOf(NamedTuple):
    """A list whose items all have one shape."""

    shape: Shape


# A cross-field rule: (the mapping, where it is, the report) → None.
Rule = Callable[["Node", "Report"], None]


@dataclass(frozen=True)
class Shape:
    """A mapping: its fields, and the rules between them. `open` shapes accept other fields too."""

    fields: dict[str, Spec]
    rules: tuple[Rule, ...] = ()
    open: bool = False

    @cached_property
    def required(self) -> tuple[str, ...]:
        return tuple(name for name, spec in self.fields.items() if spec.required)

    @cached_property
    def plain(self) -> dict[str, Callable[[Any], Any]]:
        """The `accepts` of each field whose kind is a plain `Kind` (not a nested shape)."""
        return {name: spec.kind.accepts for name, spec in self.fields.items() if type(spec.kind) is Kind}


def need(kind: Kind | Shape | ListOf, **kw: Any) -> Spec:
    return Spec(kind, required=True, **kw)


def may(kind: Kind | Shape | ListOf, **kw: Any) -> Spec:
    """Optional; an explicit null means "not set"."""
    return Spec(kind, nullable=True, **kw)


def defaulted(kind: Kind | Shape | ListOf, **kw: Any) -> Spec:
    """Optional, with a default: an explicit null is a wrong value."""
    return Spec(kind, **kw)


# ---------------------------------------------------------------- walking


class Node:
    """A mapping being checked: its values, where it is, and its parsed field values."""

    __slots__ = ("children", "line", "parsed", "value", "where")

    def __init__(self, value: dict, where: str, line: int | None) -> None:
        self.value, self.where, self.line = value, where, line
        self.parsed: dict[str, Any] = {}
        self.children: dict[str, Any] = {}  # nested Node or list of Node, by field

    def line_of(self, name: str) -> int | None:
        own = self.value.line_of(name) if isinstance(self.value, LineDict) else None
        return own or self.line

    def has(self, name: str) -> bool:
        return self.parsed.get(name) is not None

    def nodes(self, name: str) -> list[Node]:
        child = self.children.get(name)
        return child if isinstance(child, list) else [child] if isinstance(child, Node) else []


class Report:
    """Collects the problems of one document (its file and, for a master config, its key)."""

    __slots__ = ("base", "file", "places", "problems")

    def __init__(self, file: str, base: dict[str, Any]) -> None:
        self.file, self.base = file, base
        self.problems: list[Problem] = []
        # (line, field) pairs each problem is about: its own line and that of the mapping holding it.
        self.places: set[tuple[int | None, str]] = set()

    def add(
        self,
        message_id: str,
        line: int | None,
        field_name: str,
        where: str,
        at: int | None = None,
        **params: Any,
    ) -> None:
        """One problem about `field_name` at `line`; `at` is the line of the mapping it belongs to."""
        params = {**self.base, "field": field_name, "where": where, **params}
        self.problems.append(Problem(message_id, self.file, line, params))
        self.places |= {(line, field_name), (at or line, field_name)}


class _Repr(reprlib.Repr):
    """reprlib's bounded repr, which also quotes an integer too long for Python's decimal
    conversion (over 4,300 digits) instead of raising: by its first and last hex digits."""

    # The loader's line-aware list and mapping are quoted item by item, as list and dict are
    # (reprlib looks its methods up by type name).
    repr_LineList = reprlib.Repr.repr_list
    repr_LineDict = reprlib.Repr.repr_dict

    def repr_int(self, x: int, level: int) -> str:
        try:
            return super().repr_int(x, level)
        except ValueError:
            digits = hex(x)
            return f"{digits[:10]}…{digits[-4:]}"


_REPR = _Repr()  # attributes, not keywords: Python 3.11 has no keywords here
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict = 2, 4, 3
_REPR.maxstring = _REPR.maxother = _VALUE_SHOWN


def text(value: Any) -> str:
    """`str(value)`, except that a value holding an integer too long for Python's decimal text (over
    4,300 digits) gets `shown`'s bounded quote instead of raising."""
    try:
        return str(value)
    except ValueError:
        return shown(value)


def shown(value: Any) -> str:
    """A short quote of a value; a huge one is never rendered whole, a huge integer never raises."""
    text = _REPR.repr(value)
    return text if len(text) <= _VALUE_SHOWN else text[: _VALUE_SHOWN - 1] + "…"


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def walk(shape: Shape, value: dict, where: str, line: int | None, report: Report) -> Node:
    """Check one mapping against its shape: its fields in the order written (each one known, and
    of its kind), then the missing required ones, then, when all of that is sound, its rules."""
    node = Node(value, where, line)
    before = len(report.problems)
    fields, plain, parsed = shape.fields, shape.plain, node.parsed
    for name, raw in value.items():
        accepts = plain.get(name)
        if accepts is not None and raw is not None:  # the common case first: a sound plain value
            accepted = accepts(raw)
            if accepted is not _NO:
                parsed[name] = accepted
                continue
        spec = fields.get(name)
        if spec is None:
            if not shape.open:
                report.add("schema-unknown-field", node.line_of(name), str(name), where)
            continue
        _field(node, name, spec, report)
    for name in shape.required:
        if name not in value:
            report.add("schema-missing-field", line, name, where)
    if len(report.problems) == before:
        for rule in shape.rules:
            rule(node, report)
    return node


def _field(node: Node, name: str, spec: Spec, report: Report) -> None:
    raw = node.value[name]
    line, where = node.line_of(name), _join(node.where, name)
    if raw is None:
        if not spec.nullable:
            report.add("schema-null", line, name, node.where)
        return
    kind = spec.kind
    if isinstance(kind, Shape):
        if isinstance(raw, dict):
            node.children[name] = walk(kind, raw, where, line, report)
            node.parsed[name] = raw
        else:
            report.add("schema-wrong-type", line, name, node.where, value=shown(raw), expected="mapping")
        return
    if isinstance(kind, ListOf):
        if not isinstance(raw, list):
            report.add("schema-wrong-type", line, name, node.where, value=shown(raw), expected="list")
            return
        items = []
        for index, item in enumerate(raw):
            item_line = (raw.line_of(index) if isinstance(raw, LineList) else None) or line
            item_where = f"{where}[{index}]"
            if isinstance(item, dict):
                items.append(walk(kind.shape, item, item_where, item_line, report))
            else:
                report.add(
                    "schema-wrong-type", item_line, name, item_where, value=shown(item), expected="mapping"
                )
        node.children[name] = items
        node.parsed[name] = raw
        return
    parsed = kind.accepts(raw)
    if parsed is _NO:
        message = spec.message or "schema-wrong-type"
        report.add(message, line, name, node.where, value=shown(raw), expected=kind.name)
        return
    node.parsed[name] = parsed


# ---------------------------------------------------------------- cross-field rules


def _dcp_divides_tp(node: Node, report: Report) -> None:
    tp, dcp = node.parsed.get("tp"), node.parsed.get("dcp-size", 1)
    if tp is not None and tp % dcp != 0:
        report.add("schema-dcp-not-divisor", node.line_of("dcp-size"), "dcp-size", node.where, tp=tp, dcp=dcp)


def _concurrencies(node: Node, report: Report) -> None:
    start, end, values = (node.parsed.get(n) for n in ("conc-start", "conc-end", "conc-list"))
    has_range, has_list = start is not None and end is not None, bool(values)
    if has_range and has_list:
        report.add("schema-conc-both", node.line_of("conc-list"), "conc-list", node.where, node.line)
    elif not has_range and not has_list:
        report.add("schema-conc-none", node.line_of("conc-list"), "conc-list", node.where, node.line)
    elif has_range and (start <= 0 or end <= 0):
        line = node.line_of("conc-start")
        report.add("schema-conc-not-positive", line, "conc-start", node.where, node.line)
    elif has_range and start > end:
        line = node.line_of("conc-start")
        report.add("schema-conc-order", line, "conc-start", node.where, node.line, start=start, end=end)
    elif has_list and not all(v > 0 for v in values):
        line = node.line_of("conc-list")
        report.add("schema-conc-not-positive", line, "conc-list", node.where, node.line)


def _hardware_on_both(node: Node, report: Report) -> None:
    prefill, decode = node.children.get("prefill"), node.children.get("decode")
    if not (isinstance(prefill, Node) and isinstance(decode, Node)):
        return
    with_hardware = [child.parsed.get("hardware") is not None for child in (prefill, decode)]
    if with_hardware[0] != with_hardware[1]:
        lonely, child = ("prefill", prefill) if with_hardware[0] else ("decode", decode)
        report.add(
            "schema-hardware-one-side", child.line_of("hardware"), "hardware", child.where, role=lonely
        )


def _kv_offload_backend(node: Node, report: Report) -> None:
    mode, backend = node.parsed.get("kv-offloading"), node.has("kv-offload-backend")
    if backend and mode != "dram":
        line = node.line_of("kv-offload-backend")
        report.add("schema-backend-without-dram", line, "kv-offload-backend", node.where, mode=mode or "")
    elif mode == "dram" and not backend:
        report.add("schema-dram-without-backend", node.line_of("kv-offloading"), "kv-offloading", node.where)


def _agentic_topology(node: Node, report: Report) -> None:
    """An agentic point is either single-node (`tp`, with `kv-offloading`) or has both workers
    (the newer layout's aggregated `worker` counts as both)."""
    single = node.has("tp")
    workers = [r for r in ("prefill", "decode", "worker") if node.has(r)]
    complete = "worker" in workers or len(workers) == 2
    if (single and workers) or (not single and not complete):
        report.add("schema-agentic-topology", node.line, "tp", node.where)
        return
    if single:
        if not node.has("kv-offloading"):
            report.add("schema-missing-field", node.line, "kv-offloading", node.where)
        _dcp_divides_tp(node, report)
        return
    for name in ("pp", "dcp-size", "pcp-size"):
        if name in node.value:
            report.add("schema-worker-field-on-point", node.line_of(name), name, node.where)
    _hardware_on_both(node, report)


def _multinode_workers(node: Node, report: Report) -> None:
    """A multinode fixed-seq-len point names both workers (or, newer layout, one aggregated one)."""
    if node.has("worker"):
        return
    for role in ("prefill", "decode"):
        if role not in node.value:
            report.add("schema-missing-field", node.line, role, node.where)
    _hardware_on_both(node, report)


def _dram_needs_utilization(node: Node, report: Report) -> None:
    if node.has("dram-utilization"):
        return
    for point in node.nodes("search-space"):
        if point.parsed.get("kv-offloading") == "dram":
            line = point.line_of("kv-offloading")
            report.add("schema-dram-no-utilization", line, "dram-utilization", node.where)
            return


def _some_scenario(node: Node, report: Report) -> None:
    if not node.value.get("fixed-seq-len") and not node.value.get("agentic-coding"):
        report.add("schema-no-scenario", node.line, "scenarios", node.where)


def _points(entry: Node) -> Iterator[Node]:
    for scenarios in entry.nodes("scenarios"):
        for scenario in ("fixed-seq-len", "agentic-coding"):
            for group in scenarios.nodes(scenario):
                yield from group.nodes("search-space")


def _agentic_runner(entry: Node, report: Report) -> None:
    runner = entry.parsed.get("runner", "")
    scenarios = entry.value.get("scenarios")
    agentic = isinstance(scenarios, dict) and scenarios.get("agentic-coding")
    if agentic and not runner.startswith(CLUSTER_PREFIX):
        report.add("schema-agentic-runner", entry.line_of("runner"), "runner", "", runner=runner)


def _component_scope(entry: Node, report: Report) -> None:
    points = list(_points(entry))
    for name in ("router", "kv-p2p-transfer"):
        if entry.has(name):
            for point in points:
                if point.has(name):
                    report.add("schema-scope-both", point.line_of(name), name, point.where)
                    break
    if not entry.parsed.get("multinode"):
        for point in points:
            if point.has("kv-p2p-transfer"):
                line = point.line_of("kv-p2p-transfer")
                report.add("schema-transfer-single-node", line, "kv-p2p-transfer", point.where)
                break
    everywhere = bool(points) and all(point.has("kv-p2p-transfer") for point in points)
    if entry.parsed.get("disagg") and not entry.has("kv-p2p-transfer") and not everywhere:
        report.add("schema-disagg-no-transfer", entry.line_of("disagg"), "kv-p2p-transfer", "")


# ---------------------------------------------------------------- the contract


COMPONENT = Shape({"name": need(NAME), "version": need(VERSION)})
BACKEND = Shape({"name": need(NAME), "version": may(VERSION)})
_PARALLEL = {
    "pp": defaulted(STRICT_POSITIVE),
    "dcp-size": defaulted(STRICT_POSITIVE),
    "pcp-size": defaulted(STRICT_POSITIVE),
}
WORKER = Shape(
    {
        "num-worker": need(WHOLE),
        "tp": need(WHOLE),
        **_PARALLEL,
        "ep": need(WHOLE),
        "dp-attn": need(BOOL),
        "hardware": may(NAME),
        "additional-settings": may(TEXT_LIST),
    },
    rules=(_dcp_divides_tp,),
)
_CONCURRENCY = {"conc-start": may(WHOLE), "conc-end": may(WHOLE), "conc-list": may(WHOLE_LIST)}
_RECIPE = {"srt-recipe": may(TEXT)}  # newer layout
_MULTINODE_EXTRAS = {  # newer layout: recipes, an aggregated worker, power measurement
    **_RECIPE,
    "eval-srt-recipe": may(TEXT),
    "worker": may(WORKER),
    "num-nodes": may(WHOLE),
    "power": may(BOOL),
    "require-power": may(BOOL),
}
SINGLE_POINT = Shape(
    {
        "tp": need(WHOLE),
        **_PARALLEL,
        "ep": may(WHOLE),
        "spec-decoding": defaulted(SPEC_DECODING),
        "dp-attn": may(BOOL),
        "router": may(COMPONENT),
        **_CONCURRENCY,
        **_RECIPE,
    },
    rules=(_concurrencies, _dcp_divides_tp),
)
MULTINODE_POINT = Shape(
    {
        "spec-decoding": defaulted(SPEC_DECODING),
        "prefill": defaulted(WORKER),  # required, unless the newer layout's `worker` stands for both
        "decode": defaulted(WORKER),
        "router": may(COMPONENT),
        "kv-p2p-transfer": may(NAME),
        **_CONCURRENCY,
        **_MULTINODE_EXTRAS,
    },
    rules=(_concurrencies, _multinode_workers),
)
AGENTIC_POINT = Shape(
    {
        "tp": may(WHOLE),
        **_PARALLEL,
        "ep": may(WHOLE),
        "dp-attn": may(BOOL),
        "spec-decoding": defaulted(SPEC_DECODING),
        "prefill": may(WORKER),
        "decode": may(WORKER),
        "kv-offloading": may(KV_OFFLOADING),
        "kv-offload-backend": may(BACKEND),
        "router": may(COMPONENT),
        "kv-p2p-transfer": may(NAME),
        **_CONCURRENCY,
        **_MULTINODE_EXTRAS,
    },
    rules=(_concurrencies, _kv_offload_backend, _agentic_topology),
)
SINGLE_GROUP = Shape(
    {"isl": need(WHOLE), "osl": need(WHOLE), "search-space": need(ListOf(SINGLE_POINT))},
)
MULTINODE_GROUP = Shape(
    {"isl": need(WHOLE), "osl": need(WHOLE), "search-space": need(ListOf(MULTINODE_POINT))},
)
AGENTIC_GROUP = Shape(
    {
        "search-space": need(ListOf(AGENTIC_POINT)),
        "dram-utilization": may(SHARE),
        "trace-source": may(TEXT),  # newer layout
    },
    rules=(_dram_needs_utilization,),
)


def _scenarios(group: Shape) -> Shape:
    return Shape(
        {"fixed-seq-len": may(ListOf(group)), "agentic-coding": may(ListOf(AGENTIC_GROUP))},
        rules=(_some_scenario,),
    )


_ENTRY = {
    "image": need(TEXT),
    "model": need(TEXT),
    "model-prefix": need(TEXT),
    "precision": need(TEXT),
    "framework": need(TEXT),
    "runner": need(TEXT),
    "router": may(COMPONENT),
    "srt-recipe-dir": may(TEXT),  # newer layout
}
SINGLE_NODE_ENTRY = Shape(
    {
        **_ENTRY,
        "multinode": need(FALSE),
        "disagg": defaulted(FALSE, message="schema-disagg-single-node"),
        "scenarios": need(_scenarios(SINGLE_GROUP)),
    },
    rules=(_agentic_runner, _component_scope),
)
MULTINODE_ENTRY = Shape(
    {
        **_ENTRY,
        "multinode": need(TRUE),
        "disagg": defaulted(BOOL),
        "kv-p2p-transfer": may(NAME),
        "scenarios": need(_scenarios(MULTINODE_GROUP)),
    },
    rules=(_agentic_runner, _component_scope),
)


def _append_only_alone(node: Node, report: Report) -> None:
    """An append-only entry only adds throughput points: never with an eval field."""
    if not node.parsed.get("append-only"):
        return
    for name in ("evals-only", "all-evals", "eval-min-prefill-ep"):
        if node.parsed.get(name) if name != "eval-min-prefill-ep" else node.has(name):
            report.add("changelog-append-only-evals", node.line_of(name), name, node.where)


CHANGELOG_ENTRY = Shape(
    {
        "config-keys": need(NON_EMPTY_TEXT_LIST),
        "description": need(NON_EMPTY_TEXT_LIST),
        "pr-link": need(TEXT),
        "evals-only": defaulted(BOOL),
        "all-evals": defaulted(BOOL),
        "append-only": defaulted(BOOL),
        "eval-min-prefill-ep": may(POSITIVE),
        "scenario-type": may(SCENARIO_TYPES),
    },
    rules=(_append_only_alone,),
)

HARDWARE = Shape({"available-cpu-dram-mib": need(POSITIVE), "gpus-per-node": need(POSITIVE)})
# Newer layout: a cluster record holds much more (scheduler, volumes, …); only the two fields the
# sweep reads are held to a type here.
CLUSTER = Shape({"gpus-per-node": need(POSITIVE), "available-cpu-dram-mib": may(POSITIVE)}, open=True)


# ---------------------------------------------------------------- entry points


def master_entry(key: str, raw: Any, file: str, line: int | None) -> list[Problem]:
    """What the generator refuses in one master-config entry (a non-mapping entry is the master
    config reader's to report)."""
    return _entry_report(key, raw, file, line).problems


def _entry_report(key: str, raw: Any, file: str, line: int | None) -> Report:
    report = Report(file, {"key": key})
    if isinstance(raw, dict):
        multinode = raw.get("multinode", False)
        walk(MULTINODE_ENTRY if multinode else SINGLE_NODE_ENTRY, raw, "", line, report)
    return report


def changelog_entry(raw: Any, file: str, line: int | None, index: int) -> list[Problem]:
    """What the changelog entry schema refuses (entry `index`, 0-based, starting on `line`).
    These keep the `changelog-*` message ids the changelog check has always used."""
    if not isinstance(raw, dict):
        return [Problem("changelog-entry-not-mapping", file, line, {"index": index + 1})]
    report = Report(file, {"index": index + 1})
    walk(CHANGELOG_ENTRY, raw, "", line, report)
    out = []
    for p in report.problems:
        if p.message_id == "schema-unknown-field":
            p = Problem("changelog-unknown-field", p.file, p.line, p.params)
        elif not p.message_id.startswith("changelog-"):
            params = {**p.params, "expected": _CHANGELOG_EXPECTED[p.params["field"]]}
            p = Problem("changelog-field-invalid", p.file, p.line, params)
        out.append(p)
    return out


# The `expected` word of `changelog-field-invalid`, by field.
_CHANGELOG_EXPECTED = {
    "config-keys": "list",
    "description": "list",
    "pr-link": "url",
    "scenario-type": "scenarios",
    "evals-only": "bool",
    "all-evals": "bool",
    "append-only": "bool",
    "eval-min-prefill-ep": "positive",
}


def runners(raw: Any, file: str) -> list[Problem]:
    """What the generator refuses in runners.yaml: `labels` maps each label to a non-empty list of
    runner names; `hardware` records have exactly the two positive fields; `clusters` (newer
    layout) records have a positive `gpus-per-node`."""
    report = Report(file, {"key": None})
    if not isinstance(raw, dict):
        report.add("schema-wrong-type", 1, "runners.yaml", "", value=shown(raw), expected="mapping")
        return report.problems
    node = Node(raw, "", 1)
    for name in raw:
        if name not in ("labels", "hardware", "clusters"):
            report.add("schema-unknown-field", node.line_of(name), str(name), "")
    labels = raw.get("labels")
    if not isinstance(labels, dict):
        where = node.line_of("labels") if "labels" in raw else 1
        report.add("schema-runner-labels", where, "labels", "")
    else:
        for label, machines in labels.items():
            if not (isinstance(machines, list) and machines and all(isinstance(m, str) for m in machines)):
                line = labels.line_of(label) if isinstance(labels, LineDict) else None
                report.add("schema-runner-label-list", line, str(label), "labels", value=shown(machines))
    for table, shape in (("hardware", HARDWARE), ("clusters", CLUSTER)):
        records = raw.get(table)
        if table not in raw:
            continue
        if not isinstance(records, dict):
            line = node.line_of(table)
            report.add("schema-wrong-type", line, table, "", value=shown(records), expected="mapping")
            continue
        for name, record in records.items():
            line = (records.line_of(name) if isinstance(records, LineDict) else None) or node.line_of(table)
            where = f"{table}.{name}"
            if isinstance(record, dict):
                walk(shape, record, where, line, report)
            else:
                report.add(
                    "schema-wrong-type", line, str(name), table, value=shown(record), expected="mapping"
                )
    return report.problems


def worker_tiling(gpus: int, gpus_per_node: int) -> str | None:
    """Why the generator cannot size a multinode worker's share of a node for its DRAM budget (a
    message id), or None: a worker within one node must divide it, a larger one fill whole nodes."""
    if gpus > gpus_per_node:
        return "schema-worker-spans-nodes" if gpus % gpus_per_node else None
    return "schema-worker-not-divisor" if gpus_per_node % gpus else None


# Problems master.py finds itself that say the same as a schema problem on the same line: the
# field each one is about (else its `field`, `role` or `scenario` parameter).
_SAME_FIELD = {
    "master-no-tp": "tp",
    "master-no-concurrency": "conc-list",
    "master-conc-range": "conc-start",
    "master-bad-conc-list": "conc-list",
    "master-no-search-space": "search-space",
    "master-point-not-mapping": "search-space",
    "master-bad-utilization": "dram-utilization",
    "master-no-scenarios": "scenarios",
}


def with_entry_problems(
    own: Iterable[Problem], key: str, raw: Any, file: str, line: int | None
) -> list[Problem]:
    """A master-config reader's own problems with an entry plus the schema's, without the
    reader's that say the same thing (same field, same line): the schema's is upstream's rule."""
    report = _entry_report(key, raw, file, line)

    def about(p: Problem) -> Any:
        params = p.params
        return (
            _SAME_FIELD.get(p.message_id)
            or params.get("field")
            or params.get("role")
            or params.get("scenario")
        )

    return [p for p in own if (p.line, about(p)) not in report.places] + report.problems
