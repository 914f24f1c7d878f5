"""Base vs head: the comparison of two resolved models of what InferenceX's generator would
launch (`bot.model.runs`, DESIGN.md §2 "The diff is total").

Each ref is read with its own layout. A config key changed iff one of its runs did: its entry as
parsed (by value and type, aliases into other entries resolved), a recipe its points name, or its
runner's record in runners.yaml. The only shortcut is the one that cannot miss a change: a file
git lists as unchanged has the same bytes at both refs, so a key whose entry is the same and whose
recipes and runner record are in unchanged files has the same runs, and they are not worked out.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bot.model import dram, schema
from bot.model import layout as layout_mod
from bot.model.changelog import ChangelogDiff, compare, languages
from bot.model.generated import entry_fields
from bot.model.images import ImageUse
from bot.model.layout import Layout
from bot.model.master import ConfigEntry, MasterFile, Point
from bot.model.owners import CodeownersFile, find_codeowners
from bot.model.problems import Problem
from bot.model.recipe import Recipe
from bot.model.runners import labels as runner_labels
from bot.model.runs import (
    GROUP,
    LAUNCH,
    RUNNER,
    SCRIPT,
    Ref,
    Run,
    Shared,
    mentions,
    recipe_paths,
    run_ident,
    same,
)
from bot.model.scripts import LAUNCHERS, resolve
from bot.model.selection import MAX_RUN_CHOICES, choices
from bot.settings import MASTER_CONFIGS
from bot.sources.snapshot import Snapshot, is_plain_path
from bot.yamlsafe import LineDict, frozen

# What the runs of a review may take in memory: about 1.5 KB each (its model, its changes and its
# part of the report: 34,000 runs of keys aliasing one real entry took 84 MB in all, 510,000 took
# 726 MB), so at most 40,000 runs, over fifteen times the whole InferenceX matrix.
RUN_BYTES = 1_500
MAX_RUNS_BYTES = 60_000_000
# Up to this many changed file names, an unchanged entry is first searched for them before it is
# built (the real master configs build whole in about 35 ms; searching them for 3,000 names, 0.7 s).
_MENTIONED_NAMES = 64

__all__ = [
    "KeyChange",
    "ReviewDiff",
    "Run",
    "ScriptChanges",
    "compute",
    "image_uses",
    "run_ident",
    "whole_ident",
]


@dataclass
class KeyChange:
    """A config key whose runs may have changed: its entry, a recipe it runs or its runner's
    hardware changed (`entry_changed` says whether the entry itself did)."""

    key: str
    file: str
    base: ConfigEntry | None
    head: ConfigEntry | None
    aspects: list[str] = field(default_factory=list)
    added: list[Run] = field(default_factory=list)
    removed: list[Run] = field(default_factory=list)
    changed: list[Run] = field(default_factory=list)
    unchanged: list[Run] = field(default_factory=list)
    # The base run of every run in `changed` and `unchanged` (see `base_of`).
    before: dict[int, Run] = field(default_factory=dict, repr=False)
    entry_changed: bool = True
    # Every head run in the matrix's order, including `duplicates`: runs whose identity an earlier
    # run of the key has already (both are launched; the checks look at each).
    head_runs: list[Run] = field(default_factory=list, repr=False)
    duplicates: list[Run] = field(default_factory=list, repr=False)
    known_duplicates: set[tuple[Any, ...]] = field(default_factory=set, repr=False)  # the base's too

    @property
    def line(self) -> int | None:
        return (self.head or self.base).line if (self.head or self.base) else None

    def base_of(self, run: Run) -> Run:
        """The base run a run of `changed` or `unchanged` is compared with."""
        return self.before[id(run)]

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
        """Whether the PR added or changed what a run of this key starts with, so that its results
        must be measured again (a changelog entry must name it). Only losing runs needs none; an
        entry whose own fields changed needs one even when no run could be worked out."""
        if self.head is None:
            return False
        if self.base is None or self.added or self.changed:
            return True
        if any(_same_run(run) not in self.known_duplicates for run in self.duplicates):
            return True  # a run launched once more
        return not same(entry_fields(self.base.raw), entry_fields(self.head.raw))

    @property
    def labels_only(self) -> bool:
        """Whether the PR changed only what labels this key's results, not what its server or
        client runs: every changed run is a multinode run an srt-slurm recipe serves at both refs
        (the recipe states the server's and the client's settings) and differs from its base run
        only in `LABEL_SETTINGS`, which no multinode launcher or client script reads
        (docs/checks.md); no run was added or launched once more, no other field of the entry
        changed."""
        if not self.needs_entry or self.base is None or self.head is None or self.added:
            return False
        if any(_same_run(run) not in self.known_duplicates for run in self.duplicates):
            return False
        if not same(_unlabelled(entry_fields(self.base.raw)), _unlabelled(entry_fields(self.head.raw))):
            return False
        return bool(self.changed) and all(
            _recipe_run(run) and _recipe_run(self.base_of(run)) and _only_labels(self.base_of(run), run)
            for run in self.changed
        )


# What only labels a multinode recipe run's results: the generator hands these on to the workflow's
# environment, where neither the launcher nor the client script reads them (docs/checks.md).
LABEL_SETTINGS = ("kv-offloading", "kv-offload-backend", "dram-utilization", dram.BUDGET_SETTING)
_RECIPES_MULTINODE = "benchmarks/multi_node/srt-slurm-recipes/"


def _refused(run: Run) -> bool:
    point = run.point
    dram_run = point.scenario == "agentic-coding" and point.kv_offloading == "dram"
    return dram_run and dram.BUDGET_SETTING not in run.parts[RUNNER]


def _is_label(path: str) -> bool:
    name = path.rpartition(":")[2]  # a setting kept apart under its part's name (`group:…`)
    return any(name == label or name.startswith(label + ".") for label in LABEL_SETTINGS)


def _unlabelled(fields: Any) -> Any:
    return {k: v for k, v in fields.items() if not _is_label(str(k))} if isinstance(fields, dict) else fields


def _recipe_run(run: Run) -> bool:
    recipe = run.point.recipe or ""
    return run.point.multinode and run.variant is not None and _RECIPES_MULTINODE in recipe


def _only_labels(before: Run, after: Run) -> bool:
    """Whether two runs differ only in labels, and the generator emits both (a DRAM-offload run
    whose budget cannot be computed, e.g. on a runner with no hardware record, is refused)."""
    if _refused(before) or _refused(after):
        return False
    old, new = before.settings, after.settings
    return all(_is_label(path) for path in old.keys() | new.keys() if not same(old.get(path), new.get(path)))


@dataclass
class ReviewDiff:
    """Everything the checks look at."""

    layout: Layout  # the head's
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
    masters_base: dict[str, MasterFile] = field(default_factory=dict, repr=False)
    # What the PR should know but need not fix (a `*master*.yaml` InferenceX does not read).
    notices: list[Problem] = field(default_factory=list)
    # Changed shell files a run executes (launchers, benchmark scripts, what they source), from
    # the root, and the launchers at the head that start each per-key script (`bot.model.scripts`).
    scripts: ScriptChanges | None = None
    # Whether the head holds runner launchers: without them what a run executes is not known.
    launchers: bool = True
    # The languages of the base changelog's newest entries, which a drafted entry is written in.
    changelog_langs: tuple[str, ...] = ("en",)

    def head_entry(self, key: str) -> ConfigEntry | None:
        """Any key's entry at the head (built on demand: the sweep runs keys the PR did not change)."""
        if key in self.keys:
            return self.keys[key].head
        path = self.head_keys.get(key)
        return self.masters_head[path].entry(key) if path in self.masters_head else None


