"""The `prbot` command line: `review` two git refs, `fix` what the review knows how to fix, or run
the bundled `demo`."""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from bot import __version__
from bot.fix import arguments as fix_arguments

if TYPE_CHECKING:
    from bot.catalog import Msg
    from bot.local import LocalRequest
    from bot.report import Report

EXIT_ERROR = 2
COMMANDS = ("review", "demo", "fix", "action")


class ArgumentsError(Exception):
    """A command line argparse rejected: the `prog` whose usage applies (`prbot review`) and
    argparse's own words."""

    def __init__(self, prog: str, detail: str) -> None:
        super().__init__(detail)
        self.command = prog.removeprefix("prbot").strip()  # the subcommand, "" for prbot itself
        self.detail = detail


class _Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are raised, to be said as one line per language."""

    def error(self, message: str) -> NoReturn:
        raise ArgumentsError(self.prog, message)


#: argparse's error texts (Python 3.11 to 3.13) → the catalog message and the parts it names
#: (patterns compiled only when an error is read, by `re`'s own cache).
_ARGPARSE = (
    (r"unrecognized arguments: (?P<names>.+)", "cli-unknown-arguments"),
    (r"the following arguments are required: (?P<names>.+)", "cli-missing-arguments"),
    (
        r"argument (?P<name>\S+): invalid choice: (?P<value>.+?) \(choose from (?P<choices>.+)\)",
        "cli-bad-choice",
    ),
    (r"argument (?P<name>\S+): invalid (?P<type>\w+) value: (?P<value>.+)", "cli-bad-value"),
    (r"argument (?P<name>\S+): expected one argument", "cli-needs-value"),
)


def _usage_error(exc: ArgumentsError) -> Msg:
    """What argparse rejected, as a catalog message naming the subcommand whose `--help` says more."""
    from bot.catalog import msg

    for pattern, message_id in _ARGPARSE:
        found = re.fullmatch(pattern, exc.detail)
        if found:
            parts = {k: v.strip("'") for k, v in found.groupdict().items()}
            if "names" in parts:
                parts["names"] = [name.strip("'") for name in re.split(r",? ", found["names"]) if name]
            if "choices" in parts:
                parts["choices"] = [c.strip(" '") for c in found["choices"].split(",")]
            if parts.get("names") == ["command"]:
                message_id, parts = "cli-missing-command", {"choices": list(COMMANDS)}
            if parts.get("name") == "command":
                message_id, parts = "cli-bad-command", {"choices": parts["choices"], "value": parts["value"]}
            return msg(message_id, command=exc.command, **parts)
    return msg("cli-bad-arguments", command=exc.command, detail=exc.detail)


def _lang_of(argv: list[str]) -> str:
    """The `--lang` of a command line argparse could not parse (`both` when none is readable)."""
    for index, arg in enumerate(argv):
        value = arg.partition("=")[2] if arg.startswith("--lang=") else None
        if arg == "--lang" and index + 1 < len(argv):
            value = argv[index + 1]
        if value in ("both", "en", "zh"):
            return value
    return "both"


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """The command line parsed; ArgumentsError naming the subcommand for anything argparse rejects
    (an unknown flag after `review` is reported for `prbot review`, not for `prbot`)."""
    args, extra = _parser().parse_known_args(argv)
    if extra:
        prog = f"prbot {args.command}" if getattr(args, "command", None) else "prbot"
        raise ArgumentsError(prog, f"unrecognized arguments: {' '.join(extra)}")
    return args


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="prbot", description="Deterministic review of benchmark-config PRs.")
    parser.add_argument("--version", action="version", version=f"prbot {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    review = sub.add_parser("review", help="review the difference between two git refs of a local repository")
    review.add_argument("--repo", default=".", help="path of the git repository (default: .)")
    review.add_argument("--base", required=True, help="base ref (the branch the PR targets)")
    review.add_argument("--head", default="HEAD", help="head ref (default: HEAD)")
    _common(review)
    demo = sub.add_parser("demo", help="review the bundled example PR (it never contacts a registry)")
    _output(demo)
    fix_arguments.add_parser(sub)
    sub.add_parser("action", help="run as a GitHub Action (reads the standard GITHUB_* environment)")
    return parser


def _output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown")
    parser.add_argument("--lang", choices=("both", "en", "zh"), default="both")
    parser.add_argument(
        "--config",
        help="settings file (YAML) to use instead of the repository's .github/prbot.yml at the base ref",
    )


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--title", default="", help="PR title (for the consistency check)")
    parser.add_argument("--body-file", help="file with the PR description")
    parser.add_argument("--label", action="append", default=[], help="a PR label; repeat for several")
    parser.add_argument("--pr-number", type=int, help="PR number (pr-link must then be this PR's URL)")
    parser.add_argument("--pr-url", help="PR URL, when --pr-number cannot derive it from the origin remote")
    parser.add_argument("--offline", action="store_true", help="do not contact container registries")
    _output(parser)


class UsageError(Exception):
    """A problem with what the user asked for (a bad ref, an unreadable file): printed as one line
    per language, exit status 2."""

    def __init__(self, message: Msg) -> None:
        super().__init__(message.id)
        self.message = message


def _say(message: Msg, lang: str = "both") -> None:
    """One line on stderr per language of `--lang`, each starting `prbot:`."""
    from bot.output.messages import in_languages

    for line in in_languages(message, lang):
        print(f"prbot: {line}", file=sys.stderr)


def run() -> None:
    """The `prbot` command (and `python -m bot`): `main`, then, after a local review, an immediate
    exit. Python would otherwise free a large review's heap object by object on the way out (50 to
    80 ms of #1992's CLI time) for a process that is about to end anyway. The action exits the
    usual way, so that its libraries' exit handlers run."""
    argv = sys.argv[1:]
    code = main(argv)
    if argv[:1] in (["review"], ["demo"], ["fix"]):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # a closed pipe (`prbot review | head`)
                stream.flush()
        os._exit(code)
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parse(argv)
    except ArgumentsError as exc:
        _say(_usage_error(exc), _lang_of(sys.argv[1:] if argv is None else argv))
        return EXIT_ERROR
    # One review is short-lived and builds acyclic data (parsed YAML, findings), which the cyclic
    # garbage collector would only walk again and again: about 5% of a large review.
    gc.disable()
    try:
        if args.command == "demo":
            return _demo(args)
        if args.command == "fix":
            from bot.fix.command import run as run_fix

            return run_fix(args)
        if args.command == "action":
            from bot.github_action.run import run_action

            return run_action()
        return _review(args)
    except UsageError as exc:
        _say(exc.message, getattr(args, "lang", "both"))
        return EXIT_ERROR
    except KeyboardInterrupt:
        from bot.catalog import msg

        _say(msg("cli-interrupted"), getattr(args, "lang", "both"))
        return EXIT_ERROR
    finally:
        gc.enable()


