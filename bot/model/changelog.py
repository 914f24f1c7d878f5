"""The perf changelog and InferenceX's rules for changing it (DESIGN.md §2 `changelog`).

InferenceX's gate checks each version of the file as a whole (bytes, YAML, the entry schema),
then the change: old entries may only gain a corrected `pr-link`, new entries go at the end, one
empty line before each, and no other byte may move. `compare` applies the same rules and says
which of them the PR broke. A rule the *base* already breaks is not the PR's doing: it is
reported apart (`base_problems`, shown as unverified).

The usual PR appends entries: the head then starts with the base's bytes and only the appended
part is parsed as the PR's, so a long history is never this PR's to pass again (and never makes
the PR "too large"). Anything else is parsed in full at both refs, to say which entry was edited,
removed, moved or inserted.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bot.model import schema, wildcard
from bot.model.problems import Problem, from_yaml
from bot.sources.snapshot import Oversized
from bot.yamlsafe import MAX_BYTES, LineDict, LineList, YamlProblem, decode, load

SCENARIO_TYPES = ("fixed-seq-len", "agentic-coding")
ENTRY_START = b"- config-keys:"
_ENTRY_LINE = re.compile(rb"^- config-keys:[^\n]*\n", re.MULTILINE)
# The last character of a line, when it is a space or a tab: one match per such line, found in
# linear time (`[ \t]+\n` retries the whole run of spaces from each of its characters).
_TRAILING_SPACE = re.compile(rb"[ \t]\n")
PR_LINK_LINE = b"  pr-link:"
# What the gate's schema (a pydantic model) reads as a boolean, besides true and false.
_TRUE = {"1", "on", "t", "true", "y", "yes"}
_FALSE = {"0", "off", "f", "false", "n", "no"}


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

    def names(self, key: str) -> bool:
        """Whether one of this entry's `config-keys` names `key` (exactly, or through `*`)."""
        return any(pattern_matches(pattern, key) for pattern in self.config_keys)

    def flag(self, name: str) -> bool:
        """A boolean field as the gate reads it (`"yes"`, `1` and `true` are all true)."""
        return _as_bool(self.get(name)) is True

    def field_line(self, name: str) -> int | None:
        """The line of a field, or the entry's own line when the field is absent."""
        line = self.raw.line_of(name) if isinstance(self.raw, LineDict) else None
        return line or self.line


@dataclass
class ChangelogDiff:
    """How the head changelog relates to the base one."""

    # New entries at the end of the file: their pr-link and keys are checked against the PR.
    appended: list[Entry] = field(default_factory=list)
    # New entries written above the end (each also a problem): they still name the keys the PR
    # changed, so coverage counts them.
    inserted: list[Entry] = field(default_factory=list)
    # Old entries whose only change is a different pr-link: (the head entry, the old link).
    corrections: list[tuple[Entry, str]] = field(default_factory=list)
    # Rules the PR broke (blocking), and rules the base already broke (unverified).
    problems: list[Problem] = field(default_factory=list)
    base_problems: list[Problem] = field(default_factory=list)
    # The head file's bytes, for the text of a line a suggestion rewrites.
    head: bytes = field(default=b"", repr=False, compare=False)

    def head_line(self, line: int | None) -> str | None:
        """Line `line` (1-based) of the head file, without its end; None when there is none."""
        if line is None or line < 1:
            return None
        lines = self.head.split(b"\n", line)
        return lines[line - 1].decode("utf-8", "replace") if len(lines) >= line else None


def pattern_matches(pattern: str, key: str) -> bool:
    """A `config-keys` item as the sweep reads it: the key itself, or with `*` standing for any
    text without a line break, matching the whole key (`?` and `[` are plain characters). Without
    backtracking: `bot.model.wildcard`."""
    return wildcard.matches(pattern, key)


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    word = value.strip().lower() if isinstance(value, str) else None
    return True if word in _TRUE else False if word in _FALSE else None


def _line_at(data: bytes, position: int, first_line: int = 1) -> int:
    return first_line + data.count(b"\n", 0, position)


