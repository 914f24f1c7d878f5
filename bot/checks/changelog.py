"""`changelog`: the perf changelog changed as InferenceX's gate allows, and names every key whose
runs the PR added or changed (DESIGN.md §2)."""

from __future__ import annotations

import dataclasses
import re

from bot.checks import placeholders, sweep_plan
from bot.checks.context import CheckContext
from bot.checks.sweep_rules import append_only_refusals, keys_known, keys_matching
from bot.diff import KeyChange
from bot.findings import Finding, Severity, finding, from_problem
from bot.model.changelog import Entry, gate
from bot.model.dram import BUDGET_SETTING
from bot.model.problems import Problem
from bot.model.runs import RUNNER, same

CHECK = "changelog"
PLACEHOLDER = "XXX"
MAX_PROBLEMS_LISTED = 5
_ANY_REPOSITORY = r"https://github\.com/[\w.-]+/[\w.-]+"


def _gated(severity: Severity, problem: Problem, which: str) -> Finding:
    """A problem of the changelog model as a finding that says which gate refuses it ("" none)."""
    return from_problem(
        CHECK, severity, dataclasses.replace(problem, params={**problem.params, "gate": which})
    )


def _is_pull_url(link: str, repository: str | None, number: str) -> bool:
    """`<repository>/pull/<number>` (`number` a regex), in any GitHub repository when unknown."""
    prefix = re.escape(repository.rstrip("/")) if repository else _ANY_REPOSITORY
    return re.fullmatch(rf"{prefix}/pull/{number}", link) is not None


def _canonical(link: str, repository: str | None) -> bool:
    """`https://github.com/<owner>/<repo>/pull/<digits>`, in the reviewed repository when known."""
    return _is_pull_url(link, repository, r"\d+")


def _placeholder(link: str, repository: str | None) -> bool:
    """`XXX`, or the repository's pull URL with `XXX` for the number (the merge step fills it in)."""
    return link == PLACEHOLDER or _is_pull_url(link, repository, PLACEHOLDER)


def _link_suggestion(ctx: CheckContext, line: int | None, link: str, new: str) -> str | None:
    """The `pr-link:` line with `new` for `link`, for a suggestion; None if the line does not show it."""
    log = ctx.diff.changelog
    source = log.head_line(line) if log is not None else None
    if source is None or not source.lstrip().startswith("pr-link:") or link not in source:
        return None
    return source.replace(link, new, 1)


def _new_link(entry: Entry, ctx: CheckContext, file: str) -> list[Finding]:
    """A new entry's pr-link: this PR's URL or a placeholder on a PR; any canonical link without one."""
    link = entry.pr_link
    if link is None:
        return []  # the schema finding says so
    pr, line = ctx.pr, entry.field_line("pr-link")
    where = {"file": file, "line": line}
    if _placeholder(link, pr.repository):
        return [finding(CHECK, Severity.INFO, "changelog-pr-link-placeholder", **where, link=link)]
    if pr.number is not None and pr.url:
        if link == pr.url:
            return []
        fixed = _link_suggestion(ctx, line, link, pr.url)
        return [
            finding(
                CHECK,
                Severity.BLOCKING,
                "changelog-pr-link-other",
                **where,
                suggestion=fixed,
                link=link,
                expected=pr.url,
                gate="merge",
            )
        ]
    out = []
    if not _canonical(link, pr.repository):
        fixed = _link_suggestion(ctx, line, link, PLACEHOLDER)
        out.append(
            finding(
                CHECK,
                Severity.BLOCKING,
                "changelog-pr-link-invalid",
                **where,
                suggestion=fixed,
                link=link,
                gate="merge",
            )
        )
    if pr.number is not None:
        out.append(finding(CHECK, Severity.UNVERIFIED, "changelog-pr-url-unknown", **where, number=pr.number))
    return out


def _corrections(ctx: CheckContext, file: str) -> list[Finding]:
    log = ctx.diff.changelog
    assert log is not None
    out = []
    for entry, old in log.corrections:
        link = entry.pr_link or ""
        where = {"file": file, "line": entry.field_line("pr-link"), "index": entry.index + 1}
        if _canonical(link, ctx.pr.repository):
            out.append(finding(CHECK, Severity.INFO, "changelog-link-edit", **where, old=old, link=link))
        else:
            out.append(
                finding(
                    CHECK, Severity.BLOCKING, "changelog-correction-invalid", **where, link=link, gate="pr"
                )
            )
    if log.corrections and not (log.appended or log.inserted or log.problems):
        first = log.corrections[0][0].field_line("pr-link")
        out.append(finding(CHECK, Severity.WARNING, "changelog-correction-pr-gate", file=file, line=first))
    return out