def _review(args: argparse.Namespace) -> int:
    from bot.catalog import msg
    from bot.local import LocalRequest

    body = ""
    if args.body_file:
        try:
            body = Path(args.body_file).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise UsageError(msg("cli-body-file", reason=exc.strerror or "")) from None
    request = LocalRequest(
        repo=args.repo,
        base=args.base,
        head=args.head,
        title=args.title,
        body=body,
        labels=tuple(args.label),
        pr_number=args.pr_number,
        pr_url=args.pr_url,
        offline=args.offline,
        config=args.config,
    )
    return _run_review(args, request)


def _demo(args: argparse.Namespace) -> int:
    import tempfile

    from bot.example import build_example

    with tempfile.TemporaryDirectory(prefix="prbot-demo-") as folder:
        example = build_example(Path(folder) / "inferencex")
        request = example.request(config=args.config, offline_reason="demo")
        return _run_review(args, request)


def _run_review(args: argparse.Namespace, request: LocalRequest) -> int:
    """Review and print; a bad ref or an unreadable settings file is a one-line error, exit 2."""
    from bot.local import run_local
    from bot.settings import SettingsError
    from bot.sources.git import GitError

    try:
        return _emit(args, *run_local(request, log=lambda message: _say(message, args.lang)))
    except (GitError, SettingsError) as exc:
        raise UsageError(exc.message) from None


def _emit(args: argparse.Namespace, report: Report, labels: tuple[str, str], seconds: float) -> int:
    """Print the comment or the JSON report, and a one-line summary with the time taken. Both are
    made whole before anything is printed: should making them fail (a bug), what is printed says
    that this head has no verdict (`_unshown`), never a part of a review."""
    from bot.catalog import msg

    started = time.perf_counter()
    try:
        output = _made(args, report, labels)
    except Exception as exc:
        return _unshown(args, report, labels, exc)
    _write(output)
    elapsed = f"{seconds + time.perf_counter() - started:.2f}"
    done = "cli-done" if report.reviewed else "cli-nothing-reviewed"
    _say(msg(done, verdict=report.verdict, counts=_counts(report), seconds=elapsed), args.lang)
    return report.exit_code


def _made(args: argparse.Namespace, report: Report, labels: tuple[str, str]) -> bytes | str:
    from bot.output.render import render_comment
    from bot.output.report_json import json_bytes

    if args.format == "json":
        return json_bytes(report) + b"\n"
    return render_comment(report, lang=args.lang, base=labels[0], head=labels[1])


def _write(output: bytes | str) -> None:
    if isinstance(output, bytes):
        sys.stdout.flush()
        sys.stdout.buffer.write(output)
    else:
        sys.stdout.write(output)


def _unshown(args: argparse.Namespace, report: Report, labels: tuple[str, str], exc: Exception) -> int:
    """The checks ran but their result could not be shown: the JSON report (verdict `error`, with
    the findings when they can still be written) or the comment saying so, one line per language
    on stderr, exit status 2; never a traceback."""
    import traceback

    from bot.catalog import msg
    from bot.output.report_json import failed_json
    from bot.output.summary import failure_comment

    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    place = f"{where.filename.rsplit('/', 1)[-1]}:{where.lineno}" if where else "?"
    reason = msg("output-failed", head=labels[1], error=type(exc).__name__, where=place)
    if args.format == "json":
        _write(failed_json(reason, report) + b"\n")
    else:
        _write(failure_comment(reason, args.lang, labels[0], labels[1], ran=True))
    _say(reason, args.lang)
    return EXIT_ERROR


def _counts(report: Report) -> list[Msg]:
    """The findings by the comment's sections, what needs action first
    (`2 warnings, 6 checks passed, 3 not checked, 5 notes`): the same counts the comment shows."""
    from bot.catalog import msg
    from bot.output.render import section_counts

    counts = section_counts(report)
    order = ("blocking", "warning", "verified", "unverified", "info")
    found = [msg(f"cli-count-{name}", count=counts[name]) for name in order if counts[name]]
    return found or [msg("cli-count-none")]
