"""The action on the runners GitHub has (issue #25): a `RUNNER_TEMP` that is not there or not
usable, runner folders owned by another user, and a SIGTERM to the container's PID 1.

The GitHub API is the loopback fake (`github_fake`) and the git server Debian's `git http-backend`
(`git_http_server`), as in test_git_fetch.py.
"""

from __future__ import annotations

import dataclasses
import io
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import GIT_ENV
from github_fake import EventFiles, FakeGitHub, Recorded, action_env, pull_event
from test_action import FAST, PR, Run, _no_token, act
from test_git_fetch import FALLBACK, FETCHED, Servers, _local, _report

from bot.checks.sweep_rules import SKIP_MARKER
from bot.example import ExampleRepo, build_example
from bot.github_action.privileges import STEP_FILES, runner_user
from bot.github_action.run import run_action
from bot.output.render import MARKER


@pytest.fixture(scope="module")
def shared_example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("runner") / "inferencex")


@pytest.fixture
def servers(shared_example: ExampleRepo, tmp_path: Path) -> Iterator[Servers]:
    with Servers(shared_example, tmp_path / "served") as both:
        yield both


def _act(servers: Servers, folder: Path, **env: str | None) -> Run:
    """The action for a `synchronize` event with git fetching, the step's environment changed by
    `env` (None removes a variable)."""
    files = EventFiles(folder / f"run{len(list(folder.glob('run*')))}")
    environ = {
        **action_env(servers.github, files, pull_event(servers.github, PR), {}),
        "GITHUB_SERVER_URL": servers.git.url,
        "GITHUB_WORKSPACE": str(files.folder),  # the runner always sets it
    }
    for name, value in env.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    stream = io.StringIO()
    run = Run(run_action(environ, options=FAST, stream=stream), stream.getvalue(), files)
    _no_token(servers.github, run.log, run.summary)
    return run


def _reviewed(servers: Servers, run: Run) -> None:
    """The review ran and was published as on any runner: the local review's report and verdict
    (the example is clean: exit 0), the comment and the outputs written."""
    local = _local(servers.example)
    assert run.code == 0, run.log
    assert run.outputs["verdict"] == local["verdict"] == "clean"
    assert _report(run) == local
    [comment] = servers.github.comments_on(PR)
    assert "could not complete" not in comment.body.lower()


# ---------------------------------------------------------------- 1. RUNNER_TEMP


