"""Review settings: label sets, durations and limits, with defaults for InferenceX.

A repository may override them with a small YAML file (the action's `config` input, e.g.
`.github/prbot.yml`, read at the base ref) whose keys mirror the field names with dashes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from bot import yaml_problems
from bot.catalog import Msg, msg
from bot.yamlsafe import LineDict, YamlProblem, load_bytes

#: Where the action and a local review find the settings, at the base ref.
SETTINGS_PATH = ".github/prbot.yml"

# The files InferenceX's generator reads, from the layout's root (its `utils/constants.py`
# MASTER_CONFIGS); a settings file may name others (`master-configs`).
MASTER_CONFIGS = ("configs/amd-master.yaml", "configs/nvidia-master.yaml")


class SettingsError(Exception):
    """The settings file is not valid or cannot be read: `message` says so in one line, naming the
    file and the line; `reason` is what is wrong, with the line, for a caller that names the file
    itself."""

    def __init__(self, message: Msg, reason: Msg | None = None) -> None:
        super().__init__(message.id)
        self.message = message
        self.reason = reason or message


class _Invalid(Exception):
    """What is wrong with the file's content (`from_yaml` adds which file)."""

    def __init__(self, reason: Msg, line: int | None = None, column: int | None = None) -> None:
        super().__init__(reason.id)
        self.reason = reason
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Settings:
    # The sweep labels InferenceX's run-sweep.yml starts on; `sweep-enabled` is the trimmed sweep.
    primary_labels: tuple[str, ...] = (
        "full-sweep-fail-fast",
        "full-sweep-enabled",
        "non-canary-full-sweep-enabled",
        "full-sweep-fail-fast-no-canary",
        "sweep-enabled",
    )
    trim_label: str = "sweep-enabled"
    recommended_label: str = "full-sweep-fail-fast"
    modifier_labels: tuple[str, ...] = ("all-evals", "evals-only", "agentx-fast")
    eval_modifiers: tuple[str, ...] = ("all-evals", "evals-only")
    agentic_duration_s: int = 3600
    # What the review may take, well inside the workflow's 10 minutes: past it, what has not
    # finished is a blocking "did not finish" (a PR could be built to outlast the job).
    review_deadline_s: int = 300
    core_team: tuple[str, ...] = field(default=())
    # Repository admins: like the core team, their ownership never needs a CODEOWNER sign-off.
    admins: tuple[str, ...] = field(default=())
    signoff_phrase: str = "As a PR reviewer and CODEOWNER, I have reviewed this and have"
    # The master configs InferenceX's generator reads, from the layout's root (its
    # `utils/constants.py` MASTER_CONFIGS); older history keeps the same names under `.github/`.
    master_configs: tuple[str, ...] = MASTER_CONFIGS

    @classmethod
    def from_yaml(cls, data: bytes, path: str = SETTINGS_PATH, *, at_base: bool = False) -> Settings:
        """The settings of the file `path` holds (`at_base`: as read at the base ref), or a
        SettingsError naming the file, the line and what is wrong there."""
        try:
            return cls._parse(data)
        except _Invalid as exc:
            place = {"line": exc.line, "column": exc.column}
            raise SettingsError(
                msg("settings-invalid", path=path, at_base=at_base, **place, reason=exc.reason),
                msg("settings-reason", **place, reason=exc.reason),
            ) from None

    @classmethod
    def _parse(cls, data: bytes) -> Settings:
        try:
            raw = load_bytes(data).data or {}
        except YamlProblem as exc:
            reason = msg("settings-yaml", problem=yaml_problems.problem(exc))
            raise _Invalid(reason, exc.line, exc.params.get("column")) from None
        if not isinstance(raw, dict):
            raise _Invalid(msg("settings-not-mapping"), 1)
        known = {f.name.replace("_", "-"): f for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in raw.items():
            line = raw.line_of(key) if isinstance(raw, LineDict) else None
            spec = known.get(str(key))
            if spec is None:
                raise _Invalid(msg("settings-unknown", key=str(key), known=list(known)), line)
            try:
                values[spec.name] = _checked(str(key), spec.default, value)
            except _Invalid as exc:
                raise _Invalid(exc.reason, line) from None
        settings = cls(**values)
        if settings.recommended_label not in settings.primary_labels:
            line = raw.line_of("recommended-label") if isinstance(raw, LineDict) else None
            raise _Invalid(msg("settings-recommended-label"), line)
        return settings


def _checked(key: str, default: Any, value: Any) -> Any:
    """A setting's value if it has the default's type (and range), else a one-line error."""
    if isinstance(default, tuple):
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) and v.strip() for v in items):
            raise _Invalid(msg("settings-not-names", key=key, value=repr(value)))
        return tuple(items)
    if isinstance(default, (bool, str)):
        if type(value) is not type(default) or (isinstance(value, str) and not value.strip()):
            raise _Invalid(
                msg("settings-not-text", key=key, value=repr(value), flag=isinstance(default, bool))
            )
        return value
    if isinstance(default, int):
        if type(value) is not int or value <= 0:
            raise _Invalid(msg("settings-not-positive", key=key, value=repr(value)))
        return value
    return value
