"""What a run executes (bot/model/scripts.py) agrees with InferenceX's launchers themselves.

For every run of every config key, at the head of the real runfiles history (upstream
843c6254f, #2707) and at a sample of its earlier commits, prbot's resolution of the benchmark
script each launcher starts is compared with the launcher run in bash: the real launcher, from a
checkout of that commit, with the run's variables, where only assignments, tests and
printf/echo execute (tests/data/launcher_oracle.sh; every other command is skipped, loops are
not entered). A disagreement fails the test, and so does a launcher that bash does not get
through within 1 s."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bot.model.runs import Ref, Shared, run_vars
from bot.model.scripts import _WORKSPACE, RunVars
from bot.settings import MASTER_CONFIGS
from bot.sources.git import GitRepo

ORACLE = Path(__file__).parent / "data" / "launcher_oracle.sh"
SAMPLE = 2  # earlier commits, evenly spaced over the history
UNFINISHED = "(nothing: bash did not get through the launcher within 1 s)"


def _checkout(repo: Path, sha: str, into: Path) -> Path:
    """The launchers and benchmark files of a commit, written out (bash tests `-f` on them)."""
    data = subprocess.run(
        ["git", "-C", str(repo), "archive", sha, "runners", "benchmarks"], capture_output=True, check=True
    ).stdout
    into.mkdir(parents=True)
    # tar(1), not `tarfile`: Python before 3.11.4 (Debian 12's 3.11.2) has no extraction `filter`.
    subprocess.run(["tar", "-x", "-C", str(into)], input=data, check=True)
    return into


def _bash(folder: Path, launcher: str, envs: list[dict[str, str]]) -> list[str | None]:
    """The benchmark script the launcher starts for each set of variables, as bash finds it: one
    bash for the launcher, each set run in a subshell of its own (its variables exported there,
    nothing else shared), stopped after 1 s. Its files sit beside the checkout's, named after the
    launcher, so that launchers run side by side."""
    name = Path(launcher).stem
    out = folder / f".oracle-out-{name}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    # Loops are not entered (as prbot does not): a loop waiting on a skipped command never ends.
    text = (folder / launcher).read_text()  # through a symlinked launcher, as bash reads it
    text = re.sub(r"^(\s*)while\s", r"\1while false && ", text, flags=re.M)
    text = re.sub(r"^(\s*)until\s", r"\1until true || ", text, flags=re.M)
    copy = folder / f".oracle-{name}.sh"
    copy.write_text(text)
    lines = [f"cd {shlex.quote(str(folder))}"]
    for i, env in enumerate(envs):
        exports = " ".join(
            f"{k}={shlex.quote(str(folder) if v == _WORKSPACE else v)}" for k, v in sorted(env.items())
        )
        lines.append(
            f"( export {exports}; source {shlex.quote(str(ORACLE))} {shlex.quote(str(copy))} "
            f"3>{shlex.quote(str(out / str(i)))} ) & p=$!; ( sleep 1; kill -KILL $p ) & w=$!; "
            "wait $p; kill $w"
        )
    driver = folder / f".oracle-driver-{name}.sh"
    driver.write_text("\n".join(lines) + "\n")
    shell = subprocess.Popen(
        ["bash", str(driver)],
        env={"PATH": "/usr/bin:/bin", "HOME": str(folder)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        shell.wait(timeout=30 + 2 * len(envs))
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGKILL)  # and the watchdogs' sleeps
        shell.wait()
    found: list[str | None] = []
    for i in range(len(envs)):
        named = (out / str(i)).read_text().strip()  # absent: bash did not run that set at all
        if not named:
            found.append(UNFINISHED)
        elif named == "-":
            found.append(None)
        else:
            path = named if named.startswith("/") else folder / named
            found.append(os.path.normpath(os.path.relpath(path, folder)))
    return found


def _agreement(repo: Path, sha: str, folder: Path) -> tuple[int, list[str]]:
    """(runs compared, disagreements) at one commit: every (point, launcher) of every key, each
    distinct set of variables asked of bash once (one bash per launcher, as many at once as there
    are cores)."""
    git = GitRepo.open(repo)
    ref = Ref(git.snapshot(sha), MASTER_CONFIGS, Shared())
    checkout = _checkout(repo, sha, folder / sha[:10])
    asked: dict[str, dict[RunVars, int]] = {}  # launcher → variables → their place in its batch
    compared = []
    for key in ref.keys:
        entry = ref.entry(key)
        for point in entry.points if entry else ():
            for launch in ref.executed(entry.raw, point):
                if launch.launcher_exists:
                    found = run_vars(entry.raw, point)
                    asked.setdefault(launch.launcher, {}).setdefault(found, len(asked[launch.launcher]))
                    compared.append((key, launch, found, len(point.concurrencies)))

    def ask(launcher: str) -> list[str | None]:
        machine = launcher.removeprefix("runners/launch_").removesuffix(".sh") + "_0"
        return _bash(checkout, launcher, [found.env(machine) for found in asked[launcher]])

    with ThreadPoolExecutor(os.cpu_count()) as pool:  # one bash per launcher, one per core
        answers = dict(zip(asked, pool.map(ask, asked), strict=True))
    runs = 0
    wrong = []
    for key, launch, found, count in compared:
        runs += count
        bash = answers[launch.launcher][asked[launch.launcher][found]]
        if bash != launch.script:
            wrong.append(f"{sha[:10]} {key} {launch.launcher}: prbot {launch.script}, bash {bash}")
    return runs, wrong


def _commits(repo: Path) -> list[str]:
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%H", "--first-parent"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    older = log[1:-1]  # the first commit predates the move of the master configs (#1992)
    step = max(1, len(older) // SAMPLE)
    return [log[0], *older[step - 1 :: step][:SAMPLE]]


def test_every_run_at_head_and_in_history_starts_the_script_the_launcher_starts(
    runfiles_history: Path, tmp_path: Path
) -> None:
    total = 0
    wrong: list[str] = []
    commits = _commits(runfiles_history)
    for sha in commits:
        runs, bad = _agreement(runfiles_history, sha, tmp_path)
        assert runs > 1000, f"{sha[:10]}: only {runs} runs resolved"
        total += runs
        wrong += bad
    print(f"\nscript resolution: {total - len(wrong)} of {total} runs agree at {len(commits)} commits")
    assert not wrong, "\n".join(wrong[:20])


def test_a_key_without_a_framework_named_script_runs_the_launchers_fallback(runfiles_history: Path) -> None:
    """At the head, `dsr1-fp8-mi355x-sglang` has no `…_mi355x_sglang.sh`: launch_mi355x-amds.sh
    tests its SCRIPT_FW name first and runs SCRIPT_FALLBACK (checked by hand)."""
    git = GitRepo.open(runfiles_history)
    ref = Ref(git.snapshot("HEAD"), MASTER_CONFIGS, Shared())
    entry = ref.entry("dsr1-fp8-mi355x-sglang")
    if entry is None:
        pytest.skip("the key is not at this head")
    (launch,) = set(ref.executed(entry.raw, entry.points[0]))
    assert launch.launcher == "runners/launch_mi355x-amds.sh"
    assert launch.tried == (
        "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x_sglang.sh",
        "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x.sh",
    )
    assert launch.script == launch.tried[1]
    assert launch.exists
