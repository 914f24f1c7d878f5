"""The review engine: two snapshots and the PR in, a Report out. No network except the registry."""

from __future__ import annotations

from collections.abc import Callable

from bot.checks import changelog, codeowners, consistency, digest, dram, labels, recipe_selection, sweep_plan
from bot.checks.context import CheckContext
from bot.diff import ReviewDiff, compute, image_uses
from bot.findings import CHECK_IDS, Finding, Severity, finding
from bot.pullrequest import PullRequest
from bot.report import Report
from bot.settings import Settings
from bot.sources.snapshot import Snapshot

CHECKS: tuple[tuple[str, Callable[[CheckContext], list[Finding]]], ...] = (
    ("recipe-selection", recipe_selection.check),
    ("dram", dram.check),
    ("changelog", changelog.check),
    ("labels", labels.check),
    ("codeowners", codeowners.check),
    ("consistency", consistency.check),
    ("sweep-plan", sweep_plan.check),
)


# The checks that have nothing to check when neither ref has a master config (the changelog's
# own rules, the labels, the owners and the changed recipes' own problems still apply).
NEED_MASTERS = ("dram", "consistency", "sweep-plan")


def _crashed(check_id: str, exc: BaseException, message_id: str = "check-crashed") -> Finding:
    """A check that could not finish. On the PR's content that blocks (DESIGN.md §2: a review
    fails closed, a crash never turns into a clean verdict); a review that could not start at all
    is `unverified` in every check, and its verdict is `error`."""
    import traceback  # only ever needed when something went wrong

    where = traceback.extract_tb(exc.__traceback__)[-1]
    return finding(
        check_id,
        Severity.BLOCKING if message_id == "check-crashed" else Severity.UNVERIFIED,
        message_id,
        error=type(exc).__name__,
        where=f"{where.filename.rsplit('/', 1)[-1]}:{where.lineno}",
    )


def _run_check(
    check_id: str, run: Callable[[CheckContext], list[Finding]], ctx: CheckContext
) -> list[Finding]:
    """A check that fails unexpectedly becomes a blocking finding with the reason; the others still run."""
    try:
        return run(ctx)
    except Exception as exc:
        return [_crashed(check_id, exc)]


def _digest(diff: ReviewDiff, offline: bool) -> list[Finding]:
    """The only check that needs the network: resolve the tags, then compare (pure)."""
    uses = image_uses(diff)
    if offline:
        return digest.check(uses, None, "--offline")
    from bot.sources.registry import RegistryClient

    with RegistryClient() as registry:
        return digest.check(uses, registry.resolve_many(digest.references(uses)))


def review(
    base: Snapshot,
    head: Snapshot,
    changed_files: list[str],
    pr: PullRequest,
    settings: Settings | None = None,
    *,
    offline: bool = False,
) -> Report:
    """Run every check on the difference between base and head (`offline`: no registry lookups)."""
    settings = settings or Settings()
    try:
        diff = compute(base, head, changed_files)
    except Exception as exc:
        if type(exc).__module__.startswith("bot.sources."):
            raise  # a file could not be fetched: the caller says which, and the review did not run
        # A bug while working out the diff: no check can run, each says so, and the exit status is 2.
        return Report([_crashed(check_id, exc, "review-crashed") for check_id in CHECK_IDS])
    ctx = CheckContext(diff, pr, settings)
    findings: list[Finding] = []
    for check_id, run in CHECKS:
        if diff.no_masters and check_id in NEED_MASTERS:
            findings += ctx.no_masters(check_id)
            continue
        findings += _run_check(check_id, run, ctx)
    if diff.no_masters:
        findings += ctx.no_masters("digest")
    else:
        findings += _run_check("digest", lambda c: c.unreadable("digest") + _digest(c.diff, offline), ctx)
    published = {c.key: {"base": c.published_base, "head": c.published_head} for c in diff.keys.values()}
    aspects = {c.key: c.aspects for c in diff.keys.values()}
    try:
        plan = sweep_plan.plan(ctx)
    except Exception:  # the sweep-plan check has said `check-crashed` already
        plan = {}
    return Report(findings, published, plan, aspects)
