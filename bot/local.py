"""Local mode: review two refs of a git repository exactly as the action would review a PR."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bot import pipeline
from bot.catalog import Msg, msg
from bot.pullrequest import PullRequest
from bot.report import Report
from bot.settings import Settings, SettingsError
from bot.sources.git import GitRepo
from bot.sources.snapshot import Snapshot

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
    offline_reason: str = "--offline"  # what the review says kept it offline ("demo": the demo)
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


def pr_url_for(repo: GitRepo, number: int | None, explicit: str | None) -> str | None:
    """The PR's URL as a local review derives it: `--pr-url`, else the GitHub `origin` remote and
    `--pr-number`; None when neither gives one."""
    return _pr_url(_repository(repo), number, explicit)


def _file_settings(path: str) -> Settings:
    """The settings file `--config` names, on disk."""
    try:
        return Settings.from_yaml(Path(path).read_bytes(), path)
    except OSError as exc:
        raise SettingsError(msg("settings-unreadable", path=path, reason=exc.strerror or "")) from None


def _base_settings(base: Snapshot) -> Settings:
    """The repository's own settings file at the base ref, as the action reads it, or the defaults."""
    return pipeline.settings_at(base) or Settings()


def run_local(
    request: LocalRequest, log: Callable[[Msg], None] | None = None
) -> tuple[Report, tuple[str, str], float]:
    """Review `base...head` (head against its merge base with base); returns report, ref labels,
    seconds. `log` is told of what the review notices outside the repository (registry logins)."""
    started = time.perf_counter()
    settings = _file_settings(request.config) if request.config else None
    repo = GitRepo.open(request.repo)
    try:
        head_sha, named_base = repo.resolve(request.head), repo.resolve(request.base)
        base_sha = repo.merge_base(named_base, head_sha)
        if base_sha == head_sha != named_base and log is not None:
            log(msg("cli-refs-swapped", base=request.base, head=request.head))
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
        base = repo.snapshot(base_sha)
        review = pipeline.ReviewInput(
            base,
            repo.snapshot(head_sha),
            repo.changed_files(base_sha, head_sha),
            pr,
            settings or _base_settings(base),
            offline=request.offline,
            offline_reason=request.offline_reason,
            log=log,
        )
        report = pipeline.run(review)
    finally:
        repo.close()
    return report, (base_sha[:12], head_sha[:12]), time.perf_counter() - started
