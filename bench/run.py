#!/usr/bin/env python3
"""Performance benchmark of prbot on real InferenceX pull requests (issue #8).

    python bench/run.py [--runs N] [--quick] [--json FILE] [--profile]

Measures, on the real history bundle in `../shared/real-world/` (next to the repository):

(a) the floor: reading the master configs and perf-changelog a PR changed, at both refs, with
    one `git cat-file --batch` and parsing them with pyyaml's C loader alone, timed inside a
    fresh process for each run (like the CLI, so that both meet the same machine conditions);
(b) a full offline review of the five largest and the two smallest real PRs, in-process
    (`run_local`, wall and CPU time, plus the JSON emit) and end to end through the CLI in a
    fresh subprocess (wall and CPU time);
(c) the peak RSS of each CLI subprocess, started through GNU `time -f %M` (or a tiny python
    spawner using `os.wait4`) so that this process's own RSS is not inherited into the figure;
(d) cold start: `python -m bot --help`, `python -X importtime -c "import bot.cli"` and the
    time to the first byte on stdout of `python -m bot demo`.

Prints medians over `--runs` runs (default 5; `--quick` = 1) and PASS/MISS against the targets;
it never fails on a missed target. Only the standard library and pyyaml are used.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import fnmatch
import io
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REAL = Path(os.environ.get("PRBOT_REAL_WORLD") or ROOT.parent / "shared" / "real-world")
BUNDLE = REAL / "inferencex-history.bundle"
RUNFILES = REAL / "inferencex-runfiles-history.bundle"  # with the launchers and benchmark scripts
PYTHON = sys.executable
CHANGELOG = "perf-changelog.yaml"
N_LARGEST, N_SMALLEST = 5, 2
# The floor is cheap and, on a machine whose speed comes in spells, bimodal: a short process often
# runs within one fast spell. More samples keep its median from flipping between the two modes.
FLOOR_SAMPLES_PER_RUN = 3
CHILD_TIMEOUT_S = 300

# Targets (reported, never asserted).
TARGET_RATIO = 2.0
TARGET_REVIEW_S = 1.0
TARGET_FIRST_OUTPUT_S = 0.3
TARGET_RSS_MIB = 150.0


# --------------------------------------------------------------------------------------------
# helpers


def median(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout.decode("utf-8", "surrogateescape")


def is_reviewed_file(path: str) -> bool:
    """A top-level `configs/*master.yaml` (what the bot treats as a master config) or the changelog."""
    if path == CHANGELOG:
        return True
    if not path.startswith("configs/"):
        return False
    name = path[len("configs/") :]
    return "/" not in name and fnmatch.fnmatch(name, "*master.yaml")


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    return env


def rss_mib(maxrss: int) -> float:
    """ru_maxrss is KiB on Linux, bytes on macOS."""
    return maxrss / (1024 * 1024) if sys.platform == "darwin" else maxrss / 1024


@dataclass
class Child:
    rc: int | None
    wall: float
    cpu: float | None
    rss_mib: float | None
    stdout: bytes
    stderr: bytes
    first_byte: float | None = None


# Peak RSS must come from a *small* parent: Linux carries the parent's high-water RSS over fork and
# exec into the child's ru_maxrss, so a child forked from this (large) benchmark process would
# report at least this process's RSS. Each measured command is therefore started through GNU time
# (a small C program; `-f %M` is KiB) when available, else through a tiny `python -S -I` spawner.
_SPAWNER = (
    "import os, sys\n"
    "pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "with open(sys.argv[1], 'w') as f:\n"
    "    f.write(f'{usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}')\n"
    "code = os.waitstatus_to_exitcode(status)\n"
    "sys.exit(code if code >= 0 else 128 - code)\n"
)
_GNU_TIME: str | None = None


def _detect_gnu_time() -> str | None:
    path = "/usr/bin/time"
    if not os.access(path, os.X_OK):
        return None
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as note:
        done = subprocess.run([path, "-f", "%M", "-o", note.name, "true"], capture_output=True, check=False)
        return path if done.returncode == 0 and note.read().strip().isdigit() else None


def rss_method() -> str:
    return f"GNU time (%M) via {_GNU_TIME}" if _GNU_TIME else "python -S -I posix_spawn + wait4 spawner"


def _kill_group(pid: int) -> None:
    """On timeout: kill the process group this benchmark created for one measured command."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def run_child(cmd: list[str], *, first_byte: bool = False, timeout: float = CHILD_TIMEOUT_S) -> Child:
    """Run one fresh subprocess; wall time, CPU (user+sys, incl. waited-for grandchildren), peak RSS.

    With `first_byte`, also the time from spawn until the first byte arrives on its stdout.
    """
    env = child_env()
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r", suffix=".rss") as note,
    ):
        if _GNU_TIME:
            wrapped = [_GNU_TIME, "-f", "%M", "-o", note.name, *cmd]
        else:
            wrapped = [PYTHON, "-S", "-I", "-c", _SPAWNER, note.name, *cmd]
        started = time.perf_counter()
        proc = subprocess.Popen(
            wrapped,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            stdout=subprocess.PIPE if first_byte else out,
            stderr=err,
        )
        timer = threading.Timer(timeout, _kill_group, (proc.pid,))
        timer.start()
        ttfb = None
        head = b""
        try:
            if first_byte:
                assert proc.stdout is not None
                head = os.read(proc.stdout.fileno(), 1)
                ttfb = time.perf_counter() - started if head else None
                head += proc.stdout.read()
                proc.stdout.close()
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - started
            proc.returncode = os.waitstatus_to_exitcode(status)
        finally:
            timer.cancel()
        fields = note.read().split()
        cpu: float | None = usage.ru_utime + usage.ru_stime
        rss = None
        if _GNU_TIME and fields and fields[-1].isdigit():
            rss = int(fields[-1]) / 1024  # GNU time reports KiB
        elif not _GNU_TIME and len(fields) == 2:
            rss, cpu = rss_mib(int(fields[0])), float(fields[1])
        out.seek(0)
        err.seek(0)
        stdout = head if first_byte else out.read()
        return Child(proc.returncode, wall, cpu, rss, stdout, err.read(), ttfb)


