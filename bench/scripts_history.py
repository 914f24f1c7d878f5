"""Which keys and runs each real PR that edits a benchmark script changes (docs/checks.md#launch).

    nice python bench/scripts_history.py /work/ix-runfiles [--limit N] [--json out.json]

For every first-parent commit of the repository (one squash-merged PR each) that changes a `.sh`
under `benchmarks/` or `runners/`, reviews `C^..C` offline through the CLI's code path and prints
one line: the PR, whether it also changes a master config, the per-key scripts it changes, the
keys and runs those make changed, the shared files, and the `launch` findings that block.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.local import LocalRequest, run_local  # noqa: E402, RUF100


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def _runs(view: object) -> list:
    """The runs of a key's `changes` view (a record or its JSON form)."""
    runs = getattr(view, "runs", None)
    if runs is None and isinstance(view, dict):
        runs = view.get("runs")
    return list(runs or [])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = []
    for line in _git(args.repo, "log", "--first-parent", "--format=%H %s").splitlines():
        sha, _, subject = line.partition(" ")
        files = _git(args.repo, "diff-tree", "--no-commit-id", "--name-only", "-r", sha).split()
        if not any(f.endswith(".sh") and f.startswith(("benchmarks/", "runners/")) for f in files):
            continue
        report = run_local(LocalRequest(args.repo, f"{sha}^", sha, offline=True))[0]
        launch = [f for f in report.findings if f.check == "launch"]
        per_key = [f.params for f in launch if f.message_id == "launch-script-changed"]
        shared = [f.params["path"] for f in launch if f.message_id == "launch-shared-changed"]
        blocking = [(f.message_id, f.config_key) for f in launch if f.severity == "blocking"]
        script_keys = sorted({k for p in per_key for k in p["keys"]})
        runs = sum(len(_runs(report.changes.get(k))) for k in script_keys)
        row = {
            "pr": subject.rsplit("(#", 1)[-1].rstrip(")") if "(#" in subject else sha[:10],
            "master": any("master" in f for f in files),
            "scripts": [p["path"] for p in per_key],
            "keys": script_keys,
            "runs": runs,
            "shared": shared,
            "blocking": blocking,
            "verdict": report.verdict,
            "all_blocking": sorted({f.message_id for f in report.findings if f.severity == "blocking"}),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.limit and len(rows) >= args.limit:
            break
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
