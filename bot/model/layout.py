"""Where things live in a benchmark-config repository (DESIGN.md §1 "Layout")."""

from __future__ import annotations

import fnmatch
from typing import NamedTuple

from bot.model.owners import CODEOWNERS_PATHS
from bot.sources.snapshot import Snapshot

E2E_ROOT = "inferencex-e2e/"
# What a review reads, under either root: fetched in one batch by the action.
DATA_PATHS = ("configs/", "benchmarks/", "perf-changelog.yaml", ".github/")
# Before InferenceX moved them to the root (#1992), the master configs lived here.
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

    def is_master_config(self, path: str) -> bool:
        """`<root>configs/*master.yaml`, or the same name in the older `.github/configs/`."""
        for folder in (self.configs_dir, OLDER_CONFIGS):
            if path.startswith(folder):
                name = path[len(folder) :]
                return "/" not in name and fnmatch.fnmatch(name, "*master.yaml")
        return False

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


def detect(snapshot: Snapshot) -> Layout:
    """`inferencex-e2e/` when `inferencex-e2e/configs/` exists at this ref, else the repo root."""
    return Layout(E2E_ROOT if snapshot.list_files(E2E_ROOT + "configs/") else "")


def master_config_paths(snapshot: Snapshot, layout: Layout) -> list[str]:
    """The master configs at one ref: under `<root>configs/`, else in the older `.github/configs/`
    (so that a move from there changes no key)."""
    for folder in (layout.configs_dir, OLDER_CONFIGS):
        paths = sorted(p for p in snapshot.list_files(folder) if layout.is_master_config(p))
        if paths:
            return paths
    return []


def read_by_review(path: str) -> bool:
    """Whether a review may read this file: the data paths under either root, or a CODEOWNERS."""
    if path in CODEOWNERS_PATHS:
        return True
    return any(path.startswith(root + data) for root in ("", E2E_ROOT) for data in DATA_PATHS)
