"""Base vs head: which config keys changed and how, what each point will run, published sets.

Reads only what a review needs through two `Snapshot`s: the master configs the PR touched (and
only their changed entries), the recipes those entries use, runners.yaml and the changelog.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from bot.model import layout as layout_mod
from bot.model import schema
from bot.model.changelog import ChangelogDiff, compare
from bot.model.images import ImageUse
from bot.model.layout import Layout
from bot.model.master import ConfigEntry, MasterFile, Point
from bot.model.owners import CodeownersFile, find_codeowners
from bot.model.problems import Problem, from_yaml
from bot.model.recipe import Recipe, Variant, parse_recipe
from bot.model.selection import MAX_RUN_CHOICES, choices, select
from bot.sources.snapshot import Snapshot, is_plain_path
from bot.yamlsafe import YamlProblem, load_bytes


class Run(NamedTuple):
    """One benchmark run: a point at one concurrency, and the variant it selects (if unique)."""

    point: Point
    concurrency: int
    variant: Variant | None

    @property
    def ident(self) -> tuple[Any, ...]:
        return run_ident(self.point, self.concurrency)

    def settings(self) -> tuple[Any, ...]:
        variant = self.variant.data if self.variant else None
        return (
            self.point.utilization,
            self.point.recipe,
            self.point.selector,
            variant,
            _point_fields(self.point.raw),
        )


def run_ident(point: Point, concurrency: int) -> tuple[Any, ...]:
    """What identifies a run across refs: its point's topology and its concurrency."""
    return (*point.topology, concurrency)


def _entry_fields(raw: Any) -> Any:
    """A config entry's own fields (model, runner, precision, …), without its matrix."""
    return {k: v for k, v in raw.items() if k != "scenarios"} if isinstance(raw, dict) else raw


def _point_fields(raw: Any) -> Any:
    if not isinstance(raw, dict):
        return raw
    return {k: v for k, v in raw.items() if k not in ("conc-list", "conc-start", "conc-end")}


@dataclass
class KeyChange:
    """A config key whose entry or recipe changed."""

    key: str
    file: str
    base: ConfigEntry | None
    head: ConfigEntry | None
    aspects: list[str] = field(default_factory=list)
    added: list[Run] = field(default_factory=list)
    removed: list[Run] = field(default_factory=list)
    changed: list[Run] = field(default_factory=list)
    unchanged: list[Run] = field(default_factory=list)
    # The base run of every run in `changed` and `unchanged`, by its identity (`Run.ident`).
    before: dict[tuple[Any, ...], Run] = field(default_factory=dict, repr=False)
    entry_changed: bool = True

    @property
    def line(self) -> int | None:
        return (self.head or self.base).line if (self.head or self.base) else None

    @property
    def where(self) -> dict[str, Any]:
        """Where a finding about this key points, as `Point.where` does for a point."""
        return {"config_key": self.key, "file": self.file, "line": self.line}

    @property
    def published_base(self) -> list[int]:
        return self.base.published if self.base else []

    @property
    def published_head(self) -> list[int]:
        return self.head.published if self.head else []

    @property
    def image_changed(self) -> bool:
        return "image" in self.aspects

    @property
    def needs_entry(self) -> bool:
        """Whether the PR added or changed what a run of this key does, so that its results must be
        measured again (a changelog entry must name it). Only losing points needs no entry."""
        if self.head is None:
            return False
        if self.base is None or self.added or self.changed or self.image_changed:
            return True
        return _entry_fields(self.base.raw) != _entry_fields(self.head.raw)


@dataclass
class ReviewDiff:
    """Everything the checks look at."""

    layout: Layout
    changed_files: list[str]
    keys: dict[str, KeyChange]
    # Every key of the head's master configs, in the sweep's order (file by file), → its file.
    head_keys: dict[str, str]
    changelog: ChangelogDiff | None
    changelog_changed: bool
    recipes_head: dict[str, Recipe | None]
    recipes_base: dict[str, Recipe | None]
    runners: Any
    runners_problem: Problem | None
    problems: list[Problem]
    changed_recipes: list[str] = field(default_factory=list)
    recipe_users: dict[str, list[ConfigEntry]] = field(default_factory=dict)
    # CODEOWNERS as read at the BASE ref (a PR must not choose its own owners); None if absent.
    codeowners: CodeownersFile | None = None
    # Changed master configs that could not be read at the head: their keys are unknown, not removed.
    unreadable_masters: list[str] = field(default_factory=list)
    # Neither ref has a master config (the wrong repository or layout): no key can be reviewed.
    no_masters: bool = False
    masters_head: dict[str, MasterFile] = field(default_factory=dict, repr=False)

    def head_entry(self, key: str) -> ConfigEntry | None:
        """Any key's entry at the head (parsed on demand: the sweep runs keys the PR did not change)."""
        if key in self.keys:
            return self.keys[key].head
        path = self.head_keys.get(key)
        return self.masters_head[path].entry(key) if path in self.masters_head else None


