"""`consistency`: the config files are well-formed, and the PR text matches the published sets."""

from __future__ import annotations

import re

from bot.checks.context import CheckContext
from bot.findings import Finding, Severity, finding, from_problem

CHECK = "consistency"
_MENTION = re.compile(
    r"(?<![\w-])[Cc](\d{1,6})(?![\w-])|\bconc(?:urrency|urrencies)?[\s=:]*(\d{1,6})\b", re.IGNORECASE
)
_CHAIN = re.compile(r"(?<![\w-])[Cc](\d{1,6})((?:/[Cc]?\d{1,6})+)")


def mentioned_concurrencies(text: str) -> list[int]:
    """Concurrencies named in free text: `C2`, `C1/C2`, `C1/2`, `conc 2`, `concurrency 2`."""
    found: set[int] = set()
    for match in _MENTION.finditer(text):
        found.add(int(match.group(1) or match.group(2)))
    for match in _CHAIN.finditer(text):
        found.update(int(part.lstrip("Cc")) for part in match.group(2).split("/") if part)
    return sorted(found)


def check(ctx: CheckContext) -> list[Finding]:
    diff = ctx.diff
    out = [from_problem(CHECK, Severity.BLOCKING, p) for p in diff.problems]
    live = ctx.live_keys()
    published = {c for change in live for c in change.published_head}
    mentioned = mentioned_concurrencies(f"{ctx.pr.title}\n{ctx.pr.body}")
    missing = [c for c in mentioned if c not in published]
    if missing and live:
        out.append(
            finding(
                CHECK,
                Severity.WARNING,
                "consistency-mentioned-not-published",
                concurrencies=missing,
                published=sorted(published),
            )
        )
    for change in diff.keys.values():
        before, after = change.published_base, change.published_head
        message = "consistency-published-same" if before == after else "consistency-published-changed"
        out.append(
            finding(
                CHECK,
                Severity.INFO,
                message,
                **change.where,
                key=change.key,
                before=before,
                after=after,
            )
        )
    if not any(f.severity in (Severity.BLOCKING, Severity.WARNING) for f in out):
        out.append(
            finding(CHECK, Severity.VERIFIED, "consistency-ok", keys=len(diff.keys), mentioned=mentioned)
        )
    return out
