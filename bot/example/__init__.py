"""The bundled example pull request that `prbot demo` reviews.

The data lives beside this module as plain YAML:

- `base/` is the whole example repository before the PR (an InferenceX-style tree: master
  configs, runners.yaml, recipes, CODEOWNERS, and what the runs execute, a launcher per runner
  and a benchmark script per key, written for the example after InferenceX's naming rules),
- `head/` holds the complete new version of every file the PR changes,
- `pr.yaml` is the PR's title, body and labels.

`build_example(dest)` turns it into a real git repository with two commits (base, then head).
Names, e-mails, dates and messages are fixed and the user's git configuration is ignored, so
the commit SHAs are the same on every machine.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from bot.local import LocalRequest

__all__ = ["CONFIG_KEY", "ExampleRepo", "build_example", "example_files"]

#: The master-config key the example PR retunes.
CONFIG_KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"

_BASE_AUTHOR = ("InferenceX Maintainer", "maintainer@example.org")
_BASE_DATE = "2026-10-20T12:00:00+00:00"
_BASE_MESSAGE = "Example InferenceX tree before the Kimi-K3 ATOM retune\n"

_HEAD_AUTHOR = ("Example Contributor", "contributor@example.org")
_HEAD_DATE = "2026-10-29T09:30:00+00:00"

_RECIPE = "benchmarks/single_node/srt-slurm-recipes/kimik3/atom/mi355x-fp4-mtp/agentic.yaml"
_CHANGED = ("configs/amd-master.yaml", "perf-changelog.yaml", _RECIPE)
# What the example's runs execute: the runner's launcher, the key's benchmark script, their library.
_EXECUTED = (
    "runners/launch_mi355x-amds.sh",
    "benchmarks/single_node/agentic/kimik3_fp4_mi355x_atom_mtp.sh",
    "benchmarks/benchmark_lib.sh",
)
_UNCHANGED = (".github/CODEOWNERS", "configs/runners.yaml", "configs/nvidia-master.yaml")
_REQUIRED = {
    "base": (*_UNCHANGED, *_EXECUTED, *_CHANGED),
    "head": _CHANGED,
}


@dataclass(frozen=True)
class ExampleRepo:
    """A built example repository: where it is, its two commits, and the PR's metadata."""

    path: Path
    base: str  # commit SHA of the base (target branch) commit
    head: str  # commit SHA of the PR head commit
    title: str
    body: str
    labels: tuple[str, ...]

    def request(self, **overrides: Any) -> LocalRequest:
        """The local review of this example PR (offline, with its title, body and labels), with
        any of `LocalRequest`'s fields given instead."""
        from bot.local import LocalRequest

        fields = {"repo": str(self.path), "base": self.base, "head": self.head, "title": self.title}
        fields.update(body=self.body, labels=self.labels, offline=True)
        return LocalRequest(**{**fields, **overrides})


def _data() -> Traversable:
    return resources.files(__name__)


def _walk(node: Traversable, prefix: str = "") -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name == "__pycache__":
            continue
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            files.update(_walk(child, rel + "/"))
        else:
            files[rel] = child.read_bytes()
    return files


def example_files(side: str) -> dict[str, bytes]:
    """Repository-relative path -> bytes: the whole tree for `base`, the changed files for `head`."""
    if side not in ("base", "head"):
        raise ValueError(f"side must be 'base' or 'head', not {side!r}")
    files = _walk(_data() / side)
    missing = [path for path in _REQUIRED[side] if path not in files]
    if missing:
        # Typically a packaging glob that skipped dot-directories such as `.github/`.
        raise FileNotFoundError(f"example data incomplete, missing from {side}/: {', '.join(missing)}")
    return files


def _pr_metadata() -> tuple[str, str, tuple[str, ...]]:
    meta = yaml.safe_load((_data() / "pr.yaml").read_text(encoding="utf-8"))
    return str(meta["title"]), str(meta["body"]), tuple(str(label) for label in meta["labels"])


def _git_env(author: tuple[str, str], date: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    name, email = author
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_AUTHOR_NAME=name,
        GIT_AUTHOR_EMAIL=email,
        GIT_AUTHOR_DATE=date,
        GIT_COMMITTER_NAME=name,
        GIT_COMMITTER_EMAIL=email,
        GIT_COMMITTER_DATE=date,
        LC_ALL="C",
    )
    return env


def _git(dest: Path, author: tuple[str, str], date: str, *args: str) -> str:
    name, email = author
    cmd = [
        "git",
        "-c", f"user.name={name}",
        "-c", f"user.email={email}",
        "-c", "init.defaultBranch=main",
        "-c", "commit.gpgsign=false",
        "-c", "tag.gpgsign=false",
        "-c", "core.autocrlf=false",
        "-c", "core.safecrlf=false",
        "-c", f"core.hooksPath={os.devnull}",
        "-C", str(dest),
        *args,
    ]  # fmt: skip
    done = subprocess.run(cmd, env=_git_env(author, date), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {dest}: {done.stderr.strip()}")
    return done.stdout.strip()


def _write(dest: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        target = dest.joinpath(*rel.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _commit(dest: Path, author: tuple[str, str], date: str, message: str) -> str:
    _git(dest, author, date, "add", "--all", "--force", "--", ".")
    _git(dest, author, date, "commit", "--quiet", "--no-verify", "--cleanup=verbatim", "-m", message)
    return _git(dest, author, date, "rev-parse", "HEAD")


def build_example(dest: Path) -> ExampleRepo:
    """Create the example repository in `dest` (missing or empty) and return its commits.

    The base commit holds the tree before the PR, the head commit (its child, on `main`)
    the PR's changes. Raises FileExistsError when `dest` is a non-empty directory or a file.
    """
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise FileExistsError(f"{dest} exists and is not an empty directory")
    dest.mkdir(parents=True, exist_ok=True)
    dest = dest.resolve()

    title, body, labels = _pr_metadata()
    _git(dest, _BASE_AUTHOR, _BASE_DATE, "init", "--quiet", "--template=", ".")
    _write(dest, example_files("base"))
    base = _commit(dest, _BASE_AUTHOR, _BASE_DATE, _BASE_MESSAGE)
    _write(dest, example_files("head"))
    head = _commit(dest, _HEAD_AUTHOR, _HEAD_DATE, title + "\n")
    return ExampleRepo(path=dest, base=base, head=head, title=title, body=body, labels=labels)
