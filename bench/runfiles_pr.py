#!/usr/bin/env python3
"""The largest real PR of the runfiles history, by the files its review reads (scripts included).

    python bench/runfiles_pr.py            # every PR of the history: the ten that read most
    python bench/runfiles_pr.py --pr 2493  # the files one PR's review reads, by kind

`bench/run.py` reviews `PRS` (chosen with the first command) as more rows, `runfiles`, whose
floor is every file that review reads (master configs, changelog, runners.yaml, recipes, launchers,
benchmark scripts, …) read at both refs and parsed with the fastest parser there is for it:
pyyaml's C loader for YAML, tree-sitter-bash for shell. Which files a review reads is recorded
from the review itself (every `GitSnapshot.read` that finds a file).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Chosen by `python bench/runfiles_pr.py` on 2026-12-06 over every first-parent PR #1992..#2707:
# #2263 (deprecating the 1k1k configurations) reads the most, 347 files (179 recipes, 145 benchmark
# scripts, 16 launchers, the master configs, changelog and runners.yaml). #2493 (the 2026-08-03
# deprecations, 129 files) is the one whose review cost most against its floor: most of its files are
# scripts (91) and launchers (17), which the review follows once per distinct run.
PRS = ("2263", "2493")


def squashed(repo: Path) -> list[tuple[str, str, str]]:
    """(parent, commit, subject) of every single-parent first-parent commit (one PR each)."""
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "--first-parent", "--format=%H %P%x09%s"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = []
    for line in log.splitlines():
        shas, _, subject = line.partition("\t")
        sha, *parents = shas.split()
        if len(parents) == 1:
            found.append((parents[0], sha, subject))
    return found


def commit_of(repo: Path, number: str) -> tuple[str, str] | None:
    """(parent, commit) of the PR squash-merged as `… (#number)`."""
    for parent, sha, subject in squashed(repo):
        if subject.rstrip().endswith(f"(#{number})"):
            return parent, sha
    return None


def files_read(repo: Path, parent: str, sha: str) -> list[str]:
    """The paths an offline review of `parent..sha` reads (each that exists at some ref), in the
    order it first reads them."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from bot.local import LocalRequest, run_local
    from bot.sources import git

    read: dict[str, None] = {}
    original = git.GitSnapshot.read

    def recording(self: git.GitSnapshot, path: str) -> bytes | None:
        data = original(self, path)
        if data is not None:
            read.setdefault(path)
        return data

    git.GitSnapshot.read = recording  # type: ignore[method-assign]
    try:
        run_local(LocalRequest(repo=str(repo), base=parent, head=sha, offline=True))
    finally:
        git.GitSnapshot.read = original  # type: ignore[method-assign]
    return list(read)


def kind(path: str) -> str:
    if path.endswith(".sh"):
        return "launcher" if path.startswith("runners/") else "benchmark script"
    if path.startswith("configs/") and path.endswith("master.yaml"):
        return "master config"
    if path.startswith("benchmarks/") and path.endswith((".yaml", ".yml")):
        return "recipe"
    return path if "/" not in path or path.startswith(("configs/", ".github/")) else path.split("/")[0] + "/"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("repo", help="a clone of inferencex-runfiles-history.bundle")
    parser.add_argument("--pr", help="show the files one PR's review reads")
    args = parser.parse_args()
    repo = Path(args.repo)
    if args.pr:
        found = commit_of(repo, args.pr)
        if found is None:
            print(f"#{args.pr} is not in {repo}")
            return 1
        files = files_read(repo, *found)
        kinds = Counter(map(kind, files))
        print(f"#{args.pr}: {len(files)} files; " + ", ".join(f"{n} {k}" for k, n in kinds.items()))
        return 0
    sizes = []
    for parent, sha, subject in squashed(repo):
        files = files_read(repo, parent, sha)
        shell = sum(path.endswith(".sh") for path in files)
        sizes.append((len(files), shell, sha[:10], subject[-70:]))
    for count, shell, sha, subject in sorted(sizes, reverse=True)[:10]:
        print(f"{count:5} files ({shell:3} shell)  {sha}  {subject}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
