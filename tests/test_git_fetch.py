"""The action reads the pull request's commits with git from a real smart-HTTP server on 127.0.0.1.

The server (`git_http_server`) runs Debian's `git http-backend` and demands the token; the GitHub
API is the loopback fake (`github_fake`) driven through PyGithub, as in test_action.py.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import GIT_ENV, commit, squash_merge
from git_http_server import GitHttpServer, serve_repository
from github_fake import EventFiles, FakeGitHub, action_env, pull_event
from test_action import FAST, PR, Run, _no_token, act

from bot.example import ExampleRepo, build_example
from bot.github_action.run import run_action
from bot.local import run_local
from bot.model.layout import read_by_review
from bot.output import report_json
from bot.output.messages import text
from bot.sources.git_fetch import FetchedRepo, FetchError, fetch_pull, remote_url

FETCHED = "Fetched the base and head commits with git"
FALLBACK = "The commits could not be fetched with git"
API_READS = ("/contents/", "/git/trees/", "/git/blobs/")


@pytest.fixture(scope="module")
def shared_example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("git-fetch") / "inferencex")


class Servers:
    """The fake GitHub API and a git server for the same repository and pull request."""

    def __init__(self, example: ExampleRepo, root: Path, git_token: str | None = None) -> None:
        self.example = example
        self.github = FakeGitHub(example.path)
        serve_repository(example.path, root, self.github.full_name, {PR: example.head})
        self.git = GitHttpServer(root, git_token or self.github.token)

    def __enter__(self) -> Servers:
        self.github.start()
        self.git.__enter__()
        ex = self.example
        self.github.add_pull(PR, ex.base, ex.head, title=ex.title, body=ex.body, labels=ex.labels)
        return self

    def __exit__(self, *exc: object) -> None:
        self.git.__exit__()
        self.github.stop()

    def act(self, folder: Path) -> Run:
        """Run the action for a `synchronize` event, as test_action.act does, on a runner whose
        `GITHUB_SERVER_URL` is the git server."""
        files = EventFiles(folder / f"run{len(list(folder.glob('run*')))}")
        env = {
            **action_env(self.github, files, pull_event(self.github, PR), {}),
            "GITHUB_SERVER_URL": self.git.url,
        }
        stream = io.StringIO()
        run = Run(run_action(env, options=FAST, stream=stream), stream.getvalue(), files)
        _no_token(self.github, run.log, run.summary, files.output.read_text(encoding="utf-8"))
        return run

    def api_reads(self) -> int:
        return sum(1 for r in self.github.requests if any(part in r.path for part in API_READS))


@pytest.fixture
def servers(shared_example: ExampleRepo, tmp_path: Path) -> Iterator[Servers]:
    with Servers(shared_example, tmp_path / "served") as both:
        yield both


def _report(run: Run) -> dict:
    return _comparable(json.loads(Path(run.outputs["report"]).read_text(encoding="utf-8")))


def _comparable(report: dict) -> dict:
    """The report apart from what only a pull request gives: a CODEOWNERS sign-off is asked for on a
    PR and "not checked" locally, so of those findings only the files they name are compared; merge
    conflicts are GitHub's to tell (not known locally)."""
    findings = report.pop("findings")
    report["findings"] = [
        f for f in findings if f["check"] != "codeowners" and not f["id"].startswith("scripts-conflicts")
    ]
    report["sign-offs"] = sorted(f["file"] or "" for f in findings if f["check"] == "codeowners")
    return report


def _local(example: ExampleRepo) -> dict:
    request = example.request()
    report, _, _ = run_local(request)
    return _comparable(report_json.to_json(report))


def test_the_action_fetches_with_git_and_reports_what_local_mode_reports(
    servers: Servers, tmp_path: Path
) -> None:
    run = servers.act(tmp_path)
    assert FETCHED in run.log and FALLBACK not in run.log
    assert servers.api_reads() == 0  # no file through the API
    assert _report(run) == _local(servers.example)
    assert len(servers.git.requests) <= 8
    assert all(status in (200, 401) for _, _, status in servers.git.requests)
    assert not list(tmp_path.glob("run*/prbot-git-*"))  # the bare repository is gone


def test_a_wrong_token_falls_back_to_the_api_and_still_reviews(
    shared_example: ExampleRepo, tmp_path: Path
) -> None:
    with Servers(shared_example, tmp_path / "served", git_token="another-token") as both:
        run = both.act(tmp_path)
        assert FALLBACK in run.log and FETCHED not in run.log
        assert {status for _, _, status in both.git.requests} == {401}
        assert both.api_reads() > 0
        assert _report(run) == _local(shared_example)
        [comment] = both.github.comments_on(PR)
        assert "could not complete" not in comment.body.lower()


def test_without_a_server_url_the_action_reads_through_the_api(servers: Servers, tmp_path: Path) -> None:
    run = act(servers.github, tmp_path, pull_event(servers.github, PR))
    assert "GITHUB_SERVER_URL is not set" in run.log
    assert servers.git.requests == []
    assert _report(run) == _local(servers.example)


