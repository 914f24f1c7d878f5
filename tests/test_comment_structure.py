"""Issue #17, items 3 and 7: the comment as a reader sees it, rendered by GitHub's own renderer.

Every test renders the comment with cmark-gfm (`tests.mdcheck`) and reads the HTML: the order of
the sections, the cells of the tables, what shows without opening any `<details>`, and that the
Chinese half is the same review. On the seed PR the first screen says what the PR changes at
each concurrency; on the two largest real PRs (#1992, #2263) the first finding that needs action
is within the first 40 lines.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.local import LocalRequest, run_local
from bot.output.render import render_comment
from bot.report import Report
from tests.conftest import MASTER, RECIPE, replace, squash_merge
from tests.mdcheck import halves, leaks, live_links, parse_html

KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"
KEY_HEADER = ["config key", "published set", "sweep runs", "GPU-hours", "verdict"]
RUNS_HEADER = ["concurrency", "variant", "what changed there"]
FIRST_SCREEN = 40  # lines of markdown


def _halves(markdown: str) -> tuple[str, str]:
    return halves(markdown)


def _read(cell: str) -> str:
    """A cell as a reader reads it: word joiners are invisible, a no-break space is a space."""
    return cell.replace("\u2060", "").replace("\u00a0", " ")


def _table(html, header: list[str]) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """The visible table with this header, as its rows by their first cell."""
    tables = [[[_read(cell) for cell in row] for row in rows] for visible, rows in html.tables if visible]
    [rows] = [rows for rows in tables if rows and rows[0] == header]
    return {row[0]: row[1:] for row in rows[1:]}


def _outline(markdown: str) -> list[str]:
    """The comment's parts in order: its headline, its tables, its section headings and folds."""
    return [text if tag != "table" else "<table>" for tag, text in parse_html(markdown).outline]


# --- the seed PR ------------------------------------------------------------------------------------


def test_the_seed_pr_shows_what_changed_at_every_concurrency_without_opening_anything(review_example) -> None:
    english, _ = _halves(render_comment(review_example()))
    html = parse_html(english)
    visible = "".join(html.visible)
    assert "prbot review — no blocking issues, no warnings · 5 not checked" in visible
    assert _table(html, KEY_HEADER) == {KEY: ["unchanged (7 concurrencies)", "7", "56", "✅"]}
    # Once, as common to every concurrency: the image and the HERD settings.
    common = visible.split("Every concurrency:", 1)[1].split("concurrency", 1)[0]
    assert "image rocm/atom-dev:nightly_202610131505 → rocm/atom-dev:nightly_202610281457" in common
    assert "AITER_FLYDSL_USE_HERD set to 1" in common and "AITER_FLYDSL_HERD_MIN_M set to 64" in common
    runs = _table(html, RUNS_HEADER)
    assert list(runs) == ["C1", "C4, C14, C16", "C48", "C56, C72"]
    variant, c1 = runs["C1"]
    assert variant == "override_tp8_c1"
    for setting in (
        "ATOM_MONO_ENABLE set to 1",
        "ATOM_PREFILL_DECODE_INTERVAL set to 1000000",
        "max-num-seqs 8 → 2",
    ):
        assert setting in c1
    assert runs["C4, C14, C16"][1] == "ATOM_MONO_ENABLE set to 0"  # only that, as the PR text says
    for what in (runs["C48"][1], runs["C56, C72"][1]):
        for setting in ("→ 0.6", "LMCACHE_MAX_LOCAL_CPU_SIZE", "→ 224", "OFFLOAD_STATE_CPU_SIZE set to 128"):
            assert setting in what
        assert "ATOM_STATE_CHECKPOINT_DEMAND 0 → 1" in what
    assert "dram-utilization 0.343 → 0.6" in runs["C48"][1] and "0.513 → 0.6" in runs["C56, C72"][1]
    assert not any("HERD" in cell for row in runs.values() for cell in row)  # common: not repeated
    # One list of variants: the changes table, not each check's message again.
    assert visible.count("override_tp8_dcp8_c72_lmcache") == 1


