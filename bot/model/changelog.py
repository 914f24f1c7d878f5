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
from bisect import bisect_left
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from bot.model import schema, wildcard
from bot.model.problems import Problem, from_yaml
from bot.sources.snapshot import Oversized
from bot.yamlsafe import MAX_BYTES, LineDict, LineList, YamlProblem, decode, frozen, load

SCENARIO_TYPES = ("fixed-seq-len", "agentic-coding")
ENTRY_START = b"- config-keys:"
_ENTRY_LINE = re.compile(rb"^- config-keys:[^\n]*\n", re.MULTILINE)
# The last character of a line, when it is a space or a tab: one match per such line, found in
# linear time (`[ \t]+\n` retries the whole run of spaces from each of its characters).
_TRAILING_SPACE = re.compile(rb"[ \t]\n")
PR_LINK_LINE = b"  pr-link:"


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

    @property
    def link_text(self) -> str:
        """The `pr-link` as text to compare (a value that is no text is a schema finding of its own;
        `schema.text` never raises on it); empty when absent."""
        link = self.get("pr-link")
        return schema.text(link) if link else ""

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


class LastLine(NamedTuple):
    """The head changelog's last line, right after which one new entry can be appended
    (`ChangelogDiff.last_line`): its path, 1-based number and text without its newline."""

    path: str
    number: int
    text: str

    def with_entry(self, entry: str) -> str:
        """What replaces this line so that `entry` (YAML text ending in a newline) follows it as
        the gate wants the bytes: the line as it is, one empty line before the entry unless this
        line is that empty line (as `bot.fix.yamledit.append_entry` writes it), then the entry
        without its final newline, which the line's own newline gives when GitHub commits the
        text in place of the line."""
        return self.text + ("\n" if not self.text else "\n\n") + entry.removesuffix("\n")


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
    # What no gate refuses but a later PR would trip over (trailing whitespace on new lines).
    warnings: list[Problem] = field(default_factory=list)
    # Whether the line diff drops a non-blank line of the base: InferenceX's PR-time gate
    # (`process_changelog.py`, run by `validate_perf_changelog.py`'s `main`) refuses any such diff.
    drops_lines: bool = False
    # The head file's bytes, for the text of a line a suggestion rewrites.
    head: bytes = field(default=b"", repr=False, compare=False)

    def pr_gate_fails(self) -> bool:
        """Whether InferenceX's PR-time check refuses the file change (then no sweep starts)."""
        return self.drops_lines or any(gate(p, self.drops_lines) == "pr" for p in self.problems)

    def head_line(self, line: int | None) -> str | None:
        """Line `line` (1-based) of the head file, without its end; None when there is none."""
        if line is None or line < 1:
            return None
        lines = self.head.split(b"\n", line)
        return lines[line - 1].decode("utf-8", "replace") if len(lines) >= line else None

    def last_line(self, path: str) -> LastLine | None:
        """The head file's last line when an entry appended right after it (`LastLine.with_entry`)
        gives the bytes the gate wants: the file ends with one newline after a line that is not
        blank, or with one empty line after one; None when no head was read, or it is empty, has
        no final newline, ends with more blank lines or a line of spaces, or its last line is not
        UTF-8 or holds a carriage return (the file's own findings say what is wrong)."""
        data = self.head
        if not data.endswith(b"\n"):
            return None
        body = data[:-1]
        start = body.rfind(b"\n") + 1
        last = body[start:]
        if not last:  # an empty last line: the one before it must hold text
            before = body[body.rfind(b"\n", 0, start - 1) + 1 : start - 1] if start else b""
            if not before.strip():
                return None
        elif not last.strip():
            return None
        try:
            text = last.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return None if "\r" in text else LastLine(path, body.count(b"\n") + 1, text)


