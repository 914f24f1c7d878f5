"""`changelog`: the perf changelog is append-only and covers every changed config key."""

from __future__ import annotations

import fnmatch
import re

from bot.checks.context import CheckContext
from bot.findings import Finding, Severity, finding, from_problem
from bot.model.changelog import EVAL_FIELDS, KNOWN_FIELDS, SCENARIO_TYPES, Entry

CHECK = "changelog"
PLACEHOLDER = re.compile(r"XXX", re.IGNORECASE)
PR_URL = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/pull/\d+$")
BLOCKING_HYGIENE = ("changelog-tab", "changelog-cr")
MAX_EDITS_LISTED = 5


def _names_key(entry: Entry, key: str) -> bool:
    return any(pattern == key or fnmatch.fnmatchcase(key, pattern) for pattern in entry.config_keys)


def _schema(entry: Entry, file: str) -> list[Finding]:
    out: list[Finding] = []

    def bad(field_name: str, expected: str) -> None:
        out.append(
            finding(
                CHECK,
                Severity.BLOCKING,
                "changelog-field-invalid",
                file=file,
                line=entry.field_line(field_name),
                field=field_name,
                expected=expected,
                index=entry.index + 1,
            )
        )

    if not isinstance(entry.raw, dict):
        out.append(
            finding(
                CHECK,
                Severity.BLOCKING,
                "changelog-entry-not-mapping",
                file=file,
                line=entry.line,
                index=entry.index + 1,
            )
        )
        return out
    keys = entry.get("config-keys")
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k for k in keys):
        bad("config-keys", "non-empty list of config keys")
    description = entry.get("description")
    if (
        not isinstance(description, list)
        or not description
        or not all(isinstance(d, str) and d.strip() for d in description)
    ):
        bad("description", "non-empty list of strings")
    if not isinstance(entry.get("pr-link"), str):
        bad("pr-link", "URL string")
    scenarios = entry.get("scenario-type")
    if scenarios is not None and (
        not isinstance(scenarios, list) or not all(s in SCENARIO_TYPES for s in scenarios)
    ):
        bad("scenario-type", " / ".join(SCENARIO_TYPES))
    for name in ("evals-only", "all-evals", "append-only"):
        if name in entry.raw and not isinstance(entry.raw[name], bool):
            bad(name, "true / false")
    for name in entry.raw:
        if name not in KNOWN_FIELDS:
            out.append(
                finding(
                    CHECK,
                    Severity.WARNING,
                    "changelog-unknown-field",
                    file=file,
                    line=entry.field_line(name),
                    field=str(name),
                )
            )
    return out


def _pr_link(entry: Entry, ctx: CheckContext, file: str) -> list[Finding]:
    link = entry.pr_link
    if link is None:
        return []
    line = entry.field_line("pr-link")
    if PLACEHOLDER.search(link):
        return [
            finding(CHECK, Severity.WARNING, "changelog-pr-link-placeholder", file=file, line=line, link=link)
        ]
    if ctx.pr.url:
        if link.rstrip("/") != ctx.pr.url.rstrip("/"):
            return [
                finding(
                    CHECK,
                    Severity.BLOCKING,
                    "changelog-pr-link-other",
                    file=file,
                    line=line,
                    link=link,
                    expected=ctx.pr.url,
                )
            ]
        return []
    if not PR_URL.match(link):
        return [
            finding(CHECK, Severity.BLOCKING, "changelog-pr-link-invalid", file=file, line=line, link=link)
        ]
    return []


def _append_only(entry: Entry, ctx: CheckContext, file: str) -> list[Finding]:
    if entry.get("append-only") is not True:
        return []
    out = [
        finding(
            CHECK,
            Severity.BLOCKING,
            "changelog-append-only-evals",
            file=file,
            line=entry.field_line(name),
            field=name,
        )
        for name in EVAL_FIELDS
        if name in entry.raw
    ]
    for change in ctx.diff.keys.values():
        if not _names_key(entry, change.key):
            continue
        lost = change.removed + change.changed
        if lost:
            out.append(
                finding(
                    CHECK,
                    Severity.BLOCKING,
                    "changelog-append-only-lost",
                    config_key=change.key,
                    file=file,
                    line=entry.line,
                    key=change.key,
                    concurrencies=sorted({r.concurrency for r in lost}),
                )
            )
    return out


