"""The review engine: two snapshots and the PR in, a Report out. No network except the registry."""

from __future__ import annotations

import dataclasses
import importlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from bot.checks import changes, sweep_plan
from bot.checks.context import CheckContext, Resolve
from bot.diff import ReviewDiff, compute
from bot.findings import CHECK_IDS, CHECKS, Check, Finding, Need, Severity, finding
from bot.model import prfiles
from bot.model.changelog import LastLine
from bot.pullrequest import PullRequest
from bot.report import Report
from bot.settings import Settings
from bot.sources.snapshot import Snapshot, SourceError


def function(check: Check) -> Callable[[CheckContext], list[Finding]]:
    """The function a registry entry names (`module:function` in `bot.checks`), imported now."""
    module, _, name = check.function.partition(":")
    return getattr(importlib.import_module(f"bot.checks.{module}"), name)


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


def _run_check(check: Check, ctx: CheckContext, base: Snapshot, head: Snapshot) -> list[Finding]:
    """A check that fails unexpectedly becomes a blocking finding with the reason; the others still run."""
    try:
        if Need.FILES in check.needs and ctx.files is None:
            files = prfiles.read(base, head, ctx.diff.changed_files, ctx.diff.layout.root, ctx.pr.number)
            ctx = dataclasses.replace(ctx, files=files)
        return function(check)(ctx)
    except SourceError:
        raise  # a file could not be fetched: the caller says which, and the review did not run
    except Exception as exc:
        return [_crashed(check.id, exc)]


class ReviewDeadline(BaseException):
    """The review's time ran out. A BaseException, so that no check's `except Exception` keeps it."""


@contextmanager
def alarm(seconds: float) -> Iterator[None]:
    """Raise ReviewDeadline wherever the work is once `seconds` have passed (the review's checks,
    `prbot fix`'s edits). Signals reach only the main thread; elsewhere (a caller's worker thread)
    the review checks its deadline between checks."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(_signum: int, _frame: object) -> None:
        raise ReviewDeadline

    previous = signal.signal(signal.SIGALRM, ring)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class _Progress:
    """What the review has found so far, kept for the case that its deadline stops it."""

    seconds: int
    findings: list[Finding] = field(default_factory=list)
    finished: set[str] = field(default_factory=set)
    diff: ReviewDiff | None = None

    def add(self, check_id: str, found: list[Finding]) -> None:
        self.findings += found
        self.finished.add(check_id)

    def late(self) -> Report:
        """The findings so far, and a blocking "did not finish" for every check that had not."""
        late = [
            finding(check_id, Severity.BLOCKING, "check-deadline", seconds=self.seconds)
            for check_id in CHECK_IDS
            if check_id not in self.finished
        ]
        if self.diff is None:
            return Report(self.findings + late)
        return Report(
            self.findings + late,
            *_tables(self.diff),
            changelog_end=_changelog_end(self.diff),
            changelog_langs=self.diff.changelog_langs,
        )


def _tables(diff: ReviewDiff, ctx: CheckContext | None = None) -> tuple[dict, dict, dict, dict]:
    """The report's published sets, sweep plan, changed aspects and `changes` per key; the sweep
    plan and `changes` only for a review whose checks ran (`ctx`), and empty where working them
    out crashed (their checks have said `check-crashed` already)."""
    published = {c.key: {"base": c.published_base, "head": c.published_head} for c in diff.keys.values()}
    aspects = {c.key: c.aspects for c in diff.keys.values()}
    plans = []
    for make in (sweep_plan.plan, changes.plan):
        try:
            plans.append(make(ctx) if ctx is not None else {})
        except Exception:
            plans.append({})
    return published, plans[0], aspects, plans[1]


def _changelog_end(diff: ReviewDiff) -> LastLine | None:
    """The head changelog's last line, when the PR changed the changelog and an entry can follow it."""
    return diff.changelog.last_line(diff.layout.changelog) if diff.changelog is not None else None


def review(
    base: Snapshot,
    head: Snapshot,
    changed_files: list[str],
    pr: PullRequest,
    settings: Settings | None = None,
    *,
    resolve: Resolve | None = None,
    offline_reason: str = "--offline",
) -> Report:
    """Run every check on the difference between base and head; `resolve` answers the digest
    check's tag lookups (None: offline, the pins are reported as not checked, for
    `offline_reason`: "--offline", or "demo" for the bundled demo). All of it
    within the settings' deadline (`review-deadline-s`): what has not finished by then blocks."""
    settings = settings or Settings()
    progress = _Progress(settings.review_deadline_s)
    try:
        with alarm(settings.review_deadline_s):
            return _review(base, head, changed_files, pr, settings, (resolve, offline_reason), progress)
    except ReviewDeadline:
        return progress.late()


def _review(
    base: Snapshot,
    head: Snapshot,
    changed_files: list[str],
    pr: PullRequest,
    settings: Settings,
    registry: tuple[Resolve | None, str],
    progress: _Progress,
) -> Report:
    deadline = time.monotonic() + settings.review_deadline_s  # where no alarm can ring
    try:
        diff = compute(base, head, changed_files, settings.master_configs)
    except SourceError:
        raise  # a file could not be fetched: the caller says which, and the review did not run
    except Exception as exc:
        # A bug while working out the diff: no check can run, each says so, and the exit status is 2.
        return Report([_crashed(check_id, exc, "review-crashed") for check_id in CHECK_IDS])
    progress.diff = diff
    resolve, offline_reason = registry
    ctx = CheckContext(diff, pr, settings, resolve=resolve, offline_reason=offline_reason)
    # The checks that ask the network (the registries) run last.
    for check in sorted(CHECKS, key=lambda c: Need.REGISTRY in c.needs):
        if time.monotonic() > deadline:
            raise ReviewDeadline
        if diff.no_masters and Need.MASTERS in check.needs:
            progress.add(check.id, ctx.no_masters(check.id))
        else:
            progress.add(check.id, _run_check(check, ctx, base, head))
    return Report(
        progress.findings,
        *_tables(diff, ctx),
        changelog_end=_changelog_end(diff),
        changelog_langs=diff.changelog_langs,
    )
