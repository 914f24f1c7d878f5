#!/usr/bin/env python3
"""How long a review takes when the perf changelog's history is ten times today's (issue #14).

    python bench/long_changelog.py [--times 10] [--runs 5]

Builds a git repository in a temporary folder from the bundled example, whose base changelog is
the real InferenceX changelog (`../shared/real-world/inferencex-e2e/perf-changelog.yaml`, or the
example's own when that is absent) repeated `--times` times, and whose head appends one entry.
Then times `prbot review --offline` end to end in fresh processes and prints the median. The
history above the new entry is not the PR's to check again, so the figure should stay well under
a second however long the history grows (a base over the parse limit is named, not parsed).
Prints the figure; never fails on it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
REAL = Path(os.environ.get("PRBOT_REAL_WORLD") or ROOT.parent / "shared" / "real-world")
ENTRY = """
- config-keys:
    - kimik3-fp4-mi355x-atom-agentic-mtp
  description:
    - "Rerun after a launch-script fix"
  pr-link: XXX
"""


def _commit(repo: Path, message: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b"}
    env["GIT_COMMITTER_EMAIL"] = "b@x"
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", message], check=True, env=env)
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--times", type=int, default=10, help="copies of today's history (default 10)")
    parser.add_argument("--runs", type=int, default=5, help="timed reviews (median; default 5)")
    args = parser.parse_args(argv)
    from bot.example import build_example

    with tempfile.TemporaryDirectory(prefix="prbot-long-changelog-") as folder:
        example = build_example(Path(folder) / "repo")
        changelog = example.path / "perf-changelog.yaml"
        real = REAL / "inferencex-e2e" / "perf-changelog.yaml"
        history = real.read_bytes() if real.is_file() else changelog.read_bytes()
        changelog.write_bytes(
            history.rstrip(b"\n") + b"\n" + (b"\n" + history.rstrip(b"\n") + b"\n") * (args.times - 1)
        )
        base = _commit(example.path, "a long history")
        with changelog.open("a", encoding="utf-8") as out:
            out.write(ENTRY)
        head = _commit(example.path, "append one entry")
        command = [sys.executable, "-m", "bot", "review", "--repo", str(example.path), "--base", base]
        command += ["--head", head, "--offline", "--format", "json"]
        seconds = []
        for _ in range(args.runs):
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, cwd=ROOT, check=False)
            seconds.append(time.perf_counter() - started)
            if done.returncode not in (0, 1):
                print(done.stderr.decode(errors="replace"))
                return 1
        size = changelog.stat().st_size
        median = statistics.median(seconds) * 1000
        print(
            f"long changelog: {size / 1e6:.1f} MB base history ({args.times}× today's), one appended entry: "
            f"review {median:.0f} ms (median of {args.runs}; exit {done.returncode})"
        )
        for item in json.loads(done.stdout)["findings"]:
            if item["check"] == "changelog":
                print(f"  changelog {item['severity']}: {item['message_en'][:110]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