def check(ctx: CheckContext) -> list[Finding]:
    diff = ctx.diff
    file = diff.layout.changelog
    # A removed key needs no entry (an entry could not name it: it no longer exists).
    content_changed = [c for c in diff.keys.values() if c.entry_changed and c.head is not None]
    out: list[Finding] = ctx.unreadable(CHECK)
    if not diff.changelog_changed:
        if content_changed:
            out.append(
                finding(
                    CHECK,
                    Severity.BLOCKING,
                    "changelog-missing",
                    file=file,
                    keys=[c.key for c in content_changed],
                )
            )
        elif not out:
            out.append(finding(CHECK, Severity.VERIFIED, "changelog-not-needed"))
        return out
    log = diff.changelog
    assert log is not None
    if log.unreadable is not None:
        return [*out, from_problem(CHECK, Severity.BLOCKING, log.unreadable)]
    if log.base_unreadable is not None:
        out.append(from_problem(CHECK, Severity.UNVERIFIED, log.base_unreadable))
    out += [from_problem(CHECK, Severity.BLOCKING, problem) for problem in log.edits[:MAX_EDITS_LISTED]]
    if len(log.edits) > MAX_EDITS_LISTED:
        out.append(
            finding(
                CHECK,
                Severity.BLOCKING,
                "changelog-more-edits",
                file=file,
                count=len(log.edits) - MAX_EDITS_LISTED,
            )
        )
    for problem in log.hygiene:
        severity = Severity.BLOCKING if problem.message_id in BLOCKING_HYGIENE else Severity.WARNING
        out.append(from_problem(CHECK, severity, problem))
    for dup in log.duplicates:
        out.append(
            finding(
                CHECK,
                Severity.BLOCKING,
                "changelog-duplicate-key",
                file=file,
                line=dup.line,
                key=dup.key,
                first_line=dup.first_line,
            )
        )
    if log.link_only_edits:
        severity = Severity.BLOCKING if log.appended else Severity.INFO
        message = "changelog-link-edit-mixed" if log.appended else "changelog-link-edit"
        out += [
            finding(CHECK, severity, message, file=file, line=e.line, index=e.index + 1)
            for e in log.link_only_edits
        ]
    new_entries = log.appended + log.inserted  # inserted ones are blocking already, but still checked
    for entry in new_entries:
        out += _schema(entry, file)
        out += _pr_link(entry, ctx, file)
        out += _append_only(entry, ctx, file)
        # With a changed master config unreadable, which keys exist or changed is unknown.
        for pattern in entry.config_keys if diff.head_keys and not diff.unreadable_masters else ():
            matched = [k for k in diff.head_keys if k == pattern or fnmatch.fnmatchcase(k, pattern)]
            if not matched:
                out.append(
                    finding(
                        CHECK,
                        Severity.BLOCKING,
                        "changelog-unknown-key",
                        file=file,
                        line=entry.field_line("config-keys"),
                        key=pattern,
                    )
                )
            elif not any(k in diff.keys for k in matched):
                out.append(
                    finding(
                        CHECK,
                        Severity.WARNING,
                        "changelog-unchanged-key",
                        file=file,
                        line=entry.field_line("config-keys"),
                        key=pattern,
                    )
                )
    if log.appended and not diff.head_keys and not diff.unreadable_masters:
        out.append(
            finding(
                CHECK,
                Severity.UNVERIFIED,
                "changelog-keys-unverifiable",
                file=file,
                configs=diff.layout.configs_dir,
            )
        )
    for change in diff.keys.values():
        if change.head is None or any(_names_key(e, change.key) for e in new_entries):
            continue
        severity = Severity.BLOCKING if change.entry_changed else Severity.WARNING
        message = "changelog-key-not-covered" if change.entry_changed else "changelog-recipe-key-not-covered"
        out.append(
            finding(
                CHECK,
                severity,
                message,
                config_key=change.key,
                file=change.file,
                line=change.line,
                key=change.key,
            )
        )
    blocked = any(f.severity is Severity.BLOCKING for f in out)
    if log.appended and not blocked and not diff.unreadable_masters:
        covered = sorted(
            {c.key for c in diff.keys.values() if any(_names_key(e, c.key) for e in log.appended)}
        )
        out.append(
            finding(
                CHECK,
                Severity.VERIFIED,
                "changelog-appended",
                file=file,
                line=log.appended[0].line,
                count=len(log.appended),
                keys=covered,
            )
        )
    elif not log.appended and not out:
        out.append(finding(CHECK, Severity.VERIFIED, "changelog-no-new-entries"))
    return out
