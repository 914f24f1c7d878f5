"""The comment of a huge review: cut to GitHub's limit without rendering what is cut away."""

from __future__ import annotations

import re

import pytest

from bot.findings import Severity, finding
from bot.output import messages, textsafe
from bot.output.render import COMMENT_LIMIT, render_comment
from bot.report import Report
from tests.mdcheck import halves, leaks, live_links


def _huge_report() -> Report:
    plan = {"count": 8, "changed": 8, "evals": 0, "append_only": False, "canary": 1, "removed": 0}
    plan |= {"canary_topology": None, "duration": 600, "gpus": [[8, 8]], "gpu_hours": 1.5}
    plan |= {"timed": 8, "untimed": 0, "no_gpus": 0}
    plans = [
        finding("sweep-plan", Severity.INFO, "sweep-key-plan", config_key=f"key-{i}", key=f"key-{i}", **plan)
        for i in range(2_000)
    ]
    return Report(plans, {}, {}, {})


def test_a_huge_comment_keeps_both_languages_and_renders_only_what_it_shows(monkeypatch) -> None:
    report = _huge_report()
    whole = render_comment(report, target=None)
    assert len(whole) > 5 * COMMENT_LIMIT

    rendered: list[str] = []
    real = messages.render

    def counting(message_id, lang, params, *, markdown=False):  # type: ignore[no-untyped-def]
        rendered.append(message_id)
        return real(message_id, lang, params, markdown=markdown)

    monkeypatch.setattr(messages, "render", counting)
    comment = render_comment(report)
    assert len(comment) <= COMMENT_LIMIT and "key-0" in comment and "key-1999" not in comment
    english, chinese = halves(comment)
    shown = set(re.findall(r"`key-\d+`", english))
    assert "prbot 审阅 —" in chinese and shown == set(re.findall(r"`key-\d+`", chinese))  # the same
    assert "not shown here" in english and "未在此显示" in chinese
    assert rendered.count("sweep-key-plan") < 1_000  # the whole comment renders 4,000: 2,000 per language


@pytest.mark.parametrize("lang", ["en", "zh", "both"])
def test_a_short_comment_is_rendered_whole(lang: str) -> None:
    report = Report(_huge_report().findings[:3], {}, {}, {})
    assert render_comment(report, lang=lang) == render_comment(report, lang=lang, target=None)


def test_a_cut_never_splits_a_code_span() -> None:
    """What was inside code (a mention, a tag, a reference) must not come out of it when cut."""
    text = (
        "pins " + textsafe.md_code("@org/team <img src=x> #7 ``x") + " and " + textsafe.md_code("@a") + " ok"
    )
    for limit in range(1, len(text) + 2):
        cut = textsafe.cut_markdown(text, limit)
        assert len(cut) <= limit and (cut == text or cut.endswith("…"))
        assert not leaks(f"- {cut}") and not live_links(f"- {cut}"), cut
