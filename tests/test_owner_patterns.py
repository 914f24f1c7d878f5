"""CODEOWNERS patterns matched in one pass: GitHub's answers, and no pattern can hold the review."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bot.findings import Severity
from bot.local import LocalRequest, run_local
from bot.model.owner_patterns import compile_pattern
from bot.model.owners import OwnersError, OwnersFile
from tests.conftest import commit, e2e_checkout, shared_or_skip

# (pattern, path, matches): what each construct of a CODEOWNERS pattern means.
MEANINGS = [
    ("*", "README.md", True),
    ("*", "configs/amd-master.yaml", True),
    ("*.yaml", "configs/amd-master.yaml", True),
    ("*.yaml", "configs/amd-master.yml", False),
    ("configs/amd-master.yaml", "configs/amd-master.yaml", True),
    ("configs/amd-master.yaml", "inferencex-e2e/configs/amd-master.yaml", False),  # anchored: a `/` inside
    ("/configs/", "configs/runners.yaml", True),
    ("/configs/", "inferencex-e2e/configs/runners.yaml", False),
    ("configs/", "inferencex-e2e/configs/runners.yaml", True),  # a trailing `/` only: any depth
    ("configs/", "configs", False),  # a folder pattern needs something under it
    ("MODELS.md", "docs/MODELS.md", True),
    ("MODELS.md", "MODELS.md.bak", False),
    ("configs/*", "configs/amd-master.yaml", True),
    ("configs/*", "configs/deprecated/old.yaml", False),  # `/*`: direct children only
    ("configs/**", "configs/deprecated/old.yaml", True),
    ("**/srt-slurm-recipes/**", "benchmarks/single_node/srt-slurm-recipes/kimik3/agentic.yaml", True),
    ("benchmarks/**/agentic.yaml", "benchmarks/agentic.yaml", True),  # `**/` may be no folder
    ("benchmarks/**/agentic.yaml", "benchmarks/a/b/c/agentic.yaml", True),
    ("benchmarks/**/agentic.yaml", "benchmarks/a/b/c/agentic.yaml.orig", False),
    ("bench*/x", "benchmarks/x", True),
    ("bench*/x", "bench/a/x", False),  # `*` stays within a folder
    ("a?c", "abc", True),
    ("a?c", "a/c", False),
    ("v[12].yaml", "v2.yaml", True),
    ("v[12].yaml", "v3.yaml", False),
    ("v[a-c].yaml", "v-.yaml", True),  # no ranges: each character listed stands for itself
    ("v[a-c].yaml", "vb.yaml", False),
    ("\\*.md", "*.md", True),
    ("\\*.md", "a.md", False),
    ("experimental/operatorx/", "experimental/operatorx/run.sh", True),
]


@pytest.mark.parametrize(("pattern", "path", "matches"), MEANINGS)
def test_each_construct_means_what_it_means_on_github(pattern: str, path: str, matches: bool) -> None:
    assert compile_pattern(pattern).search(path) is matches


@pytest.mark.parametrize("pattern", ["v[]x", "v[*]x", "v[?]", "v[ab"])
def test_a_character_class_the_matcher_cannot_read_makes_the_file_unreadable(pattern: str) -> None:
    with pytest.raises(OwnersError):
        OwnersFile(f"* @org/core\n{pattern} @someone\n")


def _timed(owners: OwnersFile, path: str) -> tuple[object, float]:
    started = time.perf_counter()
    rule = owners.rule_for(path)
    return rule, time.perf_counter() - started


@pytest.mark.parametrize(
    ("rule", "path"),
    [
        ("*a*a*a*a*a*b", "a" * 400),
        ("*a*a*a*a*a*a*a*a*a*a*a*a*b", "a" * 4000),
        ("**/**/**/**/z", "a/" * 2000 + "y"),
        ("/**/**/**/**/**/**/**/**/x/**/y", "x/" * 2000 + "z"),
        ("*" * 500 + "b", "a" * 4000),
    ],
)
def test_a_hostile_rule_on_the_real_codeowners_is_answered_at_once(rule: str, path: str) -> None:
    real = shared_or_skip("inferencex-e2e", "_repo_root", ".github", "CODEOWNERS").read_text(encoding="utf-8")
    owners = OwnersFile(f"{real}\n{rule} @attacker\n")
    found, seconds = _timed(owners, path)
    assert seconds < 0.5, f"{seconds:.2f} s"
    catch_all = owners.catch_all()
    assert found is not None and catch_all is not None
    assert found.line == catch_all.line  # the hostile rule does not match: the catch-all decides
    assert owners.rule_for(path[:-1] + rule[-1]).pattern == rule  # and where it matches, it wins


def test_the_real_codeowners_answers_as_before() -> None:
    real = shared_or_skip("inferencex-e2e", "_repo_root", ".github", "CODEOWNERS").read_text(encoding="utf-8")
    owners = OwnersFile(real)
    decided = {
        path: (rule.pattern if (rule := owners.rule_for(path)) else None)
        for path in (
            "configs/amd-master.yaml",
            "configs/nvidia-master.yaml",
            "configs/runners.yaml",
            "MODELS.md",
            "docs/MODELS.md",
            "MODELS_zh.md",
            "experimental/operatorx/launch.sh",
            "inferencex-e2e/configs/amd-master.yaml",
            "perf-changelog.yaml",
        )
    }
    assert decided == {
        "configs/amd-master.yaml": "configs/amd-master.yaml",
        "configs/nvidia-master.yaml": "configs/nvidia-master.yaml",
        "configs/runners.yaml": "*",
        "MODELS.md": "MODELS.md",
        "docs/MODELS.md": "MODELS.md",
        "MODELS_zh.md": "MODELS_zh.md",
        "experimental/operatorx/launch.sh": "experimental/operatorx/",
        "inferencex-e2e/configs/amd-master.yaml": "*",
        "perf-changelog.yaml": "*",
    }


def test_a_review_with_a_hostile_base_rule_and_a_long_path_finishes_in_seconds(tmp_path: Path) -> None:
    repo, _ = e2e_checkout(tmp_path)
    base = commit(repo, {".github/CODEOWNERS": lambda text: f"{text}\n*a*a*a*a*a*b @attacker\n"})
    long_name = "inferencex-e2e/benchmarks/" + "a" * 200 + "/" + "a" * 190 + ".yaml"
    head = commit(repo, {long_name: "note: a file with a long name\n"})
    started = time.perf_counter()
    report, _, _ = run_local(LocalRequest(repo=str(repo), base=base, head=head, offline=True))
    assert time.perf_counter() - started < 10
    [owned] = [f for f in report.findings if f.message_id == "codeowners-owners"]
    assert owned.severity is not Severity.BLOCKING and owned.params["pattern"] == "*"
