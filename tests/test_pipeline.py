"""The one seam (bot/pipeline.py): local mode reads the repository's settings file at the base
ref, as the action does, so that `prbot review` reviews exactly as the action would."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bot.cli import main
from bot.example import ExampleRepo
from bot.local import LocalRequest, run_local
from tests.conftest import GIT_ENV


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def _with_base_settings(example: ExampleRepo, settings: str) -> tuple[str, str]:
    """A base commit that adds `.github/prbot.yml`, and the PR's head merged onto it."""
    _git(example.path, "checkout", "-q", "-b", "settings", example.base)
    (example.path / ".github").mkdir(exist_ok=True)
    (example.path / ".github" / "prbot.yml").write_text(settings, encoding="utf-8")
    _git(example.path, "add", "-A")
    _git(example.path, "commit", "-qm", "settings")
    base = _git(example.path, "rev-parse", "HEAD").strip()
    _git(example.path, "checkout", "-q", "-b", "pr", example.head)
    _git(example.path, "merge", "-q", "--no-edit", "settings")
    return base, _git(example.path, "rev-parse", "HEAD").strip()


def _duration(example: ExampleRepo, base: str, head: str, config: str | None = None) -> int:
    """The agentic run duration the sweep plan counted GPU-hours with (a setting)."""
    request = LocalRequest(repo=str(example.path), base=base, head=head, labels=example.labels, offline=True)
    report, _, _ = run_local(request._replace(config=config))
    return report.sweep_plan["duration_s"]


def test_local_mode_uses_the_settings_file_at_the_base(example: ExampleRepo, tmp_path: Path) -> None:
    assert _duration(example, example.base, example.head) == 3600  # no settings file: the default
    base, head = _with_base_settings(example, "agentic-duration-s: 1800\n")
    assert _duration(example, base, head) == 1800
    override = tmp_path / "other.yml"
    override.write_text("agentic-duration-s: 7200\n", encoding="utf-8")
    assert _duration(example, base, head, str(override)) == 7200  # --config wins


def test_an_invalid_settings_file_at_the_base_is_one_line_per_language_and_exit_2(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    base, head = _with_base_settings(example, "agentic-duration-s: -5\n")
    status = main(["review", "--repo", str(example.path), "--base", base, "--head", head, "--offline"])
    err = capsys.readouterr().err.strip()
    english, chinese = err.splitlines()
    assert status == 2
    assert ".github/prbot.yml at the base commit" in english and "agentic-duration-s" in english
    assert (
        chinese == "prbot: base 提交中的设置文件 .github/prbot.yml 第 1 行："
        "agentic-duration-s 必须是正整数，而不是 -5"
    )


def test_the_registry_answers_are_passed_in(example: ExampleRepo) -> None:
    """The digest check asks what `ReviewInput.resolve` answers (the engine opens no registry of
    its own): an answer naming the recipe's pinned digest verifies the pin, another one blocks."""
    from bot import pipeline
    from bot.pullrequest import PullRequest
    from bot.settings import Settings
    from bot.sources.git import GitRepo
    from bot.sources.references import TagResolution

    pinned = "sha256:96a9614276518c2619e88800dec5f276bc76a95691331b4abb2210184e1431af"
    asked: list[list[str]] = []

    def registry(digest: str):
        def resolve(references: list[str]) -> dict[str, TagResolution]:
            asked.append(references)
            return {ref: TagResolution(ref, "ok", digest) for ref in references}

        return resolve

    repo = GitRepo.open(str(example.path))
    try:
        common = (repo.snapshot(example.base), repo.snapshot(example.head))
        changed = repo.changed_files(example.base, example.head)
        pr = PullRequest(title=example.title, body=example.body, labels=example.labels)
        verdicts = {}
        for digest in (pinned, "sha256:" + "0" * 64):
            review = pipeline.ReviewInput(*common, changed, pr, Settings(), resolve=registry(digest))
            report = pipeline.run(review)
            verdicts[digest] = {f.severity.value for f in report.findings if f.check == "digest"}
    finally:
        repo.close()
    assert asked == [["rocm/atom-dev:nightly_202610281457"]] * 2
    assert verdicts[pinned] == {"verified"} and "blocking" in verdicts["sha256:" + "0" * 64]
