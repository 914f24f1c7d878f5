"""Where things live in a benchmark-config repository (DESIGN.md §1 "Layout")."""

from __future__ import annotations

import fnmatch
from typing import NamedTuple

from bot.sources.snapshot import Snapshot

E2E_ROOT = "inferencex-e2e/"


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
        if not path.startswith(self.configs_dir):
            return False
        name = path[len(self.configs_dir) :]
        return "/" not in name and fnmatch.fnmatch(name, "*master.yaml")

    def recipe_path(self, srt_recipe: str, recipe_dir: str | None, multinode: bool) -> str:
        """The repository path of a point's `srt-recipe` (selector already removed)."""
        if recipe_dir:
            kind = "multi_node" if multinode else "single_node"
            return f"{self.root}benchmarks/{kind}/srt-slurm-recipes/{recipe_dir.strip('/')}/{srt_recipe}"
        return f"{self.root}{srt_recipe}"


def detect(snapshot: Snapshot) -> Layout:
    """`inferencex-e2e/` when `inferencex-e2e/configs/` exists at this ref, else the repo root."""
    return Layout(E2E_ROOT if snapshot.list_files(E2E_ROOT + "configs/") else "")


def master_config_paths(snapshot: Snapshot, layout: Layout) -> list[str]:
    return sorted(p for p in snapshot.list_files(layout.configs_dir) if layout.is_master_config(p))
