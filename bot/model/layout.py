"""Where things live in a benchmark-config repository (DESIGN.md §1 "Layout")."""

from __future__ import annotations

import posixpath
from typing import NamedTuple

from bot.model.owners import CODEOWNERS_PATHS
from bot.model.prfiles import READ_PATHS as RULE_PATHS
from bot.model.problems import Problem
from bot.settings import MASTER_CONFIGS
from bot.sources.snapshot import Snapshot

E2E_ROOT = "inferencex-e2e/"
# What a review reads, under either root: fetched in one batch by the action (`runners/`: the
# launchers, which name the benchmark script a run executes).
DATA_PATHS = ("configs/", "benchmarks/", "runners/", "perf-changelog.yaml", ".github/")
# Before InferenceX moved them to the root (#1992), the master configs lived under `.github/`.
OLDER_PREFIX = ".github/"
OLDER_CONFIGS = ".github/configs/"


class Layout(NamedTuple):
    """Paths relative to the repository root; `root` is '' or 'inferencex-e2e/'."""

    root: str

    @property
    def configs_dir(self) -> str:
        return f"{self.root}configs/"

    @property
    def runners(self) -> str:
        return f"{self.root}configs/runners.yaml"

    @property
    def changelog(self) -> str:
        return f"{self.root}perf-changelog.yaml"

    def recipe_path(self, srt_recipe: str, recipe_dir: str | None, multinode: bool) -> str:
        """The repository path of a point's `srt-recipe` (selector already removed)."""
        if recipe_dir:
            kind = "multi_node" if multinode else "single_node"
            return f"{self.root}benchmarks/{kind}/srt-slurm-recipes/{recipe_dir.strip('/')}/{srt_recipe}"
        return f"{self.root}{srt_recipe}"

    def legacy_recipe_path(self, config_file: str) -> str:
        """The repository path of an older multinode row's `CONFIG_FILE=`: either `recipes/<path>`
        (under the multinode srt-slurm-recipes folder) or already a path from the root."""
        if self.legacy_recipe_outside(config_file):
            return (
                f"{self.root}benchmarks/multi_node/srt-slurm-recipes/{config_file.removeprefix('recipes/')}"
            )
        return f"{self.root}{config_file}"

    @staticmethod
    def legacy_recipe_outside(config_file: str) -> bool:
        """Whether an older `CONFIG_FILE=` may name a recipe kept outside this repository: a
        `benchmarks/…` path is from the repository root, so inside it; the `recipes/…` form (and
        a bare name, read by another launcher from its own folder) may not be."""
        return not config_file.startswith("benchmarks/")


def _existing(snapshot: Snapshot, paths: list[str]) -> list[str]:
    """The paths that exist at this ref (one listing per folder)."""
    listed: dict[str, set[str]] = {}
    found = []
    for path in paths:
        folder = posixpath.dirname(path) + "/"
        if folder not in listed:
            listed[folder] = set(snapshot.list_files(folder))
        if path in listed[folder]:
            found.append(path)
    return found


def detect(snapshot: Snapshot, names: tuple[str, ...] = MASTER_CONFIGS) -> Layout:
    """The root at this ref, as InferenceX's generator finds its master configs: the repository
    root when one is there (or in the older `.github/configs/`), whatever else the ref holds (its
    `utils/constants.py` names them from the root, so a copy under `inferencex-e2e/` is not what
    runs); else `inferencex-e2e/` when one is there; with none anywhere, `inferencex-e2e/` when its
    `configs/` folder exists, else the repository root."""
    if master_config_paths(snapshot, Layout(""), names):
        return Layout("")
    if _existing(snapshot, [E2E_ROOT + name for name in names]):
        return Layout(E2E_ROOT)
    return Layout(E2E_ROOT if snapshot.list_files(E2E_ROOT + "configs/") else "")


def names_read(paths: list[str], layout: Layout, names: tuple[str, ...] = MASTER_CONFIGS) -> dict[str, str]:
    """Which of `names` the master configs at `paths` (read with `layout`) stand for: name → path."""
    read = set(paths)
    places = (layout.root,) if layout.root else ("", OLDER_PREFIX)
    found = {}
    for name in names:
        path = next((place + name for place in places if place + name in read), None)
        if path is not None:
            found[name] = path
    return found


def lost_masters(
    old: list[str], old_layout: Layout, new: list[str], new_layout: Layout, names: tuple[str, ...]
) -> list[Problem]:
    """A master config the base read that the head does not have: upstream's `load_config_files`
    refuses a missing file, so no later sweep could be generated. A file the base did not have
    either (a repository with only one of them) is not asked for."""
    kept = names_read(new, new_layout, names)
    lost = [(new_layout.root + name, path) for name, path in names_read(old, old_layout, names).items()]
    return [
        Problem("master-missing", gone, None, {"path": gone, "before": path})
        for gone, path in lost
        if gone.removeprefix(new_layout.root) not in kept
    ]


def tree_moved(
    old: Layout,
    new: Layout,
    old_masters: list[str],
    new_masters: list[str],
    head: Snapshot,
    names: tuple[str, ...],
) -> Problem | None:
    """The tree the generator reads is another at the head (`inferencex-e2e/` and the root): a
    move (`layout-moved`), or, when the tree the base read is still there, a second tree added
    beside it (`layout-two-trees`): which of the two runs is then the workflows' to say, not the
    files', so neither review would be of what runs."""
    if old.root == new.root or not old_masters or not new_masters:
        return None
    params = {"before": old.configs_dir, "after": new.configs_dir, "masters": new_masters}
    if master_config_paths(head, old, names):
        return Problem("layout-two-trees", new_masters[0], None, params)
    return Problem("layout-moved", new_masters[0], None, params)


def master_config_paths(
    snapshot: Snapshot, layout: Layout, names: tuple[str, ...] = MASTER_CONFIGS
) -> list[str]:
    """The master configs InferenceX reads at one ref, in the order it reads them: each of `names`
    under the root, else (at the repository root) under the older `.github/`."""
    found = _existing(snapshot, [layout.root + name for name in names])
    if layout.root:
        return found
    older = _existing(snapshot, [OLDER_PREFIX + name for name in names])
    return [
        name if name in found else OLDER_PREFIX + name
        for name in names
        if name in found or OLDER_PREFIX + name in older
    ]


def looks_like_master(path: str) -> bool:
    """A `*master*.yaml` file name: a master config to a reader, whether or not InferenceX reads it."""
    name = posixpath.basename(path)
    return "master" in name and name.endswith((".yaml", ".yml"))


def read_by_review(path: str) -> bool:
    """Whether a review may read this file: the data paths under either root, the files the
    `scripts` rules read (launchers, MODELS.md, golden acceptance lengths, waivers), or a CODEOWNERS."""
    if path in CODEOWNERS_PATHS:
        return True
    return any(path.startswith(root + data) for root in ("", E2E_ROOT) for data in (*DATA_PATHS, *RULE_PATHS))