def _read(path: str, data: bytes, first_line: int, first_index: int) -> tuple[list[Entry], list[Problem]]:
    """Entries of a whole file or of an appended part, and every rule of the gate's file check it
    breaks (CR, tab, NUL, UTF-8, YAML, duplicate keys, a list, one `- config-keys:` line per
    entry, the schema). The final newline is checked by the caller, on the whole file."""
    problems = [
        Problem(kind, path, _line_at(data, data.index(needle), first_line))
        for kind, needle in (("changelog-cr", b"\r"), ("changelog-tab", b"\t"))
        if needle in data
    ]
    try:
        loaded = load(decode(data), line_offset=first_line - 1)
    except YamlProblem as exc:
        return [], [*problems, from_yaml(exc, path)]
    problems += [
        Problem("changelog-duplicate-key", path, d.line, {"key": d.key, "first_line": d.first_line})
        for d in loaded.duplicates
    ]
    data_list = loaded.data
    if data_list is None:
        return [], problems
    if not isinstance(data_list, list):
        return [], [*problems, Problem("changelog-not-list", path, first_line)]
    lines = data_list.lines if isinstance(data_list, LineList) else [None] * len(data_list)
    entries = [Entry(first_index + i, lines[i], item) for i, item in enumerate(data_list)]
    starts = _entry_lines(data)
    if starts != len(entries):
        problems.append(
            Problem("changelog-entry-count", path, first_line, {"lines": starts, "entries": len(entries)})
        )
    for entry in entries:
        problems += schema.changelog_entry(entry.raw, path, entry.line, entry.index)
    return entries, problems


def _entry_lines(data: bytes) -> int:
    """Lines that start with `- config-keys:` (the gate counts them against the entries)."""
    return data.count(b"\n" + ENTRY_START) + data.startswith(ENTRY_START)


def _final_newline(path: str, data: bytes) -> list[Problem]:
    if data and not data.endswith(b"\n"):
        return [Problem("changelog-no-final-newline", path, data.count(b"\n") + 1)]
    return []


