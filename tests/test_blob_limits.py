"""#23 item 2: a blob over the size limit is never read, in local mode and in the action's git
mode, and is the same blocking "too large" finding as on the REST path (where GitHub's tree gives
the size). The full-size attack (30 files of 99 MB) is `bench/bombs.py --only blobs`."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest
from conftest import commit
from test_git_fetch import Servers

from bot.cli import main
from bot.example import ExampleRepo
from bot.sources.git import GitRepo
from bot.sources.snapshot import Oversized
from bot.yamlsafe import MAX_BYTES

OVER = MAX_BYTES + 1  # one byte over: the smallest file the limit refuses
# Recipes: a changed one is read even when no key runs it (master configs other than the two
# InferenceX reads are not read at all since #22).
PATHS = [f"benchmarks/single_node/zz{n:02}.yaml" for n in range(3)]


def _oversized_head(example: ExampleRepo) -> str:
    """The issue's attack scaled down: three new recipes of NUL bytes, each one byte over."""
    return commit(example.path, dict.fromkeys(PATHS, "\0" * OVER), "three oversized recipes")


def _too_large(findings: list[dict]) -> dict[str, str]:
    return {
        f["file"]: f["message_en"]
        for f in findings
        if f["severity"] == "blocking" and "too large" in f["message_en"]
    }


def test_local_mode_refuses_oversized_blobs_unread(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    head = _oversized_head(example)
    argv = ["review", "--repo", str(example.path), "--base", example.base, "--head", head, "--offline"]
    code = main([*argv, "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["verdict"] == "blocking"
    expected = f"is too large to review: {OVER:,} bytes, over the {MAX_BYTES:,}-byte limit."
    assert _too_large(report["findings"]) == {path: f"{path} {expected}" for path in PATHS}

    repo = GitRepo.open(example.path)
    try:
        data = repo.read(head, PATHS[0])
        assert isinstance(data, Oversized) and len(data) == OVER and bytes(data) == b""  # nothing was read
        assert (
            repo.read(head, "configs/amd-master.yaml")
            == (example.path / "configs/amd-master.yaml").read_bytes()
        )
    finally:
        repo.close()


def test_the_limit_is_a_parameter_and_a_file_at_it_is_read_whole(example: ExampleRepo) -> None:
    """Sizes come from `git cat-file --batch-check` before any byte: with a lower limit the same
    files are refused or read, in one batch mixing both, absent files and folders."""
    master = (example.path / "configs/amd-master.yaml").read_bytes()
    head = subprocess.run(
        ["git", "-C", str(example.path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    repo = GitRepo(example.path, max_bytes=len(master) - 1)
    try:
        found = repo.read_many(
            head, ["configs/amd-master.yaml", "perf-changelog.yaml", "nowhere.yaml", "configs"]
        )
    finally:
        repo.close()
    assert found["configs/amd-master.yaml"] == Oversized(
        len(master), _blob(example.path, "configs/amd-master.yaml")
    )
    assert len(found["configs/amd-master.yaml"] or b"") == len(master)
    assert found["perf-changelog.yaml"] == (example.path / "perf-changelog.yaml").read_bytes()
    assert found["nowhere.yaml"] is None and found["configs"] is None
    at_limit = GitRepo(example.path, max_bytes=len(master))
    try:
        assert at_limit.read(head, "configs/amd-master.yaml") == master
    finally:
        at_limit.close()


def _blob(repo: Path, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", f"HEAD:{path}"], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_the_actions_git_mode_refuses_oversized_blobs_unread(
    example: ExampleRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The action fetches the blobs with git (a 0.5 MB pack held 2.9 GB once read) and reads only
    their sizes: the comment has the same blocking "too large" finding for each file."""
    reads: list[int] = []
    real = GitRepo._answer

    def answer(self: GitRepo, out: object, wanted: bytes) -> bytes | None:
        data = real(self, out, wanted)  # type: ignore[arg-type]
        reads.append(len(data or b""))
        return data

    monkeypatch.setattr(GitRepo, "_answer", answer)
    attacked = dataclasses.replace(example, head=_oversized_head(example))
    with Servers(attacked, tmp_path / "served") as both:
        run = both.act(tmp_path)
        assert "Fetched the base and head commits with git" in run.log
        assert run.code == 1 and run.outputs["verdict"] == "blocking"
        report = json.loads(Path(run.outputs["report"]).read_text(encoding="utf-8"))
        assert set(_too_large(report["findings"])) == set(PATHS)
        [comment] = both.github.comments_on(7)
        for path in PATHS:
            assert (
                f"`{path}` is too large to review: {OVER:,} bytes, over the {MAX_BYTES:,}-byte limit."
                in comment.body
            )
    assert reads and max(reads) < MAX_BYTES  # no blob over the limit came through `cat-file --batch`