def image_uses(diff: ReviewDiff) -> list[ImageUse]:
    """Each changed key with each recipe it runs at the head: the digest check's input."""
    uses = []
    for change in diff.keys.values():
        if change.head is None:
            continue
        for path in sorted({p.recipe for p in change.head.points if p.recipe}):
            head = diff.recipes_head.get(path)
            base = diff.recipes_base.get(path)
            uses.append(
                ImageUse(
                    change.key,
                    change.base.image if change.base else None,
                    change.head.image,
                    path,
                    tuple(base.pins) if base else (),
                    tuple(head.pins) if head else (),
                )
            )
    return uses


def _master(snapshot: Snapshot, path: str, layout: Layout) -> MasterFile | None:
    data = snapshot.read(path)
    return MasterFile(path, data, layout) if data is not None else None


class _RecipeCache:
    """Recipes of one snapshot; `parsed` is shared between base and head so that a recipe the PR
    did not touch (the same bytes at both refs) is parsed once."""

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


def _run_choices(entry: ConfigEntry | None, recipes: _RecipeCache | None) -> int:
    """What working out an entry's runs costs (see `selection.choices`)."""
    points = entry.points if entry else ()
    return sum(choices(recipes.get(p.recipe) if recipes else None, p) for p in points)


def _classify_within_budget(
    keys: dict[str, KeyChange], recipes_base: _RecipeCache, recipes_head: _RecipeCache
) -> Problem | None:
    """Work out every changed key's runs while the budget lasts; the keys it cannot pay for are
    left out of the review, and the problem returned names them."""
    spent = 0
    over: list[KeyChange] = []
    for change in keys.values():
        # A removed key's runs are only counted, so its recipes need not be read.
        old_recipes = recipes_base if change.head is not None else None
        cost = _run_choices(change.base, old_recipes) + _run_choices(change.head, recipes_head)
        if spent + cost > MAX_RUN_CHOICES:
            over.append(change)
            continue
        spent += cost
        _classify(change, runs_of(change.base, old_recipes), runs_of(change.head, recipes_head))
    for change in over:
        del keys[change.key]
    if not over:
        return None
    params = {"count": len(over), "keys": [c.key for c in over[:10]], "limit": MAX_RUN_CHOICES}
    return Problem("review-too-many-runs", over[0].file, over[0].line, params)


_RECIPE_REF = re.compile(r"""(?:srt-recipe["']?\s*:\s*|CONFIG_FILE=)["']?([^\s,}'"]+)""")


def _tail(path: str) -> str:
    return path.partition("srt-slurm-recipes/")[2] or path.partition("benchmarks/")[2] or path


class RecipeMentions:
    """Whether an entry's text names one of some recipes: cheap, may say yes wrongly, never no wrongly."""

    def __init__(self, recipes: list[str]) -> None:
        self.tails = {_tail(r) for r in recipes}
        self.names = {posixpath.basename(r) for r in recipes}

    def __call__(self, text: str) -> bool:
        relative = "srt-recipe-dir" in text
        for reference in _RECIPE_REF.findall(text):
            path = reference.partition(":")[0]
            if _tail(path) in self.tails or (relative and posixpath.basename(path) in self.names):
                return True
        return False


def runs_of(entry: ConfigEntry | None, recipes: _RecipeCache | None) -> list[Run]:
    """Every (point, concurrency) of an entry with the variant it uniquely selects (none without recipes)."""
    if entry is None:
        return []
    runs = []
    for point in entry.points:
        recipe = recipes.get(point.recipe) if recipes else None
        for conc in point.concurrencies:
            chosen = select(recipe, point, conc) if recipe else []
            runs.append(Run(point, conc, chosen[0] if len(chosen) == 1 else None))
    return runs


