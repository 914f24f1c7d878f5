"""Findings: what a check says, with a severity and both languages."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from bot import catalog
from bot.model.problems import Problem


class Need(StrEnum):
    """What a check needs besides the diff, the PR and the settings."""

    MASTERS = "masters"  # a master config at either ref: without one it reports that it did not run
    REGISTRY = "registry"  # the container registries' answers (`CheckContext.resolve`), asked last
    FILES = "files"  # the scripts and rule files the PR touches, at both refs (`CheckContext.files`)


class Check(NamedTuple):
    """One check of the registry: its id, its function (`module:function` in `bot.checks`, imported
    when the check runs, so that this layer names checks without importing them) and what it needs."""

    id: str
    function: str
    needs: frozenset[Need] = frozenset()


# The one registry of checks (DESIGN.md §4), in the order their findings are shown: a new check is
# one entry here, a module in `bot/checks/` and its messages.
CHECKS: tuple[Check, ...] = (
    Check("recipe-selection", "recipe_selection:check"),
    Check("dram", "dram:check", frozenset({Need.MASTERS})),
    Check("changelog", "changelog:check"),
    Check("labels", "labels:check"),
    Check("digest", "digest:run", frozenset({Need.MASTERS, Need.REGISTRY})),
    Check("codeowners", "codeowners:check"),
    Check("consistency", "consistency:check", frozenset({Need.MASTERS})),
    Check("changes", "changes:check", frozenset({Need.MASTERS})),
    Check("sweep-plan", "sweep_plan:check", frozenset({Need.MASTERS})),
    Check("launch", "launch:check", frozenset({Need.MASTERS})),
    Check("scripts", "scripts:check", frozenset({Need.FILES})),
)
CHECK_IDS: tuple[str, ...] = tuple(c.id for c in CHECKS)


class Severity(StrEnum):
    """How much a finding matters; the order of declaration is the order of display."""

    BLOCKING = "blocking"
    WARNING = "warning"
    INFO = "info"
    VERIFIED = "verified"
    UNVERIFIED = "unverified"


@dataclass(frozen=True)
class Finding:
    """One statement of one check: a message of the catalog (`templates/messages/`) by id, with
    its values; `bot.output` renders it, as plain text for the JSON report or as markdown."""

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
        catalog.require(self.message_id, self.params)


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
