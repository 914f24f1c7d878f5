"""Where things live in a benchmark-config repository (DESIGN.md §1 "Layout")."""

from __future__ import annotations

import posixpath
from typing import NamedTuple

from bot.model.owners import CODEOWNERS_PATHS
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
    """The root at this ref: `inferencex-e2e/` when a master config is there, else the repository
    root when one is there (or in the older `.github/configs/`); with none anywhere,
    `inferencex-e2e/` when its `configs/` folder exists, else the repository root."""
    if _existing(snapshot, [E2E_ROOT + name for name in names]):
        return Layout(E2E_ROOT)
    if master_config_paths(snapshot, Layout(""), names):
        return Layout("")
    return Layout(E2E_ROOT if snapshot.list_files(E2E_ROOT + "configs/") else "")


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
    """Whether a review may read this file: the data paths under either root, or a CODEOWNERS."""
    if path in CODEOWNERS_PATHS:
        return True
    return any(path.startswith(root + data) for root in ("", E2E_ROOT) for data in DATA_PATHS)