# InferenceX has two gates. On the PR, `validate_perf_changelog.py`'s `main` checks the head's
# final newline and runs `process_changelog.py`, which refuses a diff that deletes a non-blank
# line and parses the added lines as entries. When merging, `prepare_perf_changelog_merge.py`
# applies every entry and byte rule. These problems fail the first; the byte rules fail it too
# when the diff drops a line; every other rule is the merge step's alone.
PR_GATE = frozenset(
    {
        "changelog-deleted",
        "changelog-not-list",
        "changelog-edited",
        "changelog-removed",
        "changelog-moved",
        "changelog-reformatted",
        "changelog-link-edit-mixed",
        "changelog-no-final-newline",
        "changelog-field-invalid",
        "changelog-entry-not-mapping",
        "changelog-unknown-field",
        "changelog-append-only-evals",
    }
)
BYTE_RULES = frozenset(
    {"changelog-history-bytes", "changelog-bytes-changed", "changelog-correction-bytes", "changelog-inserted"}
)


def gate(problem: Problem, drops: bool) -> str:
    """Which of InferenceX's gates refuses a problem: `pr` (the PR-time check fails, so no sweep
    starts) or `merge` (only the merge step refuses it). `drops`: the diff deletes a line."""
    message_id = problem.message_id
    if message_id in PR_GATE or message_id.startswith("yaml-") or (message_id in BYTE_RULES and drops):
        return "pr"
    return "merge"


def pattern_matches(pattern: str, key: str) -> bool:
    """A `config-keys` item as the sweep reads it: the key itself, or with `*` standing for any
    text without a line break, matching the whole key (`?` and `[` are plain characters). Without
    backtracking: `bot.model.wildcard`."""
    return wildcard.matches(pattern, key)


def _as_bool(value: Any) -> bool | None:
    """A flag as pydantic 2 reads it (`schema.BOOL`), else None."""
    parsed = schema.BOOL.accepts(value)
    return parsed if isinstance(parsed, bool) else None


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
    base already ends with one), exactly one empty line between new entries."""
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
    return problems


def _trailing_space(path: str, added: bytes, first_line: int) -> list[Problem]:
    """New lines that end with spaces or tabs. No gate refuses them any more (InferenceX dropped
    its `git diff --check` rule in its PR 1853), but a later PR that trims one changes history
    bytes, which the merge step refuses: a warning."""
    trailing = [m.start() for m in _TRAILING_SPACE.finditer(added)]
    if not trailing:
        return []
    line = _line_at(added, trailing[0], first_line)
    return [Problem("changelog-trailing-space", path, line, {"count": len(trailing)})]


def _drops_lines(base: bytes, head: bytes) -> bool:
    """Whether going from `base` to `head` must delete a line that is not blank, which the PR-time
    gate refuses (it reads `git diff` and allows only blank lines to go). Tested as: the base's
    non-blank lines, in order, are not a subsequence of the head's lines."""
    if head.startswith(base) and (not base or base.endswith(b"\n")):
        return False
    head_lines = iter(head.split(b"\n"))
    base_lines = base.split(b"\n")
    if base_lines[-1].strip() and not base.endswith(b"\n") and head.startswith(base):
        return True  # the unterminated last line is deleted and added again with its newline
    return not all(any(line == candidate for candidate in head_lines) for line in base_lines if line.strip())


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
    result.drops_lines = _drops_lines(base, head)
    return result


def _appended(path: str, base: bytes, prefix: bytes, head: bytes) -> ChangelogDiff:
    """The head is the base's bytes plus text after them: parse only that text as the PR's."""
    base_entries, base_problems = _base_check(path, base) if base else ([], [])
    count = len(base_entries) if base_entries or not base_problems else _entry_lines(prefix)
    suffix = head[len(prefix) :]
    first_line = prefix.count(b"\n") + 1
    entries, problems = _read(path, suffix, first_line, count)
    warnings = _trailing_space(path, suffix, first_line)
    if entries:
        problems += _layout_rules(path, head, len(prefix), first_line)
    elif suffix or prefix == base:  # (only adding the base's missing final newline repairs it)
        problems.append(_bytes_changed(path, "changelog-bytes-changed", base, head))
    problems += _final_newline(path, head)
    if head.endswith(b"\n\n"):
        problems.append(Problem("changelog-trailing-blank", path, head.rstrip(b"\n").count(b"\n") + 2))
    return ChangelogDiff(
        appended=entries,
        problems=problems,
        base_problems=base_problems,
        warnings=warnings,
    )


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
    lines = head.split(b"\n")
    spaced = [
        number
        for entry, _ in result.corrections
        if (number := entry.field_line("pr-link"))
        and 0 < number <= len(lines)
        and lines[number - 1].endswith((b" ", b"\t"))
    ]
    if spaced:  # a corrected pr-link line that ends with whitespace: the same warning as a new line
        result.warnings.append(Problem("changelog-trailing-space", path, min(spaced), {"count": len(spaced)}))
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
    old_entries = {frozen(entry.raw) for entry in base}
    file_wide = {p.message_id for p in base_problems}
    out = []
    for problem in problems:
        index = problem.params.get("index")
        entry = head[index - 1] if isinstance(index, int) and 0 < index <= len(head) else None
        if problem.message_id == "changelog-duplicate-key":
            entry = _entry_at(head, problem.line)
        if entry is not None:
            if frozen(entry.raw) in old_entries:
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