def _classify(change: KeyChange, base_runs: list[Run], head_runs: list[Run]) -> None:
    old = {run.ident: run for run in base_runs}
    new = {run.ident: run for run in head_runs}
    change.added = [run for ident, run in new.items() if ident not in old]
    change.removed = [run for ident, run in old.items() if ident not in new]
    for ident, run in new.items():
        if ident in old:
            target = change.changed if old[ident].settings() != run.settings() else change.unchanged
            target.append(run)
            change.before[ident] = old[ident]
    base, head = change.base, change.head
    aspects = change.aspects
    if base and head and base.image != head.image:
        aspects.append("image")
    if change.added or change.removed:
        aspects.append("points")
    if any(ident in old and old[ident].point.utilization != r.point.utilization for ident, r in new.items()):
        aspects.append("utilization")
    if any(
        (old[i].variant.data if old[i].variant else None) != (r.variant.data if r.variant else None)
        for i, r in new.items()
        if i in old
    ):
        aspects.append("recipe")
    if base is None:
        aspects.append("added")
    elif head is None:
        aspects.append("removed")
    elif not aspects and change.entry_changed:
        aspects.append("other")


def _odd_names(changed_files: list[str], layout: Layout) -> list[Problem]:
    """Changed files where the sweep reads data whose names prbot cannot ask git for (a line break,
    an empty, `.` or `..` part): they would run unchecked, so each is a problem, never a skip."""
    folders = (f"{layout.root}configs/", f"{layout.root}benchmarks/", layout_mod.OLDER_CONFIGS)
    return [
        Problem("path-odd-name", path, None, {"path": repr(path)[1:-1]})
        for path in changed_files
        if not is_plain_path(path) and path.startswith(folders)
    ]


def _is_recipe(path: str, layout: Layout) -> bool:
    return path.startswith(f"{layout.root}benchmarks/") and path.endswith((".yaml", ".yml"))


def compute(base: Snapshot, head: Snapshot, changed_files: list[str]) -> ReviewDiff:
    """Read the changed files at both refs and work out what changed for every config key."""
    layout = layout_mod.detect(head)
    problems: list[Problem] = _odd_names(changed_files, layout)
    master_paths = [p for p in changed_files if layout.is_master_config(p)]
    head_masters_all = layout_mod.master_config_paths(head, layout)
    parsed: dict[tuple[str, bytes], Recipe] = {}
    recipes_base, recipes_head = _RecipeCache(base, parsed), _RecipeCache(head, parsed)
    keys: dict[str, KeyChange] = {}
    masters_head: dict[str, MasterFile] = {}
    head_keys: dict[str, str] = {}
    for path in head_masters_all:
        master = _master(head, path, layout)
        if master is None:
            continue
        masters_head[path] = master
        head_keys.update(dict.fromkeys(master.keys(), path))
    unreadable = _changed_keys(base, layout, master_paths, masters_head, keys)
    for path in master_paths:  # after the entries were parsed: their problems are the file's too
        if path in masters_head:
            problems.extend(p for p in masters_head[path].problems if p not in problems)
    changed_recipes = [p for p in changed_files if _is_recipe(p, layout)]
    if changed_recipes:
        _keys_using_recipes(changed_recipes, base, masters_head, keys, layout)
    for path in changed_recipes:  # read even when no key runs them, so that a broken one is named
        recipes_head.get(path)
    _prefetch_recipes(keys, base, head)
    too_many_runs = _classify_within_budget(keys, recipes_base, recipes_head)
    if too_many_runs is not None:
        problems.append(too_many_runs)
    for change in keys.values():
        if change.head is not None:
            problems.extend(change.head.problems)
    used = {p.recipe for c in keys.values() if c.head for p in c.head.points if p.recipe}
    recipe_users = _recipe_users(sorted(used), masters_head)
    runners, runners_problem = _runners(head, layout)
    if runners is not None and layout.runners in changed_files:  # what the generator refuses in it
        problems += schema.runners(runners, layout.runners)
    changelog_changed = layout.changelog in changed_files
    changelog = (
        compare(layout.changelog, base.read(layout.changelog), head.read(layout.changelog))
        if changelog_changed
        else None
    )
    return ReviewDiff(
        layout,
        changed_files,
        keys,
        head_keys,
        changelog,
        changelog_changed,
        recipes_head.recipes,
        recipes_base.recipes,
        runners,
        runners_problem,
        problems,
        changed_recipes,
        recipe_users,
        codeowners=find_codeowners(base),
        unreadable_masters=unreadable,
        no_masters=not head_masters_all and not layout_mod.master_config_paths(base, layout),
        masters_head=masters_head,
    )


Side = dict[str, tuple[str, MasterFile]]  # config key → (path, the master config holding it)