def tail(data: bytes, lines: int = 15) -> str:
    text = data.decode("utf-8", "replace").rstrip()
    return "\n".join("      | " + line for line in text.splitlines()[-lines:]) or "      | (no output)"


def fmt_ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1000:,.0f}"


def fmt_ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


# --------------------------------------------------------------------------------------------
# choosing the PRs


@dataclass
class PR:
    sha: str
    parent: str
    number: str
    subject: str
    lines: int
    files: list[str]
    role: str = ""
    floor_read: list[float] = field(default_factory=list)
    floor_parse: list[float] = field(default_factory=list)
    floor_parse_cpu: list[float] = field(default_factory=list)
    floor_bytes: int = 0
    review_wall: list[float] = field(default_factory=list)
    review_cpu: list[float] = field(default_factory=list)
    emit_wall: list[float] = field(default_factory=list)
    cli_wall: list[float] = field(default_factory=list)
    cli_cpu: list[float] = field(default_factory=list)
    cli_rss: list[float] = field(default_factory=list)
    findings: int | None = None
    verdict: str | None = None
    repo: Path | None = None  # another clone than the history's (the runfiles row)
    json_bytes: int | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def floor(self) -> float | None:
        read, parse = median(self.floor_read), median(self.floor_parse)
        return None if read is None or parse is None else read + parse

    @property
    def failed(self) -> bool:
        return bool(self.errors)

    def summary(self) -> dict[str, Any]:
        data = asdict(self)
        floor = self.floor
        data["median"] = {
            "floor_s": floor,
            "floor_read_s": median(self.floor_read),
            "floor_parse_s": median(self.floor_parse),
            "review_s": median(self.review_wall),
            "review_cpu_s": median(self.review_cpu),
            "emit_s": median(self.emit_wall),
            "cli_s": median(self.cli_wall),
            "cli_cpu_s": median(self.cli_cpu),
            "cli_peak_rss_mib": max(self.cli_rss) if self.cli_rss else None,
            "ratio_review_floor": ratio(median(self.review_wall), floor),
            "ratio_cli_floor": ratio(median(self.cli_wall), floor),
        }
        data["status"] = "FAILED" if self.failed else "ok"
        return data


def ratio(value: float | None, floor: float | None) -> float | None:
    return value / floor if value is not None and floor else None


_NUMBER = re.compile(r"\(#(\d+)\)\s*$")


def choose_prs(repo: Path) -> list[PR]:
    """The N_LARGEST and N_SMALLEST commits by changed lines in reviewed files (ties: newest first)."""
    log = git(repo, "log", "--no-renames", "--numstat", "--format=@%H %P%x09%s")
    prs: list[PR] = []
    current: PR | None = None
    for line in log.splitlines():
        if line.startswith("@"):
            head, _, subject = line[1:].partition("\t")
            sha, *parents = head.split()
            match = _NUMBER.search(subject)
            current = PR(
                sha, parents[0] if len(parents) == 1 else "", match.group(1) if match else "?", subject, 0, []
            )
            prs.append(current)
            continue
        parts = line.split("\t")
        if current is None or len(parts) != 3 or not is_reviewed_file(parts[2]):
            continue
        added, deleted, path = parts
        current.lines += (int(added) if added.isdigit() else 0) + (int(deleted) if deleted.isdigit() else 0)
        current.files.append(path)
    touching = [(i, pr) for i, pr in enumerate(prs) if pr.parent and pr.files]  # log order: newest first
    largest = [pr for _, pr in sorted(touching, key=lambda t: (-t[1].lines, t[0]))[:N_LARGEST]]
    smallest = [pr for _, pr in sorted(touching, key=lambda t: (t[1].lines, t[0])) if pr not in largest]
    for pr in largest:
        pr.role = "largest"
    for pr in smallest[:N_SMALLEST]:
        pr.role = "smallest"
    return largest + sorted(smallest[:N_SMALLEST], key=lambda p: -p.lines)


