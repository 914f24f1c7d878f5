"""Problems found while reading a file: a message id from the catalog, a place and parameters."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.yamlsafe import YamlProblem


@dataclass(frozen=True)
class Problem:
    """Something wrong with the content of a file, to be reported by the check that read it."""

    message_id: str
    file: str
    line: int | None = None
    params: dict[str, Any] = field(default_factory=dict, compare=False)


def from_yaml(exc: YamlProblem, file: str) -> Problem:
    """A YAML loading failure as a Problem (`yaml-<kind>` messages in templates/messages/model.yaml)."""
    return Problem(f"yaml-{exc.kind}", file, exc.line, {"path": file, "detail": exc.detail, **exc.params})
