"""What a run leaves besides the comment: job summary, step outputs, annotations and the JSON report.

Also the comment shown when the review could not complete, which says that nothing was checked.
Workflow-command escaping follows GitHub's rules: in the message `%`, CR and LF are escaped; in
properties also `:` and `,`.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path

from bot import __version__
from bot.action_text import Msg
from bot.findings import CHECK_IDS, Severity
from bot.render import COMMENT, LANG_CHOICES, MARKER, Target, render_comment, render_review
from bot.report import Report

#: GitHub accepts at most 1 MiB (of UTF-8) of job summary per step; stay clearly below it.
SUMMARY_LIMIT = 1_000_000
SUMMARY = Target("summary", SUMMARY_LIMIT, room=16_384, in_bytes=True)
#: Annotations beyond this many are not shown by GitHub anyway.
MAX_ANNOTATIONS = 50
REPORT_NAME = "prbot-report.json"


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotations(report: Report) -> list[str]:
    """`::error` lines for blocking findings and `::warning` lines for warnings, with file and line."""
    lines: list[str] = []
    for f in report.findings:
        if f.severity not in (Severity.BLOCKING, Severity.WARNING):
            continue
        props = []
        if f.file:
            props.append(f"file={escape_property(f.file)}")
            if f.line:
                props.append(f"line={int(f.line)}")
        props.append(f"title={escape_property(f'prbot {f.check}')}")
        kind = "error" if f.severity is Severity.BLOCKING else "warning"
        lines.append(f"::{kind} {','.join(props)}::{escape_data(f.message_en)}")
    return lines[:MAX_ANNOTATIONS]


def counts(report: Report) -> tuple[int, int]:
    return len(report.of(Severity.BLOCKING)), len(report.of(Severity.WARNING))


def full_review(report: Report, lang: str, base: str, head: str) -> str:
    """The review for the job summary, cut only at the summary's own (much larger) limit."""
    return render_comment(report, lang=lang, base=base, head=head, target=SUMMARY)


def review_texts(report: Report, lang: str, base: str, head: str) -> tuple[str, str]:
    """The comment and the job summary of one review. A cut comment points to the job summary
    only when the summary holds the whole review; else to the JSON report."""
    full = render_review(report, lang=lang, base=base, head=head, target=SUMMARY)
    rest = "report" if full.cut else "summary"
    return render_comment(report, lang=lang, base=base, head=head, target=COMMENT, rest=rest), full.text


def _notes_block(notes: Iterable[Msg], lang: str) -> str:
    lines = [f"> ⚠️ {note.render(code, markdown=True)}" for note in notes for code in LANG_CHOICES[lang]]
    return "\n>\n".join(lines) + "\n\n" if lines else ""


def _fitting_notes(notes: list[Msg], lang: str, room: int, target: Target) -> str:
    """The notes block with as many of the notes as fit in `room` (the review keeps room for them)."""
    kept = list(notes)
    while kept and target.size(_notes_block(kept, lang)) > room:
        kept.pop()
    return _notes_block(kept, lang)


def with_notes(comment: str, notes: list[Msg], lang: str, limit: int) -> str:
    """The comment with notes placed right under its marker line, within `limit` characters."""
    if not notes:
        return comment
    block = _fitting_notes(notes, lang, limit - len(comment), COMMENT)
    marker, _, rest = comment.partition("\n")
    if marker != MARKER:
        return block + comment
    return f"{MARKER}\n{block}{rest}"


def summary_text(body: str, notes: list[Msg], lang: str) -> str:
    """The job summary: notes about this run first, then the review as in the comment."""
    return _fitting_notes(notes, lang, SUMMARY.limit - SUMMARY.size(body), SUMMARY) + body


def failure_comment(reason: Msg, lang: str, base: str = "", head: str = "") -> str:
    """The comment of a review that could not run: why, and that none of the checks ran."""
    from bot.messages import render as t

    def ui(code: str, message_id: str, **params: object) -> str:
        return t(message_id, code, params, markdown=True)

    langs = LANG_CHOICES[lang]
    parts = [MARKER]
    for code in langs:
        if code == "zh" and len(langs) > 1:
            parts.append("\n<details><summary>中文</summary>\n")
        parts += [
            f"### {ui(code, 'action-failed-title')}",
            "",
            Msg("action-failed-reason", {"reason": reason}).render(code, markdown=True),
            "",
            f"#### {ui(code, 'ui-checked')}",
            f"- {ui(code, 'ui-nothing')}",
            "",
            f"#### {ui(code, 'ui-not-checked')}",
            *(f"- **{check}** — {ui(code, 'action-failed-check')}" for check in CHECK_IDS),
            "",
            ui(code, "action-failed-rerun"),
            "",
            f"<sub>{ui(code, 'ui-footer', version=__version__, base=base or '?', head=head or '?')}</sub>",
        ]
        if code == "zh" and len(langs) > 1:
            parts.append("\n</details>")
    return "\n".join(parts) + "\n"


def write_outputs(path: str | None, values: Mapping[str, str]) -> None:
    """Append step outputs to `$GITHUB_OUTPUT` (heredoc form, safe for any value)."""
    if not path:
        return
    with open(path, "a", encoding="utf-8") as handle:
        for name, value in values.items():
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def write_summary(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")


def _writable_dir(path: str | None) -> bool:
    return bool(path) and os.path.isdir(path) and os.access(path, os.W_OK)  # type: ignore[arg-type]


def report_path(env: Mapping[str, str]) -> tuple[Path, str]:
    """Where to write the JSON report, and the path to give as the `report` output.

    `$RUNNER_TEMP` when it exists here (a job run on the runner itself). A Docker action does not
    see the runner's temp folder, so there the report goes to the workspace, which later steps see
    as their working directory: the output is then a path relative to it.
    """
    temp = env.get("RUNNER_TEMP")
    if _writable_dir(temp) and not str(temp).startswith("/github/"):
        path = Path(str(temp)) / REPORT_NAME
        return path, str(path)
    workspace = env.get("GITHUB_WORKSPACE")
    if _writable_dir(workspace):
        path = Path(str(workspace)) / REPORT_NAME
        same = Path.cwd().resolve() == Path(str(workspace)).resolve()
        return path, REPORT_NAME if same else str(path)
    path = Path(tempfile.mkdtemp(prefix="prbot-")) / REPORT_NAME
    return path, str(path)
