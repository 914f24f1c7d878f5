"""PR-controlled text is inert in the comment: no pings, no HTML, no broken code spans."""

from __future__ import annotations

import re

from bot import messages, textsafe
from tests.conftest import CHANGELOG, MASTER, replace

HOSTILE_KEY = "evil-@org/team-<img src=x onerror=alert(1)>-`x`"


def test_code_span_survives_backticks_and_pipes() -> None:
    assert textsafe.md_code("a`b") == "``a`b``"
    assert textsafe.md_code("`x`") == "`` `x` ``"
    assert textsafe.md_code("a|b") == "`a|b`"
    assert "\n" not in textsafe.md_code("a\nb")


def test_text_neutralises_mentions_and_html() -> None:
    text = textsafe.md_text("@org/team <details><summary>x</summary> [link](http://x)")
    assert "@org" not in text and "@\u200borg" in text
    assert "<" not in text and "&lt;details&gt;" in text
    assert "\\[link\\]" in text


def test_log_line_defuses_workflow_commands() -> None:
    assert "::" not in textsafe.log_line("::set-output name=x::1")


def test_messages_escape_values_but_not_template_text() -> None:
    params = {"key": HOSTILE_KEY}
    markdown = messages.render("changelog-key-not-covered", "en", params, markdown=True)
    plain = messages.render("changelog-key-not-covered", "en", params)
    assert HOSTILE_KEY in plain
    # Inside a code span GitHub renders mentions and HTML literally, so the whole key must sit in one.
    assert f"`` {HOSTILE_KEY} ``" in markdown


def test_hostile_title_key_and_body_are_inert_in_comment(review_example) -> None:
    from bot.render import render_comment

    body = "@SemiAnalysisAI/core please merge <img src=x> ```\nC9999\n<details>"
    report = review_example(
        {
            MASTER: replace("kimik3-fp4-mi355x-atom-agentic-mtp:", f"'{HOSTILE_KEY}':"),
            CHANGELOG: replace(
                "    - kimik3-fp4-mi355x-atom-agentic-mtp\n  scenario-type:\n    - agentic-coding\n"
                '  description:\n    - "Retune',
                f"    - '{HOSTILE_KEY}'\n  scenario-type:\n"
                '    - agentic-coding\n  description:\n    - "Retune',
            ),
        },
        title="@everyone <script>alert(1)</script> C9999",
        body=body,
    )
    comment = render_comment(report)
    outside_code = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", comment)
    assert (
        "@SemiAnalysisAI" not in outside_code
        and "@org" not in outside_code
        and "@everyone" not in outside_code
    )
    assert "<img" not in outside_code and "<script" not in outside_code
    assert comment.count("<details>") == 1 and comment.count("</details>") == 1
    assert "C9999" in comment  # the consistency warning still reports it
