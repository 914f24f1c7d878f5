"""Messages of the action (catalog `templates/messages/action.yaml`) and a job log that never shows a secret.

A `Msg` is a message id with parameters; a parameter may itself be a `Msg` (an API error names
what the action was doing), rendered in the same language before it is placed in its parent.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TextIO

from bot import messages, textsafe


@dataclass(frozen=True)
class Msg:
    """A catalog message, not yet rendered: language and format are chosen by whoever shows it."""

    id: str
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        messages.require(self.id, self.params)

    def render(self, lang: str = "en", *, markdown: bool = False) -> str:
        params = {k: _resolve(v, lang, markdown) for k, v in self.params.items()}
        return messages.render(self.id, lang, params, markdown=markdown)

    def __str__(self) -> str:
        return self.render("en")


def msg(message_id: str, **params: Any) -> Msg:
    return Msg(message_id, params)


def _resolve(value: Any, lang: str, markdown: bool) -> Any:
    if isinstance(value, Msg):
        return messages.Safe(value.render(lang, markdown=markdown))
    return value


class Console:
    """The job log: one line per message, PR text defused (`textsafe.log_line`), secrets cut out.

    Secrets given to it are registered with `textsafe`, which then cuts them out of everything the
    run writes (comment, summary, report, log) before any escaping: one list for all of them."""

    def __init__(self, stream: TextIO | None = None, secrets: Iterable[str] = ()) -> None:
        self.stream = stream
        self.add_secrets(secrets)

    def add_secrets(self, secrets: Iterable[str | None]) -> None:
        textsafe.add_secrets(secrets)

    def redact(self, text: str) -> str:
        return textsafe.redact(text)

    def info(self, message: Msg | str) -> None:
        self._write(textsafe.log_line(str(message)))

    def command(self, line: str) -> None:
        """A workflow command (`::error …::…`) whose parts the caller has already escaped."""
        self._write(self.redact(line))

    def _write(self, line: str) -> None:
        stream = self.stream or sys.stdout
        stream.write(line + "\n")
        stream.flush()
