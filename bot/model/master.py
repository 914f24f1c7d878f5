"""Master configs: config keys, their search-space points and concurrencies, with line numbers.

A master config is a mapping of independent top-level entries. The file is split into one text
chunk per entry first (a cheap line scan), so that only the entries a pull request changed are
parsed; when an entry cannot be parsed on its own (an alias to another entry, odd layout), the
whole file is parsed instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import Any, NamedTuple

from bot.model import schema
from bot.model.layout import Layout
from bot.model.problems import Problem, from_yaml
from bot.yamlsafe import LineDict, LineList, YamlProblem, decode, load

MAX_CONCURRENCIES = 4096
ZERO_ALLOWED = ("num-worker",)  # a disaggregated pool may be switched off with 0 workers
_TOP_KEY = re.compile(
    r"""^(?P<key>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"\-?:\[\]{},&*!|>%@`][^#]*?)\s*:(?:\s|$)"""
)


class EntryText(NamedTuple):
    """The source text of one top-level entry and the 1-based line its key is on."""

    key: str
    text: str
    line: int


@dataclass(slots=True)
class Point:
    """One search-space point of a config key (a row of the benchmark matrix). Never changed once
    built; not a frozen dataclass only because that sets each of its fields twice as slowly, and a
    large review builds thousands."""

    config_key: str
    file: str
    line: int | None
    scenario: str
    group: int
    index: int
    concurrencies: tuple[int, ...]
    tp: int
    ep: int = 1
    pp: int = 1
    dcp: int = 1
    pcp: int = 1
    dp_attn: bool = False
    spec_decoding: str = "none"
    kv_offloading: str = "none"
    utilization: Decimal | None = None
    isl: int | None = None
    osl: int | None = None
    recipe: str | None = None
    selector: str | None = None
    multinode: bool = False
    gpus: int = 1
    raw: Any = field(default=None, compare=False, repr=False)
    # What identifies a point across refs, apart from its concurrency: set once, from the fields
    # above (a multinode point's worker settings are compared whole).
    topology: tuple[Any, ...] = field(default=(), compare=False, repr=False, init=False)

    def __post_init__(self) -> None:
        workers = _workers_signature(self.raw) if self.multinode else None
        identity = (self.scenario, self.isl, self.osl, self.tp, self.ep, self.pp, self.dcp, self.pcp)
        self.topology = (*identity, self.dp_attn, self.spec_decoding, self.kv_offloading, workers)

    @property
    def where(self) -> dict[str, Any]:
        """Where a finding about this point points: its key, file and line (`finding(..., **point.where)`)."""
        return {"config_key": self.config_key, "file": self.file, "line": self.line}

    @property
    def gpus_per_worker(self) -> int:
        return self.tp * self.pp * self.pcp


@dataclass(frozen=True)
class ConfigEntry:
    """One config key of a master config."""

    key: str
    file: str
    line: int | None
    image: str | None
    runner: str | None
    framework: str | None
    multinode: bool
    points: tuple[Point, ...]
    raw: Any = field(compare=False, repr=False)
    problems: tuple[Problem, ...] = ()

    @cached_property
    def published(self) -> list[int]:
        """The sorted set of all concurrencies of this key (worked out once: several checks ask)."""
        return sorted({c for p in self.points for c in p.concurrencies})


def split_entries(text: str) -> tuple[dict[str, EntryText], list[tuple[str, int, int]]]:
    """Top-level entries by key, and duplicated top-level keys as (key, line, first line)."""
    entries: dict[str, EntryText] = {}
    duplicates: list[tuple[str, int, int]] = []
    lines = text.splitlines(keepends=True)
    starts: list[tuple[int, str]] = []
    for number, line in enumerate(lines):
        if line[:1] in ("", " ", "\t", "#", "\n", "\r", "-", "."):
            continue
        match = _TOP_KEY.match(line)
        if match:
            starts.append((number, _unquote(match.group("key"))))
    for i, (number, key) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(lines)
        if key in entries:
            duplicates.append((key, number + 1, entries[key].line))
            continue
        entries[key] = EntryText(key, "".join(lines[number:end]), number + 1)
    return entries, duplicates


def _unquote(key: str) -> str:
    if len(key) >= 2 and key[0] == key[-1] == "'":
        return key[1:-1].replace("''", "'")
    if len(key) >= 2 and key[0] == key[-1] == '"':
        if "\\" in key:  # escapes (\n, \", \u…): the key YAML reads, so both refs and the changelog agree
            try:
                value = load(key).data
            except YamlProblem:
                value = None
            if isinstance(value, str):
                return value
        return key[1:-1]
    return key