@dataclass
class ScriptChanges:
    """The shell files a PR changed that runs execute: per-key benchmark scripts (with the keys
    whose runs start them, at either ref) and shared files (launchers, `benchmark_lib.sh`, …)."""

    per_key: dict[str, list[str]]  # script → the keys that start it
    shared: list[str]
    base: Snapshot
    head: Snapshot
    root: str
    unused: list[str] = field(default_factory=list)  # benchmark scripts no run starts
    # A shared launcher → the machine names whose launcher is it, or a symlink to it, at either ref.
    reach: dict[str, list[str]] = field(default_factory=dict)


def _shell(path: str, layout: Layout) -> str | None:
    """A file a run may execute, from the root (None: not one)."""
    if not path.startswith(layout.root) or not path.endswith(".sh"):
        return None
    inside = path[len(layout.root) :]
    return inside if inside.startswith(("runners/", "benchmarks/")) else None


def _script_changes(changed: list[str], old: Ref, new: Ref) -> ScriptChanges | None:
    """Which changed shell files are some key's benchmark script, and which are shared."""
    paths = {p for path in changed for p in (_shell(path, new.layout), _shell(path, old.layout)) if p}
    if not paths:
        return None
    per_key: dict[str, list[str]] = {}
    for ref in (new, old):
        for key in ref.keys:
            entry = ref.entry(key)
            for point in entry.points if entry else ():
                for launch in ref.executed(entry.raw, point):
                    if launch.script in paths and key not in per_key.setdefault(launch.script, []):
                        per_key[launch.script].append(key)
    rest = paths - per_key.keys()
    unused = sorted(p for p in rest if _PER_KEY.fullmatch(p))
    shared = sorted(rest.difference(unused))
    reach = {path: _reach(path, (new, old)) for path in shared if path.startswith(LAUNCHERS)}
    return ScriptChanges(per_key, shared, old.snapshot, new.snapshot, new.layout.root, unused, reach)