def _repository_unknown(ctx: CheckContext, file: str, new_entries: list[Entry]) -> list[Finding]:
    """Links whose repository could not be checked, because which one the PR belongs to is unknown
    (local mode without `--pr-url`, a base changelog that links nowhere and no GitHub remote)."""
    if ctx.pr.repository is not None:
        return []
    log = ctx.diff.changelog
    assert log is not None
    links = [e.pr_link for e in new_entries] + [e.pr_link for e, _ in log.corrections]
    shown = [link for link in dict.fromkeys(links) if link and link != PLACEHOLDER]
    if not shown:
        return []
    return [finding(CHECK, Severity.UNVERIFIED, "changelog-repository-unknown", file=file, links=shown)]


def _append_only(ctx: CheckContext, file: str, entries: list[Entry]) -> list[Finding]:
    """What the sweep refuses in an append-only change (`process_changelog.py`), on the line of the
    append-only entry naming the key (or the first one)."""
    marked = [entry for entry in entries if entry.flag("append-only")]
    out = []
    for refusal in append_only_refusals(ctx.diff):
        entry = next((e for e in marked if e.names(refusal.key)), marked[0] if marked else None)
        where = {"config_key": refusal.key, "file": file, "line": entry.line if entry else None}
        if refusal.reason == "lost":
            concurrencies = list(refusal.concurrencies)
            out.append(
                finding(
                    CHECK,
                    Severity.BLOCKING,
                    "changelog-append-only-lost",
                    **where,
                    key=refusal.key,
                    concurrencies=concurrencies,
                    gate="pr",
                )
            )
            continue
        out.append(
            finding(
                CHECK,
                Severity.BLOCKING,
                "changelog-append-only-refused",
                **where,
                key=refusal.key,
                reason=refusal.reason,
                concurrencies=list(refusal.concurrencies),
                gate="pr",
            )
        )
    return out


def _patterns(entry: Entry, ctx: CheckContext, file: str) -> list[Finding]:
    """Each `config-keys` item must name a key of the head (the sweep refuses one that does not);
    naming a key the PR did not change reruns it, which is normal (a retrigger), so say so."""
    diff = ctx.diff
    if not keys_known(diff):
        return []  # which keys exist is unknown; the master-config findings say why
    out = []
    line = entry.field_line("config-keys")
    for pattern in entry.config_keys:
        matched = keys_matching(diff, pattern)
        if not matched:
            out.append(
                finding(
                    CHECK,
                    Severity.BLOCKING,
                    "changelog-unknown-key",
                    file=file,
                    line=line,
                    key=pattern,
                    gate="pr",
                )
            )
            continue
        unchanged = [key for key in matched if key not in diff.keys or not diff.keys[key].needs_entry]
        if unchanged:
            out.append(
                finding(
                    CHECK,
                    Severity.INFO,
                    "changelog-unchanged-key",
                    file=file,
                    line=line,
                    key=pattern,
                    keys=unchanged,
                )
            )
    return out


def _not_covered(change: KeyChange) -> Finding:
    message = "changelog-key-not-covered" if change.entry_changed else "changelog-recipe-key-not-covered"
    if not change.entry_changed and "recipe" not in change.aspects and "hardware" in change.aspects:
        # its runner's record in runners.yaml changed what its runs read: say which field, read how
        fields, read = _hardware_reads(change)
        return finding(
            CHECK,
            Severity.BLOCKING,
            "changelog-hardware-key-not-covered",
            **change.where,
            key=change.key,
            fields=fields,
            settings=read,
            budget=BUDGET_SETTING in read,
        )
    return finding(
        CHECK,
        Severity.BLOCKING,
        message,
        **change.where,
        key=change.key,
    )


def _hardware_reads(change: KeyChange) -> tuple[list[str], list[str]]:
    """The fields of the runner's record that changed, and the settings of the key's runs that
    read them and changed with them (`total-cpu-dram-gb`: the DRAM rule's budget)."""
    fields: set[str] = set()
    read: set[str] = set()
    for run in change.changed:
        before = change.base_of(run)
        old, new = before.parts[RUNNER], run.parts[RUNNER]
        read |= {path for path in old.keys() | new.keys() if not same(old.get(path), new.get(path))}
        old_record, new_record = (r if isinstance(r, dict) else {} for r in (before.source[2], run.source[2]))
        names = old_record.keys() | new_record.keys()  # a record that came or went: all its fields
        fields |= {str(n) for n in names if not same(old_record.get(n), new_record.get(n))}
    return sorted(fields), sorted(read)


def _labels_only(change: KeyChange) -> Finding:
    """A key whose runs changed only in what labels their results (`KeyChange.labels_only`): an
    entry may not be needed, as nothing the server or the client runs changed."""
    paths = sorted(
        {
            path.rpartition(":")[2]
            for run in change.changed
            for path in {**change.base_of(run).settings, **run.settings}
            if not same(change.base_of(run).settings.get(path), run.settings.get(path))
        }
    )
    return finding(
        CHECK, Severity.WARNING, "changelog-labels-only", **change.where, key=change.key, settings=paths
    )


