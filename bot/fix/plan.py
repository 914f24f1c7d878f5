"""Which findings of a review have a known fix, and the files as they are once fixed (pure).

Known fixes: a DRAM number the `dram` check computed (`TOTAL_CPU_DRAM_GB`, the per-rank
`LMCACHE_MAX_LOCAL_CPU_SIZE`), a new changelog entry's `pr-link` when the PR's URL is known, and
an appended changelog entry naming the changed keys no new entry covers, its description drafted
from the review's `changes` view (`bot.output.changelog_draft`). Each edit touches the
finding's own line only (or appends), and one that cannot be made exactly is left unfixed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.catalog import Msg, msg
from bot.findings import Finding, Severity
from bot.fix import yamledit
from bot.output import changelog_draft, messages
from bot.sources.snapshot import is_plain_path
from bot.yamlsafe import YamlProblem, decode

# Findings whose fix is a number in a recipe: message id -> the env setting that holds it.
DRAM_SETTINGS = {
    "dram-total-mismatch": "TOTAL_CPU_DRAM_GB",
    "dram-pool-oversubscribed": "LMCACHE_MAX_LOCAL_CPU_SIZE",
}
# A new entry's pr-link that is not this PR's URL (a placeholder is only info, but fixed too).
PR_LINK_FINDINGS = ("changelog-pr-link-other", "changelog-pr-link-invalid", "changelog-pr-link-placeholder")
PLACEHOLDER = "XXX"
_PULL_URL = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/pull/\d+")


@dataclass(frozen=True)
class Fix:
    """One change to one file, what it says, and the findings it answers."""

    file: str
    message: Msg
    answers: tuple[Finding, ...]


@dataclass
class Plan:
    """The fixes made, the blocking findings left, and the new bytes of each file that changed."""

    fixes: list[Fix] = field(default_factory=list)
    left: list[Finding] = field(default_factory=list)  # blocking findings no fix answers
    files: dict[str, bytes] = field(default_factory=dict)  # path -> bytes once fixed


@dataclass(frozen=True)
class _Edit:
    """A scalar to replace: `key`'s value on `line` of `file` becomes `value`."""

    file: str
    line: int
    key: str
    old: str
    value: str


def _where(item: Finding) -> str:
    """`file:line` of a finding, for the output lines."""
    if not item.file:
        return ""
    return f"{item.file}:{item.line}" if item.line else item.file


def _edit(item: Finding, pr_url: str | None) -> _Edit | None:
    """The scalar edit that fixes this finding, if it has one."""
    if not (isinstance(item.file, str) and is_plain_path(item.file) and isinstance(item.line, int)):
        return None
    setting = DRAM_SETTINGS.get(item.message_id)
    expected = item.params.get("expected")
    if setting and type(expected) is int and expected > 0:
        return _Edit(item.file, item.line, setting, str(item.params.get("found")), str(expected))
    if item.message_id in PR_LINK_FINDINGS and pr_url:
        return _Edit(item.file, item.line, "pr-link", str(item.params.get("link")), pr_url)
    return None


def _pull_url(pr_url: str | None) -> str | None:
    """The PR's URL when it is one a `pr-link` may hold (`https://github.com/o/r/pull/N`)."""
    return pr_url if pr_url and _PULL_URL.fullmatch(pr_url) else None


def needed_files(findings: list[Finding], changelog: str, pr_url: str | None) -> list[str]:
    """The head files a plan reads: those its edits touch, and the changelog."""
    url = _pull_url(pr_url)
    paths = {edit.file for item in findings if (edit := _edit(item, url))}
    if changelog_draft.drafted_keys(findings):
        paths.add(changelog)
    return sorted(paths)


