"""srt-slurm recipes: variants (base deep-merged with each override), their selectors, and pins.

A recipe is flat (one variant, `base`) or a bundle: `base:` plus `override_<name>:` variants and
`zip_override_<name>:` blocks whose list-valued leaves are zipped into variants
`zip_override_<name>[i]`. Merging: mappings merge recursively, anything else replaces, and an
explicit `null` deletes the key. Anchors and `<<:` merge keys are resolved by the YAML loader.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from bot.model.images import PIN_RE, Pin
from bot.model.problems import Problem, from_yaml
from bot.model.schema import shown
from bot.yamlsafe import LineDict, YamlProblem, decode, load

MAX_ZIP_VARIANTS = 512
# A recipe's size budget (DESIGN.md §2: a check that cannot finish on the PR's content blocks).
# Every variant is `base` deep-merged with one override, so a large `base` times many overrides
# could fill the runner's memory from a file of a few hundred KB. The largest real recipe has 18
# variants and 2,335 merged values; these limits are far above that.
MAX_VARIANTS = 1_000
MAX_MERGED_VALUES = 500_000
ROLE_NAMES = ("agg", "prefill")
# What selection and the DRAM check read, and the type each must have (DESIGN.md §1 "Recipe").
SELECTOR_ENV = ("CONC", "TP", "KV_OFFLOADING", "SPEC_DECODING")
WHOLE_ENV = ("CONC", "TP")
# Role arguments that size the parallelism (a variant that gives one does not state `gpus`), by
# what they size.
TP_ARGS = ("tensor-parallel-size", "tp-size")
PP_ARGS = ("pipeline-parallel-size", "pp-size")
DP_ARGS = ("data-parallel-size", "dp-size")
EP_SIZE_ARGS = ("expert-parallel-size", "ep-size", "moe-expert-parallel-size")
PARALLEL_ARGS = (*TP_ARGS, *PP_ARGS, *DP_ARGS, *EP_SIZE_ARGS)
# The names of one engine option: SGLang (and vLLM, for the first three) declare each group as one
# argparse option, so of several given, the last on the command line is what the server gets.
# srt-slurm builds that command line from a role's options in the order of their names, each `_`
# read as `-`, leaving out an option whose value is false or null (`_config_to_cli_args`).
ALIASED_ARGS = (TP_ARGS, PP_ARGS, DP_ARGS, EP_SIZE_ARGS[:2])
# Where a recipe gives each role's engine options as a command line: `roles.<role>.args` (srt-slurm's
# 2.0 layout, expanded into the older one), or `backend.<engine>_config.<role>` (the older layout).
# TensorRT-LLM's (and the mocker's) are a configuration file, not a command line.
COMMAND_LINE_CONFIGS = ("sglang_config", "vllm_config", "atom_config")
FILE_ENGINES = ("trtllm", "mocker")
_OPTION = {name: group for group in ALIASED_ARGS for name in group}
WHOLE_ARGS = (*PARALLEL_ARGS, "decode-context-parallel-size")
FLAG_ARGS = ("enable-dp-attention", "enable-expert-parallel", "enable-deepep-moe", "enable-ep-moe")


@dataclass(frozen=True)
class Variant:
    """One runnable configuration of a recipe."""

    name: str
    data: dict[str, Any]
    line: int | None
    layers: tuple[Any, ...] = field(default=(), repr=False, compare=False)

    # The views below are worked out once per variant: selection asks them for every run.
    @cached_property
    def env(self) -> dict[str, Any]:
        """`benchmark.env`: where a variant states the matrix points it serves."""
        bench = self.data.get("benchmark")
        env = bench.get("env") if isinstance(bench, dict) else None
        return env if isinstance(env, dict) else {}

    @cached_property
    def _serving(self) -> tuple[str, dict[str, Any]]:
        """The serving role's name and mapping: `roles.agg`, or the prefill worker of a
        disaggregated recipe; (`agg`, {}) when the variant states none."""
        roles = self.data.get("roles")
        if isinstance(roles, dict):
            for name in ROLE_NAMES:
                if isinstance(roles.get(name), dict):
                    return name, roles[name]
        return "agg", {}

    @property
    def role(self) -> dict[str, Any]:
        """The serving role: `roles.agg`, or the prefill worker of a disaggregated recipe."""
        return self._serving[1]

    @cached_property
    def args(self) -> dict[str, Any]:
        """The serving role's `args`, with `_` in their names read as `-` (both spellings work); of
        the names of one engine option (`ALIASED_ARGS`), only the one the engine takes
        (`command_line`)."""
        args = self.role.get("args")
        return command_line(args)[0] if isinstance(args, dict) else {}

    @cached_property
    def roles(self) -> list[tuple[str, tuple[str, ...], dict[Any, Any]]]:
        """Every role the variant runs whose engine options srt-slurm passes as a command line:
        (its name, the path of its options, the options as written), `roles.<role>.args` or
        `backend.<engine>_config.<role>` (`prefill`, `decode`, `agg` / `aggregated`)."""
        found = []
        roles = self.data.get("roles")
        if isinstance(roles, dict) and _engine(self.data) not in FILE_ENGINES:
            for name, role in roles.items():
                args = role.get("args") if isinstance(role, dict) else None
                if isinstance(args, dict):
                    found.append((str(name), ("roles", name, "args"), args))
        backend = self.data.get("backend")
        for config in COMMAND_LINE_CONFIGS:
            modes = backend.get(config) if isinstance(backend, dict) else None
            for name, args in modes.items() if isinstance(modes, dict) else ():
                if isinstance(args, dict):
                    found.append((str(name), ("backend", config, name), args))
        return found

    def setting(self, name: str) -> tuple[Any, tuple[str, ...] | None]:
        """An environment setting looked up in `benchmark.env`, then in the role's `env`."""
        if name in self.env:
            return self.env[name], ("benchmark", "env", name)
        role_env = self.role.get("env")
        if isinstance(role_env, dict) and name in role_env:
            return role_env[name], ("roles", self._serving[0], "env", name)
        return None, None

    def line_of(self, path: tuple[str, ...]) -> int | None:
        """The source line that gives this variant its value at `path` (override first, then base)."""
        for layer in self.layers:
            node = layer
            for part in path[:-1]:
                node = node.get(part) if isinstance(node, dict) else None
            if isinstance(node, LineDict) and path[-1] in node:
                return node.line_of(path[-1])
        return None


