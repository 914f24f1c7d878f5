"""Shared fixtures: the bundled example repository, variants of it, and the real-world data."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.example import ExampleRepo, build_example
from bot.local import run_local
from bot.report import Report

# The real InferenceX data: $PRBOT_REAL_WORLD, else ../shared/real-world beside the repository.
SHARED = Path(
    os.environ.get("PRBOT_REAL_WORLD") or Path(__file__).resolve().parents[1].parent / "shared" / "real-world"
).resolve()
RECIPE = "benchmarks/single_node/srt-slurm-recipes/kimik3/atom/mi355x-fp4-mtp/agentic.yaml"
MASTER = "configs/amd-master.yaml"
CHANGELOG = "perf-changelog.yaml"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def pytest_configure(config: pytest.Config) -> None:
    """Compiled message templates go to a cache of the test run's own, not the user's."""
    import tempfile

    os.environ["PRBOT_CACHE_DIR"] = tempfile.mkdtemp(prefix="prbot-test-cache-")


_SKIP_PREFIX = "real-world data not found at"


def shared_or_skip(*parts: str) -> Path:
    """A path under the real-world data folder, or skip the test saying the data is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{_SKIP_PREFIX} {path} (set PRBOT_REAL_WORLD to the folder holding it)")
    return path


def e2e_checkout(folder: Path) -> tuple[Path, str]:
    """The real `inferencex-e2e` files as InferenceX holds them, committed in a new git repository
    `folder/InferenceX` (skips when the real-world data is absent): the repository and its commit."""
    source = shared_or_skip("inferencex-e2e")
    repo = folder / "InferenceX"
    shutil.copytree(
        source, repo / "inferencex-e2e", ignore=shutil.ignore_patterns("_repo_root", "MANIFEST.tsv")
    )
    shutil.copytree(source / "_repo_root", repo, dirs_exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    return repo, commit(repo, {}, "base: real files")


@pytest.fixture(scope="session")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare clone of the real InferenceX history (one per test run), or skip saying it is absent."""
    bundle = shared_or_skip("inferencex-history.bundle")
    repo = tmp_path_factory.mktemp("history") / "history.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(repo)], check=True)
    return repo


@pytest.fixture(scope="session")
def runfiles_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare clone of the real InferenceX history with the files a run executes (launchers,
    benchmark scripts; #1992..#2707, one per test run), or skip saying it is absent."""
    bundle = shared_or_skip("inferencex-runfiles-history.bundle")
    repo = tmp_path_factory.mktemp("runfiles") / "runfiles.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(repo)], check=True)
    return repo


@pytest.fixture(scope="session")
def runfiles_checkout(runfiles_history: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working copy of the runfiles history at its newest commit, to read real scripts and
    configs from (one per test run; tests that commit clone it again)."""
    repo = tmp_path_factory.mktemp("runfiles-checkout") / "repo"
    subprocess.run(["git", "clone", "-q", str(runfiles_history), str(repo)], check=True)
    return repo


def squash_merge(repo: Path, number: int) -> tuple[str, str, str]:
    """(parent, commit, subject) of the real pull request squash-merged as `... (#number)`."""
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%H %P%x09%s"], capture_output=True, text=True, check=True
    ).stdout
    for line in log.splitlines():
        shas, _, subject = line.partition("\t")
        sha, *parents = shas.split()
        if subject.endswith(f"(#{number})") and len(parents) == 1:
            return parents[0], sha, subject
    raise AssertionError(f"#{number} is not in the history")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say at the end of the run whether the real-world tests ran, and if not, why."""
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if _SKIP_PREFIX in str(getattr(report, "longrepr", ""))
    ]
    if skipped:
        terminalreporter.write_line(
            f"real-world data: {len(skipped)} tests skipped, no data at {SHARED} "
            "(set PRBOT_REAL_WORLD to the folder holding inferencex-e2e/ and the history bundle)",
            yellow=True,
        )
    else:
        terminalreporter.write_line(f"real-world data: {SHARED} (no test skipped for want of it)")


@pytest.fixture
def example(tmp_path: Path) -> ExampleRepo:
    return build_example(tmp_path / "example")


def commit(repo: Path, edits: dict[str, Callable[[str], str] | str | None], message: str = "edit") -> str:
    """Apply edits (new text, a function of the old text, or None to delete) and commit; returns the SHA."""
    for path, edit in edits.items():
        target = repo / path
        if edit is None:
            target.unlink()
            continue
        text = edit(target.read_text(encoding="utf-8")) if callable(edit) else edit
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=env)
    subprocess.run(
        ["git", "-C", str(repo), "-c", "commit.gpgsign=false", "commit", "-qm", message], check=True, env=env
    )
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def replace(old: str, new: str, count: int = 1) -> Callable[[str], str]:
    """An edit that replaces `old` (which must be present) by `new`."""

    def edit(text: str) -> str:
        assert old in text, f"{old!r} not found"
        return text.replace(old, new, count)

    return edit


@pytest.fixture
def review_example(example: ExampleRepo) -> Callable[..., Report]:
    """Review the example PR, optionally after committing edits on top of its head."""

    def run(edits: dict | None = None, **overrides: object) -> Report:
        head = commit(example.path, edits) if edits else example.head
        report, _, _ = run_local(example.request(head=head, **overrides))
        return report

    return run