class MasterFile:
    """A master config file at one ref, parsed lazily entry by entry."""

    def __init__(self, path: str, data: bytes, layout: Layout) -> None:
        self.path = path
        self.layout = layout
        self.problems: list[Problem] = []
        # True once the file as a whole could not be read (not UTF-8, not YAML, not a mapping).
        self.unreadable = False
        self._full: LineDict | None = None
        self._parsed: dict[str, ConfigEntry | None] = {}
        try:
            self.text = decode(data)
        except YamlProblem as exc:
            self.text = ""
            self.unreadable = True
            self.problems.append(from_yaml(exc, path))
        self.entries, duplicates = split_entries(self.text)
        for key, line, first in duplicates:
            self.problems.append(
                Problem("master-duplicate-key", path, line, {"key": key, "first_line": first})
            )
        if self.text.strip() and not self.entries:
            self._parse_whole()

    def keys(self) -> list[str]:
        return list(self.entries)

    def is_parsed(self, key: str) -> bool:
        """Whether `entry(key)` has been worked out already (and so costs nothing more)."""
        return key in self._parsed

    def entry(self, key: str) -> ConfigEntry | None:
        """The parsed entry, or None when absent or unreadable (then `problems` says why)."""
        if key not in self._parsed:
            self._parsed[key] = self._parse_entry(key)
        return self._parsed[key]

    def _parse_entry(self, key: str) -> ConfigEntry | None:
        if key not in self.entries:
            return None
        chunk = self.entries[key]
        raw = None
        if self._full is None:
            try:
                loaded = load(chunk.text, line_offset=chunk.line - 1)
                if isinstance(loaded.data, dict) and list(loaded.data) == [key]:
                    raw = loaded.data[key]
                    self._note_duplicates(loaded.duplicates)
            except YamlProblem:
                raw = None
            if raw is None:
                self._parse_whole()
        if self._full is not None:
            if key not in self._full:
                return None
            raw = self._full[key]
        return build_entry(key, raw, self.path, chunk.line, self.layout)

    def _note_duplicates(self, duplicates: list[Any]) -> None:
        for dup in duplicates:
            self.problems.append(
                Problem(
                    "master-duplicate-key",
                    self.path,
                    dup.line,
                    {"key": dup.key, "first_line": dup.first_line},
                )
            )

    def _parse_whole(self) -> None:
        if self._full is not None:
            return
        self._full = LineDict()
        try:
            loaded = load(self.text)
        except YamlProblem as exc:
            self.problems.append(from_yaml(exc, self.path))
            self.entries = {}
            self.unreadable = True
            return
        if loaded.data is None:
            return
        if not isinstance(loaded.data, dict):
            self.problems.append(Problem("master-not-mapping", self.path, 1, {"path": self.path}))
            self.entries = {}
            self.unreadable = True
            return
        self._note_duplicates(loaded.duplicates)
        self._full = loaded.data
        known = self.entries
        self.entries = {
            str(k): known.get(str(k), EntryText(str(k), "", loaded.data.lines.get(k, 1))) for k in loaded.data
        }


def expand_concurrency(start: int, end: int) -> list[int]:
    """conc-start..conc-end doubling, clamped to end, end included (3..10 → 3, 6, 10)."""
    values: list[int] = []
    current = start
    while current < end and len(values) < MAX_CONCURRENCIES:
        values.append(current)
        current *= 2
    values.append(end)
    return values


