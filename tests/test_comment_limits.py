"""Issue #15, item 6: cutting to GitHub's limits never erases the review.

Three attacks from the issue, each through a real review: one finding of 2.3 MB (a real registry on
127.0.0.1 answering an image index with 30,000 child manifests), 3,000 duplicate keys in front of
a real DRAM finding, and a bilingual comment over the limit. Each time the comment (65,536
characters) and the job summary (1 MiB of UTF-8) keep the headline, every blocking finding in both
languages and the Chinese section; GitHub's renderer (cmark-gfm) shows every section closed; and
the note saying where the rest is tells the truth.
"""

from __future__ import annotations

import json

import httpx
import pytest
from registry_fixture import (  # noqa: F401
    OCI_INDEX,
    LocalRegistry,
    allow_loopback_fixture,
    local_registry_fixture,
)

from bot.findings import Severity, finding
from bot.output import report_json, summary
from bot.output.messages import en
from bot.output.render import COMMENT, COMMENT_LIMIT, Target, render_comment
from bot.report import Report
from tests.conftest import MASTER, RECIPE, replace
from tests.mdcheck import halves, leaks, live_links, parse_html

SUMMARY_NOTE = "The job summary of this run holds the whole review"
REPORT_NOTE = "the file named by its `report` output) has every finding, none of them shortened"
DRAM_1800 = replace("TOTAL_CPU_DRAM_GB: '1799'", "TOTAL_CPU_DRAM_GB: '1800'")


def _texts(report: Report) -> tuple[str, str]:
    """The comment and the job summary of the review, as the action writes them."""
    comment, full = summary.review_texts(report, "both", "base", "head")
    return comment, summary.summary_text(full, [], "both")


def assert_whole(text: str, target: Target) -> None:
    """Within the limit; both languages' headline, sections and footer rendered as such (no code
    fence or <details> left open swallowed them); nothing live."""
    assert target.size(text) <= target.limit
    html = parse_html(text)
    assert html.tags["h3"] == 2 and html.tags["sub"] == 2, html.tags  # two headlines, two footers
    assert html.tags["details"] == html.tags["/details"] == html.tags["summary"] and "中文" in html.texts
    english, chinese = _halves(html.outline)
    # Both first screens on top, the English one first.
    assert english[0][0] == "h3" and "prbot review" in english[0][1] and english[1][0] == "h3"
    assert "prbot 审阅" in english[1][1]
    english = english[2:]
    # The same sections in both languages, each a heading or a fold (not swallowed by code).
    assert [tag for tag, _ in english] == [tag for tag, _ in chinese] and len(english) >= 4, html.outline
    assert ("h4", "Blocking") in english and ("h4", "阻塞问题") in chinese
    assert html.tags["table"] >= 2  # the changed keys, in each language
    assert not leaks(text) and not live_links(text)