@pytest.mark.parametrize("kind", ["host path", "a file", "unset"])
def test_an_unusable_runner_temp_still_fetches_with_git(servers: Servers, tmp_path: Path, kind: str) -> None:
    """A runner before v2.331 hands a Docker action the host's RUNNER_TEMP, which the container
    does not have: the fetch uses a temporary folder of its own (it used to crash with exit 2)."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    temp = {"host path": "/home/runner/work/_temp", "a file": str(blocker), "unset": None}[kind]
    run = _act(servers, tmp_path / "action", RUNNER_TEMP=temp)
    assert FETCHED in run.log and FALLBACK not in run.log
    assert servers.api_reads() == 0
    _reviewed(servers, run)
    assert not list(Path(tempfile.gettempdir()).glob("prbot-git-*/repo.git/HEAD"))  # removed after


def test_an_os_error_of_the_fetch_falls_back_to_the_api(
    servers: Servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No temporary folder can be made at all: the fetch fails with a FetchError, the files are
    read through the API and the review is the same (it used to end with exit 2, no review)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "gone"))
    run = _act(servers, tmp_path / "action", RUNNER_TEMP="/home/runner/work/_temp")
    assert FALLBACK in run.log and "the system refused it (No such file or directory)" in run.log
    assert servers.api_reads() > 0
    _reviewed(servers, run)


# ---------------------------------------------------------------- 3. SIGTERM


def _action_process(env: dict[str, str], **popen: Any) -> subprocess.Popen[str]:
    """`prbot action` in a process of its own, as the container's entry point runs it."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "PRBOT_CACHE_DIR")}
    return subprocess.Popen(
        [sys.executable, "-m", "bot", "action"],
        env={**keep, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **popen,
    )


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_termination_signal_stops_the_run_at_once(servers: Servers, tmp_path: Path, number: int) -> None:
    """The runner cancels a job (a newer push, the timeout) with SIGINT, then SIGTERM; `docker stop`
    sends SIGTERM to PID 1. Against an API that never answers, the run stops on the signal with
    exit 2, says so, sets `verdict=error` and leaves the comment as it was (SIGTERM used to be
    ignored: the run went on to its own timeouts)."""
    github, answered = servers.github, threading.Event()
    github.add_comment(PR, MARKER + "\nthe review of the previous head", github.bot_login, kind="Bot")

    def hang(fake: FakeGitHub, request: Recorded) -> None:
        if request.method == "GET" and request.path.endswith(f"/pulls/{PR}"):
            answered.wait(120)

    github.on_request = hang
    files = EventFiles(tmp_path / "run")
    env = {**action_env(github, files, pull_event(github, PR), {}), "GITHUB_WORKSPACE": str(files.folder)}
    process = _action_process(env)
    try:
        for _ in range(600):  # until the run waits for the pull request
            if github.calls("GET", rf"/pulls/{PR}$") or process.poll() is not None:
                break
            time.sleep(0.05)
        assert process.poll() is None, process.communicate()[0]
        process.send_signal(number)
        log, _ = process.communicate(timeout=60)
    finally:
        answered.set()
        if process.poll() is None:
            process.kill()
    assert process.returncode == 2, log
    assert "::error title=prbot::prbot was stopped (SIGTERM or SIGINT" in log
    assert files.outputs() == {"verdict": "error"}
    assert [c.body for c in github.comments_on(PR)] == [MARKER + "\nthe review of the previous head"]
    assert not [r for r in github.requests if r.method != "GET"]


# ---------------------------------------------------------------- 2. runner folders of any owner


def _step_folder(root: Path, owner: int) -> dict[str, str]:
    """A workspace and step files as a runner whose user has id `owner` makes them."""
    workspace, commands = root / "workspace", root / "_runner_file_commands"
    workspace.mkdir(parents=True)
    commands.mkdir()
    env = {"GITHUB_WORKSPACE": str(workspace)}
    for name in STEP_FILES:
        path = commands / name.lower()
        path.touch()
        env[name] = str(path)
    for path in (workspace, commands, *(Path(env[n]) for n in STEP_FILES)):
        os.chown(path, owner, owner)
    return env


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can make folders of other users")
def test_started_as_root_the_action_takes_the_id_of_the_runners_user(tmp_path: Path) -> None:
    assert runner_user(_step_folder(tmp_path / "hosted", 1001)) == (1001, 1001)
    assert runner_user(_step_folder(tmp_path / "self-hosted", 1234)) == (1234, 1234)
    assert runner_user(_step_folder(tmp_path / "root", 0)) is None  # a runner run as root
    mixed = _step_folder(tmp_path / "mixed", 1001)
    os.chown(mixed["GITHUB_OUTPUT"], 0, 0)
    assert runner_user(mixed) is None  # 1001 could not append to it: root it stays
    assert runner_user({"GITHUB_WORKSPACE": str(tmp_path / "no such folder")}) is None


def test_a_write_that_fails_is_reported_and_the_run_goes_on(servers: Servers, tmp_path: Path) -> None:
    """Step files the action cannot write (here: folders, which not even root can append to) are
    named in the log; the review is still published and the exit status is the verdict's."""
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    run = _act(
        servers,
        tmp_path / "action",
        GITHUB_OUTPUT=str(blocked),
        GITHUB_STEP_SUMMARY=str(blocked),
        GITHUB_WORKSPACE=str(tmp_path / "not there"),
        RUNNER_TEMP=None,
    )
    assert run.code == 0, run.log
    assert "Could not write GITHUB_OUTPUT (Is a directory)." in run.log
    assert "Could not write GITHUB_STEP_SUMMARY (Is a directory)." in run.log
    assert "JSON report written to" in run.log and FETCHED in run.log
    [comment] = servers.github.comments_on(PR)
    assert "no blocking issues" in comment.body


# ---------------------------------------------------------------- 8. compare pagination


def _empty_commits(repo: Path, messages: list[str]) -> str:
    env = {**os.environ, **GIT_ENV}
    for message in messages:
        git = [
            "git",
            "-C",
            str(repo),
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            message,
        ]
        subprocess.run(git, check=True, env=env)
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()


@pytest.mark.parametrize("skip_at", ["head", "commit 100"])
def test_a_pull_request_of_more_than_a_hundred_commits_reads_its_head_message(
    example: ExampleRepo, tmp_path: Path, skip_at: str
) -> None:
    """GitHub pages a comparison's commits oldest first: the first page of a PR with 120 commits
    ends with its 100th, not its head. The head's message (where `[skip-sweep]` is read) then comes
    from the head commit itself, and the review is the local review's."""
    messages = [f"step {i}" for i in range(1, 121)]
    messages[-1 if skip_at == "head" else 98] += f" {SKIP_MARKER}"
    head = _empty_commits(example.path, messages)  # after the example's own head commit: 121 in all
    with FakeGitHub(example.path) as fake:
        fake.add_pull(PR, example.base, head, title=example.title, body=example.body, labels=example.labels)
        run = act(fake, tmp_path, pull_event(fake, PR))
        [compare] = fake.calls("GET", r"/compare/")
        assert compare.query["per_page"] == ["100"] and compare.query.get("page", ["1"]) == ["1"]
        assert fake.calls("GET", rf"/commits/{head}$")  # the head, read on its own
    local = _local(dataclasses.replace(example, head=head))
    assert _report(run) == local
    skipped = [f for f in local["findings"] if SKIP_MARKER in f["message_en"]]
    assert bool(skipped) is (skip_at == "head"), local["findings"]  # the message read is the head's
