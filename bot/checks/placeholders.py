"""A new changelog entry whose description still holds a placeholder (`TODO`, `TBD`, `XXX`,
`FIXME`, or the skeleton `prbot fix` writes when it has nothing to draft from): a warning, since a
forgotten placeholder would be merged into the perf changelog for good. (`pr-link: XXX` is the
link's own placeholder, accepted on a PR: only the description is read here.)"""

from __future__ import annotations

import re

from bot.findings import Finding, Severity, finding
from bot.model.changelog import Entry

CHECK = "changelog"
#: Words left in place of a description, as whole words, in capitals.
_PLACEHOLDER = re.compile(r"(?<![A-Za-z0-9_])(TODO|TBD|XXX|FIXME)(?![A-Za-z0-9_])")


def placeholder(text: str) -> str | None:
    """The first placeholder in a description line, or None."""
    found = _PLACEHOLDER.search(text)
    return found.group(1) if found else None


def findings(entry: Entry, file: str) -> list[Finding]:
    """A warning for a new entry whose description holds a placeholder (at most one per entry)."""
    lines = entry.get("description")
    lines = lines if isinstance(lines, list) else [lines]
    for text in lines:
        word = placeholder(text) if isinstance(text, str) else None
        if word:
            line = entry.field_line("description")
            return [
                finding(
                    CHECK,
                    Severity.WARNING,
                    "changelog-description-placeholder",
                    file=file,
                    line=line,
                    word=word,
                )
            ]
    return []
