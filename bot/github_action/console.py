"""The job log: one line per message, PR text defused, secrets cut out."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO

from bot.catalog import Msg
from bot.output import messages, textsafe


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
        line = messages.text(message) if isinstance(message, Msg) else message
        self._write(textsafe.log_line(line))

    def command(self, line: str) -> None:
        """A workflow command (`::error …::…`) whose parts the caller has already escaped."""
        self._write(self.redact(line))

    def _write(self, line: str) -> None:
        stream = self.stream or sys.stdout
        stream.write(line + "\n")
        stream.flush()
