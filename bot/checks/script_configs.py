"""The verifier's rules on the master-config entries and agentic scripts a PR adds or changes."""

from __future__ import annotations

from bot.diff import ReviewDiff
from bot.findings import Finding
from bot.model.prfiles import PrFiles


def check(diff: ReviewDiff, files: PrFiles) -> list[Finding]:
    return []
