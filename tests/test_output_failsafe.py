"""#23 item 1: nothing after the checks can leave an earlier verdict up, and integers of any size
are shown shortened, never a crash: in the comment, the JSON report, the job log and on stderr."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import MASTER, RECIPE, commit, replace
from github_fake import pull_event
from test_action import PR, _serve, act, stickies

from bot.cli import main
from bot.example import ExampleRepo
from bot.output import messages, report_json

HEX = "0x" + "f" * 3_600  # 4,335 decimal digits: over Python's 4,300-digit limit for int → str
SHORT_EN = "0xffffffffff…ffffffffff (3,600 hex digits)"
SHORT_ZH = "0xffffffffff…ffffffffff（共 3,600 位十六进制数字）"
C72_DEFECT = "TOTAL_CPU_DRAM_GB: '1799'\n"  # the last one in the recipe: C72's
CONC_LIST = "conc-list: [1, 4], spec-decoding"


def _push_2(example: ExampleRepo) -> str:
    """The issue's second push: a real C72 DRAM defect and `conc-list: [1, 4, 0x<3,600 hex digits>]`."""
    recipe = (example.path / RECIPE).read_text(encoding="utf-8")
    at = recipe.rindex(C72_DEFECT)
    wrong = recipe[:at] + "TOTAL_CPU_DRAM_GB: '1800'\n" + recipe[at + len(C72_DEFECT) :]
    conc = replace(CONC_LIST, f"conc-list: [1, 4, {HEX}], spec-decoding")
    return commit(example.path, {RECIPE: wrong, MASTER: conc}, "push 2")


def _cli(
    capsys: pytest.CaptureFixture[str], example: ExampleRepo, head: str, *options: str
) -> tuple[int, str, str]:
    argv = [
        "review",
        "--repo",
        str(example.path),
        "--base",
        example.base,
        "--head",
        head,
        "--offline",
        *options,
    ]
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---------------------------------------------------------------- integers of any size