RUNNERS = "configs/runners.yaml"
RUNNERS_LABEL = "cluster:mi355x-amds"  # the runner whose DRAM the runners.yaml-only PR lowers
RUNNERS_EDIT = (f"  {RUNNERS_LABEL}:\n    available-cpu-dram-mib: 3_095_781", "2_500_000")


def runners_pr(repo: Path) -> PR | None:
    """A runners.yaml-only PR on top of the history's newest commit: one cluster's host DRAM
    lowered (issue #22, item 2). Its floor is every file the review must read: runners.yaml, the
    master configs (to find the keys on that runner) and the recipes those keys run."""
    import yaml

    text = (repo / RUNNERS).read_text(encoding="utf-8")
    old, new = RUNNERS_EDIT
    if old not in text:
        return None
    parent = git(repo, "rev-parse", "HEAD").strip()
    (repo / RUNNERS).write_text(text.replace(old, old.rsplit(" ", 1)[0] + " " + new), encoding="utf-8")
    identity = [
        "-c",
        "user.name=bench",
        "-c",
        "user.email=bench@example.invalid",
        "-c",
        "commit.gpgsign=false",
    ]
    git(repo, *identity, "commit", "-qam", f"Lower {RUNNERS_LABEL}'s host DRAM")
    sha = git(repo, "rev-parse", "HEAD").strip()
    masters = ["configs/amd-master.yaml", "configs/nvidia-master.yaml"]
    recipes: set[str] = set()
    for path in masters:
        entries = yaml.load((repo / path).read_text(encoding="utf-8"), Loader=yaml.CSafeLoader) or {}
        for entry in entries.values():
            if not isinstance(entry, dict) or entry.get("runner") != RUNNERS_LABEL:
                continue
            for groups in (entry.get("scenarios") or {}).values():
                for group in groups or []:
                    for point in group.get("search-space") or []:
                        if isinstance(point.get("srt-recipe"), str):
                            recipes.add(point["srt-recipe"].partition(":")[0])
    lines = len(text.splitlines())
    return PR(
        sha,
        parent,
        "runners",
        f"runners.yaml only: {RUNNERS_LABEL}",
        lines,
        [RUNNERS, *masters, *sorted(recipes)],
        "runners",
    )


# --------------------------------------------------------------------------------------------
# (a) the floor


def read_blobs(repo: Path, requests: list[str]) -> list[bytes | None]:
    """`<sha>:<path>` blobs through one `git cat-file --batch` (None when missing)."""
    done = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch"],
        input="".join(r + "\n" for r in requests).encode(),
        capture_output=True,
        check=True,
    )
    data, pos, blobs = done.stdout, 0, []
    for _ in requests:
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        pos = end + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            blobs.append(data[pos : pos + size])
            pos += size + 1
        else:
            blobs.append(None)
    return blobs


def floor_child(
    repo: str, parent: str, sha: str, files: list[str], parse: bool = True
) -> dict[str, float | int]:
    """The floor's own work, run inside a fresh process (`--floor-child`): read the files at both
    refs with one `git cat-file --batch`, then parse each with yaml.CSafeLoader alone (not with
    `parse=False`, whose process costs everything but the parse: see `--instructions`)."""
    import yaml

    requests = [f"{ref}:{path}" for ref in (parent, sha) for path in files]
    shell = _shell_parser() if any(path.endswith(".sh") for path in files) else None
    started = time.perf_counter()
    blobs = read_blobs(Path(repo), requests)
    read = time.perf_counter() - started
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for request, blob in zip(requests, blobs, strict=True):
        if blob is None or not parse:
            continue
        if request.endswith(".sh") and shell is not None:
            shell.parse(blob)
        elif request.endswith((".yaml", ".yml")):
            # Some historical PRs shipped YAML that did not parse; the attempt is the cost.
            with contextlib.suppress(yaml.YAMLError, UnicodeDecodeError):
                yaml.load(blob.decode("utf-8"), Loader=yaml.CSafeLoader)
        # Anything else (MODELS.md, CODEOWNERS) is read, not parsed: the floor's read counts it.
    parse, parse_cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    size = sum(len(b) for b in blobs if b is not None)
    return {"read": read, "parse": parse, "parse_cpu": parse_cpu, "bytes": size}


