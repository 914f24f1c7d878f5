"""Every value of the PR's files, replaced by a hostile one, still gives a review: findings, a JSON
report and a comment in every language, never a crash.

Each case replaces the value of one `name: value` line (or one `- item` line) of the example PR's
head with a value that Python, JSON or a reader's assumptions trip on: integers of thousands of
digits (Python cannot write them in decimal), a date (JSON has none), NaN, a mapping or a list
where text is expected. The lines are drawn with fixed seeds, so the cases are the same on every
run, and each value is tried on each line drawn. Each of these once ended the review with
`review-crashed` (exit 2, no verdict) or left a comment that could not be rendered."""

from __future__ import annotations

import random
import re

import pytest
from test_hostile import assert_sound

from bot.example import ExampleRepo
from tests.conftest import CHANGELOG, MASTER, RECIPE

HUGE = "0x" + "f" * 5000  # 6,021 decimal digits
VALUES = {
    "huge": HUGE,
    "huge-negative": "-" + HUGE,
    "huge-in-list": f"[{HUGE}]",
    "huge-in-mapping": f"{{a: {HUGE}}}",
    "digits-text": "'" + "9" * 5000 + "'",
    "date": "2024-01-01",
    "nan": ".nan",
    "mapping": "{}",
    "nested-list": "[1, [2, [3]]]",
}
FILES = (MASTER, "configs/nvidia-master.yaml", "configs/runners.yaml", CHANGELOG, RECIPE)
LINES_PER_FILE = 2
# What stays of a line when its value is replaced: `  name: ` or `  - name: ` or `  - `.
_BEFORE_VALUE = re.compile(r"^(\s*(?:- )?[\w.-]+:[ \t]*|\s*- )(?=[^\s#])")


@pytest.mark.parametrize("name", VALUES)
@pytest.mark.parametrize("draw", range(LINES_PER_FILE))
@pytest.mark.parametrize("path", FILES)
def test_a_hostile_value_anywhere_is_reviewed_not_crashed(
    example: ExampleRepo, review_example, path: str, draw: int, name: str
) -> None:
    lines = (example.path / path).read_text(encoding="utf-8").split("\n")
    values = [i for i, line in enumerate(lines) if _BEFORE_VALUE.match(line)]
    index = random.Random(f"{path}:{draw}").choice(values)

    def mutate(text: str) -> str:
        edited = text.split("\n")
        edited[index] = _BEFORE_VALUE.match(edited[index]).group(1) + VALUES[name]
        return "\n".join(edited)

    assert_sound(review_example({path: mutate}))
