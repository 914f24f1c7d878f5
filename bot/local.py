"""Local mode: review two refs of a git repository exactly as the action would review a PR."""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from bot.engine import review
from bot.pullrequest import PullRequest
from bot.report import Report
from bot.settings import Settings, SettingsError
from bot.sources.git import GitRepo

_REMOTE = re.compile(r"github\.com[:/](?P<slug>[\w.-]+/[\w.-]+?)(?:\.git)?/?$")


@dataclass(frozen=True)
class LocalRequest:
    repo: str
    base: str
    head: str
    title: str = ""
    body: str = ""
    labels: tuple[str, ...] = ()
    pr_number: int | None = None
    pr_url: str | None = None
    offline: bool = False
    config: str | None = None


def _repository(repo: GitRepo) -> str | None:
    """The GitHub address of the `origin` remote (`https://github.com/owner/repo`), if it is one."""
    try:
        remote = subprocess.run(
            ["git", "-C", str(repo.path), "remote", "get-url", "origin"],
            capture_output=True,
            text=True,
            check=False,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = _REMOTE.search(remote)
    return f"https://github.com/{match['slug']}" if match else None


def _pr_url(repository: str | None, number: int | None, explicit: str | None) -> str | None:
    if explicit or number is None:
        return explicit
    return f"{repository}/pull/{number}" if repository else None


def _settings(path: str | None) -> Settings:
    if not path:
        return Settings()
    try:
        return Settings.from_yaml(Path(path).read_bytes())
    except OSError as exc:
        raise SettingsError(f"cannot read settings file {path}: {exc.strerror}") from None


def run_local(request: LocalRequest) -> tuple[Report, tuple[str, str], float]:
    """Review `base...head` (head against its merge base with base); returns report, ref labels, seconds."""
    started = time.perf_counter()
    settings = _settings(request.config)
    repo = GitRepo.open(request.repo)
    try:
        head_sha = repo.resolve(request.head)
        base_sha = repo.merge_base(repo.resolve(request.base), head_sha)
        repository = _repository(repo)
        url = _pr_url(repository, request.pr_number, request.pr_url)
        if url and repository is None:
            repository = url.rsplit("/pull/", 1)[0] if "/pull/" in url else None
        pr = PullRequest(
            title=request.title,
            body=request.body,
            labels=request.labels,
            number=request.pr_number,
            url=url,
            repository=repository,
            head_message=repo.commit_message(head_sha),
        )
        report = review(
            repo.snapshot(base_sha),
            repo.snapshot(head_sha),
            repo.changed_files(base_sha, head_sha),
            pr,
            settings,
            offline=request.offline,
        )
    finally:
        repo.close()
    return report, (base_sha[:12], head_sha[:12]), time.perf_counter() - started
