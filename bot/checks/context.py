"""What every check receives: the diff, the pull request and the settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.diff import KeyChange, ReviewDiff
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


def short_list(values: list[int]) -> str:
    """A published set as the reviewers write it: `[1, 4, 14]`."""
    return "[" + ", ".join(str(v) for v in values) + "]"