def _shell_parser() -> Any:
    """tree-sitter-bash, the parser prbot reads shell with (loaded outside the timed parse)."""
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def runfiles_rows(tmp: Path) -> list[PR]:
    """Real PRs of the runfiles history, scripts included (`bench/runfiles_pr.py` chose them: the
    largest by the files its review reads first): each one's floor is every file its review reads,
    at both refs (none when the bundle is absent)."""
    import runfiles_pr

    if not RUNFILES.is_file():
        print(f"  runfiles rows: skipped — {RUNFILES} not found")
        return []
    repo = tmp / "runfiles"
    subprocess.run(["git", "clone", "-q", str(RUNFILES), str(repo)], capture_output=True, check=True)
    rows = []
    for number in runfiles_pr.PRS:
        found = runfiles_pr.commit_of(repo, number)
        if found is None:
            print(f"  runfiles row: skipped — #{number} is not in {RUNFILES.name}")
            continue
        parent, sha = found
        numstat = git(repo, "diff", "--numstat", "--no-renames", parent, sha).splitlines()
        lines = sum(int(n) for row in numstat for n in row.split("\t")[:2] if n.isdigit())
        files = runfiles_pr.files_read(repo, parent, sha)
        subject = git(repo, "log", "-1", "--format=%s", sha).strip()
        rows.append(PR(sha, parent, number, subject, lines, files, "runfiles", repo=repo))
    return rows


def measure_floor(repo: Path, pr: PR) -> None:
    """One floor sample, in a fresh process like the CLI's, so both draw from the same conditions
    (on a shared machine a whole process can run fast or slow); its start-up is not counted."""
    done = subprocess.run(floor_command(repo, pr), capture_output=True, check=False, timeout=CHILD_TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"floor child failed: {done.stderr.decode('utf-8', 'replace').strip()[-500:]}")
    sample = json.loads(done.stdout)
    pr.floor_read.append(sample["read"])
    pr.floor_parse.append(sample["parse"])
    pr.floor_parse_cpu.append(sample["parse_cpu"])
    pr.floor_bytes = sample["bytes"]


def floor_command(repo: Path, pr: PR, parse: bool = True) -> list[str]:
    script = str(Path(__file__).resolve())
    flags = [] if parse else ["--floor-read-only"]
    return [PYTHON, script, *flags, "--floor-child", str(repo), pr.parent, pr.sha, *pr.files]


# --------------------------------------------------------------------------------------------
# (e) instruction counts (--instructions): the same comparison without the machine's noise

_INSTRUCTIONS = re.compile(r"I\s+refs:\s+([\d,]+)")


def instructions(cmd: list[str]) -> int:
    """Instructions one process executed, counted by valgrind (cachegrind, no cache simulation):
    the same count every time for the same inputs, whatever else the machine is doing. Child
    processes (git) are not followed, for the floor's process as for the CLI's."""
    valgrind = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    done = subprocess.run([*valgrind, *cmd], cwd=ROOT, env=child_env(), capture_output=True, check=False)
    match = _INSTRUCTIONS.search(done.stderr.decode("utf-8", "replace"))
    if done.returncode not in (0, 1) or not match:
        raise RuntimeError(f"valgrind run failed (exit status {done.returncode}):\n{tail(done.stderr)}")
    return int(match[1].replace(",", ""))


def count_instructions(repo: Path, pr: PR) -> dict[str, int]:
    """The floor's parse (its process with the parse, less the same process without it) and the
    whole CLI process, in instructions."""
    with_parse = instructions(floor_command(repo, pr))
    without = instructions(floor_command(repo, pr, parse=False))
    cli = instructions([PYTHON, "-m", "bot", *cli_arguments(repo, pr)])
    return {"floor": with_parse - without, "cli": cli}


def print_instructions(pr: PR, counts: dict[str, int]) -> None:
    floor, cli = counts["floor"], counts["cli"]
    print(f"\nInstruction counts for #{pr.number} (valgrind; deterministic; git's own work not counted)\n")
    print(f"  floor: the C loader's parse of the changed files    {floor / 1e6:>9,.0f} M")
    print(f"  CLI: the whole `python -m bot review` process        {cli / 1e6:>9,.0f} M")
    print(f"  CLI / floor                                           {cli / floor:>9.2f}×")


# --------------------------------------------------------------------------------------------
# (b) the review, in-process and through the CLI