def _reach(path: str, refs: tuple[Ref, ...]) -> list[str]:
    """The machine names whose launcher is `path` or a symlink to it (`launch_b200-dgxc-slurm.sh` →
    `launch_b200-dgxc.sh`: an edit of the target changes both machines' runs), at either ref."""
    names: list[str] = []
    for ref in refs:
        files = ref.shell_files
        for launcher in sorted(files):
            if not (launcher.startswith(f"{LAUNCHERS}launch_") and launcher.endswith(".sh")):
                continue
            read = lambda p, ref=ref: ref.snapshot.read(ref.layout.root + p)  # noqa: E731
            if launcher == path or resolve(launcher, read, files)[0] == path:
                names.append(launcher.removeprefix(f"{LAUNCHERS}launch_").removesuffix(".sh"))
    own = path.removeprefix(f"{LAUNCHERS}launch_").removesuffix(".sh")
    return sorted(set(names), key=lambda name: (name != own, name))


# A benchmark script's name (`benchmarks/single_node/agentic/<model>_<precision>_<gpu>….sh`): one
# no run starts is no shared file either (a deprecated or a SpeedBench script).
_PER_KEY = re.compile(r"benchmarks/(single_node|multi_node)/([a-z_]+/)*[^/]+_[^/]+_[^/]+\.sh")


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


def _run_choices(entry: ConfigEntry | None, ref: Ref | None) -> int:
    """What working out an entry's runs costs (see `selection.choices`)."""
    points = entry.points if entry else ()
    return sum(choices(ref.recipes.get(p.recipe) if ref else None, p) for p in points)


def _run_count(entry: ConfigEntry | None) -> int:
    return sum(len(p.concurrencies) for p in entry.points) if entry else 0