def _apply_edits(plan: Plan, edits: dict[_Edit, list[Finding]], head: Mapping[str, bytes | None]) -> None:
    """Replace the edits' scalars, all of a file's at once; an edit that cannot be made exactly is
    skipped. A file the review could not read (too large, NUL bytes, not UTF-8) is not edited."""
    by_file: dict[str, list[_Edit]] = {}
    for edit in sorted(edits, key=lambda e: (e.file, e.line)):
        by_file.setdefault(edit.file, []).append(edit)
    for path, file_edits in by_file.items():
        source = head.get(path)
        try:
            text = decode(source) if source is not None else None
        except YamlProblem:
            text = None
        if not text:
            continue
        places = {yamledit.Place(e.key, e.line): e.value for e in file_edits}
        edited, done = yamledit.replace_scalars(text, places)
        if done:
            plan.files[path] = edited.encode("utf-8")
        for edit in file_edits:
            if yamledit.Place(edit.key, edit.line) not in done:
                continue
            where = f"{edit.file}:{edit.line}"
            fixed = msg("fix-value", where=where, key=edit.key, old=edit.old, new=edit.value)
            plan.fixes.append(Fix(edit.file, fixed, tuple(edits[edit])))


def _scalar_edits(findings: list[Finding], pr_url: str | None) -> dict[_Edit, list[Finding]]:
    """The scalar edits asked for; two findings that want different values on one line get none."""
    edits: dict[_Edit, list[Finding]] = {}
    for item in findings:
        if edit := _edit(item, pr_url):
            edits.setdefault(edit, []).append(item)
    places = Counter((e.file, e.line, e.key) for e in edits)
    return {e: found for e, found in edits.items() if places[e.file, e.line, e.key] == 1}


def _todo_lines() -> list[str]:
    """The skeleton's description, in both languages, when there is nothing to draft it from: the
    author must replace it (the review warns about it until then)."""
    todo = msg("fix-todo-description")
    return [messages.text(todo, lang) for lang in messages.LANGS]


def _append_entry(
    plan: Plan,
    findings: list[Finding],
    changelog: str,
    head: Mapping[str, bytes | None],
    pr_url: str | None,
    changes: Mapping[str, Any],
    langs: tuple[str, ...],
) -> None:
    """Append one changelog entry naming every uncovered key (coverage findings answered), its
    description drafted from the review's `changes` view in the changelog's languages."""
    keys = changelog_draft.drafted_keys(findings)
    data = plan.files.get(changelog, head.get(changelog))
    if not keys or data is None:
        return
    link = pr_url or PLACEHOLDER
    drafted = changelog_draft.description(keys, changes, langs)
    scenarios = changelog_draft.scenarios(keys, changes)
    indent = yamledit.item_indent(data)
    entry = yamledit.entry_lines(keys, drafted or _todo_lines(), link, indent, scenarios)
    plan.files[changelog] = yamledit.append_entry(data, entry)
    answers = tuple(f for f in findings if f.message_id in changelog_draft.DRAFT_FOR)
    said = "fix-changelog-entry" if drafted else "fix-changelog-entry-todo"
    plan.fixes.append(Fix(changelog, msg(said, file=changelog, keys=keys, link=link), answers))


def plan(
    findings: list[Finding],
    head: Mapping[str, bytes | None],
    changelog: str,
    pr_url: str | None,
    changes: Mapping[str, Any] | None = None,
    langs: tuple[str, ...] = ("en",),
) -> Plan:
    """The fixes for a review's findings, given the head's files (`needed_files`), the PR's URL
    (None when unknown: then no pr-link is fixed and a new entry's link is the placeholder) and
    the review's `changes` view (a new entry's description is drafted from it, in `langs`: the
    changelog's languages, `Report.changelog_langs`)."""
    url = _pull_url(pr_url)
    out = Plan()
    _apply_edits(out, _scalar_edits(findings, url), head)
    _append_entry(out, findings, changelog, head, url, changes or {}, langs)
    answered = {id(f) for fix in out.fixes for f in fix.answers}
    out.left = [f for f in findings if f.severity is Severity.BLOCKING and id(f) not in answered]
    out.files = {path: data for path, data in out.files.items() if data != head.get(path)}
    return out


def left_message(item: Finding) -> Msg:
    """The output line of a blocking finding that has no known fix; for a `pr-link`, what would
    fix it (the PR's URL, or the placeholder)."""
    if item.message_id in PR_LINK_FINDINGS:
        return msg(
            "fix-left-pr-link", where=_where(item), link=str(item.params.get("link")), placeholder=PLACEHOLDER
        )
    return msg("fix-left", where=_where(item), finding=Msg(item.message_id, dict(item.params)))
