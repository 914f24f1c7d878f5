"""The workflows pin what they run, and the example workflow listens to the events the action handles.

A tag of a third-party action can be moved to other code at any time; a commit SHA cannot (the
InferenceX repository pins every action that way). Each pin carries its release's tag in a comment
so that a reader, or a tool updating pins, can tell which version it is.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.github_action.events import PR_ACTIONS, REVIEW_ACTIONS, REVIEW_EVENT

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "prbot-workflow.yml"
WORKFLOWS = [*sorted((ROOT / ".github" / "workflows").glob("*.yml")), EXAMPLE]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]

PINNED_ACTION = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?:/[^@\s]+)?@[0-9a-f]{40}")
PINNED_IMAGE = re.compile(r"docker://[^@\s]+@sha256:[0-9a-f]{64}")
#: The image the release workflow publishes, by the tag of this version: its digest exists only
#: once the release has built it (the release's job summary prints the digest-pinned line).
RELEASE_IMAGE = re.compile(rf"docker://ghcr\.io/[a-z0-9][a-z0-9-]*/prbot:v{re.escape(VERSION)}")
VERSION_COMMENT = re.compile(r"#\s*v\d+(?:\.\d+){0,2}\b")


def _uses(workflow: dict[str, Any]) -> Iterator[str]:
    """Every `uses:` of a workflow: reusable workflows called by a job, and the steps' actions."""
    for job in (workflow.get("jobs") or {}).values():
        if "uses" in job:
            yield str(job["uses"])
        for step in job.get("steps") or []:
            if "uses" in step:
                yield str(step["uses"])


def _problem(path: Path, ref: str) -> str | None:
    """Why `ref` is not pinned, or None when it is."""
    if ref.startswith("./") or PINNED_IMAGE.fullmatch(ref):
        return None
    if path == EXAMPLE and RELEASE_IMAGE.fullmatch(ref):
        return None
    if ref.startswith("docker://"):
        return "an image by tag: pin it by digest (docker://…@sha256:<digest>)"
    if not PINNED_ACTION.fullmatch(ref):
        return "not pinned by a full commit SHA"
    line = next(line for line in path.read_text(encoding="utf-8").splitlines() if f"uses: {ref}" in line)
    if not VERSION_COMMENT.search(line.split(ref, 1)[1]):
        return "no `# vX.Y.Z` comment naming the release of the pinned commit"
    return None


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_action_is_pinned_by_commit_sha(path: Path) -> None:
    refs = list(_uses(yaml.safe_load(path.read_text(encoding="utf-8"))))
    assert refs, f"{path.name} uses no action: is it still a workflow?"
    problems = {ref: why for ref in refs if (why := _problem(path, ref))}
    assert not problems, problems


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        ("actions/checkout@v7", "not pinned by a full commit SHA"),
        ("actions/checkout@3d3c42e", "not pinned by a full commit SHA"),
        ("actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1", "no `# vX.Y.Z` comment"),
        ("docker://ghcr.io/acme/other:v1", "an image by tag"),
    ],
)
def test_an_unpinned_reference_is_refused(tmp_path: Path, ref: str, why: str) -> None:
    path = tmp_path / "ci.yml"
    path.write_text(f"jobs:\n  test:\n    steps:\n      - uses: {ref}\n", encoding="utf-8")
    assert (_problem(path, ref) or "").startswith(why)


def test_the_example_workflow_listens_to_the_events_the_action_handles() -> None:
    """DESIGN §3: pull_request_target with the PR actions, pull_request_review and `/review`
    comments, each with exactly the actions `bot.github_action.events` starts a review for."""
    workflow = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    events = workflow[True]  # YAML 1.1 reads the key `on` as True
    assert set(events) == {"pull_request_target", REVIEW_EVENT, "issue_comment"}
    assert set(events["pull_request_target"]["types"]) == PR_ACTIONS
    assert set(events[REVIEW_EVENT]["types"]) == REVIEW_ACTIONS
    assert events["issue_comment"]["types"] == ["created"]
    condition = workflow["jobs"]["review"]["if"]
    assert f"github.event_name == '{REVIEW_EVENT}'" in condition
    assert "github.event.review.user.type != 'Bot'" in condition
    # A fork PR's review runs with a read-only token and the PR's own copy of this file.
    assert "github.event.pull_request.head.repo.full_name == github.repository" in condition


def test_the_example_names_the_image_the_release_publishes() -> None:
    release = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert 'image=ghcr.io/${GITHUB_REPOSITORY_OWNER,,}/prbot"' in release
    (image,) = [
        ref for ref in _uses(yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))) if "docker://" in ref
    ]
    assert RELEASE_IMAGE.fullmatch(image), f"{image} is not the release image of version {VERSION}"
    assert "your-org" not in EXAMPLE.read_text(encoding="utf-8")
    docs = (ROOT / "docs" / "action.md").read_text(encoding="utf-8")
    assert image.removeprefix("docker://") in docs.split("## The image and pinning a version", 1)[1]
