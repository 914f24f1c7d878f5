"""PR-controlled text is inert in the comment: no pings, no HTML, no broken code spans, no links or
references, and no secret in any form."""

from __future__ import annotations

import re
from pathlib import Path

from bot.findings import Severity, finding
from bot.output import messages, report_json, textsafe
from bot.output.messages import en
from bot.output.render import render_comment
from bot.report import Report
from tests.conftest import CHANGELOG, MASTER, RECIPE, replace
from tests.mdcheck import live_links, parse_html, to_html

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
    assert comment.count("<details>") == comment.count("</details>")
    assert comment.count("<summary>中文</summary>") == 1
    assert "C9999" in comment  # the consistency warning still reports it


# --- links and references (issue #15, item 9) -------------------------------------------------------

LINKY = (
    "https://evil.example/login",
    "www.evil.example",
    "acme/other#5",
    "#7",
    "GH-7",
    "a@b.example",
    "a5c3785ed8d6a35868bc169f07e40e889087fd2e",
)


def _visible(markdown: str) -> str:
    """The text a reader sees outside code (zero-width spaces are invisible)."""
    return "\n".join(parse_html(markdown).texts).replace("\u200b", "")


def test_pr_text_forms_no_link_autolink_or_reference(review_example) -> None:
    payload = "see " + " ".join(LINKY)
    report = review_example(
        {RECIPE: replace("TOTAL_CPU_DRAM_GB: '1799'", f"TOTAL_CPU_DRAM_GB: '{payload}'")},
        title=payload,
        body=payload,
    )
    [dram] = [f for f in report.findings if f.message_id == "dram-total-mismatch"]
    assert payload in en(dram)  # the JSON report keeps the value as it was written
    for lang in ("both", "en", "zh"):
        comment = render_comment(report, lang=lang)
        assert live_links(comment) == [], lang
        assert payload in _visible(comment)  # and the comment still reads the same


def test_numbers_from_the_pr_beside_catalog_text_form_no_reference(review_example) -> None:
    """Catalog text such as `entry #{{ index }}`: the number is the PR's, the `#` the catalog's."""
    edit = replace("Raise the concurrency ceiling from 64 to 128", "Raise the ceiling to 256")
    report = review_example({CHANGELOG: edit})
    assert any(f.message_id == "changelog-edited" and "#2" in en(f) for f in report.findings)
    for lang in ("both", "en", "zh"):
        comment = render_comment(report, lang=lang)
        assert live_links(comment) == [], lang
    assert "entry #2 was edited" in _visible(render_comment(report, lang="en"))


def test_inside_a_code_span_nothing_links_and_nothing_changes() -> None:
    for value in LINKY:
        markdown = f"- {textsafe.md_code(value)}"
        assert live_links(markdown) == [], value
        assert f"<code>{value}</code>" in to_html(markdown)


# --- secrets are cut out before anything is escaped (issue #15, item 7) -----------------------------

UNREGISTERED = "ghs_" + "Zq3_" * 9  # shaped like an installation token, never registered
REGISTERED = "s3cr3t_registry_pass_word"  # an underscore in it, as markdown escaping sees one


def _unescaped(text: str) -> str:
    return text.replace("\\", "")


def _leaks(text: str) -> list[str]:
    return [s for s in (REGISTERED, UNREGISTERED) if s in text or s in _unescaped(text)] + (
        ["ghs\\_"] if "ghs\\_" in text else []
    )


def test_secrets_never_reach_the_comment_summary_report_or_log() -> None:
    import io
    import json

    from bot.catalog import msg
    from bot.github_action.console import Console
    from bot.output import summary

    stream = io.StringIO()
    console = Console(stream)
    console.add_secrets([REGISTERED])
    detail = f"denied for {REGISTERED} (token {UNREGISTERED})"
    where = {"file": "configs/amd-master.yaml", "line": 3}
    report = Report(
        [
            finding(
                "digest",
                Severity.BLOCKING,
                "digest-not-found",
                image="x:y",
                pin="x@sha",
                detail=detail,
                **where,
            ),
            finding(
                "digest",
                Severity.UNVERIFIED,
                "digest-registry-error",
                host="h",
                image="x",
                pin="p",
                detail=detail,
            ),
        ]
    )
    comment = render_comment(report)
    texts = {
        "comment": comment,
        "summary": summary.summary_text(summary.full_review(report, "both", "a", "b"), [], "both"),
        "report": json.dumps(json.loads(report_json.dumps(report)), ensure_ascii=False),
        "note": summary.with_notes(comment, [msg("action-partial", reason=detail)], "both", 65_536),
    }
    console.info(msg("action-comment-failed", reason=detail))
    console.info(detail)
    texts["log"] = stream.getvalue()
    assert {name: _leaks(text) for name, text in texts.items()} == {name: [] for name in texts}
    assert "denied for \\*\\*\\* (token \\*\\*\\*)" in comment  # cut out, not dropped silently


def test_a_token_github_echoes_in_an_error_never_reaches_the_comment(tmp_path: Path) -> None:
    """The action's own token, echoed by a GitHub error, escaped into the failure comment."""
    from github_fake import FakeGitHub, pull_event

    from bot.example import build_example
    from tests.test_action import act

    example = build_example(tmp_path / "example")
    with FakeGitHub(example.path) as fake:
        fake.add_pull(7, example.base, example.head, title=example.title, body=example.body)
        echo = f"token {fake.token} (and {UNREGISTERED}) lacks pull-requests: read"
        fake.fail("GET", r"/pulls/7$", 403, times=None, message=echo)
        run = act(fake, tmp_path, pull_event(fake, 7))
        assert run.code == 2
        [comment] = [c.body for c in fake.comments.values()]
    assert "GitHub refused access (403: token \\*\\*\\* (and \\*\\*\\*) lacks" in comment
    for text in (comment, run.summary, run.log):
        assert fake.token not in _unescaped(text) and UNREGISTERED not in _unescaped(text)
        assert "ghs\\_" not in text
