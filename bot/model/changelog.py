"""The perf changelog: an append-only YAML list of entries, oldest first.

The common case is compared by bytes: when the base file is a prefix of the head file only the
appended tail is parsed (the real file has thousands of lines). Anything else is parsed in full
at both refs so that the review can say which entry was edited, removed or inserted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bot.model.problems import Problem, from_yaml
from bot.yamlsafe import Duplicate, LineDict, LineList, Loaded, YamlProblem, decode, load

SCENARIO_TYPES = ("fixed-seq-len", "agentic-coding")
KNOWN_FIELDS = (
    "config-keys",
    "description",
    "pr-link",
    "scenario-type",
    "evals-only",
    "all-evals",
    "append-only",
    "eval-min-prefill-ep",
)
EVAL_FIELDS = ("evals-only", "all-evals", "eval-min-prefill-ep")


@dataclass(frozen=True)
class Entry:
    """One changelog entry as written, with the line it starts on."""

    index: int
    line: int | None
    raw: Any = field(compare=False)

    def get(self, name: str) -> Any:
        return self.raw.get(name) if isinstance(self.raw, dict) else None

    @property
    def config_keys(self) -> list[str]:
        keys = self.get("config-keys")
        return [k for k in keys if isinstance(k, str)] if isinstance(keys, list) else []

    @property
    def pr_link(self) -> str | None:
        link = self.get("pr-link")
        return link if isinstance(link, str) else None

    def field_line(self, name: str) -> int | None:
        """The line of a field, or the entry's own line when the field is absent."""
        line = self.raw.line_of(name) if isinstance(self.raw, LineDict) else None
        return line or self.line


@dataclass
class ChangelogDiff:
    """How the head changelog relates to the base one."""

    appended: list[Entry]
    is_prefix: bool
    edits: list[Problem]
    hygiene: list[Problem]
    duplicates: list[Duplicate]
    unreadable: Problem | None = None
    link_only_edits: list[Entry] = field(default_factory=list)
    # New entries written above the end (each also in `edits` as changelog-inserted): they still
    # name the keys the PR changed, so coverage counts them.
    inserted: list[Entry] = field(default_factory=list)
    # The base file did not parse (this PR repairs it): edits above the end could not be checked.
    base_unreadable: Problem | None = None


def _entries(data: Any, first_index: int) -> list[Entry]:
    if not isinstance(data, list):
        return []
    lines = data.lines if isinstance(data, LineList) else [None] * len(data)
    return [Entry(first_index + i, lines[i], item) for i, item in enumerate(data)]


def _hygiene(text: str, head: bytes, path: str, start_line: int) -> list[Problem]:
    """Tabs, CRs and the final newline, in the part of the file this PR wrote."""
    problems: list[Problem] = []
    for kind, needle in (("changelog-tab", "\t"), ("changelog-cr", "\r")):
        position = text.find(needle)
        if position >= 0:
            problems.append(Problem(kind, path, start_line + text[:position].count("\n")))
    if head and not head.endswith(b"\n"):
        problems.append(Problem("changelog-no-final-newline", path, head.count(b"\n") + 1))
    elif head.endswith(b"\n\n"):
        problems.append(Problem("changelog-trailing-blank", path, head.rstrip(b"\n").count(b"\n") + 2))
    return problems


def _spacing(tail: str, path: str, first_line: int) -> list[Problem]:
    """Every new entry must follow exactly one blank line."""
    problems: list[Problem] = []
    lines = tail.split("\n")
    for number, line in enumerate(lines):
        if not line.startswith("-"):
            continue
        blanks = 0
        while number - blanks - 1 >= 0 and lines[number - blanks - 1].strip() == "":
            blanks += 1
        reached_top = number - blanks == 0
        if blanks != 1 and not (reached_top and blanks == 0 and first_line == 1):
            problems.append(Problem("changelog-spacing", path, first_line + number, {"blanks": blanks}))
    return problems


def compare(path: str, base: bytes | None, head: bytes | None) -> ChangelogDiff:
    """Classify the head changelog against the base: appended entries, or what was edited."""
    base = base or b""
    head = head or b""
    try:
        head_text = decode(head)
        decode(base)
    except YamlProblem as exc:
        return ChangelogDiff([], False, [], [], [], from_yaml(exc, path))
    if base and not base.endswith(b"\n") and head.startswith(base + b"\n"):
        # Adding the missing final newline is not an edit of the last entry.
        base += b"\n"
    if head.startswith(base):
        tail_text = head_text[len(base.decode("utf-8")) :]
        base_lines = base.count(b"\n")
        if base and not base.endswith(b"\n"):
            return _full_compare(path, base, head_text)
        try:
            loaded = load(tail_text, line_offset=base_lines) if tail_text.strip() else None
        except YamlProblem as exc:
            return ChangelogDiff([], True, [], [], [], from_yaml(exc, path))
        data = loaded.data if loaded else None
        if data is not None and not isinstance(data, list):
            return ChangelogDiff([], True, [], [], [], Problem("changelog-not-list", path, base_lines + 1))
        base_count = _count_entries(base)
        appended = _entries(data, base_count) if data else []
        hygiene = _hygiene(tail_text, head, path, base_lines + 1)
        if appended:
            hygiene += _spacing(tail_text, path, base_lines + 1)
        return ChangelogDiff(appended, True, [], hygiene, loaded.duplicates if loaded else [])
    return _full_compare(path, base, head_text)


