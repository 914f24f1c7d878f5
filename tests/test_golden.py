"""Golden files of the review comment (issue #34): the demo and two real PRs (#2709, #2169), in both
languages, exactly as `prbot review --lang both` prints them, so that any change of wording or
layout shows in review as a diff of tests/golden/*.md.

When a change of the comment is intended, regenerate them and read the diff:

    PRBOT_UPDATE_GOLDEN=1 PYTHONPATH=$PWD PRBOT_REAL_WORLD=../shared/real-world \\
        python -m pytest -q tests/test_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.example import ExampleRepo
from bot.local import LocalRequest, run_local
from bot.output.render import render_comment
from tests.conftest import squash_merge

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("PRBOT_UPDATE_GOLDEN") == "1"


def _compare(name: str, comment: str) -> None:
    path = GOLDEN / f"{name}.md"
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(comment, encoding="utf-8")
    assert path.exists(), f"{path} is missing: run with PRBOT_UPDATE_GOLDEN=1 to write it"
    expected = path.read_text(encoding="utf-8")
    assert comment == expected, (
        f"the comment of {name} differs from {path}; if the change is intended, regenerate the golden "
        "files with PRBOT_UPDATE_GOLDEN=1 (see this module's docstring) and review their diff"
    )


def _comment(request: LocalRequest) -> str:
    report, (base, head), _ = run_local(request)
    return render_comment(report, lang="both", base=base, head=head)


def test_the_demo_comment_is_its_golden_file(example: ExampleRepo) -> None:
    _compare("demo", _comment(example.request()))


@pytest.mark.parametrize("number", [2709, 2169])
def test_a_real_pr_comment_is_its_golden_file(history: Path, number: int) -> None:
    """#2709 (kv-offloading none → dram on six points: blocking, each naming the selector) and
    #2169 (an image bump on four keys, with new runs on two)."""
    base, head, subject = squash_merge(history, number)
    request = LocalRequest(repo=str(history), base=base, head=head, title=subject, offline=True)
    _compare(f"pr{number}", _comment(request))
