"""Small rules of the action: inputs, exit codes, workflow-command escaping, the report's location."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.catalog import msg
from bot.findings import Severity, finding
from bot.github_action.console import Console
from bot.github_action.events import ActionError, Inputs, Skip, Trigger, classify, exit_code
from bot.github_action.outputs import annotations, escape_data, escape_property, report_path
from bot.output.messages import text
from bot.report import Report


def test_workflow_command_escaping() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"


def test_annotations_put_pr_text_in_one_inert_line() -> None:
    sneaky = "configs/x,line=1::y%\n::set-env name=A::b.yaml"
    report = Report(
        [
            finding("changelog", Severity.BLOCKING, "changelog-missing", file=sneaky, line=3, keys=["k"]),
            finding("labels", Severity.WARNING, "labels-no-sweep-entry-missing"),
            finding(
                "dram", Severity.INFO, "dram-too-many-gpus", file="a.yaml", line=1, gpus=16, gpus_per_node=8
            ),
        ]
    )
    lines = annotations(report)
    assert len(lines) == 2
    assert lines[0].startswith(
        "::error file=configs/x%2Cline=1%3A%3Ay%25%0A%3A%3Aset-env name=A%3A%3Ab.yaml,line=3,"
    )
    assert lines[0].count("\n") == 0
    assert lines[1] == (
        "::warning title=prbot labels::No sweep will run: no changelog entry was appended "
        "(the changelog findings say which keys need one)."
    )


@pytest.mark.parametrize(
    ("verdict", "fail_on", "code"),
    [
        ("blocking", "blocking", 1), ("warnings", "blocking", 0), ("clean", "blocking", 0),
        ("blocking", "warning", 1), ("warnings", "warning", 1), ("clean", "warning", 0),
        ("blocking", "never", 0), ("warnings", "never", 0),
    ],
)  # fmt: skip
def test_exit_codes(verdict: str, fail_on: str, code: int) -> None:
    assert exit_code(verdict, fail_on) == code


def test_inputs_in_both_spellings_and_their_defaults() -> None:
    dashed = Inputs.from_env({"INPUT_GITHUB-TOKEN": "t0ken", "INPUT_FAIL-ON": "Warning", "INPUT_LANG": "zh"})
    assert (dashed.token, dashed.fail_on, dashed.lang, dashed.comment, dashed.offline) == (
        "t0ken", "warning", "zh", True, False)  # fmt: skip
    assert dashed.config == ".github/prbot.yml"
    under = Inputs.from_env({"INPUT_GITHUB_TOKEN": "t0ken", "INPUT_COMMENT": "false", "INPUT_OFFLINE": "yes"})
    assert (under.comment, under.offline) == (False, True)
    # An empty input (how an unset `with:` arrives) falls back to the default, then to $GITHUB_TOKEN.
    assert Inputs.from_env({"INPUT_GITHUB-TOKEN": "", "GITHUB_TOKEN": "fallback"}).token == "fallback"
    with pytest.raises(ActionError) as caught:
        Inputs.from_env({"INPUT_GITHUB-TOKEN": "t", "INPUT_LANG": "fr"})
    assert "Input lang must be one of both, en, zh, not fr" in text(caught.value.message)
    with pytest.raises(ActionError) as caught:
        Inputs.from_env({})
    assert "No GitHub token" in text(caught.value.message)


def test_the_bot_login_input() -> None:
    assert Inputs.from_env({"INPUT_GITHUB-TOKEN": "t"}).bot_login == "github-actions[bot]"
    assert Inputs.from_env({"INPUT_GITHUB-TOKEN": "t", "INPUT_BOT-LOGIN": "acme-prbot[bot]"}).bot_login == (
        "acme-prbot[bot]"
    )
    for bad in ("a b", "-x", "x[bot]y", "x\n::error::y"):
        with pytest.raises(ActionError) as caught:
            Inputs.from_env({"INPUT_GITHUB-TOKEN": "t", "INPUT_BOT-LOGIN": bad})
        assert "must be a GitHub login" in text(caught.value.message)


@pytest.mark.parametrize(
    ("status", "data", "headers", "starts"),
    [
        (403, {"message": "You have exceeded a secondary rate limit."}, {}, "GitHub's API rate limit"),
        (403, None, {"x-ratelimit-remaining": "0"}, "GitHub's API rate limit"),  # a body already read
        (429, None, {}, "GitHub's API rate limit"),
        (403, {"message": "Resource not accessible by integration"}, {}, "GitHub refused access (403"),
    ],
)
def test_rate_limits_are_told_apart_from_permissions(
    status: int, data: object, headers: dict[str, str], starts: str
) -> None:
    from github import GithubException

    from bot.sources.github import explain

    error = explain(GithubException(status, data, headers), msg("action-doing-files"))
    assert text(error.message).startswith(starts)


def test_classify_pull_request_events() -> None:
    pull = {"number": 3, "state": "open", "draft": False}
    for action in ("opened", "synchronize", "reopened", "ready_for_review", "labeled", "unlabeled", "edited"):
        assert classify("pull_request", {"action": action, "number": 3, "pull_request": pull}) == Trigger(3)
    assert isinstance(classify("pull_request_target", {"action": "closed", "pull_request": pull}), Skip)
    draft = {"action": "opened", "number": 3, "pull_request": {**pull, "draft": True}}
    assert "draft" in str(classify("pull_request", draft).reason)  # type: ignore[union-attr]


def test_console_never_shows_secrets_or_workflow_commands() -> None:
    import io

    stream = io.StringIO()
    console = Console(stream, secrets=["s3cr3t-token", "", "ab"])
    console.info("token s3cr3t-token\n::set-output name=x::y")
    console.info(msg("action-comment-created", url="https://x/s3cr3t-token"))
    text = stream.getvalue()
    assert "s3cr3t-token" not in text and "***" in text
    assert text.count("\n") == 2 and "\n::" not in text


def test_report_location(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    temp, workspace = tmp_path / "temp", tmp_path / "workspace"
    temp.mkdir()
    workspace.mkdir()
    path, shown = report_path({"RUNNER_TEMP": str(temp), "GITHUB_WORKSPACE": str(workspace)})
    assert path == temp / "prbot-report.json" and shown == str(path)
    # In a Docker action the runner's temp folder is not mounted: the workspace, relative to it.
    monkeypatch.chdir(workspace)
    path, shown = report_path({"RUNNER_TEMP": str(tmp_path / "absent"), "GITHUB_WORKSPACE": str(workspace)})
    assert path == workspace / "prbot-report.json" and shown == "prbot-report.json"
    path, shown = report_path({})
    assert path.parent.is_dir() and os.path.isabs(shown)


def test_registry_passwords_are_secrets_of_the_log() -> None:
    from bot.github_action.run import _registry_secrets

    raw = '{"ghcr.io": {"username": "bot", "password": "pw-ghcr-123"}, "docker.io": "malformed"}'
    assert {"pw-ghcr-123", raw} <= set(_registry_secrets(raw))
    assert _registry_secrets("not json") == ["not json"]