def _classify_within_budget(keys: dict[str, KeyChange], old: Ref, new: Ref) -> list[Problem]:
    """Work out every changed key's runs while the budgets last: the variant comparisons, and the
    memory the runs take (`RUN_BYTES` each, wherever they come from: keys that alias one entry
    each cost its runs again). The keys they cannot pay for are left out of the review, and the
    problems returned name them."""
    spent = spent_bytes = 0
    over: list[KeyChange] = []
    heavy: list[KeyChange] = []
    still: list[KeyChange] = []
    for change in keys.values():
        # A removed key's runs are only counted, so its recipes need not be read.
        cost = _run_choices(change.base, old if change.head is not None else None)
        cost += _run_choices(change.head, new)
        weight = RUN_BYTES * (_run_count(change.base) + _run_count(change.head))
        if spent + cost > MAX_RUN_CHOICES:
            over.append(change)
            continue
        if spent_bytes + weight > MAX_RUNS_BYTES:
            heavy.append(change)
            continue
        spent += cost
        spent_bytes += weight
        base_runs = old.runs(change.base, with_recipes=change.head is not None)
        _classify(change, base_runs, new.runs(change.head), old, new)
        if not change.entry_changed and not (change.added or change.removed or change.changed):
            still.append(change)  # a recipe or runners.yaml change that none of its runs reads
    for change in over + heavy + still:
        del keys[change.key]
    problems = []
    if over:
        params = {"count": len(over), "keys": [c.key for c in over[:10]], "limit": MAX_RUN_CHOICES}
        problems.append(Problem("review-too-many-runs", over[0].file, over[0].line, params))
    if heavy:
        params = {"count": len(heavy), "keys": [c.key for c in heavy[:10]], "path": heavy[0].file}
        params.update(megabytes=MAX_RUNS_BYTES // 10**6, runs=MAX_RUNS_BYTES // RUN_BYTES)
        problems.append(Problem("review-runs-too-heavy", heavy[0].file, heavy[0].line, params))
    return problems


def _matched(runs: list[Run], alone: bool = False) -> tuple[dict[tuple[Any, ...], Run], list[Run]]:
    """Runs by their whole identity (`_same_run`: every field the generator hands on but the
    concurrencies, which a run has one of), and the duplicates: runs whose identity an earlier run
    has, which the generator launches twice. When the other ref has no runs to pair them with
    (`alone`: a key added or removed), a run whose topology and concurrency no other run shares is
    keyed by those alone: its point's fields could only tell it from runs that share them."""
    shared = Counter(run.ident for run in runs) if alone else None
    fields: dict[int, Any] = {}  # the point's fields, worked out once per point
    matched: dict[tuple[Any, ...], Run] = {}
    duplicates: list[Run] = []
    for run in runs:
        if shared is not None and shared[run.ident] == 1:
            key = run.ident
        else:
            if id(run.point) not in fields:
                fields[id(run.point)] = _point_fields(run.point)
            key = (*run.ident, fields[id(run.point)])
        if key in matched:
            duplicates.append(run)
        else:
            matched[key] = run
    return matched, duplicates


def _place(run: Run) -> tuple[Any, ...]:
    """Where a run stands apart from its KV-offload mode: its identity without `kv-offloading`
    (the point's topology holds it second to last), so that a point switched to DRAM offload is
    shown as that change of its run."""
    topology = run.point.topology
    return (*topology[:-2], topology[-1], run.concurrency)


def _paired(
    before: dict[tuple[Any, ...], Run], after: dict[tuple[Any, ...], Run]
) -> tuple[dict[int, Run], list[Run], list[Run]]:
    """Each head run's base run (by the head run's id), the added runs and the removed ones. A
    run is paired with the base run of the same whole identity; the rest, by their topology and
    concurrency (`Run.ident`), then by `_place`, where exactly one run on each side stands there."""
    pairs = {id(run): before[key] for key, run in after.items() if key in before}
    rest_base = [run for key, run in before.items() if key not in after]
    rest_head = [run for key, run in after.items() if key not in before]
    for where in (lambda run: run.ident, _place):
        if not rest_base or not rest_head:
            break
        counts_base = Counter(where(run) for run in rest_base)
        counts_head = Counter(where(run) for run in rest_head)
        lone = {where(run): run for run in rest_base if counts_base[where(run)] == 1}
        taken: set[int] = set()
        for run in rest_head:
            spot = where(run)
            if counts_head[spot] == 1 and spot in lone:
                pairs[id(run)] = lone[spot]
                taken.add(id(lone[spot]))
        rest_head = [run for run in rest_head if id(run) not in pairs]
        rest_base = [run for run in rest_base if id(run) not in taken]
    return pairs, rest_head, rest_base


def _classify(change: KeyChange, base_runs: list[Run], head_runs: list[Run], old: Ref, new: Ref) -> None:
    before, old_duplicates = _matched(base_runs, alone=not head_runs)
    after, change.duplicates = _matched(head_runs, alone=not base_runs)
    change.known_duplicates = {_same_run(run) for run in old_duplicates}
    change.head_runs = head_runs
    pairs, change.added, change.removed = _paired(before, after)
    known: dict[tuple[int, int, int], bool] = {}  # pairs of parts compared already
    for run in after.values():
        if id(run) in pairs:
            base_run = pairs[id(run)]
            target = change.unchanged if base_run.same_settings(run, known) else change.changed
            target.append(run)
            change.before[id(run)] = base_run
    _aspects(change, old, new)


def _differs(change: KeyChange, setting: Any) -> bool:
    """Whether a run found at both refs differs in `setting` (a function of a run)."""
    return any(not same(setting(change.base_of(r)), setting(r)) for r in change.changed)


def _aspects(change: KeyChange, old: Ref, new: Ref) -> None:
    base, head = change.base, change.head
    aspects = change.aspects
    if base is not None and head is not None:
        fields = entry_fields(base.raw), entry_fields(head.raw)
        both = all(isinstance(f, dict) for f in fields)
        if both and not same(fields[0].get("image"), fields[1].get("image")):
            aspects.append("image")
        if both and not same(fields[0].get("runner"), fields[1].get("runner")):
            aspects.append("runner")
        elif _differs(change, lambda run: run.parts[RUNNER]):  # what its runs read of the record
            aspects.append("hardware")
    if change.added or change.removed:
        aspects.append("points")
    if _differs(change, lambda run: run.parts[GROUP].get("dram-utilization")):  # the group's
        aspects.append("utilization")
    if _differs(change, lambda run: run.variant.data if run.variant else None):
        aspects.append("recipe")
    if _differs(change, lambda run: run.parts[LAUNCH].get(SCRIPT)):
        aspects.append(SCRIPT)
    if base is None:
        aspects.append("added")
    elif head is None:
        aspects.append("removed")
    elif not aspects and (change.entry_changed or change.changed):
        aspects.append("other")


def _odd_names(changed_files: list[str], layouts: tuple[Layout, ...]) -> list[Problem]:
    """Changed files where the sweep reads data whose names prbot cannot ask git for (a line break,
    an empty, `.` or `..` part): they would run unchecked, so each is a problem, never a skip."""
    folders = tuple(f for layout in layouts for f in (f"{layout.root}configs/", f"{layout.root}benchmarks/"))
    folders += (layout_mod.OLDER_CONFIGS,)
    return [
        Problem("path-odd-name", path, None, {"path": repr(path)[1:-1]})
        for path in changed_files
        if not is_plain_path(path) and path.startswith(folders)
    ]


def _is_recipe(path: str, layout: Layout) -> bool:
    return path.startswith(f"{layout.root}benchmarks/") and path.endswith((".yaml", ".yml"))


def _changed_recipes(changed_files: list[str], keys: dict[str, KeyChange], old: Ref, new: Ref) -> list[str]:
    """The changed files that are recipes: every file a point of a changed key names as its recipe
    at either ref, whatever its name or folder, and the YAML files under `benchmarks/` (read even
    when no key runs them, so that a broken one is named)."""
    named = {p.recipe for c in keys.values() for e in (c.base, c.head) if e for p in e.points if p.recipe}
    return [
        path
        for path in changed_files
        if path in named or _is_recipe(path, new.layout) or _is_recipe(path, old.layout)
    ]


def _key_problems(new: Ref) -> list[Problem]:
    """What InferenceX's generator refuses about the head's keys: one key in two master configs,
    a `*` in a key (its `load_config_files`)."""
    stars = [
        Problem("master-key-star", path, new.line(key), {"key": key, "path": path})
        for key, path in new.keys.items()
        if "*" in key
    ]
    return [*new.twice, *stars]


def _not_read(changed_files: list[str], old: Ref, new: Ref) -> list[Problem]:
    """A `*master*.yaml` the PR changes (and keeps) that InferenceX does not read."""
    read = {*old.masters, *new.masters}
    masters = list(new.masters) or list(old.masters)
    return [
        Problem("master-not-read", path, None, {"path": path, "masters": masters})
        for path in changed_files
        if layout_mod.looks_like_master(path)
        and path not in read
        and is_plain_path(path)
        and new.snapshot.read(path) is not None
    ]


def compute(
    base: Snapshot, head: Snapshot, changed_files: list[str], master_configs: tuple[str, ...] = MASTER_CONFIGS
) -> ReviewDiff:
    """Both refs' models, and what changed for every config key between them."""
    shared = Shared()
    old, new = Ref(base, master_configs, shared), Ref(head, master_configs, shared)
    layout = new.layout
    changed = set(changed_files)
    problems = _odd_names(changed_files, (old.layout, new.layout)) + _key_problems(new)
    problems += layout_mod.lost_masters([*old.masters], old.layout, [*new.masters], layout, master_configs)
    for path, master in new.masters.items():  # a file the PR did not touch is not its fault
        if path in changed or path not in old.masters:
            problems.extend(p for p in master.problems if p not in problems)
    unreadable = [p for p, m in new.masters.items() if m.unreadable and p in changed]
    scripts = _script_changes(changed_files, old, new)
    keys = _changed_keys(old, new, changed, unreadable, scripts)
    changed_recipes = _changed_recipes(changed_files, keys, old, new)
    for path in changed_recipes:  # read even when no key runs them, so that a broken one is named
        if _is_recipe(path, new.layout):
            new.recipes.get(path)
    _prefetch_recipes(keys, base, head)
    problems += _classify_within_budget(keys, old, new)
    notices = _not_read(changed_files, old, new) + _unscheduled(old, new, new.layout.runners in changed)
    moved = layout_mod.tree_moved(old.layout, layout, [*old.masters], [*new.masters], head, master_configs)
    if moved is not None:  # two trees at the head: which one runs is unknown, so it blocks
        (problems if moved.message_id == "layout-two-trees" else notices).append(moved)
    for change in keys.values():
        if change.head is not None:
            # A key changed only through what its runs read (a recipe, a script, its runner's
            # record) has the same entry at both refs: its entry's problems were there before the
            # PR, so they are notices, as a duplicate run the base had already is.
            (problems if change.entry_changed else notices).extend(change.head.problems)
            notices.extend(change.head.notices)
        for run in change.duplicates:  # one the base had already is not this PR's doing
            (notices if _same_run(run) in change.known_duplicates else problems).append(
                _duplicate(change, run)
            )
    used = {p.recipe for c in keys.values() if c.head for p in c.head.points if p.recipe}
    runners, runners_problem = new.runners
    if runners is not None and layout.runners in changed:  # what the generator refuses in it
        problems += schema.runners(runners, layout.runners)
    changelog_changed = layout.changelog in changed or (old.layout.changelog in changed)
    changelog = (
        compare(layout.changelog, base.read(old.layout.changelog), head.read(layout.changelog))
        if changelog_changed
        else None
    )
    return ReviewDiff(
        layout,
        changed_files,
        keys,
        dict(new.keys),
        changelog,
        changelog_changed,
        new.recipes.recipes,
        old.recipes.recipes,
        runners,
        runners_problem,
        problems,
        changed_recipes,
        _recipe_users(sorted(used), new),
        codeowners=find_codeowners(base),
        unreadable_masters=unreadable,
        no_masters=not new.masters and not old.masters,
        masters_head=new.masters,
        masters_base=old.masters,
        notices=notices,
        scripts=scripts,
        launchers=new.has_launchers,
        changelog_langs=_changelog_langs(base, old.layout.changelog),
    )


_MACHINES_SHOWN = 6  # machines of a removed label a warning names; the rest are counted


def _unscheduled(old: Ref, new: Ref, runners_changed: bool) -> list[Problem]:
    """Head keys whose runner label the PR removes from runners.yaml's `labels` together with its
    machines (none of them is listed under any label at the head): their jobs wait for a machine
    that is gone. InferenceX's generator still emits them (it reads `labels` only to filter by
    runner). A label that is only unlisted proves nothing: older files did not list every label
    GitHub's runners carry (GB300 keys were added on `gb300-nv`, never listed), and #1970
    dropped labels whose machines it kept under others."""
    table, before = runner_labels(new.runners[0]), runner_labels(old.runners[0])
    if not runners_changed or table is None or before is None:
        return []
    listed = {
        m for machines in table.values() if isinstance(machines, list) for m in machines if isinstance(m, str)
    }
    found = []
    for key in new.keys:
        raw = new.raw(key)
        runner = _runner_of(raw)
        if not isinstance(runner, str) or table.get(runner) or not isinstance(before.get(runner), list):
            continue
        machines = [m for m in before[runner] if isinstance(m, str)]
        if machines and listed.isdisjoint(machines):
            params = {"key": key, "runner": runner, "path": new.layout.runners}
            params |= {
                "machines": machines[:_MACHINES_SHOWN],
                "more": max(0, len(machines) - _MACHINES_SHOWN),
            }
            line = raw.line_of("runner") if isinstance(raw, LineDict) else None
            found.append(Problem("runner-no-machines", new.keys[key], line or new.line(key), params))
    return found


def _runner_of(raw: Any) -> Any:
    return raw.get("runner") if isinstance(raw, dict) else None


def _same_run(run: Run) -> tuple[Any, ...]:
    """A run's whole identity, what two runs that the generator would launch twice share: its
    topology and concurrency, and every field of its point but the concurrencies (the generator
    hands each on: `kv-p2p-transfer`, `router`, older points' `offloading: cpu`, the
    `CONFIG_FILE=…:variant` each names)."""
    return whole_ident(run.point, run.concurrency)


def whole_ident(point: Point, concurrency: int) -> tuple[Any, ...]:
    """The whole identity (`_same_run`) of a point's run at one concurrency."""
    return (*run_ident(point, concurrency), _point_fields(point))


def _point_fields(point: Point) -> Any:
    """A point's fields as the generator's row holds them (its defaults filled in), hashable."""
    return frozen(point.fields)


def _duplicate(change: KeyChange, run: Run) -> Problem:
    """A second run of a key with an identity an earlier run has (both are launched)."""
    first = next(r for r in change.head_runs if _same_run(r) == _same_run(run))
    params = {"key": change.key, "concurrency": run.concurrency, "first_line": first.point.line}
    params["line"] = run.point.line
    return Problem("runs-duplicate", run.point.file, run.point.line, params)


def _changed_keys(
    old: Ref, new: Ref, changed: set[str], unreadable: list[str], scripts: ScriptChanges | None = None
) -> dict[str, KeyChange]:
    """Every key whose runs may differ between the refs, wherever it lives at either: a key moved
    to another file (or a file renamed or moved) with the same entry and the same inputs did not
    change. Keys of a changed master config unreadable at the head are unknown, not removed."""
    same_root = old.layout.root == new.layout.root
    recipes = changed  # any changed file is a recipe to the keys whose points name it
    runners = not same_root or old.layout.runners in changed or new.layout.runners in changed
    keys: dict[str, KeyChange] = {}
    for key in sorted(old.keys.keys() | new.keys.keys(), key=lambda k: (k not in new.keys, k)):
        if old.keys.get(key) in unreadable or new.keys.get(key) in unreadable:
            continue
        file = new.keys.get(key) or old.keys[key]
        if key not in old.keys or key not in new.keys or not same(old.raw(key), new.raw(key)):
            keys[key] = KeyChange(key, file, old.entry(key), new.entry(key))
            continue
        if scripts is not None and any(key in users for users in scripts.per_key.values()):
            keys[key] = KeyChange(key, file, old.entry(key), new.entry(key), entry_changed=False)
            continue  # a benchmark script its runs start changed
        if same_root and not runners and not recipes and scripts is None:
            continue  # the same entry, and every file its runs read has the same bytes
        if _inputs_changed(key, old, new, recipes if same_root else None, runners) or (
            scripts is not None and _launch_moved(key, old, new)
        ):
            keys[key] = KeyChange(key, file, old.entry(key), new.entry(key), entry_changed=False)
    return keys


def _inputs_changed(key: str, old: Ref, new: Ref, recipes: set[str] | None, runners: bool) -> bool:
    """Whether a key whose entry is the same at both refs runs differently: a recipe it names
    changed (`recipes`, the changed ones; None: the roots differ, so each recipe's bytes are
    compared), or its runner's record in runners.yaml did (`runners`: runners.yaml may differ)."""
    raw = new.raw(key)
    runner = raw.get("runner") if isinstance(raw, dict) else None
    if runners and not same(old.hardware(runner), new.hardware(runner)):
        return True
    if recipes is not None:
        # The entry is built only when one of its strings names a changed file (see `mentions`),
        # while there are few: with many, building it costs less than looking for each name.
        names = {posixpath.basename(path) for path in recipes}
        if len(names) <= _MENTIONED_NAMES and not mentions(raw, names):
            return False
        return not recipes.isdisjoint(recipe_paths(new.entry(key)))
    before, after = old.entry(key), new.entry(key)
    if before is None or after is None:
        return before is not after
    pairs = {(a.recipe, b.recipe) for a, b in zip(before.points, after.points, strict=False)}
    return any(
        a is None or b is None or old.snapshot.read(a) != new.snapshot.read(b) for a, b in pairs if a or b
    )


def _launch_moved(key: str, old: Ref, new: Ref) -> bool:
    """Whether a key's runs start other benchmark scripts at the head (a launcher or a new
    framework-named script changed which one runs)."""
    before, after = old.entry(key), new.entry(key)
    if before is None or after is None:
        return False
    pairs = zip(before.points, after.points, strict=False)
    return any(
        {x.script for x in old.executed(before.raw, a)} != {x.script for x in new.executed(after.raw, b)}
        for a, b in pairs
    )


def _prefetch_recipes(keys: dict[str, KeyChange], base: Snapshot, head: Snapshot) -> None:
    """Ask for every recipe that the runs are about to look up, in the order they will: git then
    unpacks each one while the ones before it are parsed."""
    for change in keys.values():
        if change.head is None:  # a removed key's recipes are not read
            continue
        if change.base is not None:
            base.prefetch(list(dict.fromkeys(p.recipe for p in change.base.points if p.recipe)))
        head.prefetch(list(dict.fromkeys(p.recipe for p in change.head.points if p.recipe)))


def _recipe_users(paths: list[str], new: Ref) -> dict[str, list[ConfigEntry]]:
    """Every head config entry that runs each recipe (for left-over variant detection), from the
    parsed points of every key."""
    users: dict[str, list[ConfigEntry]] = {path: [] for path in paths}
    if not paths:
        return users
    for key in new.keys:
        entry = new.entry(key)
        for path in sorted(recipe_paths(entry) & users.keys()) if entry else ():
            users[path].append(entry)
    return users


def _changelog_langs(base: Snapshot, path: str) -> tuple[str, ...]:
    """The languages of the base changelog's newest entries (`changelog.languages`)."""
    data = base.read(path)
    return languages(data if isinstance(data, bytes) else None)
