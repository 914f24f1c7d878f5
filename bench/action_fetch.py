#!/usr/bin/env python3
"""The action on real InferenceX pull requests: reading the files through the API vs. with git.

    python bench/action_fetch.py [--delay SECONDS] [--prs 2263,1992]

For each pull request (a squash merge of the history bundle in `../shared/real-world/`: its
parent is the base, the merge the head), the action runs in-process against the loopback fake
GitHub API (tests/github_fake.py) and a real `git http-backend` server (tests/git_http_server.py),
each answering every HTTP request `--delay` seconds late (default 0.1) to approach GitHub's round
trips. Two modes: REST only (no `GITHUB_SERVER_URL`, so every file is read through the API, as
before the git fetch) and git fetch. Prints the REST requests, git HTTP requests and wall time of
each, whether both reports equal local mode's (apart from CODEOWNERS sign-offs, which need a PR),
and PASS/MISS against the targets; it never fails on a missed target.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from git_http_server import GitHttpServer, serve_repository  # noqa: E402
from github_fake import EventFiles, FakeGitHub, action_env, pull_event  # noqa: E402

from bot.github_action.run import run_action  # noqa: E402
from bot.local import LocalRequest, run_local  # noqa: E402
from bot.output import report_json  # noqa: E402
from bot.sources.github import ClientOptions  # noqa: E402

REAL = Path(os.environ.get("PRBOT_REAL_WORLD") or ROOT.parent / "shared" / "real-world")
BUNDLE = REAL / "inferencex-history.bundle"
TARGET_REST, TARGET_GIT, TARGET_WALL_S = 15, 8, 4.0
OPTIONS = ClientOptions(timeout=30, seconds_between_writes=None)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def find_pull(repo: Path, number: int) -> tuple[str, str, str]:
    """(base, head, subject) of the squash merge whose subject ends in `(#number)`."""
    for line in git(repo, "log", "--format=%H %P%x09%s", "--all").splitlines():
        shas, _, subject = line.partition("\t")
        sha, *parents = shas.split()
        if subject.rstrip().endswith(f"(#{number})") and len(parents) == 1:
            return parents[0], sha, subject
    raise SystemExit(f"bench: no squash merge of #{number} in {BUNDLE}")


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    """The report apart from CODEOWNERS sign-offs: asked for on a PR, "not checked" locally."""
    findings = report.pop("findings")
    report["findings"] = [f for f in findings if f["check"] != "codeowners"]
    report["sign-offs"] = sorted(f["file"] or "" for f in findings if f["check"] == "codeowners")
    return report


def run_once(
    repo: Path, served: Path, number: int, base: str, head: str, title: str, *, use_git: bool, delay: float
) -> tuple[int, int, float, dict[str, Any]]:
    """One action run: (REST requests, git HTTP requests, wall seconds, comparable report)."""
    with FakeGitHub(repo) as fake, GitHttpServer(served, fake.token, delay=delay) as server:
        fake.on_request = lambda _fake, _record: time.sleep(delay)
        fake.add_pull(number, base, head, title=title, body="", labels=())
        with tempfile.TemporaryDirectory(prefix="prbot-bench-run-") as folder:
            files = EventFiles(Path(folder))
            env = action_env(fake, files, pull_event(fake, number), {})
            if use_git:
                env["GITHUB_SERVER_URL"] = server.url
            started = time.perf_counter()
            code = run_action(env, options=OPTIONS, stream=io.StringIO())
            wall = time.perf_counter() - started
            report_path = files.outputs().get("report")
            if code == 2 or not report_path:
                raise SystemExit(f"bench: the action could not review #{number} (exit {code})")
            report = comparable(json.loads(Path(report_path).read_text(encoding="utf-8")))
        return len(fake.requests), len(server.requests), wall, report


def verdict(value: float, target: float) -> str:
    return "PASS" if value <= target else "MISS"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.1, help="seconds added to each HTTP request")
    parser.add_argument("--prs", default="2263,1992", help="pull request numbers, comma-separated")
    args = parser.parse_args(argv)
    if not BUNDLE.is_file():
        print(f"bench: skipped — real-world data not found at {BUNDLE}")
        return 0
    with tempfile.TemporaryDirectory(prefix="prbot-bench-") as tmp:
        repo = Path(tmp) / "history.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(repo)], check=True)
        print(f"action on real PRs, +{args.delay * 1000:.0f} ms per HTTP request on both servers")
        print(f"{'PR':>6}  {'mode':<9} {'REST':>5} {'git HTTP':>9} {'wall':>8}  same as local")
        for number in (int(n) for n in args.prs.split(",")):
            base, head, title = find_pull(repo, number)
            served = Path(tmp) / f"served-{number}"
            serve_repository(repo, served, "acme/inferencex", {number: head})
            local, _, _ = run_local(LocalRequest(str(repo), base, head, title=title, offline=True))
            expected = comparable(report_json.to_json(local))
            for use_git in (False, True):
                rest, git_http, wall, report = run_once(
                    repo, served, number, base, head, title, use_git=use_git, delay=args.delay
                )
                marks = f"REST {verdict(rest, TARGET_REST)}, wall {verdict(wall, TARGET_WALL_S)}"
                if use_git:
                    marks += f", git {verdict(git_http, TARGET_GIT)}"
                mode = "git fetch" if use_git else "REST only"
                same = "yes" if report == expected else "NO"
                print(f"#{number:>5}  {mode:<9} {rest:>5} {git_http:>9} {wall:>7.2f}s  {same:<4}  {marks}")
    print(f"targets (git fetch): REST ≤ {TARGET_REST}, git HTTP ≤ {TARGET_GIT}, wall ≤ {TARGET_WALL_S:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