def _first_difference(a: bytes, b: bytes) -> int:
    """The length of the common prefix of two byte strings (binary search: slices compare in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _bytes_changed(path: str, message_id: str, base: bytes, head: bytes) -> Problem:
    """A byte rule broken: where the first changed line is, and whether only whitespace differs
    in the part the base had (what the head appends after it aside)."""
    position = _first_difference(base, head)
    line = _line_at(head, head.rfind(b"\n", 0, position) + 1)
    words = base.split()
    whitespace = head.split()[: len(words)] == words
    return Problem(message_id, path, line, {"line": line, "whitespace": whitespace})


def _blank_lines_before(data: bytes, position: int) -> tuple[int, bool]:
    """How many lines stand between the previous entry and the line starting at `position` (all
    blank or all space), and whether one of them holds spaces (a line of spaces is not empty).
    Read backwards from `position`, so a long history is not copied."""
    count, spaces, end = 0, False, position - 1  # data[end] ends the line before
    while end >= 0:
        start = data.rfind(b"\n", 0, end) + 1
        line = data[start:end]
        if line.strip():
            break
        count, spaces = count + 1, spaces or bool(line)
        end = start - 1
    return count, spaces


def _layout_rules(path: str, head: bytes, offset: int, first_line: int) -> list[Problem]:
    """The part appended at `offset`: one empty line after the last old entry (none more if the
    base already ends with one), exactly one empty line between new entries, no whitespace at
    line ends."""
    problems: list[Problem] = []
    suffix = head[offset:]
    starts = [offset + m.start() for m in _ENTRY_LINE.finditer(suffix)]
    if not starts:
        return problems
    base_ends_empty = offset == 0 or head.endswith(b"\n\n", 0, offset)
    if not head.startswith(ENTRY_START if base_ends_empty else b"\n" + ENTRY_START, offset):
        blanks, spaces = _blank_lines_before(head, starts[0])
        params = {"blanks": blanks, "spaces": spaces, "other": bool(head[offset : starts[0]].strip())}
        problems.append(Problem("changelog-separator", path, _line_at(head, starts[0]), params))
    for start in starts[1:]:
        if not head.endswith(b"\n\n", 0, start) or head.endswith(b"\n\n\n", 0, start):
            blanks, spaces = _blank_lines_before(head, start)
            params = {"blanks": blanks, "spaces": spaces}
            problems.append(Problem("changelog-spacing", path, _line_at(head, start), params))
    trailing = [m.start() for m in _TRAILING_SPACE.finditer(suffix)]
    if trailing:
        line = _line_at(suffix, trailing[0], first_line)
        problems.append(Problem("changelog-trailing-space", path, line, {"count": len(trailing)}))
    return problems


def _base_check(path: str, base: bytes) -> tuple[list[Entry], list[Problem]]:
    """The base as the gate checks a whole file; too long a history is named, not parsed."""
    if len(base) > MAX_BYTES:
        return [], [Problem("changelog-base-too-large", path, None, {"size": len(base), "limit": MAX_BYTES})]
    entries, problems = _read(path, base, 1, 0)
    return entries, _final_newline(path, base) + problems


def _starts_new_items(suffix: bytes) -> bool:
    """Whether text added after the last old entry can only add entries (or be empty): its first
    non-blank line starts a new top-level item or is a comment, not part of the last entry."""
    for line in suffix.split(b"\n"):
        if line.strip():
            return line[:1] in (b"-", b"#") and not line.startswith(b"---")
    return True


def compare(path: str, base: bytes | None, head: bytes | None) -> ChangelogDiff:
    """Classify the head changelog against the base and list every rule the change breaks."""
    if head is None:
        return ChangelogDiff(problems=[Problem("changelog-deleted", path, None, {"path": path})])
    base = base or b""
    if head == base:
        return ChangelogDiff()
    if isinstance(head, Oversized) or isinstance(base, Oversized):  # known by size only: no bytes
        size = max(len(head), len(base))
        params = {"path": path, "size": size, "limit": MAX_BYTES}
        return ChangelogDiff(problems=[Problem("yaml-too-large", path, None, params)])
    prefix = base
    if base and not base.endswith(b"\n") and head.startswith(base + b"\n"):
        prefix = base + b"\n"  # the missing final newline, added: the base's problem, not an edit
    if head.startswith(prefix) and _starts_new_items(head[len(prefix) :]):
        result = _appended(path, base, prefix, head)
    else:
        result = _rewritten(path, base, head)
    result.head = head
    return result


def _appended(path: str, base: bytes, prefix: bytes, head: bytes) -> ChangelogDiff:
    """The head is the base's bytes plus text after them: parse only that text as the PR's."""
    base_entries, base_problems = _base_check(path, base) if base else ([], [])
    count = len(base_entries) if base_entries or not base_problems else _entry_lines(prefix)
    suffix = head[len(prefix) :]
    first_line = prefix.count(b"\n") + 1
    entries, problems = _read(path, suffix, first_line, count)
    if entries:
        problems += _layout_rules(path, head, len(prefix), first_line)
    elif suffix or prefix == base:  # (only adding the base's missing final newline repairs it)
        problems.append(_bytes_changed(path, "changelog-bytes-changed", base, head))
    problems += _final_newline(path, head)
    if head.endswith(b"\n\n"):
        problems.append(Problem("changelog-trailing-blank", path, head.rstrip(b"\n").count(b"\n") + 2))
    return ChangelogDiff(appended=entries, problems=problems, base_problems=base_problems)


def _rewritten(path: str, base: bytes, head: bytes) -> ChangelogDiff:
    """Bytes above the end changed: both versions parsed in full and compared entry by entry."""
    if len(head) > MAX_BYTES:
        # Too long to parse here; the gate's byte rule alone already refuses the change.
        return ChangelogDiff(problems=[_bytes_changed(path, "changelog-history-bytes", base, head)])
    head_entries, head_problems = _read(path, head, 1, 0)
    head_problems = _final_newline(path, head) + head_problems
    base_entries, base_problems = _base_check(path, base) if base else ([], [])
    problems = _caused_by_pr(head_problems, head_entries, base_entries, base_problems)
    if _unreadable(head_problems):
        return ChangelogDiff(problems=problems, base_problems=base_problems)
    if base and _unreadable(base_problems):
        new = _not_in_base(head_entries, head, base)
        return ChangelogDiff(appended=new, problems=problems, base_problems=base_problems)
    result = _entry_changes(path, base_entries, head_entries)
    result.problems = problems + result.problems
    result.base_problems = base_problems
    if not result.problems:
        result.problems += _byte_rules(path, base, head, result)
    return result


_UNREADABLE = ("changelog-not-list",)


def _unreadable(problems: list[Problem]) -> bool:
    """Whether a version could not be read as a list of entries at all (so none can be compared)."""
    return any(p.message_id.startswith("yaml-") or p.message_id in _UNREADABLE for p in problems)


def _entry_at(entries: list[Entry], line: int | None) -> Entry | None:
    """The entry a line belongs to (the last one starting at or before it)."""
    found = None
    for entry in entries:
        if line is not None and entry.line is not None and entry.line <= line:
            found = entry
    return found


def _caused_by_pr(
    problems: list[Problem], head: list[Entry], base: list[Entry], base_problems: list[Problem]
) -> list[Problem]:
    """The head's problems that the PR brought in: not those of an entry the base already has
    word for word, nor a file-wide one the base already has (the PR may be repairing it)."""
    old_entries = {_frozen(entry.raw) for entry in base}
    file_wide = {p.message_id for p in base_problems}
    out = []
    for problem in problems:
        index = problem.params.get("index")
        entry = head[index - 1] if isinstance(index, int) and 0 < index <= len(head) else None
        if problem.message_id == "changelog-duplicate-key":
            entry = _entry_at(head, problem.line)
        if entry is not None:
            if _frozen(entry.raw) in old_entries:
                continue
        elif problem.message_id in file_wide:
            continue
        out.append(problem)
    return out


def _not_in_base(entries: list[Entry], head: bytes, base: bytes) -> list[Entry]:
    """With an unreadable base: the entries whose text the base does not contain are new."""
    lines = head.split(b"\n")
    starts = [e.line or 1 for e in entries] + [len(lines) + 1]
    return [
        entry
        for entry, start, end in zip(entries, starts, starts[1:], strict=False)
        if b"\n".join(lines[start - 1 : end - 1]).strip() not in base
    ]


def _frozen(raw: Any) -> Any:
    """An entry as a hashable value, equal for equal entries (to count them in a multiset). Keys
    are ordered by their repr: a PR may mix key types (`1: x`, `a: y`), which do not sort."""
    if isinstance(raw, dict):
        return tuple(sorted((repr(key), _frozen(value)) for key, value in raw.items()))
    if isinstance(raw, list):
        return tuple(_frozen(value) for value in raw)
    return repr(raw)


def _without_link(raw: Any) -> Any:
    return {k: v for k, v in raw.items() if k != "pr-link"} if isinstance(raw, dict) else raw


def _entry_changes(path: str, old: list[Entry], new: list[Entry]) -> ChangelogDiff:
    """Old entries compared with the head's by position, as the gate does; when they are not all
    in place, say what happened to them: moved, edited, removed, or pushed down by an insertion."""
    in_place = len(new) >= len(old) and all(
        _without_link(before.raw) == _without_link(after.raw) for before, after in zip(old, new, strict=False)
    )
    if in_place:
        result = ChangelogDiff(appended=new[len(old) :])
        for before, after in zip(old, new, strict=False):
            if before.raw == after.raw:
                continue
            old_link, new_link = str(before.get("pr-link") or ""), str(after.get("pr-link") or "")
            if old_link == new_link:
                params = {"index": after.index + 1}
                result.problems.append(Problem("changelog-reformatted", path, after.line, params))
            else:
                result.corrections.append((after, old_link))
        if result.corrections and result.appended:
            result.problems += [
                Problem("changelog-link-edit-mixed", path, entry.line, {"index": entry.index + 1})
                for entry, _ in result.corrections
            ]
        return result
    extra = _extra(old, new)
    if len(new) - len(extra) == len(old):  # every old entry is still there, however reordered
        leftover = set(extra)
        kept = [entry for entry in new if entry not in leftover]
        if any(before.raw != after.raw for before, after in zip(old, kept, strict=True)):
            # One finding for a reorder, however many entries it moved (#1161 moved 202).
            moved = [after for before, after in zip(old, kept, strict=True) if before.raw != after.raw]
            params = {"count": len(moved), "index": moved[0].index + 1}
            problem = Problem("changelog-moved", path, moved[0].line, params)
            return ChangelogDiff(inserted=extra, problems=[problem])
    return _aligned(path, old, new)


def _extra(old: list[Entry], new: list[Entry]) -> list[Entry]:
    """The head entries left over once each old entry is matched with an equal one."""
    unmatched = Counter(_frozen(e.raw) for e in old)
    extra = []
    for entry in new:
        key = _frozen(entry.raw)
        if unmatched[key] > 0:
            unmatched[key] -= 1
        else:
            extra.append(entry)
    return extra


def _aligned(path: str, old: list[Entry], new: list[Entry]) -> ChangelogDiff:
    """Match the old entries, in order, against the head's: each one missing is edited (same
    keys at that place) or removed; head entries skipped over were inserted."""
    result = ChangelogDiff()
    common = 0
    while common < min(len(old), len(new)) and old[common].raw == new[common].raw:
        common += 1
    old_rest, new_rest = old[common:], new[common:]
    position = 0
    for entry in old_rest:
        match = next((i for i in range(position, len(new_rest)) if new_rest[i].raw == entry.raw), None)
        if match is None:
            target = new_rest[position] if position < len(new_rest) else None
            if target is not None and set(target.config_keys) & set(entry.config_keys):
                result.problems.append(
                    Problem("changelog-edited", path, target.line, {"index": entry.index + 1})
                )
                position += 1
            else:
                params = {"index": entry.index + 1, "keys": entry.config_keys}
                result.problems.append(
                    Problem("changelog-removed", path, target.line if target else None, params)
                )
            continue
        for inserted in new_rest[position:match]:
            params = {"index": inserted.index + 1}
            result.problems.append(Problem("changelog-inserted", path, inserted.line, params))
            result.inserted.append(inserted)
        position = match + 1
    result.appended = new_rest[position:]
    return result


def _byte_rules(path: str, base: bytes, head: bytes, result: ChangelogDiff) -> list[Problem]:
    """With every old entry in place: which bytes may differ. New entries: none above the end
    (and this path is taken only when the head does not start with the base). Corrections only:
    just the `  pr-link:` lines, one each. Neither: none at all."""
    if result.appended:
        return [_bytes_changed(path, "changelog-history-bytes", base, head)]
    if not result.corrections:
        return [_bytes_changed(path, "changelog-bytes-changed", base, head)]
    old_lines, new_lines = base.splitlines(keepends=True), head.splitlines(keepends=True)
    if len(old_lines) != len(new_lines):
        return [_bytes_changed(path, "changelog-correction-bytes", base, head)]
    changed = 0
    for number, (before, after) in enumerate(zip(old_lines, new_lines, strict=True), start=1):
        if before == after:
            continue
        changed += 1
        link_lines = before.startswith(PR_LINK_LINE) and after.startswith(PR_LINK_LINE)
        whole_lines = before.endswith(b"\n") and after.endswith(b"\n")
        if not (link_lines and whole_lines) or _TRAILING_SPACE.search(after):
            return [
                Problem("changelog-correction-bytes", path, number, {"line": number, "whitespace": False})
            ]
    if changed != len(result.corrections):
        return [_bytes_changed(path, "changelog-correction-bytes", base, head)]
    return []