def command_line(args: dict[Any, Any]) -> tuple[dict[str, Any], list[tuple[Any, Any]]]:
    """A role's engine options as srt-slurm passes them to the engine: in the order of their names
    (`sorted`), each `_` read as `-`, one whose value is false or null left out. Of the names of
    one option (`ALIASED_ARGS`, or one name in both spellings) the engine takes the last passed.
    Returns the options by name, with only the one taken of each, and each option given twice as
    (the key the engine ignores, the key it takes), as written."""
    found: dict[str, Any] = {}
    taken: dict[str, Any] = {}  # an option (its names) → the key the engine takes so far
    repeated = []
    for key in sorted(args, key=str):
        value = args[key]
        name = str(key).replace("_", "-")
        option = _OPTION.get(name, name)
        if option not in taken:
            taken[option], found[name] = key, value
        elif value is False or value is None:  # passes nothing: the other one stands
            repeated.append((key, taken[option]))
        else:
            repeated.append((taken[option], key))
            found.pop(str(taken[option]).replace("_", "-"))
            taken[option], found[name] = key, value
    return found, repeated


def _engine(data: dict[str, Any]) -> Any:
    """The engine a 2.0 recipe runs: `engine` (a name, or a mapping with its `type`), else
    `backend.type`; srt-slurm's default is SGLang."""
    engine = data.get("engine")
    engine = engine.get("type") if isinstance(engine, dict) else engine
    backend = data.get("backend")
    return engine or (backend.get("type") if isinstance(backend, dict) else None) or "sglang"


@dataclass
class Recipe:
    """A parsed recipe file; `notices` are what it should say differently but runs as meant
    (an engine option given twice)."""

    path: str
    variants: dict[str, Variant]
    pins: list[Pin]
    text: str  # the source, for the lines a finding quotes
    problems: list[Problem]
    is_bundle: bool = False
    notices: list[Problem] = field(default_factory=list)
    # The variants `selection.select` found for each (selector, topology, concurrency).
    selected: dict[tuple[Any, ...], list[Variant]] = field(default_factory=dict, repr=False, compare=False)

    def candidates(self, selector: str | None) -> list[Variant]:
        """Variants a point may select: the named one, or every override (or the flat base)."""
        if selector:
            return [self.variants[selector]] if selector in self.variants else []
        if self.is_bundle:
            return [v for name, v in self.variants.items() if name != "base"]
        return list(self.variants.values())

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def source_line(self, line: int | None) -> str | None:
        if line is None or not (1 <= line <= len(self.lines)):
            return None
        return self.lines[line - 1]


