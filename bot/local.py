"""Local mode: review two refs of a git repository exactly as the action would review a PR."""

from __future__ import annotations

import dataclasses
import re
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from bot import pipeline
from bot.catalog import Msg, msg
from bot.findings import Severity, finding
from bot.model.layout import detect
from bot.pullrequest import PullRequest
from bot.report import Report
from bot.settings import Settings, SettingsError
from bot.sources.git import GitRepo
from bot.sources.snapshot import Oversized, Snapshot

_REMOTE = re.compile(r"github\.com[:/](?P<slug>[\w.-]+/[\w.-]+?)(?:\.git)?/?$")
# A canonical `pr-link` line of a changelog entry; the repository it names.
_LINK_LINE = re.compile(rb"^  pr-link: *https://github\.com/([\w.-]+/[\w.-]+)/pull/\d+ *$", re.MULTILINE)
GITHUB = "https://github.com/"


class LocalRequest(NamedTuple):
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


def _remote(repo: GitRepo, name: str) -> str | None:
    """The GitHub address of a remote (`https://github.com/owner/repo`), if it is one."""
    match = _REMOTE.search(repo.remote_url(name))
    return f"{GITHUB}{match['slug']}" if match else None


def linked_repository(changelog: bytes | None) -> str | None:
    """The repository a changelog's own entries link to: the most common `owner/repo` of its
    canonical `pr-link` lines (the first one seen on a tie), or None when it has none."""
    if not changelog:
        return None
    counts = Counter(match.group(1) for match in _LINK_LINE.finditer(changelog))
    if not counts:
        return None
    slug = counts.most_common(1)[0][0].decode("ascii")
    return f"{GITHUB}{slug}"


def repository_for(repo: GitRepo, base: Snapshot, explicit_url: str | None) -> str | None:
    """The repository a `pr-link` must name: `--pr-url`'s; else the one the base changelog's
    entries link to; else the `upstream`, then the `origin` remote, when on GitHub. A contributor's
    fork as `origin` thus never overrides what the changelog itself says."""
    if explicit_url and "/pull/" in explicit_url:
        return explicit_url.rsplit("/pull/", 1)[0]
    changelog = base.read(detect(base).changelog)
    linked = linked_repository(changelog if not isinstance(changelog, Oversized) else None)
    return linked or _remote(repo, "upstream") or _remote(repo, "origin")


def _pr_url(repository: str | None, number: int | None, explicit: str | None) -> str | None:
    if explicit or number is None:
        return explicit
    return f"{repository}/pull/{number}" if repository else None


def pr_url_for(
    repo: GitRepo, base_ref: str, head_ref: str, number: int | None, explicit: str | None
) -> str | None:
    """The PR's URL as a local review derives it: `--pr-url`, else `--pr-number` in the reviewed
    repository (`repository_for`, read at the merge base of the two refs); None when unknown."""
    if explicit or number is None:
        return explicit
    base_sha = repo.merge_base(repo.resolve(base_ref), repo.resolve(head_ref))
    return _pr_url(repository_for(repo, repo.snapshot(base_sha), None), number, None)


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
    repo, (named_base, head_sha, base_sha) = GitRepo.open_compared(request.repo, request.base, request.head)
    try:
        swapped = base_sha == head_sha != named_base
        if swapped and log is not None:
            log(msg("cli-refs-swapped", base=request.base, head=request.head))
        base = repo.snapshot(base_sha)
        repository = repository_for(repo, base, request.pr_url)
        url = _pr_url(repository, request.pr_number, request.pr_url)
        pr = PullRequest(
            title=request.title,
            body=request.body,
            labels=request.labels,
            number=request.pr_number,
            url=url,
            repository=repository,
            head_message=repo.commit_message(head_sha),
            review_date=repo.commit_date(head_sha),
        )
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
        if swapped:  # said in the review itself too, not only on the terminal
            said = finding(
                "consistency", Severity.WARNING, "refs-swapped", base=request.base, head=request.head
            )
            report = dataclasses.replace(report, findings=[said, *report.findings])
    finally:
        repo.close()
    return report, (base_sha[:12], head_sha[:12]), time.perf_counter() - started
