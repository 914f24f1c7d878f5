#!/usr/bin/env python3
"""How the review copes with pull requests built to exhaust it (issue #15, findings 3 and 4;
issue #23, item 2).

    python bench/bombs.py [--only memory|cpu|cpu-under-cap|blobs|all] [--limit-gb 4]

Builds the bundled example in a temporary folder, commits a hostile head on top of it and runs
`prbot review --offline --format json` on it in a fresh process, under an address-space limit
(`--limit-gb`, so that a regression cannot take the machine down). Prints, for each bomb, the
wall time, the peak RSS of the review process, its exit status and the findings that blocked.
The targets (from the issue): the memory bomb under 1 GB and 60 s, the CPU bomb under 120 s,
each with a blocking "too large" finding. Prints the figures; never fails on them.

- memory: a recipe whose `base` has 60,000 keys and 3,000 one-line overrides (about 900 KB).
  Deep-merging `base` into each override would copy 180 million entries.
- cpu: a recipe with 20,000 one-line overrides, and 20 new config keys whose points each run a
  4,096-entry `conc-list` on it: 80,000 runs, each choosing among 20,000 variants.
- cpu-under-cap: the same with 1,000 overrides, the most variants a recipe may have.
- blobs: 30 new master configs `configs/zzNN-master.yaml`, each 99 MB of NUL bytes (one blob,
  written straight into git: nothing of it is in the work tree). Read whole, they held 2.9 GB;
  the target is under 1 GB with a blocking "too large" finding for each.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RECIPE = "benchmarks/single_node/srt-slurm-recipes/kimik3/atom/mi355x-fp4-mtp/agentic.yaml"
MASTER = "configs/amd-master.yaml"
CHANGELOG = "perf-changelog.yaml"
KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"


def memory_bomb() -> dict[str, str]:
    base = "".join(f"  k{i}: {i}\n" for i in range(60_000))
    overrides = "".join(f"override_v{i}: {{benchmark: {{env: {{CONC: '{i}'}}}}}}\n" for i in range(3_000))
    return {RECIPE: "base:\n" + base + overrides}


def cpu_bomb(overrides: int = 20_000) -> dict[str, str]:
    recipe = "base:\n  roles: {agg: {gpus: 8}}\n" + "".join(
        f"override_v{i}: {{benchmark: {{env: {{TP: '{i}'}}}}}}\n" for i in range(overrides)
    )
    concurrencies = ", ".join(str(c) for c in range(1, 4097))
    keys = "".join(
        f"\nbomb-{n}:\n  image: rocm/atom-dev:nightly_202610281457\n  model: m\n  model-prefix: m\n"
        f"  runner: cluster:mi355x-amds\n  precision: fp4\n  framework: atom\n  multinode: false\n"
        f"  scenarios:\n    agentic-coding:\n    - dram-utilization: 0.3\n      search-space:\n"
        f"      - {{ tp: 8, conc-list: [{concurrencies}], srt-recipe: {RECIPE} }}\n"
        for n in range(20)
    )
    entry = "".join(
        f'\n- config-keys:\n    - bomb-{n}\n  description:\n    - "bomb"\n  pr-link: XXX\n' for n in range(20)
    )
    return {RECIPE: recipe, MASTER: keys, CHANGELOG: entry}


BLOB_FILES, BLOB_BYTES = 30, 99 * 1000 * 1000


def blob_bomb() -> dict[str, str]:
    return {}  # the files are committed by `_commit_blobs`


BOMBS = {
    "memory": memory_bomb,
    "cpu": cpu_bomb,
    "cpu-under-cap": lambda: cpu_bomb(overrides=1_000),  # as many variants as a recipe may have
    "blobs": blob_bomb,
}
APPENDED = (MASTER, CHANGELOG)  # the cpu bomb appends to these; the recipe is replaced


def _commit(repo: Path, files: dict[str, str]) -> str:
    for path, text in files.items():
        target = repo / path
        target.write_text(target.read_text() + text if path in APPENDED else text)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b"}
    env["GIT_COMMITTER_EMAIL"] = "b@x"
    if files:
        subprocess.run(["git", "-C", str(repo), "add", "--", *files], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "bomb"], check=True, env=env)
    out = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip()


def _commit_blobs(repo: Path) -> str:
    """Commit BLOB_FILES new master configs sharing one blob of BLOB_BYTES NUL bytes, streamed into
    git (`hash-object --stdin`) and added to the index by its id, so no file of it is written out."""
    git = ["git", "-C", str(repo)]
    writer = subprocess.Popen(
        [*git, "hash-object", "-w", "--stdin"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert writer.stdin is not None and writer.stdout is not None
    chunk = bytes(1 << 20)
    for start in range(0, BLOB_BYTES, len(chunk)):
        writer.stdin.write(chunk[: BLOB_BYTES - start])
    writer.stdin.close()
    blob = writer.stdout.read().decode().strip()
    writer.wait()
    for n in range(BLOB_FILES):
        cacheinfo = f"100644,{blob},configs/zz{n:02}-master.yaml"
        subprocess.run([*git, "update-index", "--add", "--cacheinfo", cacheinfo], check=True)
    return _commit(repo, {})


def _review(repo: Path, base: str, head: str, limit_bytes: int) -> tuple[float, float, int, dict | None]:
    """Wall seconds, peak RSS in MB, exit status and the report of one review in a fresh process."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    command = [sys.executable, "-m", "bot", "review", "--repo", str(repo), "--base", base, "--head", head]
    started = time.perf_counter()
    process = subprocess.Popen(
        [*command, "--offline", "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        preexec_fn=limit,
    )
    assert process.stdout is not None
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)  # the review's own peak RSS, not the builders'
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    rss = usage.ru_maxrss / 1024
    try:
        report = json.loads(out)
    except ValueError:
        report = None
    return seconds, rss, process.returncode, report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=[*BOMBS, "all"], default="all")
    parser.add_argument("--limit-gb", type=float, default=4.0, help="address-space limit of the review")
    args = parser.parse_args(argv)
    from bot.example import build_example

    for name in BOMBS if args.only == "all" else [args.only]:
        with tempfile.TemporaryDirectory(prefix=f"prbot-{name}-bomb-") as folder:
            example = build_example(Path(folder) / "repo")
            head = _commit_blobs(example.path) if name == "blobs" else _commit(example.path, BOMBS[name]())
            seconds, rss, status, report = _review(
                example.path, example.base, head, int(args.limit_gb * 1024**3)
            )
        findings = (report or {}).get("findings", [])
        blocking = sorted({f["check"] for f in findings if f["severity"] == "blocking"})
        too_large = [f["message_en"][:160] for f in findings if "too large" in f["message_en"].lower()]
        print(
            f"{name} bomb: {seconds:.1f} s, peak RSS {rss:.0f} MB, exit {status}, "
            f"verdict {(report or {}).get('verdict', 'no report')}; blocking checks {blocking}"
        )
        for message in too_large[:3]:
            print(f"  {message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