_ENTRY_START = re.compile(rb"^- ", re.MULTILINE)


def _count_entries(data: bytes) -> int:
    """Top-level list items in a changelog (every entry starts with '- ' in column 0)."""
    return len(_ENTRY_START.findall(data))


def _full_compare(path: str, base: bytes, head_text: str) -> ChangelogDiff:
    """The slow path: both files parsed; report each edited, removed or inserted entry."""
    try:
        head_loaded = load(head_text)
    except YamlProblem as exc:
        return ChangelogDiff([], False, [], [], [], from_yaml(exc, path))
    try:
        base_data = load(base.decode("utf-8")).data or []
    except YamlProblem as exc:
        return _repaired(path, base.decode("utf-8"), head_text, head_loaded, exc)
    head_data = head_loaded.data or []
    if not isinstance(head_data, list) or not isinstance(base_data, list):
        return ChangelogDiff([], False, [], [], [], Problem("changelog-not-list", path, 1))
    old = _entries(base_data, 0)
    new = _entries(head_data, 0)
    edits: list[Problem] = []
    link_only: list[Entry] = []
    inserted_entries: list[Entry] = []
    common = 0
    while common < min(len(old), len(new)) and old[common].raw == new[common].raw:
        common += 1
    # Entries after the common prefix: match the old ones against the head's, in order.
    old_rest, new_rest = old[common:], new[common:]
    position = 0
    for entry in old_rest:
        match = next((i for i in range(position, len(new_rest)) if new_rest[i].raw == entry.raw), None)
        if match is None and position < len(new_rest) and _same_but_link(entry.raw, new_rest[position].raw):
            link_only.append(new_rest[position])
            position += 1
            continue
        if match is None:
            target = new_rest[position] if position < len(new_rest) else None
            if (
                target is not None
                and isinstance(target.raw, dict)
                and isinstance(entry.raw, dict)
                and set(target.config_keys) & set(Entry(0, None, entry.raw).config_keys)
            ):
                edits.append(Problem("changelog-edited", path, target.line, {"index": entry.index + 1}))
                position += 1
            else:
                edits.append(
                    Problem(
                        "changelog-removed",
                        path,
                        target.line if target else None,
                        {"index": entry.index + 1, "keys": Entry(0, None, entry.raw).config_keys},
                    )
                )
            continue
        for inserted in new_rest[position:match]:
            edits.append(Problem("changelog-inserted", path, inserted.line, {"index": inserted.index + 1}))
            inserted_entries.append(inserted)
        position = match + 1
    appended = new_rest[position:]
    hygiene = _hygiene(head_text, head_text.encode("utf-8"), path, 1)
    return ChangelogDiff(
        appended, False, edits, hygiene, head_loaded.duplicates, None, link_only, inserted_entries
    )


def _repaired(path: str, base_text: str, head_text: str, head: Loaded, exc: YamlProblem) -> ChangelogDiff:
    """The head parses but the base does not: entries whose text the base already has are old."""
    if not isinstance(head.data, list):
        return ChangelogDiff([], False, [], [], [], Problem("changelog-not-list", path, 1))
    entries = _entries(head.data, 0)
    lines = head_text.split("\n")
    starts = [e.line or 1 for e in entries] + [len(lines) + 1]
    new = [
        entry
        for entry, start, end in zip(entries, starts, starts[1:], strict=False)
        if "\n".join(lines[start - 1 : end - 1]).strip() not in base_text
    ]
    problem = Problem("changelog-base-unreadable", path, exc.line, {"path": path, "detail": exc.detail})
    hygiene = _hygiene(head_text, head_text.encode("utf-8"), path, 1)
    return ChangelogDiff(new, False, [], hygiene, head.duplicates, base_unreadable=problem)


def _same_but_link(old: Any, new: Any) -> bool:
    if not isinstance(old, dict) or not isinstance(new, dict):
        return False
    return {k: v for k, v in old.items() if k != "pr-link"} == {
        k: v for k, v in new.items() if k != "pr-link"
    }
