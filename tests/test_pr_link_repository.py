"""Which repository a changelog `pr-link` must name, in local mode (DESIGN.md §2 `changelog`):
`--pr-url`'s, else the one the base changelog's own entries link to, with the `upstream` and
`origin` remotes as hints only. Most contributors work in a clone of their fork, whose `origin` is
`https://github.com/<contributor>/InferenceX`: that must never turn the right upstream link into
a blocking finding, nor make `prbot fix` rewrite it. When the repository cannot be told at all,
the link check says `unverified`, never nothing."""

from __future__ import annotations

import subprocess

import pytest

from bot.example import ExampleRepo
from bot.findings import Finding, Severity
from bot.fix.command import main as fix_main
from bot.local import linked_repository, run_local
from tests.conftest import CHANGELOG, commit, replace

UPSTREAM = "https://github.com/SemiAnalysisAI/InferenceX"
FORK = "https://github.com/contributor/InferenceX"
NUMBER = 2290
PLACEHOLDER_LINE = "  pr-link: XXX\n"


def git(example: ExampleRepo, *args: str) -> None:
    subprocess.run(["git", "-C", str(example.path), *args], check=True, capture_output=True)


def with_link(example: ExampleRepo, link: str) -> str:
    """Commit the new entry's pr-link as `link` on top of the example's head; the new head."""
    return commit(example.path, {CHANGELOG: replace(PLACEHOLDER_LINE, f"  pr-link: {link}\n")})


def changelog(example: ExampleRepo, head: str, **pr: object) -> list[Finding]:
    report, _, _ = run_local(example.request(head=head, **pr))
    return [f for f in report.findings if f.check == "changelog"]


def blocking(findings: list[Finding]) -> list[str]:
    return [f.message_id for f in findings if f.severity is Severity.BLOCKING]


