"""What every check receives: the diff, the pull request and the settings, and what a check
needs besides (`bot.findings.Need`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.diff import KeyChange, ReviewDiff
from bot.findings import Finding, Severity, finding
from bot.model.layout import OLDER_CONFIGS
from bot.model.prfiles import PrFiles
from bot.pullrequest import PullRequest
from bot.settings import Settings
from bot.sources.references import TagResolution

# Image references → what their registries answer (bot.sources.registry.RegistryClient.resolve_many).
Resolve = Callable[[list[str]], Mapping[str, TagResolution]]


@dataclass(frozen=True)
class CheckContext:
    diff: ReviewDiff
    pr: PullRequest
    settings: Settings
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    # For a check that needs them (`bot.findings.Need`): the registries' answers (None: offline,
    # for `offline_reason`), and the scripts and rule files the PR touches.
    resolve: Resolve | None = None
    offline_reason: str = "--offline"
    files: PrFiles | None = None

    def live_keys(self) -> list[KeyChange]:
        """Changed keys that still exist at the head."""
        return [c for c in self.diff.keys.values() if c.head is not None]

    def no_masters(self, check: str) -> list[Finding]:
        """What a check that needs master configs says when neither ref has one: the review is
        never clean then (a warning, once), and each such check says it did not run."""
        if check != "consistency":
            return [finding(check, Severity.UNVERIFIED, "unchecked-no-masters")]
        folders = [self.diff.layout.configs_dir, OLDER_CONFIGS]
        return [finding(check, Severity.WARNING, "layout-no-masters", folders=folders)]

    def unreadable(self, check: str) -> list[Finding]:
        """`unverified` when a changed master config could not be read, so its keys went unchecked."""
        paths = self.diff.unreadable_masters
        if not paths:
            return []
        return [finding(check, Severity.UNVERIFIED, "unchecked-unreadable-master", paths=paths)]
