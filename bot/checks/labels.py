"""`labels`: the sweep labels make sense together and with the changelog, and whether the sweep
will start (from the same facts as the `changelog` and `sweep-plan` findings)."""

from __future__ import annotations

from bot.checks.context import CheckContext
from bot.checks.sweep_rules import appended, mixes_append_only, primary_labels, sweep_start
from bot.findings import Finding, Severity, finding

CHECK = "labels"


def _typos(ctx: CheckContext) -> list[Finding]:
    """A label that looks like a sweep label but is not one: the sweep workflow ignores it."""
    known = [*ctx.settings.primary_labels, *ctx.settings.modifier_labels]
    out = []
    for label in dict.fromkeys(ctx.pr.labels):
        if label in known:
            continue
        import difflib  # only for a label the repository does not know

        close = difflib.get_close_matches(label, known, n=1, cutoff=0.8)
        if close or "sweep" in label.lower():
            nearest = close[0] if close else ctx.settings.recommended_label
            out.append(finding(CHECK, Severity.WARNING, "labels-typo", label=label, nearest=nearest))
    return out


def _conflicts(ctx: CheckContext, primaries: list[str], modifiers: list[str]) -> list[Finding]:
    settings = ctx.settings
    entries = appended(ctx.diff)
    out = []
    if len(primaries) > 1:
        out.append(finding(CHECK, Severity.BLOCKING, "labels-several-primaries", labels=primaries))
    if modifiers and not primaries:
        out.append(
            finding(
                CHECK,
                Severity.BLOCKING,
                "labels-modifier-alone",
                labels=modifiers,
                recommended=settings.recommended_label,
            )
        )
    eval_modifiers = [m for m in modifiers if m in settings.eval_modifiers]
    if eval_modifiers and any(e.flag("append-only") for e in entries):
        out.append(finding(CHECK, Severity.BLOCKING, "labels-append-only-evals", labels=eval_modifiers))
    if mixes_append_only(entries):
        out.append(finding(CHECK, Severity.BLOCKING, "labels-append-only-mixed"))
    return out


def check(ctx: CheckContext) -> list[Finding]:
    settings = ctx.settings
    primaries = primary_labels(ctx)
    modifiers = [label for label in dict.fromkeys(ctx.pr.labels) if label in settings.modifier_labels]
    out = _conflicts(ctx, primaries, modifiers) + _typos(ctx)
    if any(f.severity is Severity.BLOCKING for f in out):
        return out
    start = sweep_start(ctx)
    if start.runs:
        if start.label != settings.recommended_label:
            out.append(
                finding(
                    CHECK,
                    Severity.INFO,
                    "labels-not-recommended",
                    label=start.label,
                    recommended=settings.recommended_label,
                )
            )
        out.append(finding(CHECK, Severity.VERIFIED, "labels-ok", label=start.label, modifiers=modifiers))
    elif start.reason == "no-entry":
        if primaries:
            out.append(finding(CHECK, Severity.WARNING, "labels-primary-without-entry", labels=primaries))
        elif any(c.needs_entry for c in ctx.diff.keys.values()):
            out.append(finding(CHECK, Severity.INFO, "labels-no-sweep-entry-missing"))
        else:
            out.append(finding(CHECK, Severity.VERIFIED, "labels-none-needed"))
    elif start.reason == "no-label":
        out.append(finding(CHECK, Severity.INFO, "labels-no-primary", recommended=settings.recommended_label))
    else:
        out.append(finding(CHECK, Severity.INFO, f"labels-not-yet-{start.reason}", label=start.label))
    return out
