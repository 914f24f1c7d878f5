"""`prbot action`: review the pull request of a GitHub Actions event and publish the result.

Flow: inputs and event (`bot.github_action.events`) → pull request, comparison and comments
through the API (`bot.sources.github`) → the two commits fetched with git (`bot.sources.git_fetch`),
else their files through the API; the head is never checked out or run → `bot.pipeline.run` → the
sticky comment (`bot.github_action.sticky`), the inline review (`bot.github_action.review`), job
summary, outputs, annotations and JSON report (`bot.output`).
Exit status: 0 or 1 by the verdict and `fail-on`; 2 when the review could not run at all. A run
that could not complete still updates the comment, saying that nothing was checked.
"""

from __future__ import annotations

import contextlib
import json
import os
import traceback
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from typing import TextIO

from bot import pipeline
from bot.catalog import Msg, msg
from bot.github_action import outputs
from bot.github_action import review as inline
from bot.github_action.console import Console
from bot.github_action.events import ActionError, Inputs, Skip, Trigger, classify, exit_code, load_event
from bot.github_action.privileges import become_runner_user
from bot.github_action.signals import stop_on_terminate
from bot.github_action.sticky import CREATED, READ_ONLY, UNCHANGED, UPDATED, publish, react
from bot.model.layout import read_by_review
from bot.model.owners import OwnersError, OwnersFile, find_codeowners
from bot.output import messages, report_json, summary
from bot.output.render import COMMENT_LIMIT, MARKER
from bot.report import EXIT_ERROR, Report
from bot.settings import Settings, SettingsError
from bot.sources.git_fetch import FetchedRepo, FetchError, fetch_pull
from bot.sources.github import ClientOptions, GitHubError, GitHubSource, PullInfo, connect
from bot.sources.registry import ENV_CREDENTIALS
from bot.sources.snapshot import Snapshot


@dataclass
class Outcome:
    report: Report | None = None
    failure: Msg | None = None
    skip: Msg | None = None
    base: str = ""
    head: str = ""
    notes: list[Msg] = field(default_factory=list)
    info: PullInfo | None = None  # the pull request as read: the inline review needs its diff
    ran: Report | None = None  # a review whose checks ran but whose result could not be published


def run_action(
    environ: MutableMapping[str, str] | None = None,
    *,
    options: ClientOptions | None = None,
    stream: TextIO | None = None,
) -> int:
    """Run once for the event described by the environment; returns the exit status."""
    env = os.environ if environ is None else environ
    console = Console(stream)
    if environ is None:  # this process is the action's: it may change its user
        changed = become_runner_user(env)
        if changed is not None:
            console.info(changed)
    try:
        with stop_on_terminate():
            return _run_action(env, options, console)
    except KeyboardInterrupt:  # SIGINT or SIGTERM: the run was cancelled; the comment stays as it was
        return _stopped(console, env, msg("action-interrupted"))


def _run_action(env: MutableMapping[str, str], options: ClientOptions | None, console: Console) -> int:
    try:
        inputs = Inputs.from_env(env)
        console.add_secrets(
            [inputs.token, *_registry_secrets(registry_env(env, inputs).get(ENV_CREDENTIALS, ""))]
        )
        event, payload = load_event(env)
    except ActionError as exc:
        return _stopped(console, env, exc.message)
    try:
        decision = classify(event, payload)
        if isinstance(decision, Skip):
            return _skipped(console, env, decision.reason)
        return _Run(env, inputs, console, options or ClientOptions()).execute(decision)
    except Exception as exc:  # a bug: one line (never a traceback that could quote a value) and exit 2
        return _stopped(console, env, _internal(exc))


def _internal(exc: BaseException) -> Msg:
    return msg("action-internal-error", **_crash(exc))


def _crash(exc: BaseException) -> dict[str, str]:
    """What stopped and where (`file.py:line`), never its message, which could quote a value."""
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    place = f"{where.filename.rsplit('/', 1)[-1]}:{where.lineno}" if where else "?"
    return {"error": type(exc).__name__, "where": place}