def merge(base: Any, override: Any) -> Any:
    """Deep merge: mappings recursively, anything else replaces, explicit null deletes."""
    if not isinstance(base, dict) or not isinstance(override, dict):
        return override
    merged = dict(base)
    for key, value in override.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict):  # merged into nothing, its own nulls still delete
            merged[key] = merge(merged[key] if isinstance(merged.get(key), dict) else {}, value)
        else:
            merged[key] = value
    return merged


def _values(node: Any) -> int:
    """How many values (mappings, lists and scalars) a parsed tree holds, aliases expanded."""
    count, stack = 0, [node]
    while stack:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def _too_large(doc: LineDict, base: Any, overrides: list[str], path: str) -> Problem | None:
    """Why merging every variant would exceed the size budget, worked out before any merge."""
    variants, past_limit = 0, None
    for name in overrides:
        lengths = _zip_length(doc[name]) if name.startswith("zip_override_") else {1}
        if len(lengths) == 1 and max(lengths) <= MAX_ZIP_VARIANTS:  # a bad zip builds no variant
            variants += max(lengths)
        if variants > MAX_VARIANTS and past_limit is None:
            past_limit = name
    if past_limit is not None:
        params = {"path": path, "variants": variants, "limit": MAX_VARIANTS}
        return Problem("recipe-too-many-variants", path, doc.lines.get(past_limit), params)
    merged = variants * _values(base)
    if merged > MAX_MERGED_VALUES:
        params = {"path": path, "variants": variants, "values": merged, "limit": MAX_MERGED_VALUES}
        return Problem("recipe-too-large", path, doc.lines.get("base"), params)
    return None


def _zip_length(node: Any) -> set[int]:
    if isinstance(node, dict):
        return set().union(*(_zip_length(v) for v in node.values())) if node else set()
    if isinstance(node, list):
        return {len(node)}
    return set()


def _zip_pick(node: Any, index: int) -> Any:
    if isinstance(node, dict):
        picked = LineDict({k: _zip_pick(v, index) for k, v in node.items()})
        picked.lines = getattr(node, "lines", {})
        return picked
    if isinstance(node, list):
        return node[index]
    return node


def _find_pins(node: Any, path: str, file: str, pins: list[Pin], line: int | None = None) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            _find_pins(
                value, f"{path}.{key}" if path else str(key), file, pins, getattr(node, "lines", {}).get(key)
            )
    elif isinstance(node, list):
        for index, value in enumerate(node):
            _find_pins(value, f"{path}[{index}]", file, pins, line)
    elif isinstance(node, str):
        match = PIN_RE.match(node.strip())
        if match:
            pins.append(Pin(match["repo"], match["digest"], file, line, path))


def _whole(value: Any) -> bool:
    """A non-negative whole number, or a string of digits (env values are strings)."""
    if isinstance(value, bool):
        return False
    return (isinstance(value, int) and value >= 0) or (isinstance(value, str) and value.strip().isdigit())


def _shape(layer: Any, variant: str, path: str) -> list[Problem]:
    """Wrong types, in one layer (base or an override), of the fields selection and `dram` read."""
    problems: list[Problem] = []

    def bad(parent: Any, key: Any, where: str, expected: str) -> None:
        line = parent.line_of(key) if isinstance(parent, LineDict) else None
        params = {"variant": variant, "field": where, "value": shown(parent[key]), "expected": expected}
        problems.append(Problem("recipe-wrong-type", path, line, params))

    def mapping(parent: Any, key: str, where: str) -> dict | None:
        value = parent.get(key) if isinstance(parent, dict) else None
        if value is not None and not isinstance(value, dict):
            bad(parent, key, where, "mapping")
            return None
        return value

    bench = mapping(layer, "benchmark", "benchmark")
    env = mapping(bench, "env", "benchmark.env")
    for name in SELECTOR_ENV:
        value = env.get(name) if env else None
        if value is None:
            continue
        if name in WHOLE_ENV and not _whole(value):
            bad(env, name, f"benchmark.env.{name}", "integer")
        elif isinstance(value, list | dict):
            bad(env, name, f"benchmark.env.{name}", "string")
    roles = mapping(layer, "roles", "roles")
    for role_name in list(roles or ()):
        where = f"roles.{role_name}"
        role = mapping(roles, role_name, where)
        if role is None:
            continue
        args = mapping(role, "args", f"{where}.args")
        mapping(role, "env", f"{where}.env")
        if role.get("gpus") is not None and not _whole(role["gpus"]):
            bad(role, "gpus", f"{where}.gpus", "integer")
        for arg in list(args or ()):
            value, name = args[arg], str(arg).replace("_", "-")
            if value is None:
                continue
            if name in WHOLE_ARGS and not _whole(value):
                bad(args, arg, f"{where}.args.{arg}", "integer")
            elif name in FLAG_ARGS and not isinstance(value, bool | str):
                bad(args, arg, f"{where}.args.{arg}", "boolean")
    return problems


