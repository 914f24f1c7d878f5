"""One finding for one problem repeated in several files: sibling recipes copied from one another
share their defects, and five identical warnings that differ only in a file name are noise."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from bot.findings import Finding


def _group_key(item: Finding, grouped: Mapping[str, str]) -> tuple[str, ...] | None:
    if item.message_id not in grouped or item.file is None:
        return None
    return (item.check, item.severity.value, item.message_id, repr(item.params.get("key")))


def _merged(members: list[Finding], message_id: str) -> Finding:
    """`members` (same check, severity, message and key; several files) as one finding at the
    first one's place, naming the files under their common folder."""
    first = members[0]
    files = list(dict.fromkeys(m.file for m in members if m.file))
    folder = posixpath.commonpath([posixpath.dirname(f) for f in files])
    places = {(m.params.get("first_line"), m.line) for m in members}
    first_line, line = places.pop() if len(places) == 1 else (None, None)
    keys = {m.config_key for m in members}
    params = {
        "key": first.params.get("key"),
        "folder": folder,
        "files": [posixpath.relpath(f, folder) if folder else f for f in files],
        "first_line": first_line,
        "line": line,
    }
    config_key = first.config_key if len(keys) == 1 else None
    return Finding(first.check, first.severity, message_id, params, config_key, first.file, first.line)


def across_files(findings: list[Finding], grouped: Mapping[str, str]) -> list[Finding]:
    """The findings with those of a message in `grouped` (message id → id of its several-files
    form) that say the same about the same key in two or more files merged into one, where the
    first of them was; everything else unchanged and in order."""
    groups: dict[tuple[str, ...], list[Finding]] = {}
    for item in findings:
        key = _group_key(item, grouped)
        if key is not None:
            groups.setdefault(key, []).append(item)
    out: list[Finding] = []
    for item in findings:
        key = _group_key(item, grouped)
        members = groups.get(key) if key is not None else None
        if members is None or len({m.file for m in members}) < 2:
            out.append(item)
        elif item is members[0]:
            out.append(_merged(members, grouped[item.message_id]))
    return out