def _bot() -> tuple[Any, Any]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from bot.local import LocalRequest, run_local

    return LocalRequest, run_local


def _dumps(report: Any) -> str:
    from bot.output.report_json import dumps

    return dumps(report)


def review_in_process(repo: Path, pr: PR, record: bool = True) -> None:
    request_cls, run_local = _bot()
    request = request_cls(repo=str(repo), base=pr.parent, head=pr.sha, offline=True)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    report, _labels, _seconds = run_local(request)
    wall1, cpu1 = time.perf_counter(), time.process_time()
    text = _dumps(report)
    wall2 = time.perf_counter()
    if record:
        pr.review_wall.append(wall1 - wall0)
        pr.review_cpu.append(cpu1 - cpu0)
        pr.emit_wall.append(wall2 - wall1)
        pr.findings, pr.verdict, pr.json_bytes = len(report.findings), report.verdict, len(text.encode())


def cli_arguments(repo: Path, pr: PR) -> list[str]:
    refs = ["--base", pr.parent, "--head", pr.sha]
    return ["review", "--repo", str(repo), *refs, "--offline", "--format", "json"]


def review_cli(repo: Path, pr: PR) -> None:
    child = run_child([PYTHON, "-m", "bot", *cli_arguments(repo, pr)])
    problem = None
    if child.rc not in (0, 1):
        problem = f"exit status {child.rc}"
    else:
        try:
            verdict = json.loads(child.stdout)["verdict"]
            if pr.verdict is not None and verdict != pr.verdict:
                problem = f"CLI verdict {verdict!r} differs from in-process {pr.verdict!r}"
        except (ValueError, KeyError, TypeError):
            problem = "stdout is not the JSON report"
    if problem:
        pr.errors.append(f"CLI: {problem}")
        print(f"    FAILED CLI review of {pr.sha[:10]} (#{pr.number}): {problem}; stderr:")
        print(tail(child.stderr))
        return
    pr.cli_wall.append(child.wall)
    if child.cpu is not None:
        pr.cli_cpu.append(child.cpu)
    if child.rss_mib is not None:
        pr.cli_rss.append(child.rss_mib)


def guarded(pr: PR, what: str, action: Callable[[], None]) -> None:
    try:
        action()
    except Exception as exc:
        pr.errors.append(f"{what}: {type(exc).__name__}: {exc}")
        print(f"    FAILED {what} of {pr.sha[:10]} (#{pr.number}): {type(exc).__name__}: {exc}")
        print(tail(traceback.format_exc().encode(), 6))


# --------------------------------------------------------------------------------------------
# (d) cold start