def test_the_seed_pr_has_its_sections_in_order_and_empty_ones_left_out(review_example) -> None:
    english, chinese = _halves(render_comment(review_example()))
    outline = _outline(english)
    not_checked = "5 not checked (digest, codeowners, scripts)"
    title = f"❔ prbot review — no blocking issues, no warnings · {not_checked}"
    assert outline[:3] == [title, "<table>", "What changed"]
    assert [title.split(" (")[0] for title in outline[4:]] == [
        "What was checked", "Notes", "Not checked", "Sweep plan"
    ]  # fmt: skip
    assert "Blocking" not in outline and "Warnings" not in outline  # nothing to say: no section
    assert "— nothing" not in english and "- nothing" not in english
    # The Chinese half: the same parts, the same tables and numbers.
    zh = _outline(chinese)
    assert len(zh) == len(outline) and zh[:3] == [
        "❔ prbot 审阅 — 无阻塞问题，无警告 · 5 项未检查（digest、codeowners、scripts）",
        "<table>",
        "改动内容",
    ]
    assert zh[4].startswith("已检查的内容（") and zh[-1] == "扫描计划"
    html_zh = parse_html(chinese)
    assert _table(html_zh, ["配置键", "并发集合", "扫描运行数", "GPU 时间", "结论"]) == {
        KEY: ["未变（7 个并发）", "7", "56", "✅"]
    }
    variants, what = _table(html_zh, ["并发", "变体", "该处的改动"])["C4、C14、C16"]
    assert what == "ATOM_MONO_ENABLE 设为 0" and variants.startswith("override_tp8_c4、")
    for number in ("1028 GB", "1799 GB", "3,095,781 MiB", "C48"):
        assert number in english and number in chinese


def test_chinese_table_headers_cannot_break_inside_a_word(review_example) -> None:
    """A browser may break a line between any two Chinese characters, and GitHub keeps no `<nobr>`:
    in a narrow column the header read 扫描运 / 行数. Each header joins its characters (GitHub's
    renderer keeps the WORD JOINER); the English headers are left as they are."""
    english, chinese = _halves(render_comment(review_example()))
    headers = [rows[0] for visible, rows in parse_html(chinese).tables if visible and rows]
    assert [[_read(cell) for cell in header] for header in headers] == [
        ["配置键", "并发集合", "扫描运行数", "GPU 时间", "结论"],
        ["并发", "变体", "该处的改动"],
    ]
    for cell in (cell for header in headers for cell in header):
        assert re.search("[\u4e00-\u9fff](?=[\u4e00-\u9fff])| (?=[\u4e00-\u9fff])", cell) is None, cell
    english_headers = [rows[0] for visible, rows in parse_html(english).tables if visible and rows]
    assert english_headers[0] == KEY_HEADER and "\u2060" not in str(english_headers)


def test_blocking_and_warnings_come_right_after_the_key_table(review_example) -> None:
    """C2 added (no variant serves it: blocking) and C72 dropped; the title names C9999 (a warning)."""
    report = review_example(
        {MASTER: lambda text: replace("conc-list: [1, 4]", "conc-list: [1, 2, 4]")(
            replace("conc-list: [48, 56, 72]", "conc-list: [48, 56]")(text))},
        title="kimik3: retune, and C9999",
    )  # fmt: skip
    comment = render_comment(report)
    english, chinese = _halves(comment)
    outline = _outline(english)
    assert outline[1:5] == ["<table>", "Blocking", "Warnings", "What changed"]
    assert _outline(chinese)[1:5] == ["<table>", "阻塞问题", "警告", "改动内容"]
    html = parse_html(english)
    [(published, runs, hours, mark)] = _table(html, KEY_HEADER).values()
    assert published == "+C2 −C72" and mark == "❌"
    assert re.fullmatch(r"\d+( \(\d+ changed\))?", runs) and re.fullmatch(r"[\d,.]+", hours)
    rows = _table(html, RUNS_HEADER)
    assert rows["C2"][1] == "new run" and rows["C72"][1] == "removed run"
    assert not leaks(comment) and not live_links(comment)


