"""The bundled example PR reviewed end to end, through the CLI as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

from bot.catalog import catalog
from bot.cli import main
from bot.findings import CHECK_IDS
from tests.mdcheck import halves


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True, timeout=120)


def test_demo_comment_is_clean_and_bilingual() -> None:
    done = run_cli("demo")
    assert done.returncode == 0, done.stderr
    comment = done.stdout
    assert comment.startswith("<!-- prbot:sticky -->")
    assert "no blocking issues, no warnings" in comment
    assert "| `kimik3-fp4-mi355x-atom-agentic-mtp` | unchanged (7 concurrencies) | 7 | 56 | ✅ |" in comment
    assert (
        "1 entry appended after the last entry, one empty line before each, covering "
        "`kimik3-fp4-mi355x-atom-agentic-mtp`" in comment
    )
    assert "`pr-link` is the placeholder `XXX`, which InferenceX accepts on a PR" in comment
    english, chinese = halves(comment)
    # The verdict counts what was not checked (no registry in the demo, no PR for the sign-off).
    assert (
        "### ❔ prbot review — no blocking issues, no warnings · 5 not checked"
        " (digest, codeowners, scripts)" in english
    )
    assert "### ❔ prbot 审阅 — 无阻塞问题，无警告 · 5 项未检查（digest、codeowners、scripts）" in chinese
    assert "✅ prbot" not in comment
    # The example ships its launchers and benchmark scripts: what each run executes is checked;
    # only what needs GitHub or a registry is not, each with its reason.
    assert (
        "**launch** — Every run of the changed keys (7) starts a launcher and a benchmark script that exist"
        in english
    )
    not_checked = english.split("<summary>Not checked (5)</summary>", 1)[1].split("</details>", 1)[0]
    said = [line.split(" — ", 1)[0] for line in not_checked.splitlines() if line.startswith("- ")]
    assert said == ["- **digest**"] * 2 + ["- **codeowners**"] * 2 + ["- **scripts**"]
    assert (
        "the demo never contacts a registry" in not_checked and "there is no PR in local mode" in not_checked
    )
    assert "merge conflicts" in not_checked and "launch" not in not_checked
    assert "| `kimik3-fp4-mi355x-atom-agentic-mtp` | 未变（7 个并发） | 7 | 56 | ✅ |" in chinese
    # Both halves carry the same checks and the same numbers.
    for text in ("1028 GB", "1799 GB", "override_tp8_dcp8_c72_lmcache", "C48"):
        assert text in english and text in chinese
    assert "GPU-hours: 56 (7 runs × 3600 s × 8 GPUs)" in english
    assert "GPU 时间：56 小时（7 次运行 × 3600 秒" in chinese
    assert "#### Blocking" not in english and "#### 阻塞问题" not in chinese


def test_demo_json_report_has_the_design_shape() -> None:
    done = run_cli("demo", "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report) == {"verdict", "findings", "published_sets", "changes", "sweep_plan"}
    assert report["verdict"] == "clean"
    keys = {"check", "severity", "config_key", "file", "line", "message_en", "message_zh", "suggestion", "id"}
    for item in report["findings"]:
        assert set(item) == keys
        assert item["id"] in catalog()  # the stable message id tools key on
        assert item["check"] in CHECK_IDS
        assert item["severity"] in {"blocking", "warning", "info", "verified", "unverified"}
        assert isinstance(item["message_en"], str) and item["message_en"]
        assert isinstance(item["message_zh"], str) and item["message_zh"]
        assert item["line"] is None or isinstance(item["line"], int)
    assert report["published_sets"] == {
        "kimik3-fp4-mi355x-atom-agentic-mtp": {
            "base": [1, 4, 14, 16, 48, 56, 72],
            "head": [1, 4, 14, 16, 48, 56, 72],
        }
    }
    changes = report["changes"]["kimik3-fp4-mi355x-atom-agentic-mtp"]
    common = {s["path"]: (s["base"], s["head"]) for s in changes["common"]}
    assert common["image"] == ("rocm/atom-dev:nightly_202610131505", "rocm/atom-dev:nightly_202610281457")
    assert common["roles.agg.env.AITER_FLYDSL_USE_HERD"] == (None, "1")  # the herd GEMMs, everywhere
    runs = {r["concurrency"]: r for r in changes["runs"]}
    assert {r["status"] for r in runs.values()} == {"changed"}
    for c in (4, 14, 16):  # only the explicit `ATOM_MONO_ENABLE=0` the PR text names
        assert [(s["path"], s["base"], s["head"]) for s in runs[c]["settings"]] == [
            ("roles.agg.env.ATOM_MONO_ENABLE", None, "0")
        ]
    c1 = {s["path"]: s["head"] for s in runs[1]["settings"]}
    assert c1["roles.agg.env.ATOM_MONO_ENABLE"] == "1" and c1["roles.agg.args.max-num-seqs"] == 2
    c48 = {s["path"]: (s["base"], s["head"]) for s in runs[48]["settings"]}
    assert c48["dram-utilization"] == ("0.343", "0.6") and c48["benchmark.env.TOTAL_CPU_DRAM_GB"] == (
        "1028",
        "1799",
    )
    for run in changes["runs"]:
        assert set(run) == {"concurrency", "topology", "variant_base", "variant_head", "status", "settings"}
        assert run["topology"]["tp"] == 8 and run["variant_head"] == run["variant_base"]
        assert all(set(s) >= {"path", "base", "head"} for s in run["settings"])
    plan = report["sweep_plan"]["keys"]["kimik3-fp4-mi355x-atom-agentic-mtp"]
    assert [r["concurrency"] for r in plan["runs"]] == [1, 4, 14, 16, 48, 56, 72]
    assert plan["canary"]["concurrency"] == 1 and plan["gpu_hours"] == 56.0
    # Every check says something; the ones not built yet say so instead of passing.
    said = {item["check"] for item in report["findings"]}
    assert said == set(CHECK_IDS)


def test_single_language_output() -> None:
    english = run_cli("demo", "--lang", "en").stdout
    chinese = run_cli("demo", "--lang", "zh").stdout
    assert "中文" not in english and "审阅" not in english
    assert "prbot 审阅" in chinese and "What was checked" not in chinese


def test_bad_ref_is_one_line_and_exit_2(example, capsys) -> None:
    code = main(["review", "--repo", str(example.path), "--base", "no-such-ref", "--head", example.head])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines()[0].startswith("prbot: unknown ref 'no-such-ref'")
    assert "Traceback" not in err


def test_not_a_repository_is_exit_2(tmp_path, capsys) -> None:
    code = main(["review", "--repo", str(tmp_path), "--base", "main"])
    err = capsys.readouterr().err
    assert code == 2 and "is not a git repository" in err and "Traceback" not in err


def test_missing_settings_file_is_one_line_per_language_and_exit_2(tmp_path, example) -> None:
    missing = str(tmp_path / "nonexistent.yml")
    for args in (["demo"], ["review", "--repo", str(example.path), "--base", example.base]):
        done = run_cli(*args, "--config", missing)
        assert done.returncode == 2, args
        assert done.stdout == ""
        assert done.stderr == (
            f"prbot: cannot read settings file {missing}: No such file or directory\n"
            f"prbot: 无法读取设置文件 {missing}：No such file or directory\n"
        )


def test_review_of_refs_matches_demo(example) -> None:
    done = run_cli(
        "review",
        "--repo",
        str(example.path),
        "--base",
        example.base,
        "--head",
        example.head,
        "--label",
        "full-sweep-fail-fast",
        "--offline",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verdict"] == "clean"


def test_the_command_exits_at_once_with_its_output_whole_and_its_status(tmp_path) -> None:
    """`prbot review` skips the interpreter's teardown (os._exit): stdout and stderr must still be
    flushed whole, and the exit status kept, also when stdout is a file."""
    out = tmp_path / "report.json"
    with out.open("wb") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "bot", "demo", "--format", "json"],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["verdict"] == "clean" and len(report["findings"]) > 5
    english, chinese = done.stderr.splitlines()
    assert english.startswith("prbot: clean — ") and english.endswith(" s")
    assert chinese.startswith("prbot: 无问题 — ") and chinese.endswith(" 秒")


def test_a_settings_file_is_validated_with_one_line_errors(tmp_path, example) -> None:
    """`agentic-duration-s: -5` once gave "GPU-hours: -0.08"; `primary-labels: 5` crashed a check."""
    cases = {
        "agentic-duration-s: -5\n": "agentic-duration-s must be a positive whole number, not -5",
        "agentic-duration-s: true\n": "agentic-duration-s must be a positive whole number, not True",
        "primary-labels: 5\n": "primary-labels must be a list of names, not 5",
        "primary-labels: [full-sweep-enabled, '']\n": "primary-labels must be a list of names",
        "signoff-phrase: 12\n": "signoff-phrase must be a non-empty text, not 12",
        "recommended-label: sweep-everything\n": "recommended-label must be one of primary-labels",
        "sweeps: 3\n": "unknown setting 'sweeps' (known: primary-labels,",
    }
    for text, error in cases.items():
        settings = tmp_path / "prbot.yml"
        settings.write_text(text)
        done = run_cli(
            "review", "--repo", str(example.path), "--base", example.base, "--config", str(settings)
        )
        assert done.returncode == 2 and done.stdout == "", text
        assert done.stderr.startswith(f"prbot: settings file {settings}, line 1: ") and error in done.stderr
        assert len(done.stderr.strip().splitlines()) == 2  # one line in each language
    good = tmp_path / "good.yml"
    good.write_text("primary-labels: full-sweep-enabled\nrecommended-label: full-sweep-enabled\n")
    assert run_cli("demo", "--config", str(good)).returncode == 0