def _without_link(raw: Any) -> Any:
    return {k: v for k, v in raw.items() if k != "pr-link"} if isinstance(raw, dict) else raw


def _entry_changes(path: str, old: list[Entry], new: list[Entry]) -> ChangelogDiff:
    """Old entries compared with the head's by position, as the gate does; when they are not all
    in place, say what happened to them: moved, edited, removed, or pushed down by an insertion."""
    in_place = len(new) >= len(old) and all(
        _without_link(before.raw) == _without_link(after.raw) for before, after in zip(old, new, strict=False)
    )
    if not in_place:
        return _matched(path, old, new)
    result = ChangelogDiff(appended=new[len(old) :])
    for before, after in zip(old, new, strict=False):
        if before.raw == after.raw:
            continue
        old_link, new_link = before.link_text, after.link_text
        if old_link == new_link:
            params = {"index": after.index + 1}
            result.problems.append(Problem("changelog-reformatted", path, after.line, params))
        else:
            result.corrections.append((after, old_link))
    if result.corrections and result.appended:
        result.problems += _mixed(path, result.corrections)
    return result


def _mixed(path: str, corrections: list[tuple[Entry, str]]) -> list[Problem]:
    return [
        Problem("changelog-link-edit-mixed", path, entry.field_line("pr-link"), {"index": entry.index + 1})
        for entry, _ in corrections
    ]


def _content(entry: Entry) -> Any:
    """An entry as the gate compares old ones: everything but its `pr-link`, hashable."""
    return frozen(_without_link(entry.raw))


def _match(old: list[Entry], new: list[Entry]) -> dict[int, int]:
    """Each old entry's position at the head: the first unused head entry with the same content
    (pr-link aside). Old entries without one are missing (edited or removed)."""
    free: dict[Any, deque[int]] = defaultdict(deque)
    for position, entry in enumerate(new):
        free[_content(entry)].append(position)
    matched = {}
    for number, entry in enumerate(old):
        positions = free.get(_content(entry))
        if positions:
            matched[number] = positions.popleft()
    return matched


def _in_order(positions: list[int]) -> set[int]:
    """The longest increasing run of `positions` (not necessarily adjacent): the entries that kept
    their order; the rest were moved. Patience sorting, O(n log n)."""
    tails: list[int] = []  # for each run length, the index of the smallest value ending one
    values: list[int] = []  # those values, increasing
    previous: list[int | None] = [None] * len(positions)
    for i, value in enumerate(positions):
        length = bisect_left(values, value)
        previous[i] = tails[length - 1] if length else None
        if length == len(tails):
            tails.append(i)
            values.append(value)
        else:
            tails[length], values[length] = i, value
    kept, cursor = set(), tails[-1] if tails else None
    while cursor is not None:
        kept.add(cursor)
        cursor = previous[cursor]
    return kept


