"""`prbot fix`: review `base...head` as `prbot review` does, then make the fixes known for its
findings in the working tree (`bot.fix.plan` decides them, `bot.fix.apply` writes them).

Exit status: 0 when every blocking finding was fixed, 1 when some remain, 2 when the review could
not run or a file could not be written safely (then no file was changed).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TextIO

from bot.catalog import Msg, msg
from bot.checks import changes_view
from bot.findings import Finding
from bot.fix import apply
from bot.fix.apply import FixError
from bot.fix.arguments import arguments
from bot.fix.plan import Plan, left_message, needed_files, plan
from bot.output import messages

if TYPE_CHECKING:
    from bot.report import Report

EXIT_FIXED, EXIT_LEFT, EXIT_ERROR = 0, 1, 2


def main(argv: list[str] | None = None) -> int:
    """`prbot fix` on its own: parse `argv` (the arguments after `fix`) and run."""
    return run(arguments(argparse.ArgumentParser(prog="prbot fix")).parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Review, plan, check the working tree, then write (or, with --dry-run, print the diff)."""
    try:
        report = _review(args)
        fixes, head, diffs = _bounded(args, report, _deadline_s(args))
        _write(args, fixes, head, diffs)
    except FixError as exc:
        _say(exc.message, args.lang, sys.stderr, prefix="prbot: ")
        return EXIT_ERROR
    _report(args, fixes)
    return EXIT_LEFT if fixes.left else EXIT_FIXED


def _review(args: argparse.Namespace) -> Report:
    """The report of `prbot review` of the same refs; FixError when it could not run."""
    from bot.local import LocalRequest, run_local
    from bot.settings import SettingsError
    from bot.sources.git import GitError

    request = LocalRequest(
        repo=args.repo,
        base=args.base,
        head=args.head,
        pr_number=args.pr_number,
        pr_url=args.pr_url,
        offline=args.offline,
    )
    try:
        report = run_local(
            request, log=lambda message: _say(message, args.lang, sys.stderr, prefix="prbot: ")
        )[0]
    except (GitError, SettingsError) as exc:
        raise FixError(exc.message) from None
    if not report.reviewed:
        errors = sorted({str(f.params.get("error", f.message_id)) for f in report.findings})
        raise FixError(msg("fix-error-review", error=errors))
    return report


def _deadline_s(args: argparse.Namespace) -> float:
    """The review's deadline (`review-deadline-s`, as the repository's settings at the base set
    it): the time the fix has too, for its own reading, editing and diffing."""
    from bot.pipeline import settings_at
    from bot.settings import Settings, SettingsError
    from bot.sources.git import GitError, GitRepo

    try:
        repo, compared = GitRepo.open_compared(args.repo, args.base, args.head)
        try:
            settings = settings_at(repo.snapshot(compared.merge_base)) or Settings()
        finally:
            repo.close()
    except (GitError, SettingsError) as exc:
        raise FixError(exc.message) from None
    return settings.review_deadline_s


def _bounded(
    args: argparse.Namespace, report: Report, seconds: float
) -> tuple[Plan, dict[str, bytes | None], dict[str, str]]:
    """Read the head's files, plan the fixes and (--dry-run) diff them, all within `seconds`;
    past them, FixError and no file written. Each step takes linear time in the files' size (one
    parse to find every value to edit, one to confirm), so only a machine far too slow for the
    review itself gets here."""
    from bot.engine import ReviewDeadline, alarm

    try:
        with alarm(seconds):
            head, changelog, pr_url = _head_files(args, report.findings)
            changes = changes_view.as_json(report.changes)
            fixes = plan(report.findings, head, changelog, pr_url, changes, report.changelog_langs)
            diffs = {}
            if args.dry_run:
                diffs = {p: apply.unified_diff(p, head[p] or b"", d) for p, d in sorted(fixes.files.items())}
    except ReviewDeadline:
        raise FixError(msg("fix-error-deadline", seconds=seconds)) from None
    return fixes, head, diffs


def _head_files(
    args: argparse.Namespace, findings: list[Finding]
) -> tuple[dict[str, bytes | None], str, str | None]:
    """The head's bytes of the files the plan reads, the changelog's path, and this PR's URL (as
    the review derived it: `--pr-url`, else `--pr-number` in the reviewed repository)."""
    from bot.local import pr_url_for
    from bot.model.layout import detect
    from bot.sources.git import GitError, GitRepo
    from bot.sources.snapshot import Oversized

    try:
        repo = GitRepo.open(args.repo)
        try:
            snapshot = repo.snapshot(repo.resolve(args.head))
            changelog = detect(snapshot).changelog
            pr_url = pr_url_for(repo, args.base, args.head, args.pr_number, args.pr_url)
            paths = needed_files(findings, changelog, pr_url)
            head = {p: snapshot.read(p) for p in paths}
        finally:
            repo.close()
    except GitError as exc:
        raise FixError(exc.message) from None
    return {p: None if isinstance(d, Oversized) else d for p, d in head.items()}, changelog, pr_url


def _write(
    args: argparse.Namespace, fixes: Plan, head: dict[str, bytes | None], diffs: dict[str, str]
) -> None:
    """Check every file first, then print the diff (--dry-run) or write the files."""
    if not fixes.files:
        return
    root = apply.worktree_root(args.repo)
    _check_checked_out(args)
    apply.check_clean(root, {path: head[path] or b"" for path in fixes.files}, args.head)
    for path, data in sorted(fixes.files.items()):
        if args.dry_run:
            sys.stdout.write(diffs[path])
        else:
            apply.write(root, path, data)


def _check_checked_out(args: argparse.Namespace) -> None:
    """Refuse (FixError) when the working tree has another commit checked out than `--head`: the
    fixes are made to `--head`'s files, and the working tree's would differ from them anyway."""
    from bot.sources.git import GitError, GitRepo

    try:
        repo = GitRepo.open(args.repo)
        try:
            checked_out, head = repo.resolve("HEAD"), repo.resolve(args.head)
        finally:
            repo.close()
    except GitError as exc:
        raise FixError(exc.message) from None
    if checked_out != head:
        raise FixError(msg("fix-error-other-head", head=args.head, checked_out=checked_out[:12]))


def _report(args: argparse.Namespace, fixes: Plan) -> None:
    """One line per fix made (or that would be), one per blocking finding left."""
    done = "fix-would" if args.dry_run else "fix-done"
    for fix in fixes.fixes:
        _say(msg(done, fix=fix.message), args.lang, sys.stdout)
    for item in fixes.left:
        _say(left_message(item), args.lang, sys.stdout)
    if not fixes.fixes and not fixes.left:
        _say(msg("fix-nothing"), args.lang, sys.stdout)
    if args.dry_run:
        _say(msg("fix-dry-run"), args.lang, sys.stdout)


def _say(message: Msg, lang: str, stream: TextIO, prefix: str = "") -> None:
    """A message in English, Chinese or both (English first), one line each."""
    for line in messages.in_languages(message, lang):
        print(prefix + line, file=stream)