def parse_recipe(path: str, data: bytes) -> Recipe:
    """Parse recipe bytes into variants; problems (YAML errors, bad zips) are collected, not raised."""
    problems: list[Problem] = []
    try:
        text = decode(data)
        loaded = load(text)
    except YamlProblem as exc:
        return Recipe(path, {}, [], "", [from_yaml(exc, path)])
    doc = loaded.data
    if not isinstance(doc, dict):
        return Recipe(path, {}, [], text, [Problem("recipe-not-mapping", path, 1, {"path": path})])
    for dup in loaded.duplicates:
        problems.append(
            Problem("recipe-duplicate-key", path, dup.line, {"key": dup.key, "first_line": dup.first_line})
        )
    pins: list[Pin] = []
    if "@sha256:" in text or "\\" in text:  # a pin needs that text (or an escape that could hide it)
        _find_pins(doc, "", path, pins)
    overrides = [
        k for k in doc if isinstance(k, str) and (k.startswith("override_") or k.startswith("zip_override_"))
    ]
    if "base" not in doc and not overrides:
        problems += _shape(doc, "base", path)
        flat = Variant("base", doc, 1, (doc,))
        return Recipe(path, {"base": flat}, pins, text, problems, notices=_repeated([flat], path))
    if doc.get("base") is not None and not isinstance(doc["base"], dict):
        line = doc.lines.get("base")
        problems.append(Problem("recipe-variant-not-mapping", path, line, {"variant": "base"}))
    base = doc.get("base") if isinstance(doc.get("base"), dict) else LineDict()
    too_large = _too_large(doc, base, overrides, path) if overrides else None
    if too_large is not None:  # no variant is built: a review of part of them would mislead
        return Recipe(path, {}, pins, text, [*problems, too_large], is_bundle=True)
    problems += _shape(base, "base", path)
    variants: dict[str, Variant] = {"base": Variant("base", base, doc.lines.get("base"), (base,))}
    for name in overrides:
        override = doc[name]
        line = doc.lines.get(name)
        if not isinstance(override, dict):
            problems.append(Problem("recipe-variant-not-mapping", path, line, {"variant": name}))
            continue
        if name.startswith("override_"):
            problems += _shape(override, name, path)
            variants[name] = Variant(name, merge(base, override), line, (override, base))
            continue
        lengths = _zip_length(override)
        if len(lengths) > 1 or not lengths or max(lengths) > MAX_ZIP_VARIANTS:
            problems.append(
                Problem("recipe-bad-zip", path, line, {"variant": name, "lengths": sorted(lengths)})
            )
            continue
        seen = {(p.line, p.params.get("field")) for p in problems}
        for index in range(lengths.pop()):
            picked = _zip_pick(override, index)
            for problem in _shape(picked, f"{name}[{index}]", path):
                if (problem.line, problem.params["field"]) not in seen:
                    seen.add((problem.line, problem.params["field"]))
                    problems.append(problem)
            variants[f"{name}[{index}]"] = Variant(
                f"{name}[{index}]", merge(base, picked), line, (picked, base)
            )
    served = [v for name, v in variants.items() if name != "base"]
    return Recipe(path, variants, pins, text, problems, True, _repeated(served, path))


def _repeated(variants: list[Variant], path: str) -> list[Problem]:
    """One notice per engine option that a role gives twice (the same two lines shared by several
    variants once), naming the role: the engine takes the one srt-slurm passes last, and so does
    selection for the serving role."""
    found: dict[tuple[Any, ...], list[str]] = {}
    for variant in variants:
        for name, where, args in variant.roles:
            for ignored, taken in command_line(args)[1]:
                lines = tuple(variant.line_of((*where, k)) for k in (ignored, taken))
                shown_args = tuple((str(k), shown(args[k])) for k in (ignored, taken))
                matched = where[:2] == ("roles", variant._serving[0])
                found.setdefault((name, ".".join(map(str, where)), matched, lines, shown_args), []).append(
                    variant.name
                )
    return [
        Problem(
            "recipe-option-twice",
            path,
            taken_line,
            {
                "variants": names,
                "role": role,
                "where": where,
                "matched": matched,
                "ignored": ignored,
                "ignored_value": ignored_value,
                "ignored_line": ignored_line,
                "taken": taken,
                "taken_value": taken_value,
            },
        )
        for (
            role,
            where,
            matched,
            (ignored_line, taken_line),
            ((ignored, ignored_value), (taken, taken_value)),
        ), names in found.items()
    ]