def _halves(titles: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The titles of the English part and of the Chinese part (after its `中文` fold)."""
    at = titles.index(("summary", "中文"))
    return titles[:at], titles[at + 1 :]


def blocking(text: str, lang: str) -> str:
    """The blocking section of one language."""
    english, chinese = halves(text)
    part = english if lang == "en" else chinese
    heading = "#### Blocking" if lang == "en" else "#### 阻塞问题"
    section = part.split(heading, 1)[1]
    return min((section.split(end, 1)[0] for end in ("\n#### ", "\n<details>", "\n<sub>")), key=len)


def test_render_stays_within_a_tiny_limit_too() -> None:
    """The sizes add up exactly: the comment fills its budget without going over it."""
    report = Report(
        [finding("labels", Severity.BLOCKING, "labels-no-sweep-entry-missing") for _ in range(400)]
    )
    for limit in (6_000, 9_000, 20_000):
        target = Target("comment", limit)
        text = render_comment(report, target=target)
        assert limit - 400 < len(text) <= limit


# --- one finding of 2.3 MB ------------------------------------------------------------------------


def _push_huge_index(registry: LocalRegistry, children: int) -> str:
    """Tag `huge` in the test registry: an image index listing `children` platform manifests."""
    repo = "rocm/atom-dev"
    with httpx.Client(base_url=registry.url, timeout=30) as http:
        # Only a digest and a platform per child, to stay under the registry's 4 MiB.
        entry = {"digest": registry.amd64_digest}
        index = {
            "schemaVersion": 2,
            "mediaType": OCI_INDEX,
            "manifests": [
                {**entry, "platform": {"os": "l", "architecture": f"{i}"}} for i in range(children)
            ],
        }
        body = json.dumps(index, separators=(",", ":")).encode()
        put = http.put(f"/v2/{repo}/manifests/huge", content=body, headers={"Content-Type": OCI_INDEX})
        assert put.status_code == 201, put.text
    return f"{registry.host}/{repo}:huge"


def test_a_registry_answer_of_2mb_leaves_the_review_whole(
    review_example, local_registry: LocalRegistry, allow_loopback
) -> None:
    image = _push_huge_index(local_registry, 30_000)
    old_pin = "rocm/atom-dev@sha256:96a9614276518c2619e88800dec5f276bc76a95691331b4abb2210184e1431af"
    other = local_registry.single_digest  # a digest that is neither the index nor one of its children
    report = review_example(
        {
            MASTER: replace("image: rocm/atom-dev:nightly_202610281457", f"image: {image}"),
            RECIPE: replace(old_pin, f"{local_registry.host}/rocm/atom-dev@{other}"),
        },
        offline=False,
    )
    [huge] = [f for f in report.findings if f.message_id == "digest-mismatch"]
    assert huge.severity is Severity.BLOCKING and len(en(huge)) > 2_000_000  # the attack
    comment, job_summary = _texts(report)
    for text, target in ((comment, COMMENT), (job_summary, summary.SUMMARY)):
        assert_whole(text, target)
        assert "prbot review — 1 blocking issue" in text and "prbot 审阅 — 1 个阻塞问题" in text
        assert "The recipe pins" in blocking(text, "en") and "… (shortened)" in blocking(text, "en")
        assert "配方固定的是" in blocking(text, "zh") and "……（已缩短）" in blocking(text, "zh")
        # Neither holds the whole finding, so both send the reader to the JSON report, which does.
        assert SUMMARY_NOTE not in text and text.count(REPORT_NOTE) == 1
    assert (
        f"l/29999 {local_registry.amd64_digest}"
        in json.loads(report_json.dumps(report))["findings"][0]["message_en"]
    )


# --- 3,000 duplicate keys in front of a real DRAM finding -----------------------------------------


def test_3000_duplicate_keys_do_not_push_the_dram_finding_out(review_example) -> None:
    flood = replace("      CONC: '4'", "      CONC: '4'" + "\n      CONC: '4'" * 3_000)
    report = review_example({RECIPE: lambda text: DRAM_1800(flood(text))})
    ids = [f.message_id for f in report.of(Severity.BLOCKING)]
    assert ids.count("recipe-duplicate-key") == 3_000 and ids.index("dram-total-mismatch") == 3_000
    comment, job_summary = _texts(report)
    for text, target in ((comment, COMMENT), (job_summary, summary.SUMMARY)):
        assert_whole(text, target)
        assert "prbot review — 3,001 blocking issues" in text
        assert "pins `TOTAL_CPU_DRAM_GB` 1800, but the budget is 1799" in blocking(text, "en")
        assert "设定的 `TOTAL_CPU_DRAM_GB` 为 1800，但预算应为 1799" in blocking(text, "zh")
        assert "TOTAL_CPU_DRAM_GB: '1799'\n" in blocking(text, "en")  # with its suggested change
    assert len(comment) <= COMMENT_LIMIT and "not shown here" in blocking(comment, "en")
    assert "未在此显示" in blocking(comment, "zh")
    whole_summary = "not shown here" not in job_summary
    # The comment names the job summary exactly when the summary holds the whole review.
    assert (SUMMARY_NOTE in comment) == whole_summary and (REPORT_NOTE in comment)


# --- a bilingual comment over the limit -----------------------------------------------------------


@pytest.mark.parametrize("entries", [400, 6_000])
def test_a_bilingual_comment_over_the_limit_keeps_its_chinese_section(review_example, entries: int) -> None:
    """Many appended changelog entries: long "changes"/sweep/notes sections, one blocking finding."""
    from tests.conftest import CHANGELOG

    block = "".join(
        f'\n- config-keys:\n    - kimik3-fp4-mi355x-atom-agentic-mtp\n  description:\n    - "rerun {i}"\n'
        "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n"
        for i in range(entries)
    )
    report = review_example({RECIPE: DRAM_1800, CHANGELOG: lambda text: text + block})
    comment, job_summary = _texts(report)
    assert COMMENT.size(summary.full_review(report, "both", "base", "head")) > COMMENT_LIMIT
    for text, target in ((comment, COMMENT), (job_summary, summary.SUMMARY)):
        assert_whole(text, target)
        assert "prbot 审阅 — " in text and "#### 阻塞问题" in text
        assert "<details><summary>已检查的内容（" in text  # the long sections folded, in Chinese too
        assert "设定的 `TOTAL_CPU_DRAM_GB` 为 1800" in blocking(text, "zh")
    assert "本评论已按 GitHub 65,536 字符的上限截断" in comment
    cut_summary = "job summary was cut" in job_summary
    assert (SUMMARY_NOTE in comment) != cut_summary