def test_settings_from_the_pr_are_inert_and_short_in_the_changes_table(review_example) -> None:
    """A setting name and value made of markup, mentions, links and pipes; a 300-character value."""
    name = "X|<img src=x>"
    value = "@org/team https://evil.example #7 | </details>"
    long_json = "exclude_layer=" + ",".join(f"layer.{i}" for i in range(40))  # text, not JSON
    edit = replace(
        "        ATOM_MONO_ENABLE: '1'\n",
        f"        ATOM_MONO_ENABLE: '1'\n        '{name}': '{value}'\n        LONG: '{long_json}'\n",
    )
    comment = render_comment(review_example({RECIPE: edit}))
    assert len(long_json) > 300 and long_json not in comment  # the JSON report has it whole
    assert not leaks(comment) and not live_links(comment)
    english, _ = _halves(comment)
    html = parse_html(english)
    assert html.tags["details"] == html.tags["/details"]
    [c1] = [row for label, row in _table(html, RUNS_HEADER).items() if label == "C1"]
    assert len(c1) == 2  # the pipes did not split the row into more cells
    assert f"{name} set to {value[:39]}…" in c1[1] or f"{name} set to {value}" in c1[1]
    [long_part] = [part for part in c1[1].split(" · ") if part.startswith("LONG set to ")]
    assert (
        long_part.startswith("LONG set to exclude_layer=layer.0,")
        and len(long_part) <= len("LONG set to ") + 41
    )


# --- the two largest real PRs ---------------------------------------------------------------------


def _real_review(repo: Path, number: int) -> Report:
    """The offline review of the real PR squash-merged as `... (#number)`, titled as it was."""
    base, head, subject = squash_merge(repo, number)
    request = LocalRequest(repo=str(repo), base=base, head=head, title=subject, offline=True)
    return run_local(request)[0]


@pytest.mark.parametrize("number", [1992, 2263])
def test_a_huge_real_pr_shows_its_first_finding_on_the_first_screen(history: Path, number: int) -> None:
    """Hundreds of keys and thousands of runs, summarised per key: the first blocking finding (else
    the first warning) starts within the first 40 lines, in a comment within GitHub's limit."""
    report = _real_review(history, number)
    assert len(report.changes) > 150
    comment = render_comment(report)
    lines = comment.split("\n")
    heading = "#### Blocking" if report.verdict == "blocking" else "#### Warnings"
    assert report.verdict in ("blocking", "warnings") and heading in lines
    first = lines.index(heading) + 1
    assert first < FIRST_SCREEN and lines[first].startswith("- **"), lines[: first + 1]
    english, chinese = _halves(comment)
    html = parse_html(english)
    # Ten keys in the table, the rest in one line; when blocking findings fill the comment (#1992's
    # schema findings), the table's rows give way and a line says so.
    rows, visible = len(_table(html, KEY_HEADER)), "".join(html.visible)
    assert rows == 10 or (rows == 0 and "10 more rows of this table are not shown here" in visible)
    assert "more config keys" in visible
    assert f"<details><summary>What changed ({len(report.changes)})</summary>" in english
    assert "<details><summary>改动内容（" in chinese
    assert not leaks(comment) and not live_links(comment)


def test_gpu_hours_of_runs_without_a_duration_are_not_shown_as_zero() -> None:
    """Fixed-seq-len runs have no set duration: their key's GPU-hours cell says so ("—"), and a
    key with some timed runs shows a lower bound."""
    from bot.output.render import _key_hours

    runs = [{"changed": True}] * 3
    assert _key_hours({"gpu_hours": 0.0, "untimed_runs": 3, "runs": runs}, 3) == "—"
    assert _key_hours({"gpu_hours": 12.5, "untimed_runs": 1, "runs": runs}, 3) == "≥ 12.5"
    assert _key_hours({"gpu_hours": 56.0, "untimed_runs": 0, "runs": runs}, 3) == "56"
