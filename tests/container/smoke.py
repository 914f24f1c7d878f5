"""Container smoke test of the action (issue #25): build the image with podman and run it as
GitHub's runner runs a Docker action, against the test stand-ins of GitHub (tests/github_fake.py)
and of a git server (tests/git_http_server.py, Debian's `git http-backend`).

    sudo .venv/bin/python tests/container/smoke.py [--base IMAGE] [--runtime runc] [--ulimit …] [--keep]

Needs rootful podman (Debian: `apt-get install podman`) and the test dependencies (run it with the
project's venv python). `--base` replaces the Dockerfile's pinned base in a copy of it, for a host
that cannot pull `python:3.12-slim-bookworm`: `tests/container/standin-base.sh` builds a stand-in
from Debian's own python3 (3.11: prbot's minimum). It is not part of the pytest run (it builds an
image: minutes, root and podman; tests/test_container.py runs it with PRBOT_CONTAINER_TESTS=1); it
prints its figures and exits 1 when a run went wrong. Without `--runtime` and `--ulimit` it finds
the podman options this host needs by starting the base image with each in turn: none, `--runtime
runc` (crun refuses hybrid cgroups), low `--ulimit`s (a sandbox that may not raise them), both.

Each run is a `podman run` as the runner makes it: `--workdir /github/workspace`, the workspace,
`/github/home`, `/github/workflow` (the event) and `/github/file_commands` (outputs, summary)
mounted, the `GITHUB_*` and `INPUT_*` variables, the host network (the stand-ins listen on
127.0.0.1). Runs: a blocking review on a hosted runner's folders (user 1001); `RUNNER_TEMP` naming a
host path the container does not have (runners before v2.331); runner folders of another user
(1234), and of 1234 with step files of root; `docker stop` (SIGTERM) against an API that hangs;
and, with the real InferenceX history (`../shared/real-world/inferencex-runfiles-history.bundle`),
a real PR that changes a benchmark script (#2707), reviewed by the action and by `prbot review` on
a read-only mount, which must equal the review outside the container. No log may show the token.
Outside the action: `prbot demo` (offline) exits 0 with its comment.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import RECIPE, SHARED, commit, replace, squash_merge  # noqa: E402
from git_http_server import GitHttpServer, serve_repository  # noqa: E402
from github_fake import FakeGitHub, Recorded, pull_event  # noqa: E402

from bot.example import build_example  # noqa: E402
from bot.output.render import MARKER  # noqa: E402

IMAGE = "localhost/prbot-smoke:latest"
PR = 7
#: The real PR the image reviews (it changes a benchmark script: tree-sitter-bash reads it).
SCRIPT_PR = 2707
PINNED_BASE = re.compile(r"^FROM python:3\.12-slim-bookworm@sha256:[0-9a-f]{64}", re.MULTILINE)


#: Global podman options (`--runtime`) and options of every build and run (`--ulimit`): a host
#: that may not raise limits, or whose cgroups crun refuses, needs them.
GLOBAL: list[str] = []
LIMITS: list[str] = []


def podman(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    if args[0] in ("run", "build"):
        args = (args[0], *LIMITS, *args[1:])
    return subprocess.run(["podman", *GLOBAL, *args], check=check, text=True, capture_output=True)


_RUNC = ["--runtime", "runc"]
_LOW_LIMITS = ["--ulimit=nofile=4096:4096", "--ulimit=nproc=4096:4096"]


def find_options(base: str) -> bool:
    """Set GLOBAL and LIMITS to the first options with which `base` starts (none, runc, low
    limits, both); False when none does."""
    for runtime, limits in (([], []), (_RUNC, []), ([], _LOW_LIMITS), (_RUNC, _LOW_LIMITS)):
        if runtime and not shutil.which("runc"):
            continue
        GLOBAL[:], LIMITS[:] = runtime, limits
        if podman("run", "--rm", "--entrypoint", "true", base, check=False).returncode == 0:
            return True
    GLOBAL[:], LIMITS[:] = [], []
    return False


def build(base: str | None, folder: Path) -> tuple[float, int]:
    """Build the image (seconds, bytes); with `base`, from a copy of the Dockerfile naming it."""
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    if base:
        dockerfile, count = PINNED_BASE.subn(f"FROM {base}", dockerfile)
        assert count == 2, "the Dockerfile's two FROM lines were not found"
    (folder / "Dockerfile").write_text(dockerfile, encoding="utf-8")
    started = time.monotonic()
    done = podman(
        "build", "--network", "host", "-f", str(folder / "Dockerfile"), "-t", IMAGE, str(ROOT), check=False
    )
    if done.returncode:
        sys.exit(f"build failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    size = int(podman("image", "inspect", IMAGE, "--format", "{{.Size}}").stdout.strip())
    return time.monotonic() - started, size


class Runner:
    """The folders a runner hands a Docker action, owned by `owner`, and one `podman run`."""

    def __init__(self, folder: Path, owner: int, step_files_owner: int | None = None) -> None:
        self.folder = folder
        self.mounts = {name: folder / name for name in ("workspace", "home", "workflow", "file_commands")}
        for path in self.mounts.values():
            path.mkdir(parents=True)
        self.output = self.mounts["file_commands"] / "set_output_1"
        self.summary = self.mounts["file_commands"] / "step_summary_1"
        for path in (self.output, self.summary):
            path.touch()
        for path in (*self.mounts.values(), self.output, self.summary):
            os.chown(path, owner, owner)
        if step_files_owner is not None:
            for path in (self.output, self.summary):
                os.chown(path, step_files_owner, step_files_owner)

    def run(
        self,
        fake: FakeGitHub,
        git: GitHttpServer,
        name: str | None = None,
        number: int = PR,
        **env: str | None,
    ) -> tuple[int, str, float]:
        """(exit status, log, seconds) of the action for a `synchronize` event of PR `number`;
        `name` names the container (to stop it)."""
        event, payload = pull_event(fake, number)
        (self.mounts["workflow"] / "event.json").write_text(json.dumps(payload), encoding="utf-8")
        variables: dict[str, str | None] = {
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "HOME": "/github/home",
            "GITHUB_EVENT_NAME": event,
            "GITHUB_EVENT_PATH": "/github/workflow/event.json",
            "GITHUB_WORKSPACE": "/github/workspace",
            "GITHUB_REPOSITORY": fake.full_name,
            "GITHUB_API_URL": fake.url,
            "GITHUB_SERVER_URL": git.url,
            "GITHUB_OUTPUT": "/github/file_commands/set_output_1",
            "GITHUB_STEP_SUMMARY": "/github/file_commands/step_summary_1",
            "RUNNER_TEMP": "/github/runner_temp",
            "INPUT_GITHUB-TOKEN": fake.token,
            "INPUT_OFFLINE": "true",
            **env,
        }
        command = ["run", "--rm", "--network", "host", "--workdir", "/github/workspace"]
        if name:
            command += ["--name", name]
        for target, source in self.mounts.items():
            command += ["-v", f"{source}:/github/{target}"]
        if variables["RUNNER_TEMP"] == "/github/runner_temp":
            (self.folder / "runner_temp").mkdir(exist_ok=True)
            command += ["-v", f"{self.folder / 'runner_temp'}:/github/runner_temp"]
        for key, value in variables.items():
            if value is not None:
                command += ["-e", f"{key}={value}"]
        started = time.monotonic()
        done = podman(*command, IMAGE, check=False)
        return done.returncode, done.stdout + done.stderr, time.monotonic() - started

    def outputs(self) -> dict[str, str]:
        values, lines = {}, iter(self.output.read_text(encoding="utf-8").splitlines())
        for line in lines:
            if "<<" in line:
                key, delimiter = line.split("<<", 1)
                values[key] = "\n".join(iter(lambda: next(lines), delimiter))
        return values


def check(what: str, ok: bool, detail: str = "") -> bool:
    print(f"{'ok  ' if ok else 'FAIL'} {what}{(': ' + detail) if detail and not ok else ''}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="base image to build from instead of the pinned one")
    parser.add_argument("--keep", action="store_true", help="keep the image and the folders")
    parser.add_argument("--runtime", help="OCI runtime for podman (runc where crun cannot run)")
    parser.add_argument(
        "--ulimit", action="append", default=[], help="a podman --ulimit, e.g. nofile=4096:4096"
    )
    args = parser.parse_args()
    if os.geteuid() != 0 or not shutil.which("podman"):
        sys.exit("run as root, with podman installed")
    if args.runtime or args.ulimit:
        GLOBAL.extend(["--runtime", args.runtime] if args.runtime else [])
        LIMITS.extend(f"--ulimit={limit}" for limit in args.ulimit)
    else:
        pinned = PINNED_BASE.search((ROOT / "Dockerfile").read_text(encoding="utf-8"))
        base = args.base or (pinned.group(0).removeprefix("FROM ") if pinned else "")
        if not find_options(base):
            sys.exit(f"{base} does not start with podman here (pass --base, --runtime, --ulimit)")
        print(f"podman options: {' '.join(GLOBAL + LIMITS) or 'none'}")
    work = Path(tempfile.mkdtemp(prefix="prbot-smoke-"))
    os.chmod(work, 0o755)
    results: list[bool] = []
    try:
        seconds, size = build(args.base, work)
        print(f"image: built in {seconds:.0f} s, {size / 1e6:.0f} MB")
        for _ in range(2):  # the first may still fill caches
            started = time.monotonic()
            podman("run", "--rm", "--entrypoint", "prbot", IMAGE, "--version")
            cold = time.monotonic() - started
        print(f"cold start (podman run … prbot --version): {cold:.2f} s")
        results.append(_demo())
        example = build_example(work / "inferencex")
        head = commit(
            example.path, {RECIPE: replace("TOTAL_CPU_DRAM_GB: '1799'", "TOTAL_CPU_DRAM_GB: '1800'")}
        )
        with FakeGitHub(example.path) as fake:
            serve_repository(example.path, work / "served", fake.full_name, {PR: head})
            with GitHttpServer(work / "served", fake.token) as git:
                fake.add_pull(
                    PR, example.base, head, title=example.title, body=example.body, labels=example.labels
                )
                results += _runs(fake, git, work)
        results += _script_pr(work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
            podman("rmi", "-f", IMAGE, check=False)
    return 0 if all(results) else 1


def _runs(fake: FakeGitHub, git: GitHttpServer, work: Path) -> list[bool]:
    results, logs = [], []
    hosted = Runner(work / "hosted", 1001)
    code, log, seconds = hosted.run(fake, git)
    logs.append(log)
    print(f"review in the container (hosted runner's folders, user 1001): {seconds:.1f} s, exit {code}")
    report = hosted.mounts["workspace"] / "prbot-report.json"
    results += [
        check(
            "blocking review: exit 1, verdict blocking",
            code == 1 and hosted.outputs().get("verdict") == "blocking",
            log,
        ),
        check("fetched with git", "Fetched the base and head commits with git" in log, log),
        check("ran as the workspace's owner", "Running as user 1001" in log, log),
        check("one sticky comment", len([c for c in fake.comments_on(PR) if c.body.startswith(MARKER)]) == 1),
        check("an inline review comment", len(fake.review_comments_on(PR)) == 1),
        check("summary written", "prbot review" in hosted.summary.read_text(encoding="utf-8")),
        check("report in the workspace, owned by 1001", report.exists() and report.stat().st_uid == 1001),
    ]
    missing = Runner(work / "old-runner", 1001)
    code, log, seconds = missing.run(fake, git, RUNNER_TEMP="/home/runner/work/_temp")
    logs.append(log)
    print(f"RUNNER_TEMP missing in the container: {seconds:.1f} s, exit {code}")
    results += [
        check(
            "RUNNER_TEMP missing: review as usual",
            code == 1 and missing.outputs().get("verdict") == "blocking",
            log,
        ),
        check(
            "RUNNER_TEMP missing: still fetched with git",
            "Fetched the base and head commits with git" in log,
            log,
        ),
    ]
    other = Runner(work / "self-hosted", 1234)
    code, log, seconds = other.run(fake, git, RUNNER_TEMP=None)
    logs.append(log)
    print(f"runner folders of user 1234, no RUNNER_TEMP: {seconds:.1f} s, exit {code}")
    results += [
        check(
            "other user: review, outputs, report",
            code == 1 and other.outputs().get("report") == "prbot-report.json",
            log,
        ),
        check("other user: ran as 1234", "Running as user 1234" in log, log),
    ]
    mixed = Runner(work / "mixed", 1234, step_files_owner=0)
    code, log, seconds = mixed.run(fake, git)
    logs.append(log)
    print(f"workspace of 1234, step files of root: {seconds:.1f} s, exit {code}")
    results += [
        check(
            "mixed owners: stays root, writes everything",
            code == 1 and mixed.outputs().get("verdict") == "blocking",
            log,
        ),
        check("mixed owners: no user change", "Running as user" not in log, log),
    ]
    results.append(check("no log shows the token", all(fake.token not in log for log in logs)))
    results.append(_stop(fake, git, work))
    return results


def _stop(fake: FakeGitHub, git: GitHttpServer, work: Path) -> bool:
    """`podman stop` (SIGTERM to PID 1) while the API hangs: the run must stop before the kill."""
    release = threading.Event()

    def hang(fake: FakeGitHub, request: Recorded) -> None:
        if request.method == "GET" and request.path.endswith(f"/pulls/{PR}"):
            release.wait(120)

    fake.on_request = hang
    runner = Runner(work / "stopped", 1001)
    result: dict[str, object] = {}

    def run() -> None:
        code, log, _ = runner.run(fake, git, name="prbot-smoke-stop")
        result.update(code=code, log=log)

    before = len(fake.calls("GET", rf"/pulls/{PR}$"))
    thread = threading.Thread(target=run)
    thread.start()
    for _ in range(1200):  # until the run waits for the pull request
        if len(fake.calls("GET", rf"/pulls/{PR}$")) > before:
            break
        time.sleep(0.05)
    started = time.monotonic()
    stop = podman("stop", "-t", "30", "prbot-smoke-stop", check=False)
    stopped = time.monotonic() - started
    if stop.returncode:
        print(f"podman stop failed: {stop.stderr.strip()}")
    release.set()
    thread.join(60)
    fake.on_request = None
    print(
        f"podman stop (SIGTERM) with the API hanging: stopped in {stopped:.1f} s, exit {result.get('code')}"
    )
    log = str(result.get("log", ""))
    return check(
        "SIGTERM: exit 2 at once, says so, verdict error",
        result.get("code") == 2
        and stopped < 10
        and "prbot was stopped" in log
        and runner.outputs().get("verdict") == "error"
        and fake.token not in log,
        log,
    )


def _demo() -> bool:
    """`prbot demo` in the image: the bundled example's review, offline."""
    started = time.monotonic()
    done = podman("run", "--rm", "--network", "none", "--entrypoint", "prbot", IMAGE, "demo", check=False)
    seconds = time.monotonic() - started
    print(f"prbot demo in the container (no network): {seconds:.1f} s, exit {done.returncode}")
    return check(
        "demo: exit 0, the review comment",
        done.returncode == 0 and done.stdout.startswith(MARKER),
        done.stdout[-2000:] + done.stderr,
    )


