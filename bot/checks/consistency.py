"""`consistency`: the config files are well-formed, and the PR text matches the published sets
and the settings the runs really have (its claims, `bot.checks.claims`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bot.checks import changes
from bot.checks.changes_view import RunChange
from bot.checks.claims import (
    MAX_CHARS,
    MAX_CLAIMS,
    Claims,
    SettingClaim,
    mentioned_concurrencies,
    parse,
    same_value,
    setting_name,
)
from bot.checks.context import CheckContext
from bot.diff import KeyChange, Run
from bot.findings import Finding, Severity, finding, from_problem
from bot.model import schema

CHECK = "consistency"
_SHOWN = 6  # concurrencies or settings a claim warning lists; the rest are counted
_VALUE_SHOWN = 80  # characters of a value a warning quotes

# Setting name → (concurrency, value) of every head run that sets it.
HeadSettings = dict[str, list[tuple[int, Any]]]


def check(ctx: CheckContext) -> list[Finding]:
    diff = ctx.diff
    out = [from_problem(CHECK, Severity.BLOCKING, p) for p in diff.problems]
    out += [from_problem(CHECK, Severity.WARNING, p) for p in diff.notices]
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
    claimed, found = _claims(ctx)
    out += found
    if not any(f.severity in (Severity.BLOCKING, Severity.WARNING) for f in out):
        out.append(
            finding(
                CHECK,
                Severity.VERIFIED,
                "consistency-ok",
                keys=len(diff.keys),
                mentioned=mentioned,
                claims=claimed,
            )
        )
    return out


def _claims(ctx: CheckContext) -> tuple[int, list[Finding]]:
    """How many claims of the PR text were checked, and the findings about them."""
    head = _head_settings(ctx)
    texts, places = _texts(ctx)
    claims = parse(texts, lambda name: setting_name(name) in head)
    concurrencies = {run.concurrency for change in ctx.live_keys() for run in _head_runs(change)}
    out = [
        found
        for claim in claims.settings
        if (found := _setting(claim, head, concurrencies, places[claim.part])) is not None
    ]
    out += _as_before(ctx, claims)
    if claims.cut or claims.skipped:
        out.append(_unchecked(claims))
    return claims.count, out


def _texts(ctx: CheckContext) -> tuple[list[str], list[dict[str, Any]]]:
    """The texts claims are read from: the title, the body and each appended changelog entry's
    descriptions; and where each is (a changelog entry's description line)."""
    texts = [str(ctx.pr.title or ""), str(ctx.pr.body or "")]
    places: list[dict[str, Any]] = [{}, {}]
    log = ctx.diff.changelog
    for entry in log.appended if log else []:
        described = entry.get("description")
        lines = described if isinstance(described, list) else [described]
        texts.append("\n".join(line for line in lines if isinstance(line, str)))
        places.append({"file": ctx.diff.layout.changelog, "line": entry.field_line("description")})
    return texts, places


def _head_runs(change: KeyChange) -> list[Run]:
    """The runs of a key at the head."""
    return change.head_runs


def _sections(data: Any) -> Iterable[dict[str, Any]]:
    """A variant's `benchmark.env`, and each role's `env` and `args`."""
    if not isinstance(data, dict):
        return
    bench = data.get("benchmark")
    if isinstance(bench, dict) and isinstance(bench.get("env"), dict):
        yield bench["env"]
    roles = data.get("roles")
    for role in roles.values() if isinstance(roles, dict) else ():
        for part in ("env", "args"):
            if isinstance(role, dict) and isinstance(role.get(part), dict):
                yield role[part]


def _head_settings(ctx: CheckContext) -> HeadSettings:
    """The env and serving-arg values of every head run of the changed keys, each variant read once."""
    variants: dict[tuple[Any, str], tuple[Any, set[int]]] = {}
    for change in ctx.live_keys():
        for run in _head_runs(change):
            if run.variant is not None:
                ident = (run.point.recipe, run.variant.name)
                variants.setdefault(ident, (run.variant, set()))[1].add(run.concurrency)
    head: HeadSettings = {}
    for variant, concurrencies in variants.values():
        for section in _sections(variant.data):
            for name, value in section.items():
                if not isinstance(value, dict):
                    head.setdefault(setting_name(str(name)), []).extend((c, value) for c in concurrencies)
    return head


def _shown(value: Any) -> str | None:
    if value is None:
        return None
    text = schema.text(value)
    return text if len(text) <= _VALUE_SHOWN else text[: _VALUE_SHOWN - 1] + "…"


def _setting(
    claim: SettingClaim, head: HeadSettings, concurrencies: set[int], place: dict[str, Any]
) -> Finding | None:
    """A warning when no head run in the claim's scope has the value it states; nothing when it
    holds or when the scope names no head run (that is the mentioned-not-published warning)."""
    if claim.scope and not concurrencies & set(claim.scope):
        return None
    runs = [(c, v) for c, v in head.get(setting_name(claim.name), []) if not claim.scope or c in claim.scope]
    if any(same_value(claim.value, value) for _, value in runs):
        return None
    have: dict[int, set[str]] = {}
    for concurrency, value in runs:
        have.setdefault(concurrency, set()).add(_shown(value) or "")
    listed = [[c, sorted(values)] for c, values in sorted(have.items())]
    return finding(
        CHECK,
        Severity.WARNING,
        "consistency-claim-setting",
        **place,
        changelog="file" in place,
        claim=claim.quote,
        scope=list(claim.scope),
        have=listed[:_SHOWN],
        more=max(0, len(listed) - _SHOWN),
    )


def _as_before(ctx: CheckContext, claims: Claims) -> list[Finding]:
    """A warning for each concurrency said to be as before whose runs change settings of their
    own (beyond those changed at every run) that the text does not name."""
    said = sorted({claim.concurrency for claim in claims.as_before})
    if not said:
        return []
    out = []
    for key, view in changes.plan(ctx).items():
        for concurrency in said:
            unexplained = _unexplained(view.runs, concurrency, claims)
            if unexplained:
                out.append(
                    finding(
                        CHECK,
                        Severity.WARNING,
                        "consistency-claim-as-before",
                        config_key=key,
                        concurrency=concurrency,
                        settings=unexplained[:_SHOWN],
                        more=max(0, len(unexplained) - _SHOWN),
                    )
                )
    return out


def _unexplained(runs: Sequence[RunChange], concurrency: int, claims: Claims) -> list[list[Any]]:
    """[path, base, head] of the own changes of the runs at `concurrency` that the text does not name."""
    found: dict[str, list[Any]] = {}
    for run in runs:
        if run.concurrency != concurrency or run.status != "changed":
            continue
        for setting in run.settings:
            path = setting.path
            if not claims.names(path.rsplit(".", 1)[-1]):
                found.setdefault(path, [path, _shown(setting.base), _shown(setting.head)])
    return [found[path] for path in sorted(found)]


def _unchecked(claims: Claims) -> Finding:
    """What of the PR text was not read for claims, or which claims were not checked."""
    return finding(
        CHECK,
        Severity.UNVERIFIED,
        "consistency-claims-unchecked",
        cut=claims.cut,
        chars=MAX_CHARS,
        skipped=claims.skipped,
        limit=MAX_CLAIMS,
    )