def _stopped(console: Console, env: Mapping[str, str], message: Msg) -> int:
    _fail_log(console, message)
    with contextlib.suppress(OSError):  # the error line above is what matters
        outputs.write_outputs(env.get("GITHUB_OUTPUT"), {"verdict": "error"})
    return EXIT_ERROR


def registry_env(env: Mapping[str, str], inputs: Inputs) -> dict[str, str]:
    """What the registry client reads: the step's environment, with the `registry-credentials`
    input as its only logins when given (over a `PRBOT_REGISTRY_CREDENTIALS` in the step's env)."""
    merged = dict(env)
    if inputs.registry_credentials:
        merged[ENV_CREDENTIALS] = inputs.registry_credentials
    return merged


def _registry_secrets(raw: str) -> list[str]:
    """What to cut from the log: the whole credentials table and each password in it."""
    try:
        table = json.loads(raw) if raw else {}
    except ValueError:
        return [raw]
    secrets = [raw]
    if isinstance(table, dict):
        secrets += [str(v.get("password", "")) for v in table.values() if isinstance(v, dict)]
    return secrets


def _fail_log(console: Console, message: Msg) -> None:
    console.command(f"::error title=prbot::{outputs.escape_data(console.redact(messages.text(message)))}")


def _os_detail(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _skipped(console: Console, env: Mapping[str, str], reason: Msg) -> int:
    console.info(reason)
    try:
        outputs.write_outputs(env.get("GITHUB_OUTPUT"), {"verdict": "skipped"})
    except OSError as exc:
        console.info(msg("action-output-failed", what="GITHUB_OUTPUT", detail=_os_detail(exc)))
    return 0


class _Run:
    def __init__(
        self, env: MutableMapping[str, str], inputs: Inputs, console: Console, options: ClientOptions
    ) -> None:
        self.env, self.inputs, self.console = env, inputs, console
        gh = connect(inputs.token, env.get("GITHUB_API_URL"), options)
        self.source = GitHubSource(gh, env["GITHUB_REPOSITORY"], options=options, log=console.info)

    def execute(self, trigger: Trigger) -> int:
        if trigger.comment_id is not None:
            self._react(trigger, "eyes")
        outcome = self._review(trigger)
        if outcome.skip is not None:
            return _skipped(self.console, self.env, outcome.skip)
        code, outcome = self._publish_safely(trigger, outcome)
        if trigger.comment_id is not None:
            self._react(trigger, "rocket" if outcome.report is not None else "confused")
        verdict = self._verdict(outcome)
        self.console.info(msg("action-exit", code=code, verdict=verdict, fail_on=self.inputs.fail_on))
        return code

    # ------------------------------------------------------------ review

    def _review(self, trigger: Trigger) -> Outcome:
        outcome = Outcome()
        try:
            pull = self.source.pull(trigger.number)
            if not trigger.manual and pull.state == "closed":
                return Outcome(skip=msg("action-skip-closed", number=trigger.number))
            if not trigger.manual and pull.draft:
                return Outcome(skip=msg("action-skip-draft", number=trigger.number))
            outcome.head = pull.head.sha[:12]
            info = self.source.load(trigger.number, pull=pull, own_marker=(MARKER, inline.REVIEW_MARKER))
            outcome.base, outcome.notes, outcome.info = info.base_sha[:12], list(info.notes), info
            with self._commits(info) as (base, head, changed):
                if changed is not info.changed_files:  # git listed every file: the API's cap is moot
                    outcome.notes = [n for n in outcome.notes if n.id != "action-files-capped"]
                settings = self._settings(base)
                pr = info.request._replace(team_members=self._teams(base))
                self.console.info(
                    msg(
                        "action-review-start",
                        number=trigger.number,
                        repo=self.source.repository,
                        base=outcome.base,
                        head=outcome.head,
                        files=len(changed),
                    )
                )
                resolve = pipeline.registries(self.console.info, registry_env(self.env, self.inputs))
                review = pipeline.ReviewInput(
                    base, head, changed, pr, settings, offline=self.inputs.offline, resolve=resolve
                )
                outcome.report = pipeline.run(review)
        except (GitHubError, ActionError, FetchError) as exc:
            outcome.failure = exc.message
        except Exception as exc:  # a bug must still leave a comment and exit 2
            outcome.failure = _internal(exc)
        if outcome.report is not None and self.source.failures:
            outcome.notes.append(msg("action-partial", reason=self.source.failures[0].message))
        return outcome

    @contextlib.contextmanager
    def _commits(self, info: PullInfo) -> Iterator[tuple[Snapshot, Snapshot, list[str]]]:
        """The base and head snapshots and the changed files: fetched with git, or, when that
        fails, read through the API (one request per file) with the API's list of changed files."""
        fetched = self._fetch(info)
        if fetched is None:
            yield self.source.snapshot(info.base_sha), self.source.snapshot(info.head_sha), info.changed_files
            return
        try:
            self.console.info(msg("action-git-fetched", blobs=fetched.data_blobs))
            changed = fetched.changed_files(info.base_sha, info.head_sha)
            yield fetched.snapshot(info.base_sha), fetched.snapshot(info.head_sha), changed
        finally:
            fetched.close()

    def _fetch(self, info: PullInfo) -> FetchedRepo | None:
        """The two commits fetched with git from `GITHUB_SERVER_URL` (never a default host: the
        token is for that host only); None, said in the log, when they cannot be."""
        try:
            server = self.env.get("GITHUB_SERVER_URL")
            if not server:
                raise FetchError(msg("action-git-no-server"))
            return fetch_pull(
                server,
                self.source.repository,
                info.base_sha,
                info.head_sha,
                self.inputs.token,
                temp=self.env.get("RUNNER_TEMP"),
                wanted=lambda path: path == self.inputs.config or read_by_review(path),
            )
        except FetchError as exc:
            self.console.info(msg("action-git-fallback", reason=exc.message))
            return None

    def _settings(self, base: Snapshot) -> Settings:
        path = self.inputs.config
        try:
            settings = pipeline.settings_at(base, path)
        except SettingsError as exc:
            raise ActionError(msg("action-settings-invalid", path=path, detail=exc.reason)) from None
        self.console.info(msg("action-settings-loaded" if settings else "action-settings-absent", path=path))
        return settings or Settings()

    def _teams(self, base: Snapshot) -> dict[str, tuple[str, ...]] | None:
        """Members of the teams named in CODEOWNERS at the base (for sign-offs by team members)."""
        owners = find_codeowners(base)
        if owners is None:
            return None
        try:
            handles = [handle.lstrip("@") for handle in OwnersFile(owners.text).teams()]
        except OwnersError:  # the codeowners check says what is wrong with the file
            return None
        if not handles:
            return {}
        known, unreadable = self.source.teams(handles)
        if unreadable:
            self.console.info(msg("action-teams-unreadable", teams=unreadable))
        return known

    # ------------------------------------------------------------ publish

    def _verdict(self, outcome: Outcome) -> str:
        return outcome.report.verdict if outcome.report is not None else "error"

    def _publish_safely(self, trigger: Trigger, outcome: Outcome) -> tuple[int, Outcome]:
        """Publish the outcome. Should that fail once the checks ran (a bug while rendering, writing
        the JSON report or posting), publish again as a review of this head without a verdict:
        the comment then says so, never an earlier verdict, and the JSON report says `error`."""
        try:
            return self._publish(trigger, outcome), outcome
        except Exception as exc:
            if outcome.report is None:
                raise  # the failure comment itself failed: `run_action` says so in the log
            reason = msg("output-failed", head=outcome.head, **_crash(exc))
            failed = replace(outcome, report=None, failure=reason, ran=outcome.report)
            return self._publish(trigger, failed), failed

    def _publish(self, trigger: Trigger, outcome: Outcome) -> int:
        lang, notes = self.inputs.lang, list(outcome.notes)
        if outcome.report is not None:
            report = outcome.report
            comment, full = summary.review_texts(report, lang, outcome.base, outcome.head)
            blocking, warnings = outputs.counts(report)
            self.console.info(
                msg("action-review-done", verdict=report.verdict, blocking=blocking, warnings=warnings)
            )
            # A review in which every check crashed reviewed nothing: that is exit 2, whatever fail-on says.
            code = exit_code(report.verdict, self.inputs.fail_on) if report.reviewed else EXIT_ERROR
        else:
            assert outcome.failure is not None
            _fail_log(self.console, outcome.failure)
            ran = outcome.ran is not None
            comment = full = summary.failure_comment(
                outcome.failure, lang, outcome.base, outcome.head, ran=ran
            )
            code = EXIT_ERROR
        cut = comment != full
        comment = summary.with_notes(comment, notes, lang, COMMENT_LIMIT)
        run_notes = self._comment(trigger, self.console.redact(comment))
        if cut:
            run_notes.append(msg("action-comment-cut"))
        if (
            outcome.report is not None
            and outcome.info is not None
            and self.inputs.comment
            and self.inputs.inline_review
        ):
            run_notes += self._inline(outcome.info, outcome.report)
        values = {"verdict": self._verdict(outcome)}
        if outcome.report is not None:
            for line in outputs.annotations(outcome.report):
                self.console.command(line)
            blocking, warnings = outputs.counts(outcome.report)
            values.update(blocking=str(blocking), warnings=str(warnings))
            values["report"] = self._write_report(report_json.json_bytes(outcome.report))
        elif outcome.ran is not None and outcome.failure is not None:
            values["report"] = self._write_report(report_json.failed_json(outcome.failure, outcome.ran))
        self._safely(
            "GITHUB_STEP_SUMMARY",
            lambda path: outputs.write_summary(
                path, self.console.redact(summary.summary_text(full, run_notes + notes, lang))
            ),
        )
        self._safely("GITHUB_OUTPUT", lambda path: outputs.write_outputs(path, values))
        return code

    def _comment(self, trigger: Trigger, body: str) -> list[Msg]:
        """Create or edit the sticky comment; notes for the job summary about what happened."""
        if not self.inputs.comment:
            return [msg("action-comment-disabled")]
        result = publish(self.source, trigger.number, body, self.inputs.bot_login)
        if result.foreign:
            self.console.info(msg("action-comment-foreign", logins=list(result.foreign)))
        if result.status in (CREATED, UPDATED, UNCHANGED):
            self.console.info(msg(f"action-comment-{result.status}", url=result.url or ""))
            if result.removed:
                self.console.info(msg("action-comment-duplicates", count=result.removed))
            if result.written_as:
                self.console.info(
                    msg("action-comment-login", login=result.written_as, configured=self.inputs.bot_login)
                )
            return []
        assert result.error is not None
        note = (
            msg("action-comment-read-only")
            if result.status == READ_ONLY
            else msg("action-comment-failed", reason=result.error.message)
        )
        self.console.info(note)
        return [note]

    def _inline(self, info: PullInfo, report: Report) -> list[Msg]:
        """The inline review of the blocking findings on changed lines, and of the changelog entry
        drafted for them; a note when it failed."""
        lang = self.inputs.lang
        wanted = inline.wanted_comments(report, info.touched, lang, info.request.url)
        result = inline.publish_review(
            self.source, info.pull, info.head_sha, wanted, lang, self.inputs.bot_login
        )
        for line in inline.log_lines(result, info.head_sha[:12]):
            self.console.info(line)
        note = inline.note(result)
        if note is None:
            return []
        self.console.info(note)
        return [note]

    def _write_report(self, data: bytes) -> str:
        path, shown = outputs.report_path(self.env)
        try:
            path.write_bytes(data + b"\n")
        except OSError as exc:
            self.console.info(msg("action-output-failed", what=str(path), detail=_os_detail(exc)))
            return ""
        self.console.info(msg("action-report-written", path=shown))
        return shown

    def _safely(self, variable: str, write: Callable[[str | None], None]) -> None:
        try:
            write(self.env.get(variable))
        except OSError as exc:
            self.console.info(msg("action-output-failed", what=variable, detail=_os_detail(exc)))

    def _react(self, trigger: Trigger, content: str) -> None:
        assert trigger.comment_id is not None
        error = react(self.source, trigger.number, trigger.comment_id, content)
        if error is not None:
            self.console.info(msg("action-reaction-failed", reaction=content, reason=error.message))
