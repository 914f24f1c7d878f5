"""The review's result: findings, verdict, exit code and the JSON report of DESIGN.md §3."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.findings import CHECK_IDS, Finding, Severity

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
    changes: dict[str, Any] = field(default_factory=dict)

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

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "findings": [f.to_json() for f in self.findings],
            "published_sets": self.published_sets,
            "changes": self.changes,
            "sweep_plan": self.sweep_plan,
        }

    def json_bytes(self) -> bytes:
        """The report as compact UTF-8 JSON (pipe it through `jq` to read it)."""
        import orjson  # about twenty times faster than json on a large review's megabyte

        data = self.to_json()
        try:
            return orjson.dumps(data, default=str)
        except TypeError:  # what orjson refuses: an integer over 64 bits, a non-str key, a lone surrogate
            import json

            text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
            return text.encode("utf-8", "backslashreplace")  # a lone surrogate becomes its JSON escape

    def dumps(self) -> str:
        return self.json_bytes().decode("utf-8")