def fix(example: ExampleRepo, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = fix_main(["--repo", str(example.path), "--base", example.base, "--offline", "--lang", "en", *args])
    return code, capsys.readouterr().out


@pytest.fixture
def fork_clone(example: ExampleRepo) -> ExampleRepo:
    """The example as a contributor has it: `origin` is their fork, `upstream` is not set."""
    git(example, "remote", "add", "origin", f"{FORK}.git")
    return example


def test_the_base_changelog_names_the_repository() -> None:
    data = (
        b"- config-keys:\n    - a\n  description:\n    - x\n  pr-link: https://github.com/o/r/pull/1\n\n"
        b"- config-keys:\n    - b\n  description:\n    - y\n  pr-link: https://github.com/o/r/pull/2  \n\n"
        b"- config-keys:\n    - c\n  description:\n    - z\n  pr-link: https://github.com/fork/r/pull/3\n"
    )
    assert linked_repository(data) == "https://github.com/o/r"
    assert linked_repository(b"- config-keys: [a]\n  pr-link: XXX\n") is None
    assert linked_repository(None) is None


def test_in_a_fork_clone_the_upstream_link_is_right(fork_clone: ExampleRepo) -> None:
    head = with_link(fork_clone, f"{UPSTREAM}/pull/{NUMBER}")
    assert blocking(changelog(fork_clone, head)) == []
    # With --pr-number too: the PR's URL is upstream's, not the fork's.
    found = changelog(fork_clone, head, pr_number=NUMBER)
    assert blocking(found) == []
    assert "changelog-appended" in [f.message_id for f in found if f.severity is Severity.VERIFIED]


def test_in_a_fork_clone_a_link_to_the_fork_is_refused(fork_clone: ExampleRepo) -> None:
    head = with_link(fork_clone, f"{FORK}/pull/{NUMBER}")
    [other] = [f for f in changelog(fork_clone, head, pr_number=NUMBER) if f.severity is Severity.BLOCKING]
    assert other.message_id == "changelog-pr-link-other"
    assert other.params["expected"] == f"{UPSTREAM}/pull/{NUMBER}"
    assert other.suggestion == f"  pr-link: {UPSTREAM}/pull/{NUMBER}"
    # Without a PR number: a link into another repository than the changelog's is not canonical.
    assert blocking(changelog(fork_clone, head)) == ["changelog-pr-link-invalid"]


def test_fix_in_a_fork_clone_writes_the_upstream_url(
    fork_clone: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = fix(fork_clone, capsys, "--pr-number", str(NUMBER))
    assert code == 0
    text = (fork_clone.path / CHANGELOG).read_text(encoding="utf-8")
    assert f"  pr-link: {UPSTREAM}/pull/{NUMBER}\n" in text and FORK not in text
    assert f"pr-link XXX → {UPSTREAM}/pull/{NUMBER}" in out


def test_fix_in_a_fork_clone_leaves_a_right_link_alone(
    fork_clone: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    with_link(fork_clone, f"{UPSTREAM}/pull/{NUMBER}")
    before = (fork_clone.path / CHANGELOG).read_bytes()
    code, out = fix(fork_clone, capsys, "--pr-number", str(NUMBER))
    assert code == 0 and out.startswith("Nothing to fix")
    assert (fork_clone.path / CHANGELOG).read_bytes() == before


def test_an_upstream_remote_is_a_hint_when_the_changelog_links_nowhere(example: ExampleRepo) -> None:
    base, head = unlinked(example, "https://github.com/evil/other/pull/1")
    git(example, "remote", "add", "origin", f"{FORK}.git")
    git(
        example,
        "remote",
        "add",
        "upstream",
        f"git@github.com:{UPSTREAM.removeprefix('https://github.com/')}.git",
    )
    found = changelog(example, head, base=base)
    assert blocking(found) == ["changelog-pr-link-invalid"]


@pytest.fixture
def gitlab_origin(example: ExampleRepo) -> ExampleRepo:
    git(example, "remote", "add", "origin", "git@gitlab.com:contributor/inferencex.git")
    return example


def unlinked(example: ExampleRepo, link: str) -> tuple[str, str]:
    """The example PR rebased on a base whose changelog links to no GitHub pull request, with the
    new entry's pr-link `link`: (base, head)."""
    elsewhere = replace(f"{UPSTREAM}/pull/", "https://gitlab.com/inferencex/-/merge_requests/", -1)
    git(example, "checkout", "-q", "-b", "unlinked", example.base)
    base = commit(example.path, {CHANGELOG: elsewhere})
    git(example, "checkout", "-q", example.head, "--", ".")
    head = commit(
        example.path,
        {CHANGELOG: lambda text: elsewhere(text).replace(PLACEHOLDER_LINE, f"  pr-link: {link}\n")},
    )
    return base, head


def test_a_non_github_origin_with_links_in_the_base_still_checks_the_repository(
    gitlab_origin: ExampleRepo,
) -> None:
    head = with_link(gitlab_origin, "https://github.com/evil/other/pull/1")
    assert blocking(changelog(gitlab_origin, head)) == ["changelog-pr-link-invalid"]


def test_when_the_repository_cannot_be_told_the_link_is_unverified(gitlab_origin: ExampleRepo) -> None:
    base, head = unlinked(gitlab_origin, "https://github.com/evil/other/pull/1")
    found = changelog(gitlab_origin, head, base=base)
    assert blocking(found) == []
    [unknown] = [f for f in found if f.message_id == "changelog-repository-unknown"]
    assert unknown.severity is Severity.UNVERIFIED
    assert unknown.params["links"] == ["https://github.com/evil/other/pull/1"]
    # With --pr-number the PR's URL cannot be derived either: said too, never silence.
    numbered = changelog(gitlab_origin, head, base=base, pr_number=7)
    assert {"changelog-repository-unknown", "changelog-pr-url-unknown"} <= {
        f.message_id for f in numbered if f.severity is Severity.UNVERIFIED
    }
    # --pr-url settles it.
    url = changelog(gitlab_origin, head, base=base, pr_number=7, pr_url=f"{UPSTREAM}/pull/7")
    assert blocking(url) == ["changelog-pr-link-other"]


def test_fix_with_an_unknown_repository_rewrites_nothing(
    gitlab_origin: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    base, _ = unlinked(gitlab_origin, "XXX")
    before = (gitlab_origin.path / CHANGELOG).read_bytes()
    code = fix_main(
        ["--repo", str(gitlab_origin.path), "--base", base, "--offline", "--lang", "en", "--pr-number", "7"]
    )
    out = capsys.readouterr().out
    assert code == 0 and "pr-link" not in out.split("Nothing to fix")[0]
    assert (gitlab_origin.path / CHANGELOG).read_bytes() == before
