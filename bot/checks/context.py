"""What every check receives: the diff, the pull request and the settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.diff import KeyChange, ReviewDiff
from bot.findings import Finding, Severity, finding
from bot.model.layout import OLDER_CONFIGS
from bot.pullrequest import PullRequest
from bot.settings import Settings


@dataclass(frozen=True)
class CheckContext:
    diff: ReviewDiff
    pr: PullRequest
    settings: Settings
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def live_keys(self) -> list[KeyChange]:
        """Changed keys that still exist at the head."""
        return [c for c in self.diff.keys.values() if c.head is not None]

    def unreadable(self, check: str) -> list[Finding]:
        """`unverified` when a changed master config could not be read, so its keys went unchecked,
        or when neither ref has any master config."""
        if self.diff.no_masters:
            folders = [self.diff.layout.configs_dir, OLDER_CONFIGS]
            return [finding(check, Severity.UNVERIFIED, "layout-no-masters", folders=folders)]
        paths = self.diff.unreadable_masters
        if not paths:
            return []
        return [finding(check, Severity.UNVERIFIED, "unchecked-unreadable-master", paths=paths)]


def short_list(values: list[int]) -> str:
    """A published set as the reviewers write it: `[1, 4, 14]`."""
    return "[" + ", ".join(str(v) for v in values) + "]"