class _EntryReader:
    """Turns one raw entry into typed points, collecting a Problem for each wrong field."""

    def __init__(self, key: str, file: str, line: int | None, layout: Layout) -> None:
        self.key, self.file, self.line, self.layout = key, file, line, layout
        self.problems: list[Problem] = []

    def problem(self, message_id: str, line: int | None, **params: Any) -> None:
        self.problems.append(Problem(message_id, self.file, line or self.line, {"key": self.key, **params}))

    def field(
        self, mapping: dict, name: str, kind: type | tuple[type, ...], default: Any, line: int | None
    ) -> Any:
        value = mapping.get(name)
        if value is None:
            return default
        if not _is_a(value, kind):
            self.problem(
                "master-wrong-type",
                _line_of(mapping, name) or line,
                field=name,
                value=repr(value)[:80],
                expected="/".join(k.__name__ for k in _kinds(kind)),
            )
            return default
        if kind is int and value < (0 if name in ZERO_ALLOWED else 1):
            self.problem("master-not-positive", _line_of(mapping, name) or line, field=name, value=value)
            return default
        return value

    def concurrencies(self, point: dict, line: int | None) -> tuple[int, ...]:
        if "conc-list" in point:
            values = point["conc-list"]
            if (
                not isinstance(values, list)
                or not values
                or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values)
            ):
                self.problem(
                    "master-bad-conc-list", _line_of(point, "conc-list") or line, value=repr(values)[:80]
                )
                return ()
            return tuple(values[:MAX_CONCURRENCIES])
        start = self.field(point, "conc-start", int, None, line)
        end = self.field(point, "conc-end", int, None, line)
        if start is None or end is None:
            self.problem("master-no-concurrency", line)
            return ()
        if start > end:
            self.problem("master-conc-range", line, start=start, end=end)
            return ()
        return tuple(expand_concurrency(start, end))

    def workers(self, point: dict, line: int | None) -> tuple[dict, int]:
        """The serving worker (aggregated `worker`, or `prefill`), whose topology recipes state, and
        the point's total GPU count."""
        total = 0
        prefill: dict = {}
        for role in ("worker",) if "worker" in point else ("prefill", "decode"):
            worker = point.get(role)
            if not isinstance(worker, dict):
                self.problem("master-missing-worker", line, role=role)
                continue
            count = self.field(worker, "num-worker", int, 1, line)
            size = 1
            for name in ("tp", "pp", "pcp-size"):
                size *= self.field(worker, name, int, 1, line)
            total += count * size
            if role in ("worker", "prefill"):
                prefill = worker
        return prefill, total


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _is_a(value: Any, kind: type | tuple[type, ...]) -> bool:
    """isinstance, except that a bool is not an int unless bool is asked for."""
    kinds = _kinds(kind)
    return isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)


def _line_of(container: Any, key: Any) -> int | None:
    if isinstance(container, LineDict):
        return container.line_of(key)
    return None


def _selector_from_settings(settings: Any) -> tuple[str | None, str | None]:
    """Older multinode rows name a recipe as `CONFIG_FILE=<path>[:<selector>]`."""
    if not isinstance(settings, list):
        return None, None
    for item in settings:
        if isinstance(item, str) and item.startswith("CONFIG_FILE="):
            path, _, selector = item[len("CONFIG_FILE=") :].partition(":")
            return path, selector or None
    return None, None


def scenarios_of(raw: Any) -> dict[str, Any] | None:
    """An entry's groups by scenario type. The oldest master configs (before agentic scenarios)
    list fixed-seq-len groups under `seq-len-configs` instead."""
    if not isinstance(raw, dict):
        return None
    scenarios = raw.get("scenarios")
    if isinstance(scenarios, dict):
        return scenarios
    older = raw.get("seq-len-configs")
    return {"fixed-seq-len": older} if "scenarios" not in raw and isinstance(older, list) else None


def iter_groups(raw: Any) -> Iterator[tuple[str, int, Any, int | None]]:
    """(scenario, group index, group mapping, line) for every group of an entry."""
    scenarios = scenarios_of(raw)
    if scenarios is None:
        return
    for scenario, groups in scenarios.items():
        if not isinstance(groups, list):
            continue
        for index, group in enumerate(groups):
            line = groups.line_of(index) if isinstance(groups, LineList) else None
            yield str(scenario), index, group, line


def build_entry(key: str, raw: Any, file: str, line: int | None, layout: Layout) -> ConfigEntry:
    """Typed view of one raw entry; every field the checks read is type-checked."""
    reader = _EntryReader(key, file, line, layout)
    if not isinstance(raw, dict):
        reader.problem("master-entry-not-mapping", line)
        return ConfigEntry(key, file, line, None, None, None, False, (), raw, tuple(reader.problems))
    image = reader.field(raw, "image", str, None, line)
    runner = reader.field(raw, "runner", str, None, line)
    framework = reader.field(raw, "framework", str, None, line)
    multinode = reader.field(raw, "multinode", bool, False, line)
    recipe_dir = reader.field(raw, "srt-recipe-dir", str, None, line)
    scenarios = scenarios_of(raw)
    if scenarios is None:
        reader.problem("master-no-scenarios", line)
    else:
        for scenario, groups in scenarios.items():
            if not isinstance(groups, list):
                where = _line_of(scenarios, scenario) or line
                reader.problem("master-scenario-not-list", where, scenario=str(scenario))
    points: list[Point] = []
    for scenario, group_index, group, group_line in iter_groups(raw):
        if not isinstance(group, dict):
            reader.problem("master-group-not-mapping", group_line, scenario=scenario)
            continue
        utilization = _utilization(reader, group, group_line)
        isl = reader.field(group, "isl", int, None, group_line)
        osl = reader.field(group, "osl", int, None, group_line)
        space = group.get("search-space")
        if not isinstance(space, list):
            reader.problem("master-no-search-space", group_line, scenario=scenario)
            continue
        for index, point in enumerate(space):
            point_line = space.line_of(index) if isinstance(space, LineList) else group_line
            if not isinstance(point, dict):
                reader.problem("master-point-not-mapping", point_line, scenario=scenario)
                continue
            where = _Group(scenario, group_index, utilization, isl, osl)
            built = _build_point(reader, point, point_line, where, index, multinode, recipe_dir)
            if built is not None:
                points.append(built)
    problems = tuple(schema.with_entry_problems(reader.problems, key, raw, file, line))
    return ConfigEntry(key, file, line, image, runner, framework, multinode, tuple(points), raw, problems)


