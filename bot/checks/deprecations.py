"""The sign-off verifier's Check 7, per-model deprecations: no key or run added in a scenario,
spec-decoding arm or precision that `MODELS.md`'s support matrix (read at the BASE) lists in the
model's `Deprecated scenarios` cell. A dated item (`removed 2026-08-04`) counts from its day, judged
on the review day as `retirements` judges. Scenarios deprecated for all models
(`scripts-deprecated-scenario`) and models retired by the review day (`verifier-retired-model`)
are reported by those rules, not again here. An item or qualifier that cannot be mapped onto
configs exactly is reported not checked, never guessed.
"""

from __future__ import annotations

from datetime import date

from bot.checks.script_configs import deprecated_scenarios
from bot.checks.script_rules import CHECK
from bot.diff import KeyChange, ReviewDiff
from bot.findings import Finding, Severity, finding
from bot.model.models_md import Deprecation, deprecations, retirements
from bot.model.prfiles import MODELS, PrFiles
from bot.model.runs import Run
from bot.model.shell import MAX_BYTES


def _field(raw: object, name: str) -> str | None:
    value = raw.get(name) if isinstance(raw, dict) else None
    return value.lower() if isinstance(value, str) else None


def _hits(
    item: Deprecation, change: KeyChange, runs: list[Run], precision: str | None
) -> tuple[list[Run], list[Run]]:
    """The runs the item deprecates, and those it might. An arm ("non-DSpark arm") is never
    decided: `spec-decoding: none` may be that arm or the unspeculated high-concurrency points of a
    DSpark sweep (InferenceX merged both, inside a DSpark key and as companion `nospec` keys), and
    `mtp` labels every draft method (MTP heads, EAGLE3, DSpark). Only runs labelled with the arm's
    own method (`mtp` for "non-MTP") are surely not the arm's."""
    if item.precision is not None:
        return (runs if precision == item.precision else []), []

    def within(run: Run) -> bool:
        return run.point.scenario == item.scenario and (
            item.seq is None or (run.point.isl, run.point.osl) == item.seq
        )

    scenario = [r for r in runs if within(r)]
    if item.arm is None:
        return scenario, []
    return [], [r for r in scenario if r.point.spec_decoding != item.arm]


def _match(run: Run, item: Deprecation) -> str:
    """What of the run's config the item names, as the config writes it."""
    if item.precision is not None:
        return f"precision: {item.precision}"
    point = run.point
    where = f"isl {point.isl} / osl {point.osl}" if item.seq else ""
    return ", ".join(p for p in (point.scenario, where) if p)


def check(diff: ReviewDiff, files: PrFiles, review_date: str | None) -> list[Finding]:
    """Keys the PR adds, or the runs it adds to keys, in a scenario or precision the base's
    MODELS.md deprecates for that model: blocking. Runs it changes or removes are not judged."""
    adding = [c for c in diff.keys.values() if c.head is not None and c.added]
    if files.models_base is None or not adding or len(files.models_base) > MAX_BYTES:
        return []  # too large: `retirements` says so
    text = files.models_base.decode("utf-8", "replace")
    items: dict[str, list[Deprecation]] = {}
    for item in deprecations(text):
        items.setdefault(item.prefix, []).append(item)
    if not items:
        return []
    try:
        day: date | None = date.fromisoformat(review_date or "")
    except ValueError:
        day = None
    retired = {r.prefix for r in retirements(text) or [] if day is not None and r.effective <= day}
    everyone = set(deprecated_scenarios(text))
    out: list[Finding] = []
    for change in adding:
        prefix = _field(change.head.raw if change.head else None, "model-prefix")
        if prefix is None or prefix in retired:
            continue
        precision = _field(change.head.raw if change.head else None, "precision")
        runs = [r for r in change.added if (r.point.isl, r.point.osl) not in everyone]
        for item in items.get(prefix, []):
            out += _judge(change, item, runs, precision, day)
    return out


def _judge(
    change: KeyChange, item: Deprecation, runs: list[Run], precision: str | None, day: date | None
) -> list[Finding]:
    if item.unread == "item":
        return [_said(change, item, Severity.UNVERIFIED, "deprecations-item-unread")]
    sure, unsure = _hits(item, change, runs, precision)
    if not sure and not unsure:
        return []
    if item.unread == "qualifier":
        return [_said(change, item, Severity.UNVERIFIED, "deprecations-qualifier-unread")]
    if item.effective is not None and day is None:
        return [_said(change, item, Severity.UNVERIFIED, "deprecations-no-date")]
    if item.effective is not None and day is not None and item.effective > day:
        return []  # scheduled: allowed until its day
    out = []
    if sure:
        out.append(
            _said(
                change,
                item,
                Severity.BLOCKING,
                "deprecations-deprecated",
                runs=len(sure),
                match=_match(sure[0], item),
                day=day.isoformat() if item.effective and day else None,
            )
        )
    if unsure:
        out.append(
            _said(
                change,
                item,
                Severity.UNVERIFIED,
                "deprecations-arm-unknown",
                runs=len(unsure),
                specs=sorted({r.point.spec_decoding for r in unsure}),
            )
        )
    return out


def _said(
    change: KeyChange, item: Deprecation, severity: Severity, message_id: str, **params: object
) -> Finding:
    return finding(
        CHECK,
        severity,
        message_id,
        config_key=change.key,
        file=change.file,
        line=change.line,
        prefix=item.prefix,
        item=item.item,
        arm=item.arm,
        models=MODELS,
        models_line=item.line,
        new=change.base is None,
        **params,
    )
