"""The review's result: findings, verdict and exit code (the JSON report is `bot.output.report_json`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.checks.changes_view import KeyChanges
from bot.findings import CHECK_IDS, Finding, Severity
from bot.model.changelog import LastLine

SEVERITY_ORDER = list(Severity)
EXIT_CLEAN, EXIT_BLOCKING, EXIT_ERROR = 0, 1, 2
# Findings that only say a check (or the whole review) could not run.
NOT_RUN = ("check-crashed", "review-crashed")


@dataclass
class Report:
    findings: list[Finding]
    published_sets: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    sweep_plan: dict[str, Any] = field(default_factory=dict)
    changed_keys: dict[str, list[str]] = field(default_factory=dict)
    # Per changed key, what each run serves at base and at head (bot.checks.changes).
    changes: dict[str, KeyChanges] = field(default_factory=dict)
    # The head changelog's last line, where an appended entry goes, when the PR changed the
    # changelog (the inline review suggests the drafted entry there); not in the JSON report.
    changelog_end: LastLine | None = None
    # The languages a drafted changelog entry is written in: the base changelog's (English, unless
    # most of its newest entries are bilingual); not in the JSON report.
    changelog_langs: tuple[str, ...] = ("en",)

    def __post_init__(self) -> None:
        self.findings.sort(key=lambda f: (SEVERITY_ORDER.index(f.severity), CHECK_IDS.index(f.check)))

    def of(self, severity: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity is severity]

    @property
    def verdict(self) -> str:
        """`error` when nothing could be reviewed: never `clean` for a review that did not happen."""
        if not self.reviewed:
            return "error"
        if self.of(Severity.BLOCKING):
            return "blocking"
        return "warnings" if self.of(Severity.WARNING) else "clean"

    @property
    def reviewed(self) -> bool:
        """False when nothing could be reviewed: every check crashed (or the diff could not be read)."""
        return any(f.message_id not in NOT_RUN for f in self.findings)

    @property
    def exit_code(self) -> int:
        """1 for real blocking findings, 2 only when nothing could be reviewed, else 0."""
        if not self.reviewed:
            return EXIT_ERROR
        return EXIT_BLOCKING if self.of(Severity.BLOCKING) else EXIT_CLEAN