def _matched(path: str, old: list[Entry], new: list[Entry]) -> ChangelogDiff:
    """Old entries matched with the head's by content (pr-link aside, as the gate compares them),
    then named as upstream would classify each change: a kept entry whose link changed is a
    correction, never an edit; a reorder is one finding however many entries it moved; a missing
    old entry is edited when a new entry with its keys stands where it was, else removed (each
    one named); head entries left over were inserted above the end, or appended."""
    result = ChangelogDiff()
    matched = _match(old, new)
    order = sorted(matched)
    kept = _in_order([matched[number] for number in order])
    moved = [new[matched[number]] for i, number in enumerate(order) if i not in kept]
    used = set(matched.values())
    problems: list[Problem] = []
    gaps: dict[tuple[int, int], list[int]] = defaultdict(list)  # missing old entries by place
    for number, entry in enumerate(old):
        if number in matched:
            after = new[matched[number]]
            old_link, new_link = entry.link_text, after.link_text
            if old_link != new_link:
                result.corrections.append((after, old_link))
            continue
        low = max((matched[n] for n in order if n < number), default=-1)
        high = min((matched[n] for n in order if n > number), default=len(new))
        gaps[(low, high)].append(number)
    for (low, high), missing in gaps.items():
        free = [p for p in range(low + 1, high) if p not in used]
        one_for_one = len(free) == len(missing)  # each replaced where it stood: edited
        for slot, number in enumerate(missing):
            keys = set(old[number].config_keys)
            edited = next((p for p in free if p not in used and keys & set(new[p].config_keys)), None)
            if edited is None and one_for_one:
                edited = free[slot]
            if edited is not None:
                used.add(edited)
                problems.append(Problem("changelog-edited", path, new[edited].line, {"index": number + 1}))
            else:
                where = new[high].line if high < len(new) else None
                params = {"index": number + 1, "keys": old[number].config_keys}
                problems.append(Problem("changelog-removed", path, where, params))
    if moved:
        first = min(moved, key=lambda e: e.index)
        problems.append(
            Problem("changelog-moved", path, first.line, {"count": len(moved), "index": first.index + 1})
        )
    last = max(used, default=-1)
    for position, entry in enumerate(new):
        if position in used:
            continue
        if position > last:
            result.appended.append(entry)
        else:
            result.inserted.append(entry)
    problems += [Problem("changelog-inserted", path, e.line, {"index": e.index + 1}) for e in result.inserted]
    if result.corrections and (result.appended or result.inserted):
        problems += _mixed(path, result.corrections)
    result.problems = problems
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
    corrected = {entry.field_line("pr-link") for entry, _ in result.corrections}
    for number, (before, after) in enumerate(zip(old_lines, new_lines, strict=True), start=1):
        if before == after:
            continue
        link_lines = before.startswith(PR_LINK_LINE) and after.startswith(PR_LINK_LINE)
        whole_lines = before.endswith(b"\n") and after.endswith(b"\n")
        # Only the pr-link line of a corrected entry may change: another one re-spaced (same link)
        # is named on its own line, not on the first correction's.
        if not (link_lines and whole_lines) or number not in corrected:
            params = {"line": number, "whitespace": before.split() == after.split()}
            return [Problem("changelog-correction-bytes", path, number, params)]
    return []


#: How many of the newest entries decide the changelog's language (`languages`).
RECENT_ENTRIES = 20
#: A Han character: an entry whose description holds one is written (also) in Chinese.
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def languages(data: bytes | None) -> tuple[str, ...]:
    """The languages a new entry of this changelog is written in: English and Chinese when more
    than half of its RECENT_ENTRIES newest entries have a description line with Chinese in it (as
    InferenceX's entries came to be written: each English line, then its Chinese), else English.
    Only the newest entries are parsed, from where the RECENT_ENTRIES-th last starts; a file that
    is absent, too large or does not parse there is taken as English."""
    if not data or len(data) > MAX_BYTES:
        return ("en",)
    starts = deque((m.start() for m in _ENTRY_LINE.finditer(data)), maxlen=RECENT_ENTRIES)
    if not starts:
        return ("en",)
    try:
        entries = load(decode(data[starts[0] :])).data
    except YamlProblem:
        return ("en",)
    if not isinstance(entries, list) or not entries:
        return ("en",)
    chinese = sum(1 for entry in entries if _HAN.search(_description_text(entry)))
    return ("en", "zh") if 2 * chinese > len(entries) else ("en",)


def _description_text(entry: Any) -> str:
    """An entry's description lines as one text (empty when it has none)."""
    lines = entry.get("description") if isinstance(entry, dict) else None
    if isinstance(lines, str):
        return lines
    return "\n".join(line for line in lines if isinstance(line, str)) if isinstance(lines, list) else ""
