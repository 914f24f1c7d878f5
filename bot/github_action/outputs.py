"""What an action run leaves besides the comment: step outputs, annotations, the job summary file
and the JSON report file. Workflow-command escaping follows GitHub's rules: in the message `%`, CR
and LF are escaped; in properties also `:` and `,`."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path

from bot.findings import Severity
from bot.output.messages import en
from bot.report import Report

#: GitHub shows at most ten annotations of each kind per step.
MAX_ANNOTATIONS = 10
REPORT_NAME = "prbot-report.json"


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotations(report: Report) -> list[str]:
    """`::error` lines for blocking findings, then `::warning` lines for warnings, with file and
    line: at most the ten GitHub shows for a step, so that no warning takes a blocking finding's place."""
    lines: list[str] = []
    for f in (report.of(Severity.BLOCKING) + report.of(Severity.WARNING))[:MAX_ANNOTATIONS]:
        props = []
        if f.file:
            props.append(f"file={escape_property(f.file)}")
            if f.line:
                props.append(f"line={int(f.line)}")
        props.append(f"title={escape_property(f'prbot {f.check}')}")
        kind = "error" if f.severity is Severity.BLOCKING else "warning"
        lines.append(f"::{kind} {','.join(props)}::{escape_data(en(f))}")
    return lines


def counts(report: Report) -> tuple[int, int]:
    return len(report.of(Severity.BLOCKING)), len(report.of(Severity.WARNING))


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
    try:
        path = Path(tempfile.mkdtemp(prefix="prbot-")) / REPORT_NAME
    except OSError:  # no temporary folder either: writing there fails, and the run says so
        path = Path(tempfile.gettempdir()) / REPORT_NAME
    return path, str(path)