def _script_pr(work: Path) -> list[bool]:
    """The real #2707, which changes a benchmark script: `prbot review` of a read-only mount gives
    the review it gives outside the container, and the action reads the script with
    tree-sitter-bash. Skipped, saying so, without the real-world data."""
    bundle = SHARED / "inferencex-runfiles-history.bundle"
    if not bundle.exists():
        print(f"skip the real PR #{SCRIPT_PR}: {bundle} not found (set PRBOT_REAL_WORLD)")
        return []
    repo = work / "runfiles.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(repo)], check=True)
    base, head, subject = squash_merge(repo, SCRIPT_PR)
    review = ["review", "--base", base, "--head", head, "--offline", "--format", "json"]
    started = time.monotonic()
    mount = ["-v", f"{repo}:/repo:ro", "--network", "none", "--entrypoint", "prbot"]
    inside = podman("run", "--rm", *mount, IMAGE, *review, "--repo", "/repo", check=False)
    seconds = time.monotonic() - started
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    outside = subprocess.run(
        [sys.executable, "-m", "bot", *review, "--repo", str(repo)],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        check=False,
    )
    print(f"prbot review of #{SCRIPT_PR} in the container: {seconds:.1f} s, exit {inside.returncode}")
    findings = json.loads(inside.stdout)["findings"] if inside.returncode in (0, 1) else []
    results = [
        check(
            f"review of #{SCRIPT_PR}: the same JSON as outside the container",
            inside.returncode == outside.returncode and inside.stdout == outside.stdout,
            inside.stderr + outside.stderr,
        ),
        check(f"review of #{SCRIPT_PR}: its script read by a bash parser", _parsed(findings), inside.stdout),
    ]
    with FakeGitHub(repo, full_name="SemiAnalysisAI/InferenceX") as fake:
        serve_repository(repo, work / "served-real", fake.full_name, {SCRIPT_PR: head})
        with GitHttpServer(work / "served-real", fake.token) as git:
            fake.add_pull(SCRIPT_PR, base, head, title=subject.removesuffix(f" (#{SCRIPT_PR})"))
            runner = Runner(work / "real-pr", 1001)
            code, log, seconds = runner.run(fake, git, number=SCRIPT_PR)
    verdict = runner.outputs().get("verdict")
    print(f"the action on #{SCRIPT_PR}: {seconds:.1f} s, exit {code}, verdict {verdict}")
    report = runner.mounts["workspace"] / "prbot-report.json"
    findings = json.loads(report.read_text(encoding="utf-8"))["findings"] if report.exists() else []
    return [
        *results,
        check(
            f"action on #{SCRIPT_PR} (merged upstream): exit 0, no blocking finding, fetched with git",
            code == 0
            and verdict in ("clean", "warnings")
            and "Fetched the base and head commits with git" in log,
            log,
        ),
        check(f"action on #{SCRIPT_PR}: its script read by a bash parser", _parsed(findings), log),
        check(f"action on #{SCRIPT_PR}: no log shows the token", fake.token not in log),
    ]


def _parsed(findings: list[dict]) -> bool:
    """Whether the scripts check passed, having parsed a script (tree-sitter-bash loaded)."""
    return any(f["id"] == "scripts-ok" and "bash parser" in f["message_en"] for f in findings)


if __name__ == "__main__":
    sys.exit(main())
