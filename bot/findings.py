"""Findings: what a check says, with a severity and both languages."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any

from bot import messages
from bot.model.problems import Problem

CHECK_IDS: tuple[str, ...] = (
    "recipe-selection",
    "dram",
    "changelog",
    "labels",
    "digest",
    "codeowners",
    "consistency",
    "changes",
    "sweep-plan",
)


class Severity(StrEnum):
    """How much a finding matters; the order of declaration is the order of display."""

    BLOCKING = "blocking"
    WARNING = "warning"
    INFO = "info"
    VERIFIED = "verified"
    UNVERIFIED = "unverified"


@dataclass(frozen=True)
class Finding:
    """One statement of one check. Messages are rendered from the catalog in `templates/messages/`.

    `message_id` and `params` are kept so that the comment renderer can render the same message
    again with markdown escaping; `message_en` / `message_zh` are the plain-text forms for JSON.
    """

    check: str
    severity: Severity
    message_id: str
    params: dict[str, Any] = field(default_factory=dict, compare=False)
    config_key: str | None = None
    file: str | None = None
    line: int | None = None
    suggestion: str | None = None

    def __post_init__(self) -> None:
        if self.check not in CHECK_IDS:
            raise ValueError(f"unknown check id {self.check!r}")
        # A finding whose params do not fit its message fails here, inside the check that made it
        # (which then reports `check-crashed`), never later while the comment is rendered.
        messages.require(self.message_id, self.params)

    @cached_property
    def message_en(self) -> str:
        return messages.render(self.message_id, "en", self.params)

    @cached_property
    def message_zh(self) -> str:
        return messages.render(self.message_id, "zh", self.params)

    def to_json(self) -> dict[str, Any]:
        """The finding as DESIGN.md §3 shapes it."""
        return {
            "check": self.check,
            "severity": str(self.severity),
            "config_key": self.config_key,
            "file": self.file,
            "line": self.line,
            "message_en": self.message_en,
            "message_zh": self.message_zh,
            "suggestion": self.suggestion,
        }


def from_problem(check: str, severity: Severity, problem: Problem, config_key: str | None = None) -> Finding:
    """A finding for a problem the model found while reading a file (same message, same place)."""
    key = config_key if config_key is not None else problem.params.get("key")
    return Finding(check, severity, problem.message_id, dict(problem.params), key, problem.file, problem.line)


def finding(
    check: str,
    severity: Severity,
    message_id: str,
    *,
    config_key: str | None = None,
    file: str | None = None,
    line: int | None = None,
    suggestion: str | None = None,
    **params: Any,
) -> Finding:
    """Shorthand constructor: keyword arguments other than the location become message params."""
    return Finding(check, severity, message_id, params, config_key, file, line, suggestion)