@pytest.mark.parametrize("number", [2263, 1992])
def test_real_pull_requests_report_as_in_local_mode(history: Path, tmp_path: Path, number: int) -> None:
    base, head, title = squash_merge(history, number)
    example = ExampleRepo(path=history, base=base, head=head, title=title, body="", labels=())
    with Servers(example, tmp_path / "served") as both:
        run = both.act(tmp_path)
        assert FETCHED in run.log and both.api_reads() == 0
        assert _report(run) == _local(example)
        assert len(both.git.requests) <= 8


def _git_shim(folder: Path) -> Path:
    """A `git` first on PATH that appends its arguments to a log, then runs the real git."""
    real = shutil.which("git")
    assert real
    shim = folder / "bin" / "git"
    shim.parent.mkdir(parents=True)
    shim.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{folder}/argv.log"\nexec "{real}" "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    return shim.parent


def test_the_token_is_in_no_argument_file_or_log(
    servers: Servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{_git_shim(tmp_path)}{os.pathsep}{os.environ['PATH']}")
    token, ex = servers.github.token, servers.example
    run = servers.act(tmp_path / "action")  # act() checks the log, summary, outputs and comment
    assert FETCHED in run.log
    fetched = fetch_pull(
        servers.git.url,
        servers.github.full_name,
        ex.base,
        ex.head,
        token,
        temp=str(tmp_path),
        wanted=read_by_review,
    )
    try:
        files = [p for p in fetched.folder.rglob("*") if p.is_file()]
        assert files and not any(token.encode() in p.read_bytes() for p in files)
        config = subprocess.run(
            ["git", "-C", str(fetched.repo.path), "config", "--list", "--local"],
            capture_output=True,
            text=True,
        ).stdout
        assert "url" not in config and "credential" not in config
    finally:
        fetched.close()
    argv = (tmp_path / "argv.log").read_text()
    assert "fetch" in argv and "cat-file" in argv  # the shim saw the fetches and the reads
    assert token not in argv and token not in run.log


@contextmanager
def _fetched(example: ExampleRepo, folder: Path, head: str) -> Iterator[tuple[FetchedRepo, GitHttpServer]]:
    """The example's base and `head` fetched from a real git server as the action fetches them;
    the fetched repository is closed (removed) on the way out."""
    with FakeGitHub(example.path) as github:
        serve_repository(example.path, folder / "served", github.full_name, {PR: head})
        with GitHttpServer(folder / "served", github.token) as git:
            fetched = fetch_pull(
                git.url, github.full_name, example.base, head, github.token, wanted=read_by_review
            )
            try:
                yield fetched, git
            finally:
                fetched.close()


def test_a_file_outside_the_data_paths_is_fetched_when_read(example: ExampleRepo, tmp_path: Path) -> None:
    head = commit(example.path, {"docs/notes.md": "hello\n"})
    with _fetched(example, tmp_path, head) as (fetched, git):
        before = len(git.requests)
        snapshot = fetched.snapshot(head)
        assert snapshot.read("configs/runners.yaml") == (example.path / "configs/runners.yaml").read_bytes()
        assert snapshot.read("no/such/file.yaml") is None
        assert len(git.requests) == before  # data paths and absent files need no request
        assert snapshot.read("docs/notes.md") == b"hello\n"
        assert len(git.requests) > before
    assert not fetched.folder.exists()


def test_a_submodule_reads_as_no_file(example: ExampleRepo, tmp_path: Path) -> None:
    repo = str(example.path)
    gitlink = f"160000,{'ab' * 20},benchmarks/vendored"  # a commit of another repository
    subprocess.run(["git", "-C", repo, "update-index", "--add", "--cacheinfo", gitlink], check=True)
    env = {**os.environ, **GIT_ENV}
    subprocess.run(
        ["git", "-C", repo, "-c", "commit.gpgsign=false", "commit", "-qm", "sub"], check=True, env=env
    )
    head = subprocess.run(
        ["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    with _fetched(example, tmp_path, head) as (fetched, _git):
        snapshot = fetched.snapshot(head)
        snapshot.prefetch(["benchmarks/vendored", "configs/runners.yaml"])
        assert snapshot.read("benchmarks/vendored") is None
        assert snapshot.read("configs/runners.yaml")


def test_an_unknown_commit_is_a_fetch_error(servers: Servers, tmp_path: Path) -> None:
    with pytest.raises(FetchError) as caught:
        fetch_pull(
            servers.git.url,
            servers.github.full_name,
            "1" * 40,
            servers.example.head,
            servers.github.token,
            wanted=read_by_review,
        )
    assert text(caught.value.message).startswith("git fetch failed")


@pytest.mark.parametrize(
    "server", ["ftp://example.com", "https://user:secret@example.com", "file:///tmp/repo", "https://"]
)
def test_only_a_plain_http_server_address_is_used(server: str) -> None:
    with pytest.raises(FetchError) as caught:
        remote_url(server, "acme/inferencex")
    assert "not a plain http" in text(caught.value.message)
