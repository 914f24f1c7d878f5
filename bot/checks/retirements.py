"""The sign-off verifier's Check 7, per-model retirements: no key or run added for a model
`MODELS.md` (read at the BASE) retires on or before the day the PR is judged
(`PullRequest.review_date`: the day the action reviews it, as the verifier's `date -u +%F`; locally
the head commit's date). A scheduled retirement is allowed until its date.
"""

from __future__ import annotations

from datetime import date

from bot.checks.script_rules import CHECK
from bot.diff import ReviewDiff
from bot.findings import Finding, Severity, finding
from bot.model.models_md import Retirement, retirements
from bot.model.prfiles import MODELS, PrFiles
from bot.model.shell import MAX_BYTES


def _prefix(raw: object) -> str | None:
    value = raw.get("model-prefix") if isinstance(raw, dict) else None
    return value if isinstance(value, str) else None


def check(diff: ReviewDiff, files: PrFiles, review_date: str | None) -> list[Finding]:
    """Keys the PR adds, or whose runs it adds, for a retired model: blocking. MODELS.md too large
    or without its support matrix, or no day to judge on: not checked (said only when the PR adds
    runs). Runs it only changes or removes are not judged."""
    adding = [c for c in diff.keys.values() if c.head is not None and (c.base is None or c.added)]
    if files.models_base is None or not adding:
        return []
    if len(files.models_base) > MAX_BYTES:  # an `Oversized`: known by its size alone
        return [_unverified("verifier-models-too-large", size=len(files.models_base), limit=MAX_BYTES)]
    found = retirements(files.models_base.decode("utf-8", "replace"))
    if found is None:
        return [_unverified("verifier-models-no-table")]
    by_prefix: dict[str, Retirement] = {}
    for retired in found:
        if retired.prefix not in by_prefix or retired.effective < by_prefix[retired.prefix].effective:
            by_prefix[retired.prefix] = retired
    hits = [(c, by_prefix[p]) for c in adding if (p := _prefix(c.head.raw if c.head else None)) in by_prefix]
    if not hits:
        return []
    try:
        day = date.fromisoformat(review_date or "")
    except ValueError:
        return [_unverified("verifier-retired-no-date")]
    out = []
    for change, retired in hits:
        if retired.effective > day:
            continue  # scheduled: allowed until its date
        out.append(
            finding(
                CHECK,
                Severity.BLOCKING,
                "verifier-retired-model",
                config_key=change.key,
                file=change.file,
                line=change.line,
                prefix=retired.prefix,
                effective=retired.effective.isoformat(),
                day=day.isoformat(),
                models=MODELS,
                models_line=retired.line,
                cell=retired.cell,
                runs=len(change.added),
                new=change.base is None,
            )
        )
    return out


def _unverified(message_id: str, **params: object) -> Finding:
    return finding(CHECK, Severity.UNVERIFIED, message_id, models=MODELS, **params)