def test_the_huge_concurrency_is_a_finding_of_its_own_and_shown_shortened(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's push 2 through the CLI: it printed a traceback and no JSON; now the comment
    and the JSON report have the DRAM defect and the concurrency out of range, its number
    shortened in each language."""
    head = _push_2(example)
    code, out, err = _cli(capsys, example, head)
    assert code == 1 and "Traceback" not in err
    assert "prbot review — 2 blocking issues" in out
    assert "pins `TOTAL_CPU_DRAM_GB` 1800, but the budget is 1799" in out
    seen = out.replace("\u200b", "")  # as GitHub shows it: the zero-width spaces that break links
    line = next(row for row in seen.splitlines() if "names the concurrency" in row)
    assert (
        f"`conc-list` names the concurrency {SHORT_EN}, which no benchmark can run (at most 1,000,000" in line
    )
    assert f"`{MASTER}:56`" in line
    assert f"中的并发 {SHORT_ZH} 是任何基准测试都无法运行的" in seen

    code, out, err = _cli(capsys, example, head, "--format", "json")
    assert code == 1 and err.count("\n") == 2
    report = json.loads(out)
    assert report["verdict"] == "blocking"
    [finding] = [f for f in report["findings"] if "names the concurrency" in f["message_en"]]
    assert (finding["check"], finding["severity"], finding["line"]) == ("consistency", "blocking", 56)
    assert SHORT_EN in finding["message_en"] and SHORT_ZH in finding["message_zh"]


def test_a_huge_number_in_a_setting_is_shortened_in_the_json_report_and_the_comment(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """The changes view carries every setting of a run, shown or not: a huge integer in the
    13th changed setting crashed the JSON report after the comment was written. In the JSON
    report an integer beyond 64 bits is a string (exact up to 40 digits, else shortened)."""
    env = "".join(f"        EXTRA_{i:02}: '{i}'\n" for i in range(12))
    env += f"        EXTRA_12: {HEX}\n        EXTRA_13: {2**70}\n        EXTRA_14: -{10**45}\n"
    head = commit(
        example.path,
        {
            RECIPE: replace(
                "        ATOM_STATE_CHECKPOINT_DEMAND: '1'\n",
                "        ATOM_STATE_CHECKPOINT_DEMAND: '1'\n" + env,
            )
        },
    )
    code, out, err = _cli(capsys, example, head, "--format", "json")
    assert code == 0 and "Traceback" not in err
    report = json.loads(out)
    settings = {
        s["path"].rsplit(".", 1)[-1]: s["head"]
        for view in report["changes"].values()
        for run in view["runs"]
        for s in run["settings"]
    } | {
        s["path"].rsplit(".", 1)[-1]: s["head"] for view in report["changes"].values() for s in view["common"]
    }
    assert settings["EXTRA_12"] == SHORT_EN
    assert settings["EXTRA_13"] == str(2**70)
    assert settings["EXTRA_14"] == "-1000000000…0000000000 (46 digits)"
    assert settings["EXTRA_11"] == "11"

    code, out, _ = _cli(capsys, example, head, "--lang", "zh")
    assert code == 0 and "无阻塞问题" in out


@pytest.mark.parametrize(
    ("value", "en", "zh"),
    [
        (12345, "12345", "12345"),
        (10**40 - 1, "9" * 40, "9" * 40),
        (10**40, "1000000000…0000000000 (41 digits)", "1000000000…0000000000（共 41 位）"),
        (-int("7" * 4_000), "-7777777777…7777777777 (4,000 digits)", "-7777777777…7777777777（共 4,000 位）"),
        (int(HEX, 16), SHORT_EN, SHORT_ZH),
        (int("1" + "0" * 2_000_000, 2), "0x1000000000…0000000000 (500,001 hex digits)", None),
    ],
    ids=["small", "40-digits", "41-digits", "4000-digits", "3600-hex-digits", "2M-bits"],
)
def test_integers_of_any_size_render_in_every_format(value: int, en: str, zh: str | None) -> None:
    """A finding's number as plain text (JSON, log, stderr) and markdown (comment), in both languages."""
    params = {"key": "k", "field": "conc-end", "value": value, "limit": 10}
    plain = messages.render("master-conc-out-of-range", "en", params)
    assert f"names the concurrency {en}, which" in plain
    markdown = messages.render("master-conc-out-of-range", "en", params, markdown=True)
    assert f"names the concurrency {en}, which" in markdown.replace("\u200b", "")
    if zh is not None:
        assert f"中的并发 {zh} 是" in messages.render("master-conc-out-of-range", "zh", params)
    listed = messages.render("master-bad-conc-list", "en", {"key": "k", "value": [1, value]})
    assert f"not [1, {en}]." in listed or listed.endswith("….")  # clipped at 300 characters


# ---------------------------------------------------------------- a failure after the checks


def _fail_in(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")

    monkeypatch.setattr(module, name, broken)


@pytest.mark.parametrize("where", ["render", "report"])
def test_a_failure_after_the_checks_replaces_the_earlier_verdict(
    example: ExampleRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """The issue's scenario: push 1 is clean; on push 2 something after the checks fails (the
    comment's rendering, or the JSON report after the comment was posted). The sticky comment
    must then say that the review of push 2 failed, with push 2's head in its footer; the JSON
    report is still written, with verdict `error` and the findings; exit 2, no traceback."""
    from bot.output import summary

    for fake in _serve(example):
        first = act(fake, tmp_path, pull_event(fake, PR, "opened"))
        assert first.code == 0 and "no blocking issues" in stickies(fake)[0].body
        fake.pulls[PR].head = head = _push_2(example)
        if where == "render":
            _fail_in(monkeypatch, summary, "review_texts")
        else:
            _fail_in(monkeypatch, report_json, "json_bytes")
        run = act(fake, tmp_path, pull_event(fake, PR))
        assert run.code == 2 and run.outputs["verdict"] == "error"
        [sticky] = stickies(fake)
        body = sticky.body
        assert "no blocking issues" not in body and "blocking issue" not in body
        assert "### prbot review — could not complete" in body and "### prbot 审阅 — 未能完成" in body
        assert f"The checks of head `{head[:12]}` ran, but prbot stopped on an unexpected ValueError" in body
        assert f"head `{head[:12]}` 的检查已经运行" in body
        assert re.search(rf"<sub>Deterministic review by prbot .* → head `{head[:12]}`", body)
        assert f"::error title=prbot::The checks of head {head[:12]} ran" in run.log
        assert "Traceback" not in run.log and "4300 digits" not in run.log + body
        assert "could not complete" in run.summary and "no blocking issues" not in run.summary
        report = json.loads(Path(run.outputs["report"]).read_text(encoding="utf-8"))
        assert report["verdict"] == "error"
        assert report["error"]["message_en"].startswith(f"The checks of head {head[:12]} ran")
        assert report["error"]["message_zh"].startswith(f"head {head[:12]} 的检查已经运行")
        messages_en = [f["message_en"] for f in report["findings"]]
        assert any("pins TOTAL_CPU_DRAM_GB 1800, but the budget is 1799" in m for m in messages_en)


def test_the_action_shows_a_huge_number_instead_of_crashing(example: ExampleRepo, tmp_path: Path) -> None:
    """Without any fault injected, the issue's push 2 is an ordinary blocking review everywhere."""
    for fake in _serve(example):
        fake.pulls[PR].head = _push_2(example)
        run = act(fake, tmp_path, pull_event(fake, PR))
        assert run.code == 1 and run.outputs["verdict"] == "blocking"
        body = stickies(fake)[0].body
        assert "prbot review — 2 blocking issues" in body and "3,600 hex digits" in body
        report = json.loads(Path(run.outputs["report"]).read_text(encoding="utf-8"))
        assert report["verdict"] == "blocking"
        assert "names the concurrency 0xffffffffff" in run.log  # the annotation


@pytest.mark.parametrize(
    ("lang", "lines"),
    [
        ("both", ["The checks of head", "head "]),
        ("en", ["The checks of head"]),
        ("zh", ["head "]),
    ],
)
def test_the_cli_says_the_head_has_no_verdict_in_one_line_per_language(
    example: ExampleRepo,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
    lines: list[str],
) -> None:
    import bot.output.render

    head = _push_2(example)
    _fail_in(monkeypatch, bot.output.render, "render_comment")
    code, out, err = _cli(capsys, example, head, "--lang", lang)
    assert code == 2 and "Traceback" not in err
    said = err.splitlines()
    assert len(said) == len(lines) and all(
        s.startswith(f"prbot: {w}") for s, w in zip(said, lines, strict=True)
    )
    assert (
        f"{head[:12]} ran, but prbot stopped on an unexpected ValueError (test_output_failsafe.py:" in err
        or (lang == "zh" and "的检查已经运行，但 prbot 在输出结果时因意外的 ValueError" in err)
    )
    assert "blocking issue" not in out and "阻塞问题" not in out
    assert ("could not complete" in out) == (lang != "zh") and ("未能完成" in out) == (lang != "en")

    _fail_in(monkeypatch, report_json, "json_bytes")
    code, out, err = _cli(capsys, example, head, "--lang", lang, "--format", "json")
    assert code == 2 and len(err.splitlines()) == len(lines) and "Traceback" not in err
    report = json.loads(out)
    assert report["verdict"] == "error" and report["error"]["message_en"].startswith("The checks of head")
    assert any(f["severity"] == "blocking" for f in report["findings"])  # what the checks found


def test_a_report_that_cannot_be_written_is_still_an_error_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """When what failed is the report itself, the JSON report still says `error`, and why."""
    from bot.catalog import msg
    from bot.report import Report

    def broken(_report: Report) -> dict:
        raise MemoryError

    monkeypatch.setattr(report_json, "to_json", broken)
    reason = msg("output-failed", head="0123456789ab", error="MemoryError", where="render.py:1")
    written = json.loads(report_json.failed_json(reason, Report([])))
    assert written == {
        "verdict": "error",
        "error": {
            "message_en": "The checks of head 0123456789ab ran, but prbot stopped on an unexpected "
            "MemoryError (render.py:1) while reporting their result, so this head has no verdict: "
            "treat it as not reviewed. This is a bug in prbot.",
            "message_zh": messages.text(reason, "zh"),
        },
        "findings": [],
        "published_sets": {},
        "changes": {},
        "sweep_plan": {},
    }


def test_a_huge_integer_beside_a_wrong_item_is_quoted_shortened(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `conc-list` that is wrong for another reason (a list as an item) that holds a huge
    integer: quoting the wrong value in the finding must not raise (the review used to end with
    exit 2 and no finding); it blocks, the value quoted by its hex digits."""
    conc = replace(CONC_LIST, f"conc-list: [1, [{HEX}]], spec-decoding")
    head = commit(example.path, {MASTER: conc}, "a string and a huge integer in conc-list")
    code, out, err = _cli(capsys, example, head, "--format", "json")
    assert code == 1 and "Traceback" not in err
    report = json.loads(out)
    wrong = [f for f in report["findings"] if f["severity"] == "blocking" and f["file"] == MASTER]
    assert any("0xffffffff" in f["message_en"] for f in wrong), [f["message_en"] for f in wrong]