def _utilization(reader: _EntryReader, group: dict, line: int | None) -> Decimal | None:
    if "dram-utilization" not in group:
        return None
    value = group["dram-utilization"]
    where = _line_of(group, "dram-utilization") or line
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        reader.problem(
            "master-wrong-type", where, field="dram-utilization", value=repr(value)[:80], expected="number"
        )
        return None
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        reader.problem(
            "master-wrong-type", where, field="dram-utilization", value=repr(value)[:80], expected="number"
        )
        return None
    if not number.is_finite() or not (0 < number <= 1):
        reader.problem("master-bad-utilization", where, value=str(value))
        return None
    return number


class _Group(NamedTuple):
    """What a search-space point inherits from its scenario group."""

    scenario: str
    index: int
    utilization: Decimal | None
    isl: int | None
    osl: int | None


def _build_point(
    reader: _EntryReader,
    point: dict,
    line: int | None,
    group: _Group,
    index: int,
    multinode: bool,
    recipe_dir: str | None,
) -> Point | None:
    concurrencies = reader.concurrencies(point, line)
    recipe_field = reader.field(point, "srt-recipe", str, None, line)
    recipe = selector = None
    if multinode or "prefill" in point or "worker" in point:
        topo, gpus = reader.workers(point, line)
        legacy_path, legacy_selector = _selector_from_settings(topo.get("additional-settings"))
        if recipe_field is None and legacy_path:
            recipe = reader.layout.legacy_recipe_path(legacy_path)
            selector = legacy_selector
        multinode = True
    else:
        topo = point
        gpus = 0
    if recipe_field is not None:
        path, _, selector = recipe_field.partition(":")
        recipe = reader.layout.recipe_path(path, recipe_dir, multinode)
        selector = selector or None
    tp = reader.field(topo, "tp", int, None, line)
    if tp is None:
        if topo.get("tp") is None:  # a tp of the wrong type was reported by `field` already
            reader.problem("master-no-tp", line)
        return None
    pp, pcp = reader.field(topo, "pp", int, 1, line), reader.field(topo, "pcp-size", int, 1, line)
    return Point(
        config_key=reader.key,
        file=reader.file,
        line=line,
        scenario=group.scenario,
        group=group.index,
        index=index,
        concurrencies=concurrencies,
        tp=tp,
        dp_attn=reader.field(topo, "dp-attn", bool, False, line),
        spec_decoding=str(reader.field(point, "spec-decoding", (str, bool), "none", line)).lower(),
        kv_offloading=str(reader.field(point, "kv-offloading", str, "none", line)).lower(),
        recipe=recipe,
        selector=selector,
        multinode=multinode,
        raw=point,
        utilization=group.utilization,
        isl=group.isl,
        osl=group.osl,
        gpus=gpus or tp * pp * pcp,
        ep=reader.field(topo, "ep", int, 1, line),
        pp=pp,
        dcp=reader.field(topo, "dcp-size", int, 1, line),
        pcp=pcp,
    )


def _workers_signature(raw: Any) -> tuple[Any, ...] | None:
    if not isinstance(raw, dict):
        return None
    parts = []
    for role in ("worker", "prefill", "decode"):
        worker = raw.get(role)
        if isinstance(worker, dict):
            settings = [(str(k), repr(v)) for k, v in worker.items() if k != "additional-settings"]
            parts.append(tuple(sorted(settings)))
    return tuple(parts)