def _not_swept(ctx: CheckContext, needing: list[KeyChange], entries: list[Entry]) -> list[Finding]:
    """Keys a new entry names whose added or changed runs the sweep it starts would not measure:
    an entry's `scenario-type` leaves their scenario out, `evals-only` / `all-evals` start no
    benchmark run, `append-only` only the runs the base did not have (coverage is judged on what
    the entries make the sweep run: `sweep_plan.swept`)."""
    swept = sweep_plan.swept(ctx)
    out = []
    for change in needing:
        naming = [e for e in entries if e.names(change.key)]
        if not naming:
            continue  # `_not_covered` says so
        runs = change.added + change.changed or change.head_runs
        missed = [run for run in runs if run.ident not in swept.get(change.key, set())]
        if not missed:
            continue
        scenarios = sorted({run.point.scenario for run in missed})
        flags = sorted({f for e in naming for f in ("evals-only", "all-evals", "append-only") if e.flag(f)})
        limited = any(isinstance(e.get("scenario-type"), list) and e.get("scenario-type") for e in naming)
        out.append(
            finding(
                CHECK,
                Severity.BLOCKING,
                "changelog-runs-not-swept",
                config_key=change.key,
                file=ctx.diff.layout.changelog,
                line=naming[-1].line,
                key=change.key,
                count=len(missed),
                runs=len(runs),
                concurrencies=sorted({run.concurrency for run in missed}),
                scenarios=scenarios,
                flags=flags,
                scenario_type=limited,
            )
        )
    return out


def check(ctx: CheckContext) -> list[Finding]:
    diff = ctx.diff
    file = diff.layout.changelog
    needing = [c for c in diff.keys.values() if c.needs_entry and not c.labels_only]
    labelled = [c for c in diff.keys.values() if c.labels_only]
    out: list[Finding] = ctx.unreadable(CHECK)
    named = diff.changelog.appended + diff.changelog.inserted if diff.changelog else []
    out += [_labels_only(c) for c in labelled if not any(e.names(c.key) for e in named)]
    if not diff.changelog_changed:
        if needing:
            out.append(
                finding(
                    CHECK, Severity.BLOCKING, "changelog-missing", file=file, keys=[c.key for c in needing]
                )
            )
        elif not out:
            # Keys that only lost runs; the others were rewritten with the same runs (`pp: 1`).
            lost = [c.key for c in diff.keys.values() if not c.needs_entry and (c.removed or c.head is None)]
            out.append(finding(CHECK, Severity.VERIFIED, "changelog-not-needed", removed=lost))
        return out
    log = diff.changelog
    assert log is not None
    gates = [gate(p, log.drops_lines) for p in log.problems]
    listed = zip(log.problems[:MAX_PROBLEMS_LISTED], gates, strict=False)
    out += [_gated(Severity.BLOCKING, p, which) for p, which in listed]
    if len(log.problems) > MAX_PROBLEMS_LISTED:
        more = len(log.problems) - MAX_PROBLEMS_LISTED
        which = "pr" if "pr" in gates[MAX_PROBLEMS_LISTED:] else "merge"
        out.append(
            finding(CHECK, Severity.BLOCKING, "changelog-more-edits", file=file, count=more, gate=which)
        )
    if any(p.message_id != "changelog-base-too-large" for p in log.base_problems):
        out.append(finding(CHECK, Severity.UNVERIFIED, "changelog-base-broken", file=file, path=file))
    out += [_gated(Severity.UNVERIFIED, p, "") for p in log.base_problems[:MAX_PROBLEMS_LISTED]]
    out += [from_problem(CHECK, Severity.WARNING, p) for p in log.warnings]
    out += _corrections(ctx, file)
    new_entries = log.appended + log.inserted  # inserted ones are blocking already, but still checked
    out += _repository_unknown(ctx, file, new_entries)
    out += _append_only(ctx, file, new_entries)
    for entry in new_entries:
        out += _new_link(entry, ctx, file)
        out += _patterns(entry, ctx, file)
        out += placeholders.findings(entry, file)
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
    out += [_not_covered(c) for c in needing if not any(e.names(c.key) for e in new_entries)]
    out += _not_swept(ctx, needing, new_entries)
    if not any(f.severity is Severity.BLOCKING for f in out) and not diff.unreadable_masters:
        if log.appended:
            covered = sorted(c.key for c in diff.keys.values() if any(e.names(c.key) for e in log.appended))
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
        elif not log.corrections and not log.base_problems:
            out.append(finding(CHECK, Severity.VERIFIED, "changelog-no-new-entries"))
    return out
