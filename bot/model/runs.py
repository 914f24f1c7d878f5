"""What InferenceX's generator would launch at one ref: every config key's runs, each with every
setting it starts with (DESIGN.md §2 "The diff is total").

A `Ref` reads one ref with that ref's own layout: the master configs InferenceX reads, parsed
whole (anchors, aliases, merge keys, tags and escapes resolved), runners.yaml and the recipes the
points name. A run's settings are, flattened to dotted paths: the entry's fields (`image`,
`model`, `runner`, … everything but `scenarios`), its scenario group's (`isl`, `osl`,
`dram-utilization`, `duration`, … everything but `search-space`), the point's (everything but
its concurrencies), the entry's and the point's with the defaults the generator fills in (`pp: 1`
written out is `pp` left out: `bot.model.generated`), what it reads from its runner's record in
runners.yaml (the DRAM budget of an agentic DRAM-offload point, `total-cpu-dram-gb`, not the two
fields it is made of; any other field of the record as `hardware.<field>`) and the recipe variant
it selects, resolved. `same` compares them by value and type: `true`, `1`, `1.0` and `"1"` are
four different settings (the generator hands each on as written).
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from bot.model import dram, generated
from bot.model import layout as layout_mod
from bot.model.master import ConfigEntry, MasterFile, Parsed, Point, parse_master
from bot.model.problems import Problem, from_yaml
from bot.model.recipe import Recipe, Variant, parse_recipe
from bot.model.runners import record
from bot.model.script_code import code_id
from bot.model.scripts import Followed, Launch, RunVars, launchers, resolved
from bot.model.selection import select
from bot.sources.snapshot import Snapshot
from bot.yamlsafe import MAX_DEPTH, YamlProblem, load_bytes

# The parts of a run's settings, by name, in the order they are built (`Run.parts`): the entry's,
# its scenario group's, its point's, what it reads of its runner's record, its recipe variant's,
# and the benchmark scripts its launchers start.
ENTRY, GROUP, POINT, RUNNER, VARIANT, LAUNCH = range(6)
HARDWARE = "hardware"  # the prefix of a runner's runners.yaml record among a run's settings
SCRIPT = "script"  # the setting of a run's benchmark scripts, `"<path>@<code id>"` each
_MAX_DEPTH = 32  # deeper mappings are compared whole
_MAX_JSON_CHARS = 4096  # longer JSON-looking strings are compared as text
_PLAIN_KEY = re.compile(r"[^.\"\[\]:]+")  # a key written in a dotted path as it is


def same(a: Any, b: Any) -> bool:
    """Equal by value and type, mappings in any order: `True` is not `1` is not `1.0` (Python's
    `==` says all three are equal)."""
    if a is b:
        return True
    if a != b:
        return False
    # Equal to Python: the same also by type when written the same (`repr` tells `True`, `1` and
    # `1.0` apart); else walk, as mappings may list the same keys in another order, or as `repr`
    # refuses an integer of over 4,300 digits.
    try:
        return repr(a) == repr(b) or _strict(a, b)
    except ValueError:
        return _strict(a, b)


def _strict(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_strict(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return (
            isinstance(b, list) and len(a) == len(b) and all(_strict(x, y) for x, y in zip(a, b, strict=True))
        )
    if type(a) is not type(b):
        return False
    if isinstance(a, float):  # 0.0 and -0.0 are written differently
        return repr(a) == repr(b)
    return bool(a == b)


def mentions(node: Any, names: set[str], depth: int = 0) -> bool:
    """Whether a string in `node` (as parsed) contains one of `names`: a point names a recipe by a
    string that ends with the recipe's file name (`srt-recipe`, `CONFIG_FILE=`), so an entry none
    of whose strings contains it cannot run that recipe."""
    if isinstance(node, str):
        return any(name in node for name in names)
    if depth > 64:
        return True  # deeper than any YAML the loader accepts: never skip what cannot be looked at
    if isinstance(node, dict):
        return any(mentions(v, names, depth + 1) for v in node.values())
    if isinstance(node, list):
        return any(mentions(v, names, depth + 1) for v in node)
    return False


def structure(value: str) -> Any:
    """A serving argument written as JSON (`online_quant_config: '{"exclude_layer": [...]}'`,
    `cudagraph-capture-sizes: '[1,2]'`) as the mapping or list it holds, so that its parts and
    items are compared; the string itself when it is not one."""
    text = value.strip()
    if text[:1] not in ("{", "[") or len(text) > _MAX_JSON_CHARS:
        return value
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return value
    return parsed if isinstance(parsed, dict | list) and _within_depth(parsed) else value


def _within_depth(node: Any) -> bool:
    """Whether a parsed JSON value nests no deeper than YAML the loader accepts (so that comparing
    it never recurses too deep)."""
    stack = [(node, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        if isinstance(item, dict | list):
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return True


def segment(key: Any) -> str:
    """A mapping key as one part of a dotted path, spelled so that no two keys of a mapping and no
    nesting give the same path: a string with none of `."[]:` as it is, any other string quoted
    as JSON (`benchmark."env.X"` is not `benchmark.env.X`), any other key in brackets (`[1]`,
    `[true]`, never the string `"1"`). Keys of one mapping that are no strings differ in value, so
    in text too (the loader makes keys of equal value, `1.0` and `1`, or `.nan` and `.NaN`, one)."""
    if type(key) is str:
        return key if key and _PLAIN_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)
    if isinstance(key, bool) or key is None:
        return f"[{json.dumps(key)}]"
    return f"[{key}]"


def flatten(node: Any, path: str, into: dict[str, Any], depth: int = 0) -> None:
    """`node`'s leaves as dotted path → value (lists are values of their own); one path per leaf
    (`segment`), so that no setting hides another."""
    if isinstance(node, str) and path:
        node = structure(node)
    if isinstance(node, dict) and node and depth < _MAX_DEPTH:
        for key, value in node.items():
            part = segment(key)
            flatten(value, f"{path}.{part}" if path else part, into, depth + 1)
    elif path:
        into[path] = node


class Run(NamedTuple):
    """One benchmark run: a point at one concurrency, the variant it selects (if exactly one)
    and everything it starts with (`parts`, `settings`), worked out when first asked: most runs
    of a large review are only counted or matched."""

    point: Point
    concurrency: int
    variant: Variant | None
    source: tuple[Ref, Any, Any]  # the ref, the entry as parsed, the runner's runners.yaml record
    ident: tuple[Any, ...]  # what identifies the run across refs (`run_ident`)

    @property
    def sources(self) -> tuple[Any, ...]:
        """What the settings are made of, as parsed: the entry, its group, the point, the runner's
        record and the variant (the same object at both refs when its file's bytes are)."""
        ref, entry, hardware = self.source
        variant = self.variant.data if self.variant else None
        return (
            entry,
            self.point.group_raw,
            self.point.raw,
            hardware,
            variant,
            ref.executed(entry, self.point),
        )

    @property
    def parts(self) -> tuple[dict[str, Any], ...]:
        """The settings of the entry, the group, the point, the runner's hardware, the variant and
        the launched scripts (indexed by ENTRY … LAUNCH), each worked out once per parsed object
        and shared by the runs that share it."""
        return tuple(self._part(i) for i in range(len(_ORIGINS) + 1))

    def _part(self, index: int) -> dict[str, Any]:
        ref, entry, hardware = self.source
        if index == ENTRY:
            return ref.entry_settings(entry)
        if index == GROUP:
            return ref.group_settings(self.point)
        if index == POINT:
            return ref.flattened(self.point.fields, "")
        if index == RUNNER:
            return ref.hardware_reads(self.point, hardware)
        if index == VARIANT:
            return ref.flattened(self.variant.data, "") if self.variant else {}
        return ref.script_settings(ref.executed(entry, self.point))

    @property
    def launches(self) -> tuple[Launch, ...]:
        """What each launcher of the run's runner starts for it (`bot.model.scripts`)."""
        ref, entry, _ = self.source
        return ref.executed(entry, self.point)

    @property
    def settings(self) -> dict[str, Any]:
        """Everything the run starts with, dotted path → value."""
        return _merged(self.parts)

    def same_settings(self, other: Run, known: dict[tuple[int, int, int], bool] | None = None) -> bool:
        """Whether two runs start with the same settings (by value and type). A part made of the
        very same parsed object is the same; the others are compared once per pair (`known`)."""
        known = {} if known is None else known
        for index, (mine, theirs) in enumerate(zip(self.sources, other.sources, strict=True)):
            if mine is theirs:
                continue
            if index == 3:  # what a run reads of its runner's record depends on its point too
                if not same(self._part(index), other._part(index)):
                    return same(self.settings, other.settings)
                continue
            pair = (index, id(mine), id(theirs))
            if pair not in known:
                known[pair] = same(self._part(index), other._part(index))
            if not known[pair]:
                return same(self.settings, other.settings)
        return True


def run_ident(point: Point, concurrency: int) -> tuple[Any, ...]:
    """What identifies a run across refs: its point's topology and its concurrency."""
    return (*point.topology, concurrency)


class Recipes:
    """The recipes of one ref; `parsed` is shared between the refs so that a recipe with the same
    bytes at both is parsed once."""

    def __init__(self, snapshot: Snapshot, parsed: dict[tuple[str, bytes], Recipe]) -> None:
        self.snapshot = snapshot
        self.parsed = parsed
        self.recipes: dict[str, Recipe | None] = {}

    def get(self, path: str | None) -> Recipe | None:
        if path is None:
            return None
        if path not in self.recipes:
            data = self.snapshot.read(path)
            if data is None:
                self.recipes[path] = None
            else:
                if (path, data) not in self.parsed:
                    self.parsed[(path, data)] = parse_recipe(path, data)
                self.recipes[path] = self.parsed[(path, data)]
        return self.recipes[path]


class Shared:
    """What both refs share: parses by bytes, so that what is the same at both is parsed once."""

    def __init__(self) -> None:
        self.masters: dict[bytes, Parsed] = {}
        self.recipes: dict[tuple[str, bytes], Recipe] = {}
        self.launches = Followed()

    def master(self, data: bytes) -> Parsed:
        if data not in self.masters:
            self.masters[data] = parse_master(data)
        return self.masters[data]


class Ref:
    """The model at one ref: its layout, the master configs InferenceX reads, every config key,
    runners.yaml and the recipes; runs are worked out per entry on demand."""

    def __init__(self, snapshot: Snapshot, names: tuple[str, ...], shared: Shared) -> None:
        self.snapshot = snapshot
        self.shared = shared
        self.layout = layout_mod.detect(snapshot, names)
        self.masters: dict[str, MasterFile] = {}
        self.keys: dict[str, str] = {}  # config key → the master config defining it (first one)
        self.twice: list[Problem] = []  # keys that two master configs define
        for path in layout_mod.master_config_paths(snapshot, self.layout, names):
            data = snapshot.read(path)
            if data is None:
                continue
            master = MasterFile(path, data, self.layout, shared.master(data))
            self.masters[path] = master
            for key, line in master.entries.items():
                if key in self.keys:
                    params = {"key": key, "first": self.keys[key], "path": path}
                    self.twice.append(Problem("master-key-twice", path, line, params))
                else:
                    self.keys[key] = path
        self.recipes = Recipes(snapshot, shared.recipes)
        self._runners: tuple[Any, Problem | None] | None = None
        self._flat: dict[tuple[int, str, tuple[str, ...]], tuple[Any, dict[str, Any]]] = {}
        self._entries: dict[int, tuple[Any, Any]] = {}  # an entry as parsed → its generated fields
        self._reads: dict[tuple[Any, ...], tuple[Any, dict[str, Any]]] = {}
        self._shell_files: frozenset[str] | None = None
        self._has_launchers = False
        self._launches: dict[tuple[RunVars, str | None], tuple[Launch, ...]] = {}
        self._scripts: dict[tuple[Launch, ...], dict[str, Any]] = {}

    def raw(self, key: str) -> Any:
        """A key's entry as parsed (None when this ref has no such key)."""
        path = self.keys.get(key)
        return self.masters[path].raw.get(key) if path else None

    def entry(self, key: str) -> ConfigEntry | None:
        path = self.keys.get(key)
        return self.masters[path].entry(key) if path else None

    def line(self, key: str) -> int | None:
        path = self.keys.get(key)
        return self.masters[path].entries.get(key) if path else None

    @property
    def runners(self) -> tuple[Any, Problem | None]:
        """runners.yaml as parsed, or the problem that kept it from being read."""
        if self._runners is None:
            path = self.layout.runners
            data = self.snapshot.read(path)
            if data is None:
                self._runners = None, Problem("runners-missing", path, None, {"path": path})
            else:
                try:
                    self._runners = load_bytes(data).data, None
                except YamlProblem as exc:
                    self._runners = None, from_yaml(exc, path)
        return self._runners

    def hardware(self, runner: str | None) -> Any:
        """The runners.yaml record of a runner label at this ref (None: none)."""
        return record(self.runners[0], runner)

    def flattened(self, node: Any, prefix: str, leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
        """`node`'s settings, worked out once per parsed object (runs share entries, groups and
        variants)."""
        slot = (id(node), prefix, leave_out)
        cached = self._flat.get(slot)
        if cached is not None and cached[0] is node:
            return cached[1]
        found: dict[str, Any] = {}
        if isinstance(node, dict):
            flatten({k: v for k, v in node.items() if k not in leave_out}, prefix, found)
        elif node is not None:
            found[prefix or "value"] = node
        self._flat[slot] = (node, found)
        return found

    def entry_settings(self, entry: Any) -> dict[str, Any]:
        """An entry's own settings, as the generator reads them (`generated.entry_fields`: its
        defaults filled in), worked out once per parsed entry."""
        cached = self._entries.get(id(entry))
        if cached is None or cached[0] is not entry:
            cached = self._entries[id(entry)] = (entry, generated.entry_fields(entry))
        return self.flattened(cached[1], "")

    def hardware_reads(self, point: Point, hardware: Any) -> dict[str, Any]:
        """What a run of `point` reads from its runner's record, worked out once per record and
        budget inputs: the DRAM budget (`dram.reads`), and under `hardware.` every other field of
        the record (the `clusters:` layout keeps the scheduler's settings there, which the launcher
        reads; upstream's `hardware:` records hold the two budget fields only)."""
        slot = (
            id(hardware),
            point.scenario,
            point.kv_offloading,
            point.utilization,
            point.gpus_per_worker,
            point.multinode,
        )
        cached = self._reads.get(slot)
        if cached is not None and cached[0] is hardware:
            return cached[1]
        rest = hardware
        if isinstance(hardware, dict) and not hardware.keys().isdisjoint(dram.BUDGET_FIELDS):
            rest = {k: v for k, v in hardware.items() if k not in dram.BUDGET_FIELDS} or None
        found = {**self.flattened(rest, HARDWARE), **dram.reads(point, hardware)}
        self._reads[slot] = (hardware, found)
        return found

    @property
    def shell_files(self) -> frozenset[str]:
        """The launchers and benchmark files at this ref, relative to the root (listed once)."""
        if self._shell_files is None:
            root = self.layout.root
            listed = [
                *self.snapshot.list_files(root + "runners/"),
                *self.snapshot.list_files(root + "benchmarks/"),
            ]
            self._shell_files = frozenset(path[len(root) :] for path in listed)
            self._has_launchers = any(path.startswith("runners/launch_") for path in self._shell_files)
        return self._shell_files

    @property
    def has_launchers(self) -> bool:
        """Whether this ref holds runner launchers (`runners/launch_*.sh`) at all."""
        return bool(self.shell_files) and self._has_launchers

    def executed(self, entry: Any, point: Point) -> tuple[Launch, ...]:
        """What the launchers of an entry's runner start for a point's runs, followed once per
        distinct set of the variables that name scripts."""
        if not isinstance(entry, dict) or not self.has_launchers:
            return ()  # a repository without InferenceX's launchers: nothing to follow
        found = run_vars(entry, point)
        runner = entry.get("runner")
        slot = (found, runner if isinstance(runner, str) else None)
        if slot not in self._launches:
            files = self.shell_files
            self._launches[slot] = tuple(
                self._follow(path, found) for path in launchers(self.runners[0], slot[1], files)
            )
        return self._launches[slot]

    def _follow(self, launcher: str, found: RunVars) -> Launch:
        data = resolved(launcher, lambda path: self.snapshot.read(self.layout.root + path), self.shell_files)
        machine = launcher.removeprefix("runners/launch_").removesuffix(".sh") + "_0"
        return self.shared.launches.follow(launcher, data, found.env(machine), self.shell_files)

    def script_settings(self, launches: tuple[Launch, ...]) -> dict[str, Any]:
        """A run's benchmark scripts as settings: `script` → each script's path and code id, so
        that a change of what it runs (or of which script runs) changes the run; a change of
        its comments or of its eval-only branches does not (`script_code`)."""
        if launches not in self._scripts:
            names = []
            for launch in launches:
                if launch.script is not None:
                    data = self.snapshot.read(self.layout.root + launch.script)
                    names.append(f"{launch.script}@{code_id(data)}" if data is not None else launch.script)
            self._scripts[launches] = {SCRIPT: sorted(set(names))} if names else {}
        return self._scripts[launches]

    def group_settings(self, point: Point) -> dict[str, Any]:
        """A point's scenario group's settings; the utilization as the exact decimal the DRAM
        budget uses (`0.6` and `"0.6"` budget the same)."""
        found = self.flattened(point.group_raw, "", ("search-space",))
        if point.utilization is not None and "dram-utilization" in found:
            found["dram-utilization"] = str(point.utilization)
        return found

    def runs(self, entry: ConfigEntry | None, with_recipes: bool = True) -> list[Run]:
        """Every (point, concurrency) of an entry, in order, with the variant it uniquely selects
        and its settings (duplicates of one identity included: the caller reports them);
        `with_recipes=False` leaves the recipes unread (a removed key's runs are only counted)."""
        if entry is None:
            return []
        runs = []
        source = (self, entry.raw, self.hardware(entry.runner))
        for point in entry.points:
            recipe = self.recipes.get(point.recipe) if with_recipes else None
            for conc in point.concurrencies:
                chosen = select(recipe, point, conc) if recipe else []
                variant = chosen[0] if len(chosen) == 1 else None
                runs.append(Run(point, conc, variant, source, (*point.topology, conc)))
        return runs


_ORIGINS = ("group", "point", HARDWARE, "recipe", "launch")


def run_vars(entry: dict[str, Any], point: Point) -> RunVars:
    """The variables InferenceX's workflow hands the launcher for a point's runs."""

    def text(value: Any) -> str:
        if value is None or isinstance(value, bool):
            return "" if value is None else str(value).lower()
        try:
            return str(value)
        except ValueError:  # an integer too long for Python to write: no script is named after it
            return "?"

    return RunVars(
        text(entry.get("model-prefix")),
        text(entry.get("precision")),
        text(entry.get("framework")),
        point.spec_decoding,
        point.scenario == "agentic-coding",
        point.multinode,
        text(entry.get("model")),
        text(entry.get("image")),
        text(entry.get("disagg")),
        point.recipe or "",
        text(point.tp),
    )


def _merged(parts: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    """One run's settings from its parts, in order (entry, group, point, hardware, variant); a path
    that an earlier part has already is kept apart under its part's name (`recipe:model`), so that
    no setting hides another."""
    settings = dict(parts[0])
    for origin, part in zip(_ORIGINS, parts[1:], strict=True):
        if settings.keys().isdisjoint(part):
            settings.update(part)
        else:
            for path, value in part.items():
                settings[f"{origin}:{path}" if path in settings else path] = value
    return settings


def recipe_paths(entry: ConfigEntry | None) -> set[str]:
    """The recipes an entry's points name (resolved with its ref's layout)."""
    return {p.recipe for p in entry.points if p.recipe} if entry else set()
