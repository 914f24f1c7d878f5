"""Master configs: config keys, their search-space points and concurrencies, with line numbers.

A master config is parsed whole (`bot.yamlsafe`), so that anchors, aliases, merge keys, tags and
escapes resolve across entries exactly as InferenceX's generator reads them; each entry is then
built into typed points on demand. `Parsed` caches a file's parse by its bytes, so that a file
with the same bytes at both refs is parsed once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import Any, NamedTuple

from bot.model import generated, schema
from bot.model.layout import Layout
from bot.model.problems import Problem, from_yaml
from bot.yamlsafe import LineDict, LineList, YamlProblem, decode, frozen, load

MAX_CONCURRENCIES = 4096
#: The largest concurrency a point may name (InferenceX's configs go up to 8,192); beyond it (a
#: PR can write an integer of millions of digits) the point is refused, not reviewed.
MAX_CONCURRENCY = 1_000_000
ZERO_ALLOWED = ("num-worker",)  # a disaggregated pool may be switched off with 0 workers


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
    # The recipe is named by an older `CONFIG_FILE=` that may point outside this repository.
    recipe_outside: bool = field(default=False, compare=False)
    multinode: bool = False
    gpus: int = 1
    raw: Any = field(default=None, compare=False, repr=False)
    group_raw: Any = field(default=None, compare=False, repr=False)  # its scenario group, as parsed
    # What identifies a point across refs, apart from its concurrency: set once, from the fields
    # above (a multinode point's worker settings are compared whole).
    topology: tuple[Any, ...] = field(default=(), compare=False, repr=False, init=False)
    # The point's fields as the generator's row holds them (`generated.point_fields`: all but its
    # concurrencies, its defaults filled in, so that `pp: 1` written out is `pp` left out).
    fields: Any = field(default=None, compare=False, repr=False, init=False)

    def __post_init__(self) -> None:
        self.fields = generated.point_fields(self.raw, self.scenario, self.multinode)
        workers = _workers_signature(self.fields) if self.multinode else None
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
    # What the PR should know but that runs as written (a `CONFIG_FILE=` given twice): warnings.
    notices: tuple[Problem, ...] = ()

    @cached_property
    def published(self) -> list[int]:
        """The sorted set of all concurrencies of this key (worked out once: several checks ask)."""
        return sorted({c for p in self.points for c in p.concurrencies})


class Parsed(NamedTuple):
    """One master config's bytes as parsed: its top-level mapping (None when unreadable), the line
    of each key, and what was wrong with it."""

    data: dict[str, Any] | None
    lines: dict[str, int]
    problems: tuple[tuple[str, int | None, dict[str, Any]], ...]  # (message id, line, params)


def parse_master(data: bytes) -> Parsed:
    """Parse a master config's bytes whole (no path: the same bytes parse the same anywhere)."""
    try:
        loaded = load(decode(data))
    except YamlProblem as exc:
        return Parsed(None, {}, (("yaml", exc.line, {"exc": exc}),))
    problems = [
        ("master-duplicate-key", dup.line, {"key": dup.key, "first_line": dup.first_line})
        for dup in loaded.duplicates
    ]
    if not isinstance(loaded.data, dict):  # an empty file (or only comments) too: upstream's
        return Parsed(None, {}, (("master-not-mapping", 1, {}),))  # `load_config_files` refuses it
    entries: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for key, value in loaded.data.items():
        name = str(key)
        if type(key) is not str:  # `12345:`, `true:`, `2026-01-01:`: `"*" in key` fails upstream
            line = loaded.data.lines.get(key)
            written = "null" if key is None else str(key).lower() if type(key) is bool else name
            problems.append(("master-key-not-string", line, {"key": written}))
        if name in entries:  # `1:` and `"1":` are one config key to the generator's lookups
            line = loaded.data.lines.get(key)
            problems.append(("master-duplicate-key", line, {"key": name, "first_line": lines[name]}))
            continue
        entries[name] = value
        lines[name] = loaded.data.lines.get(key, 1)
    return Parsed(entries, lines, tuple(problems))