@dataclass
class ColdStart:
    python_pass: list[float] = field(default_factory=list)
    help_wall: list[float] = field(default_factory=list)
    import_cli_us: list[int] = field(default_factory=list)
    import_review_us: list[int] = field(default_factory=list)
    demo_first_byte: list[float] = field(default_factory=list)
    demo_wall: list[float] = field(default_factory=list)
    demo_rss: list[float] = field(default_factory=list)
    top_imports: list[tuple[str, int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def importtime(*modules: str) -> tuple[int | None, list[tuple[str, int]]]:
    """Cumulative µs of importing `modules` (and their parent packages) in a fresh interpreter, and
    the slowest modules by self time. Whatever `site` imported at startup is not counted."""
    child = run_child([PYTHON, "-X", "importtime", "-c", "import " + ", ".join(modules)])
    if child.rc != 0:
        raise RuntimeError(f"exit status {child.rc}:\n{tail(child.stderr)}")
    wanted = set(modules) | {m.split(".")[0] for m in modules}
    total, selfs = 0, []
    for line in child.stderr.decode("utf-8", "replace").splitlines():
        match = _IMPORT_LINE.match(line)
        if not match:
            continue
        self_us, cumulative, indent, name = int(match[1]), int(match[2]), len(match[3]), match[4]
        selfs.append((name, self_us))
        if indent == 1 and name in wanted:
            total += cumulative
    return total or None, sorted(selfs, key=lambda s: -s[1])[:8]


def measure_cold(cold: ColdStart, first: bool) -> None:
    base = run_child([PYTHON, "-c", "pass"])
    cold.python_pass.append(base.wall)
    helped = run_child([PYTHON, "-m", "bot", "--help"])
    if helped.rc != 0:
        raise RuntimeError(f"`python -m bot --help` exit status {helped.rc}:\n{tail(helped.stderr)}")
    cold.help_wall.append(helped.wall)
    cli_us, _ = importtime("bot.cli")
    if cli_us is not None:
        cold.import_cli_us.append(cli_us)
    review_us, top_review = importtime("bot.local", "bot.output.render")
    if review_us is not None:
        cold.import_review_us.append(review_us)
    if first:
        cold.top_imports = top_review
    demo = run_child([PYTHON, "-m", "bot", "demo"], first_byte=True)
    if demo.rc not in (0, 1) or demo.first_byte is None:
        raise RuntimeError(f"`python -m bot demo` exit status {demo.rc}:\n{tail(demo.stderr)}")
    cold.demo_first_byte.append(demo.first_byte)
    cold.demo_wall.append(demo.wall)
    if demo.rss_mib is not None:
        cold.demo_rss.append(demo.rss_mib)


# --------------------------------------------------------------------------------------------
# profile (--profile)


def profile_largest(repo: Path, pr: PR, top: int = 25) -> str:
    import cProfile
    import pstats

    request_cls, run_local = _bot()
    request = request_cls(repo=str(repo), base=pr.parent, head=pr.sha, offline=True)
    profiler = cProfile.Profile()
    profiler.enable()
    report, _labels, _seconds = run_local(request)
    _dumps(report)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    title = f"cProfile of run_local + report_json.dumps(report) for #{pr.number} ({pr.sha[:10]})"
    out.write(f"\n== {title}, by cumulative time\n")
    stats.sort_stats("cumulative").print_stats(top)
    out.write("\n== same run, by self (internal) time\n")
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


# --------------------------------------------------------------------------------------------
# report


def print_table(prs: list[PR], runs: int) -> None:
    head = (
        "PR",
        "commit",
        "role",
        "lines",
        "floor",
        "(read",
        "parse)",
        "review",
        "cpu",
        "emit",
        "rev/floor",
        "CLI",
        "CLI cpu",
        "CLI/floor",
        "RSS MiB",
        "findings",
        "status",
    )
    rows = []
    for pr in prs:
        floor = pr.floor
        rows.append(
            (
                f"#{pr.number}",
                pr.sha[:10],
                pr.role,
                f"{pr.lines:,}",
                fmt_ms(floor),
                fmt_ms(median(pr.floor_read)),
                fmt_ms(median(pr.floor_parse)),
                fmt_ms(median(pr.review_wall)),
                fmt_ms(median(pr.review_cpu)),
                fmt_ms(median(pr.emit_wall)),
                fmt_ratio(ratio(median(pr.review_wall), floor)),
                fmt_ms(median(pr.cli_wall)),
                fmt_ms(median(pr.cli_cpu)),
                fmt_ratio(ratio(median(pr.cli_wall), floor)),
                f"{max(pr.cli_rss):.0f}" if pr.cli_rss else "—",
                "—" if pr.findings is None else str(pr.findings),
                "FAILED" if pr.failed else "ok",
            )
        )
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    right = {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
    print(f"\nReview cost per PR (times in ms, median of {runs} run(s)). floor = read + parse of the changed")
    print("master configs and perf-changelog at both refs with yaml.CSafeLoader (#runners and the")
    print("runfiles row: every file the review reads, shell with tree-sitter-bash), in a fresh process")
    print(f"(its start-up not counted; {FLOOR_SAMPLES_PER_RUN} samples per run); review = run_local")
    print(
        "in-process (wall, cpu); emit = report_json.dumps(report); CLI = `python -m bot review ... --offline"
    )
    print("--format json` in a fresh process (wall, cpu incl. git children); RSS = its peak RSS.\n")

    def line(cells: tuple[str, ...]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in pairs).rstrip()

    print(line(head))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line(row))


def targets(prs: list[PR], cold: ColdStart) -> list[dict[str, Any]]:
    largest = next((p for p in prs if p.role == "largest" and not p.failed), None)
    out: list[dict[str, Any]] = []

    def add(name: str, value: float | None, limit: float, unit: str) -> None:
        status = "n/a" if value is None else ("PASS" if value <= limit else "MISS")
        out.append({"target": name, "value": value, "limit": limit, "unit": unit, "status": status})

    floor = largest.floor if largest else None
    review = median(largest.review_wall) if largest else None
    cli = median(largest.cli_wall) if largest else None
    add("largest PR: in-process review ≤ 2× floor", ratio(review, floor), TARGET_RATIO, "×")
    add("largest PR: CLI end-to-end ≤ 2× floor", ratio(cli, floor), TARGET_RATIO, "×")
    add("largest PR: in-process review ≤ 1 s", review, TARGET_REVIEW_S, "s")
    add("largest PR: CLI end-to-end ≤ 1 s", cli, TARGET_REVIEW_S, "s")
    runners = next((p for p in prs if p.role == "runners" and not p.failed), None)
    if runners is not None:
        value = ratio(median(runners.review_wall), runners.floor)
        add("runners.yaml-only PR: in-process review ≤ 2× its files' floor", value, TARGET_RATIO, "×")
        add(
            "runners.yaml-only PR: CLI ≤ 2× its files' floor",
            ratio(median(runners.cli_wall), runners.floor),
            TARGET_RATIO,
            "×",
        )
    for scripts in (p for p in prs if p.role == "runfiles" and not p.failed):
        name = f"runfiles PR #{scripts.number}"
        value = ratio(median(scripts.review_wall), scripts.floor)
        add(f"{name}: in-process review ≤ 2× its files' floor", value, TARGET_RATIO, "×")
        value = ratio(median(scripts.cli_wall), scripts.floor)
        add(f"{name}: CLI ≤ 2× its files' floor", value, TARGET_RATIO, "×")
    # Issue #8 (d): the container-style cold start is `python -m bot --help`, whose whole run
    # (interpreter, imports, output) bounds its import-to-first-output time.
    add(
        "import-to-first-output (`python -m bot --help`) ≤ 0.3 s",
        median(cold.help_wall),
        TARGET_FIRST_OUTPUT_S,
        "s",
    )
    rss = [r for p in prs for r in p.cli_rss] + cold.demo_rss
    add("peak RSS of any CLI run ≤ 150 MiB", max(rss) if rss else None, TARGET_RSS_MIB, "MiB")
    return out


def print_cold(cold: ColdStart, runs: int) -> None:
    print(f"\nCold start (fresh processes, median of {runs} run(s))\n")
    rows = [
        ("python -c pass (interpreter + site, for reference)", fmt_ms(median(cold.python_pass)) + " ms"),
        ("python -m bot --help", fmt_ms(median(cold.help_wall)) + " ms"),
        (
            'python -X importtime -c "import bot.cli"  (cumulative)',
            f"{median(cold.import_cli_us) / 1000:,.1f} ms" if cold.import_cli_us else "—",
        ),
        (
            'python -X importtime -c "import bot.local, bot.output.render"',
            f"{median(cold.import_review_us) / 1000:,.1f} ms" if cold.import_review_us else "—",
        ),
        ("python -m bot demo: first byte on stdout", fmt_ms(median(cold.demo_first_byte)) + " ms"),
        ("python -m bot demo: total wall", fmt_ms(median(cold.demo_wall)) + " ms"),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"  {name.ljust(width)}  {value:>10}")
    if cold.top_imports:
        print(
            "\n  slowest imports by self time (import bot.local, bot.output.render): "
            + ", ".join(f"{n} {us / 1000:.1f} ms" for n, us in cold.top_imports[:6])
        )


def print_targets(results: list[dict[str, Any]], largest: PR | None) -> None:
    where = ""
    if largest:
        where = f" — largest PR #{largest.number} ({largest.sha[:10]}, {largest.lines:,} lines)"
    print(f"\nTargets{where}\n")
    width = max(len(r["target"]) for r in results)
    for r in results:
        value = r["value"]
        shown = (
            "—"
            if value is None
            else (
                f"{value:.2f}×"
                if r["unit"] == "×"
                else f"{value:.0f} MiB"
                if r["unit"] == "MiB"
                else f"{value:.3f} s"
            )
        )
        print(f"  {r['target'].ljust(width)}  {shown:>10}  {r['status']}")


# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark prbot on real InferenceX PRs.")
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (medians; default 5)")
    parser.add_argument("--quick", action="store_true", help="one run of everything (CI smoke test)")
    parser.add_argument("--json", metavar="FILE", help="also write all numbers (every sample) to FILE")
    parser.add_argument(
        "--profile", action="store_true", help="print a cProfile of the in-process review of the largest PR"
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count the instructions of the largest PR's floor and CLI with valgrind (deterministic)",
    )
    parser.add_argument("--floor-child", nargs="+", help=argparse.SUPPRESS)  # REPO PARENT SHA FILE...
    parser.add_argument("--floor-read-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.floor_child:
        repo_arg, parent, sha, *files = args.floor_child
        print(json.dumps(floor_child(repo_arg, parent, sha, files, parse=not args.floor_read_only)))
        return 0
    runs = 1 if args.quick else max(1, args.runs)

    if not BUNDLE.is_file():
        print(f"bench: skipped — real-world data not found at {BUNDLE}")
        return 0
    if shutil.which("git") is None:
        print("bench: skipped — git is not installed")
        return 0
    try:
        import yaml

        yaml.CSafeLoader  # noqa: B018 - the floor is defined with the C loader
    except (ImportError, AttributeError):
        print("bench: skipped — pyyaml with the libyaml C loader (yaml.CSafeLoader) is not available")
        return 0

    global _GNU_TIME
    _GNU_TIME = _detect_gnu_time()
    started = time.perf_counter()
    print(
        f"prbot benchmark — python {platform.python_version()} ({PYTHON}), {platform.platform()}, "
        f"{os.cpu_count()} CPUs, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}, "
        f"{runs} run(s); RSS by {rss_method()}"
    )
    with tempfile.TemporaryDirectory(prefix="prbot-bench-") as tmp:
        repo = Path(tmp) / "history"
        clone = ["git", "clone", "-q", str(BUNDLE), str(repo)]
        cloned = subprocess.run(clone, capture_output=True, check=False)
        if cloned.returncode != 0:
            print(f"bench: cannot clone {BUNDLE}:\n{tail(cloned.stderr)}")
            return 1
        prs = choose_prs(repo)
        extra = runners_pr(repo)
        if extra is not None:
            prs.append(extra)
        prs += runfiles_rows(Path(tmp))
        print(
            f"cloned {BUNDLE.name}; reviewing {len(prs)} PRs: "
            + ", ".join(f"#{p.number} ({p.lines:,} lines)" for p in prs)
        )

        # Warm up: OS file cache, bytecode, and the bot's process-wide caches (message catalog).
        # The CLI should run from byte-compiled modules, as an installed prbot does (pip compiles
        # them at install): compile the checkout's now, as PYTHONDONTWRITEBYTECODE may be set.
        for package in ("bot", "templates"):
            compileall.compile_dir(ROOT / package, quiet=1)
        run_child([PYTHON, "-m", "bot", "--help"])
        warm = next((p for p in prs if p.role == "largest"), None)
        if warm is not None:
            with contextlib.suppress(Exception):
                review_in_process(repo, warm, record=False)

        for pr in prs:
            print(f"  #{pr.number} {pr.sha[:10]} ({pr.role}, {pr.lines:,} lines) …", flush=True)
            where = pr.repo or repo
            for _ in range(runs):
                for _ in range(FLOOR_SAMPLES_PER_RUN):
                    guarded(pr, "floor", lambda pr=pr, where=where: measure_floor(where, pr))
                guarded(pr, "in-process review", lambda pr=pr, where=where: review_in_process(where, pr))
                if "CLI" not in " ".join(pr.errors):
                    guarded(pr, "CLI review", lambda pr=pr, where=where: review_cli(where, pr))

        cold = ColdStart()
        print("  cold start …", flush=True)
        for i in range(runs):
            try:
                measure_cold(cold, first=i == 0)
            except Exception as exc:
                cold.errors.append(f"{type(exc).__name__}: {exc}")
                print(f"    FAILED cold start: {exc}")
                break

        profile = None
        largest = next((p for p in prs if p.role == "largest" and not p.failed), None)
        if args.profile and largest is not None:
            profile = profile_largest(repo, largest)
        counts: dict[str, int] | None = None
        if args.instructions and largest is not None:
            if shutil.which("valgrind") is None:
                print("  instruction counts: skipped — valgrind is not installed")
            else:
                print(f"  instruction counts for #{largest.number} (valgrind: about a minute) …", flush=True)
                counts = count_instructions(repo, largest)

    print_table(prs, runs)
    print_cold(cold, runs)
    results = targets(prs, cold)
    print_targets(results, largest)
    misses = [r["target"] for r in results if r["status"] == "MISS"]
    failed = [f"#{p.number}" for p in prs if p.failed]
    failed_list = f" ({', '.join(failed)})" if failed else ""
    print(
        f"\n{len(misses)} target(s) missed; {len(failed)} failed row(s){failed_list}; "
        f"benchmark took {time.perf_counter() - started:.1f} s"
    )
    if counts and largest is not None:
        print_instructions(largest, counts)
    if profile:
        print(profile)
    if args.json:
        payload = {
            "meta": {
                "python": platform.python_version(),
                "executable": PYTHON,
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
                "loadavg": os.getloadavg(),
                "runs": runs,
                "bundle": str(BUNDLE),
                "unix_time": time.time(),
                "rss_method": rss_method(),
            },
            "prs": [p.summary() for p in prs],
            "cold_start": asdict(cold)
            | {
                "median": {
                    "python_pass_s": median(cold.python_pass),
                    "help_s": median(cold.help_wall),
                    "import_bot_cli_us": median(cold.import_cli_us),
                    "import_review_modules_us": median(cold.import_review_us),
                    "demo_first_byte_s": median(cold.demo_first_byte),
                    "demo_wall_s": median(cold.demo_wall),
                }
            },
            "targets": results,
            "instructions": counts,
        }
        Path(args.json).write_text(json.dumps(payload, indent=2, default=str) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