def _changed_keys(
    base: Snapshot,
    layout: Layout,
    master_paths: list[str],
    masters_head: dict[str, MasterFile],
    keys: dict[str, KeyChange],
) -> list[str]:
    """Compare the changed master configs key by key, wherever each key lives at either ref: a
    key moved to another file (or a file renamed or moved) with the same entry did not change.
    Returns the changed master configs unreadable at the head: their keys are unknown, not removed."""
    old_side: Side = {}
    new_side: Side = {}
    for path in master_paths:
        old, new = _master(base, path, layout), masters_head.get(path)
        if old is not None:
            old_side.update((key, (path, old)) for key in old.entries if key not in old_side)
        if new is not None:
            new_side.update((key, (path, new)) for key in new.entries if key not in new_side)
    for key in old_side.keys() - new_side.keys():  # gone from its file: perhaps in another one
        for path, master in masters_head.items():
            if key in master.entries:
                new_side[key] = (path, master)
                break
    only_new = new_side.keys() - old_side.keys()
    if only_new:
        for path in layout_mod.master_config_paths(base, layout):
            old = _master(base, path, layout) if path not in master_paths else None
            for key in only_new & old.entries.keys() if old else ():
                old_side.setdefault(key, (path, old))
    for key in sorted(old_side.keys() | new_side.keys(), key=lambda k: (k not in new_side, k)):
        was, now = old_side.get(key), new_side.get(key)
        texts = (was[1].entries.get(key) if was else None, now[1].entries.get(key) if now else None)
        if texts[0] and texts[1] and texts[0].text == texts[1].text:
            continue
        before = was[1].entry(key) if was else None
        after = now[1].entry(key) if now else None
        if before is not None and after is not None and before.raw == after.raw:
            continue
        keys[key] = KeyChange(key, now[0] if now else was[0] if was else "", before, after)
    # A file found unreadable while its entries were parsed: what its keys became is unknown.
    unreadable = [p for p in master_paths if p in masters_head and masters_head[p].unreadable]
    gone = {key for key, (path, _) in {**old_side, **new_side}.items() if path in unreadable}
    for key in [k for k, change in keys.items() if change.file in unreadable or k in gone]:
        del keys[key]
    return unreadable


def _prefetch_recipes(keys: dict[str, KeyChange], base: Snapshot, head: Snapshot) -> None:
    """Ask for every recipe that `runs_of` is about to look up, in the order it will: git then
    unpacks each one while the ones before it are parsed."""
    for change in keys.values():
        if change.head is None:  # a removed key's recipes are not read
            continue
        if change.base is not None:
            base.prefetch(list(dict.fromkeys(p.recipe for p in change.base.points if p.recipe)))
        head.prefetch(list(dict.fromkeys(p.recipe for p in change.head.points if p.recipe)))


def _recipe_users(paths: list[str], masters: dict[str, MasterFile]) -> dict[str, list[ConfigEntry]]:
    """Every head config entry that runs each recipe (for left-over variant detection)."""
    users: dict[str, list[ConfigEntry]] = {path: [] for path in paths}
    mentioned = RecipeMentions(paths)
    for master in masters.values():
        for key, chunk in master.entries.items():
            if not master.is_parsed(key) and chunk.text and not mentioned(chunk.text):
                continue
            entry = master.entry(key)
            for path in {p.recipe for p in entry.points if p.recipe in users} if entry else ():
                users[path].append(entry)
    return users


def _keys_using_recipes(
    changed: list[str],
    base: Snapshot,
    masters: dict[str, MasterFile],
    keys: dict[str, KeyChange],
    layout: Layout,
) -> None:
    """Add unchanged config keys whose points use a recipe the PR changed."""
    base_masters: dict[str, MasterFile | None] = {}
    mentioned = RecipeMentions(changed)
    for path, master in masters.items():
        for key, chunk in master.entries.items():
            if key in keys or not mentioned(chunk.text):
                continue
            entry = master.entry(key)
            if entry is None or not any(p.recipe in changed for p in entry.points):
                continue
            if path not in base_masters:
                base_masters[path] = _master(base, path, layout)
            old = base_masters[path]
            keys[key] = KeyChange(key, path, old.entry(key) if old else None, entry, entry_changed=False)


def _runners(head: Snapshot, layout: Layout) -> tuple[Any, Problem | None]:
    data = head.read(layout.runners)
    if data is None:
        return None, Problem("runners-missing", layout.runners, None, {"path": layout.runners})
    try:
        return load_bytes(data).data, None
    except YamlProblem as exc:
        return None, from_yaml(exc, layout.runners)
