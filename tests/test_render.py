"""The comment of a huge review: cut to GitHub's limit without rendering what is cut away."""

from __future__ import annotations

import pytest

from bot import messages
from bot.findings import Severity, finding
from bot.render import COMMENT_LIMIT, fit, render_comment
from bot.report import Report


def _huge_report() -> Report:
    runs = [(c, None) for c in (1, 2, 4, 8, 16, 32, 64, 128)]
    plan = {
        "count": 8,
        "changed": 8,
        "evals": 0,
        "append_only": False,
        "canary": 1,
        "runs": runs,
        "removed": [],
    }
    plan["duration"] = 600
    plans = [
        finding("sweep-plan", Severity.INFO, "sweep-key-plan", config_key=f"key-{i}", key=f"key-{i}",
                gpus=[8], gpu_hours=1.5, untimed=0, **plan)
        for i in range(2_000)
    ]  # fmt: skip
    return Report(plans, {}, {}, {})


def test_a_huge_comment_is_the_whole_comment_cut_and_renders_only_what_it_shows(monkeypatch) -> None:
    report = _huge_report()
    whole = render_comment(report, limit=None)
    assert len(whole) > 5 * COMMENT_LIMIT

    rendered: list[str] = []
    real = messages.render

    def counting(message_id, lang, params, *, markdown=False):  # type: ignore[no-untyped-def]
        rendered.append(message_id)
        return real(message_id, lang, params, markdown=markdown)

    monkeypatch.setattr(messages, "render", counting)
    comment = render_comment(report)
    assert comment == fit(whole, "both")
    assert len(comment) <= COMMENT_LIMIT and "key-0" in comment and "key-1999" not in comment
    assert rendered.count("sweep-key-plan") < 1_000  # the whole comment renders 4,000: 2,000 per language


@pytest.mark.parametrize("lang", ["en", "zh", "both"])
def test_a_short_comment_is_rendered_whole(lang: str) -> None:
    report = Report(_huge_report().findings[:3], {}, {}, {})
    assert render_comment(report, lang=lang) == render_comment(report, lang=lang, limit=None)