class MasterFile:
    """A master config file at one ref, parsed whole; entries are built into points on demand."""

    def __init__(self, path: str, data: bytes, layout: Layout, parsed: Parsed | None = None) -> None:
        self.path = path
        self.layout = layout
        parsed = parsed if parsed is not None else parse_master(data)
        # True when the file as a whole could not be read (not UTF-8, not YAML, not a mapping).
        self.unreadable = parsed.data is None
        self.raw: dict[str, Any] = parsed.data or {}
        self.entries: dict[str, int] = parsed.lines
        self.problems: list[Problem] = [self._problem(*p) for p in parsed.problems]
        self._built: dict[str, ConfigEntry | None] = {}

    def _problem(self, message_id: str, line: int | None, params: dict[str, Any]) -> Problem:
        if message_id == "yaml":
            return from_yaml(params["exc"], self.path)
        return Problem(message_id, self.path, line, {"path": self.path, **params})

    def keys(self) -> list[str]:
        return list(self.entries)

    def entry(self, key: str) -> ConfigEntry | None:
        """The built entry, or None when absent (its problems are the entry's own)."""
        if key not in self._built:
            raw = self.raw.get(key)
            self._built[key] = (
                build_entry(key, raw, self.path, self.entries[key], self.layout) if key in self.raw else None
            )
        return self._built[key]


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
        self.notices: list[Problem] = []

    def problem(self, message_id: str, line: int | None, **params: Any) -> None:
        self.problems.append(Problem(message_id, self.file, line or self.line, {"key": self.key, **params}))

    def notice(self, message_id: str, line: int | None, **params: Any) -> None:
        self.notices.append(Problem(message_id, self.file, line or self.line, {"key": self.key, **params}))

    def field(
        self, mapping: dict, name: str, kind: type | tuple[type, ...], default: Any, line: int | None
    ) -> Any:
        value = mapping.get(name)
        if value is None:
            return default
        if type(value) is not kind and not _is_a(value, kind):  # the exact type is the common case
            self.problem(
                "master-wrong-type",
                _line_of(mapping, name) or line,
                field=name,
                value=schema.shown(value),
                expected="/".join(k.__name__ for k in _kinds(kind)),
            )
            return default
        if kind is int and value < (0 if name in ZERO_ALLOWED else 1):
            self.problem("master-not-positive", _line_of(mapping, name) or line, field=name, value=value)
            return default
        return value

    def concurrencies(self, point: dict, line: int | None) -> tuple[int, ...]:
        if self.out_of_range(point, line):
            return ()
        if "conc-list" in point:
            values = point["conc-list"]
            if (
                not isinstance(values, list)
                or not values
                or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values)
            ):
                self.problem(
                    "master-bad-conc-list", _line_of(point, "conc-list") or line, value=schema.shown(values)
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

    def out_of_range(self, point: dict, line: int | None) -> bool:
        """Whether a concurrency of the point is an integer beyond ±MAX_CONCURRENCY (a problem
        naming the first such one)."""
        listed = point.get("conc-list")
        values = (
            *(listed if isinstance(listed, list) else ()),
            point.get("conc-start"),
            point.get("conc-end"),
        )
        if all(type(value) is not int or abs(value) <= MAX_CONCURRENCY for value in values):
            return False  # the common case, without naming each value
        named = [("conc-list", v) for v in listed] if isinstance(listed, list) else []
        named += [(name, point.get(name)) for name in ("conc-start", "conc-end")]
        for name, value in named:
            if type(value) is int and abs(value) > MAX_CONCURRENCY:
                where = _line_of(point, name) or line
                self.problem(
                    "master-conc-out-of-range", where, field=name, value=value, limit=MAX_CONCURRENCY
                )
                return True
        return False

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


def config_files(point: dict) -> list[tuple[str, str, int | None]]:
    """Every `CONFIG_FILE=<path>[:<selector>]` of an older multinode row, in the order InferenceX's
    multinode workflow exports them (the worker's, or the prefill's then the decode's
    `additional-settings`, in one `export`: the last one is what the launcher reads), each as
    (worker, the value after `=`, its line)."""
    found = []
    for role in ("worker",) if "worker" in point else ("prefill", "decode"):
        worker = point.get(role)
        settings = worker.get("additional-settings") if isinstance(worker, dict) else None
        for index, item in enumerate(settings if isinstance(settings, list) else ()):
            if isinstance(item, str) and item.startswith("CONFIG_FILE="):
                line = settings.line_of(index) if isinstance(settings, LineList) else None
                found.append((role, item[len("CONFIG_FILE=") :], line))
    return found


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
            where = _Group(scenario, group_index, utilization, isl, osl, group)
            built = _build_point(reader, point, point_line, where, index, multinode, recipe_dir)
            if built is not None:
                points.append(built)
    problems = tuple(schema.with_entry_problems(reader.problems, key, raw, file, line))
    return ConfigEntry(
        key,
        file,
        line,
        image,
        runner,
        framework,
        multinode,
        tuple(points),
        raw,
        problems,
        tuple(reader.notices),
    )


def _utilization(reader: _EntryReader, group: dict, line: int | None) -> Decimal | None:
    if "dram-utilization" not in group:
        return None
    value = group["dram-utilization"]
    where = _line_of(group, "dram-utilization") or line
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        reader.problem(
            "master-wrong-type", where, field="dram-utilization", value=schema.shown(value), expected="number"
        )
        return None
    try:  # an integer straight to Decimal: its decimal text may be too long for Python to write
        number = Decimal(value) if type(value) is int else Decimal(str(value))
    except InvalidOperation:
        reader.problem(
            "master-wrong-type", where, field="dram-utilization", value=schema.shown(value), expected="number"
        )
        return None
    if not number.is_finite() or not (0 < number <= 1):
        reader.problem("master-bad-utilization", where, value=schema.text(value))
        return None
    return number


class _Group(NamedTuple):
    """What a search-space point inherits from its scenario group."""

    scenario: str
    index: int
    utilization: Decimal | None
    isl: int | None
    osl: int | None
    raw: Any


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
    outside = False
    if multinode or "prefill" in point or "worker" in point:
        topo, gpus = reader.workers(point, line)
        named = config_files(point)
        if len(named) > 1:
            (role, first, first_line), (last_role, last, last_line) = named[0], named[-1]
            where = {"first": first, "first_role": role, "first_line": first_line, "count": len(named)}
            reader.notice("master-config-file-twice", last_line or line, **where, last=last, role=last_role)
        legacy_path, _, legacy_selector = named[-1][1].partition(":") if named else ("", "", "")
        if recipe_field is None and legacy_path:
            recipe = reader.layout.legacy_recipe_path(legacy_path)
            selector = legacy_selector or None
            outside = reader.layout.legacy_recipe_outside(legacy_path)
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
        recipe_outside=outside,
        multinode=multinode,
        raw=point,
        group_raw=group.raw,
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
            parts.append(frozen({k: v for k, v in worker.items() if k != "additional-settings"}))
    return tuple(parts)
