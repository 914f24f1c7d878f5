"""`labels`: the sweep labels make sense together and with the changelog."""

from __future__ import annotations

from bot.checks.context import CheckContext
from bot.findings import Finding, Severity, finding

CHECK = "labels"


def check(ctx: CheckContext) -> list[Finding]:
    settings = ctx.settings
    labels = list(dict.fromkeys(ctx.pr.labels))
    primaries = [label for label in labels if label in settings.primary_labels]
    modifiers = [label for label in labels if label in settings.modifier_labels]
    appended = ctx.diff.changelog.appended if ctx.diff.changelog else []
    out: list[Finding] = []
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
    if eval_modifiers and any(e.get("append-only") is True for e in appended):
        out.append(finding(CHECK, Severity.BLOCKING, "labels-append-only-evals", labels=eval_modifiers))
    if primaries and not appended:
        out.append(finding(CHECK, Severity.WARNING, "labels-primary-without-entry", labels=primaries))
    if appended and not primaries:
        out.append(finding(CHECK, Severity.INFO, "labels-no-primary", recommended=settings.recommended_label))
    if len(primaries) == 1 and not any(f.severity is Severity.BLOCKING for f in out):
        if primaries[0] != settings.recommended_label:
            out.append(
                finding(
                    CHECK,
                    Severity.INFO,
                    "labels-not-recommended",
                    label=primaries[0],
                    recommended=settings.recommended_label,
                )
            )
        if appended:
            out.append(
                finding(CHECK, Severity.VERIFIED, "labels-ok", label=primaries[0], modifiers=modifiers)
            )
    if not out:
        out.append(finding(CHECK, Severity.VERIFIED, "labels-none-needed"))
    return out
