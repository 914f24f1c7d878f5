"""The drafted changelog entry is written in the changelog's own language (issue #34): English,
unless most of the base changelog's newest entries are bilingual (each English line, then its
Chinese, as InferenceX's entries came to be written); then the draft is bilingual too, in the
review comment, the inline suggestion and `prbot fix`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from bot.checks import changes_view
from bot.example import CONFIG_KEY, ExampleRepo
from bot.fix.command import main as fix_main
from bot.local import LocalRequest, run_local
from bot.model.changelog import RECENT_ENTRIES, languages
from bot.output import changelog_draft as draft
from bot.output.render import render_comment
from bot.yamlsafe import load
from tests.conftest import CHANGELOG, commit, e2e_checkout, shared_or_skip
from tests.mdcheck import halves

RECIPE = "benchmarks/single_node/srt-slurm-recipes/kimik3/atom/mi355x-fp4-mtp/agentic.yaml"


def _entry(number: int, chinese: bool) -> str:
    """One entry as InferenceX writes them: English lines, then (bilingual) their Chinese."""
    lines = [
        f"Bump the SGLang image to v0.5.{number} and raise max-running-requests to {number * 8}",
        f"Add concurrency {number * 4} to the TP8 arm",
    ]
    if chinese:
        lines += [
            f"将 SGLang 镜像升级到 v0.5.{number}，并把 max-running-requests 提高到 {number * 8}",
            f"为 TP8 配置新增并发 {number * 4}",
        ]
    text = "- config-keys:\n    - dsr1-fp8-h200-sglang\n  description:\n"
    text += "".join(f'    - "{line}"\n' for line in lines)
    return text + f"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{1000 + number}\n"


def _changelog(flags: list[bool]) -> bytes:
    return "\n".join(_entry(i, chinese) for i, chinese in enumerate(flags)).encode()


def test_most_of_the_newest_entries_decide() -> None:
    english = [False] * 40
    # Eleven of the last twenty bilingual: most of them, so the draft is bilingual.
    assert languages(_changelog(english + [True, False] * 9 + [True, True])) == ("en", "zh")
    # Ten of twenty is not most.
    assert languages(_changelog(english + [True, False] * 10)) == ("en",)
    # A long bilingual past does not count once the newest entries are English again.
    assert languages(_changelog([True] * 50 + [False] * RECENT_ENTRIES)) == ("en",)
    # A short changelog is judged on all its entries.
    assert languages(_changelog([True, True, False])) == ("en", "zh")
    # Absent, empty or broken where the newest entries start: English.
    assert languages(None) == languages(b"") == ("en",)
    assert languages(_changelog([True] * 5) + b"- config-keys: [\n") == ("en",)


def test_the_real_changelogs() -> None:
    """InferenceX's changelog as stored in the real-world data (14 of its last 20 entries carry
    Chinese) is bilingual; the fork's older copy of it, without its last 21 entries (2 of 20), is
    English."""
    upstream = shared_or_skip("inferencex-e2e", "perf-changelog.yaml").read_bytes()
    fork = shared_or_skip("forks", "HamzaElshafie+InferenceX", "perf-changelog.yaml").read_bytes()
    assert upstream.startswith(fork)
    assert languages(upstream) == ("en", "zh")
    assert languages(fork) == ("en",)


def test_the_history_bundles_newest_changelog_is_english(history: Path) -> None:
    """At #2707, where the history bundle ends, InferenceX's entries were English."""
    data = subprocess.run(
        ["git", "--git-dir", str(history), "show", "HEAD:perf-changelog.yaml"],
        capture_output=True,
        check=True,
    ).stdout
    assert languages(data) == ("en",)


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def bilingual(example: ExampleRepo) -> tuple[str, str]:
    """The seed PR without its changelog entry, on a base whose newest entries are bilingual:
    (base, head), the head checked out."""
    _git(example.path, "checkout", "-q", example.base)
    base_log = (example.path / CHANGELOG).read_text(encoding="utf-8")
    newer = "".join("\n" + _entry(number, True) for number in range(10, 16))
    base = commit(example.path, {CHANGELOG: base_log + newer}, "six bilingual entries")
    _git(example.path, "checkout", "-q", example.head, "--", "configs/amd-master.yaml", RECIPE)
    head = commit(example.path, {}, "the seed PR without its entry")
    return base, head


def test_a_bilingual_changelog_gets_the_draft_in_both_languages(
    example: ExampleRepo, bilingual: tuple[str, str]
) -> None:
    base, head = bilingual
    report = run_local(example.request(base=base, head=head))[0]
    assert report.changelog_langs == ("en", "zh")
    changes = changes_view.as_json(report.changes)
    english_lines = draft.description([CONFIG_KEY], changes)
    both = draft.description([CONFIG_KEY], changes, report.changelog_langs)
    # Each English line, then the Chinese: as the changelog's own entries are written.
    assert both[: len(english_lines)] == english_lines and len(both) == 2 * len(english_lines)
    assert (
        both[len(english_lines)]
        == "将镜像从 rocm/atom-dev:nightly_202610131505 更新为 nightly_202610281457。"
    )
    assert (
        "C48：改动 LMCACHE_MAX_LOCAL_CPU_SIZE（128 → 224）；改动 TOTAL_CPU_DRAM_GB（1028 → 1799）。" in both
    )
    # The comment offers it so, folded to fit, and YAML reads it back whole.
    english, _ = halves(render_comment(report))
    shown = english.split("```yaml\n", 1)[1].split("\n  ```", 1)[0]
    text = "\n".join(line.removeprefix("  ") for line in shown.splitlines())
    assert max(map(draft.width, text.splitlines())) <= draft.LINE_CHARS
    assert yaml.safe_load(text)[0]["description"] == both == load(text).data[0]["description"]


def test_prbot_fix_appends_the_bilingual_draft(
    example: ExampleRepo, bilingual: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    base, _ = bilingual
    before = (example.path / CHANGELOG).read_bytes()
    assert fix_main(["--repo", str(example.path), "--base", base, "--offline"]) == 0
    capsys.readouterr()
    [entry] = yaml.safe_load((example.path / CHANGELOG).read_bytes()[len(before) :])
    chinese = [line for line in entry["description"] if any("\u4e00" <= ch <= "\u9fff" for ch in line)]
    assert len(chinese) * 2 == len(entry["description"])
    assert entry["description"][-len(chinese) :] == chinese  # the Chinese after the English


def test_an_english_changelog_keeps_an_english_draft(example: ExampleRepo) -> None:
    """The example's changelog has two bilingual entries of eight: the draft stays English."""
    commit(example.path, {CHANGELOG: lambda text: text[: text.rindex("\n- config-keys:") + 1]})
    report = run_local(example.request(head="HEAD"))[0]
    assert report.changelog_langs == ("en",)
    english, _ = halves(render_comment(report))
    shown = english.split("```yaml\n", 1)[1].split("\n  ```", 1)[0]
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in shown)


def test_chinese_lines_fold_between_characters_and_read_back() -> None:
    """A Chinese line has few spaces to fold at: it is folded between two characters with an
    escaped line break, each line within LINE_CHARS columns (a Chinese character is two), and
    YAML joins the lines with nothing between."""
    added = ["model.layers.0.*", "*mlp.shared_experts*", "*self_attn.kv_a_proj*", "*mlp.gate*", "lm_head"]
    excluded = {
        "path": "quant_config.exclude_layer",
        "base": [],
        "head": added,
        "added": added,
        "removed": [],
    }
    view = {"common": [excluded], "runs": [{"concurrency": c, "status": "changed"} for c in (1, 2)]}
    changes = {"glm5.2-fp4-mi355x-atom-agentic-mtp": view}
    keys = list(changes)
    text = draft.entry_text(keys, changes, "XXX", ("en", "zh"))
    assert text is not None
    assert max(map(draft.width, text.splitlines())) <= draft.LINE_CHARS
    assert any(line.endswith("\\") for line in text.splitlines())  # folded inside Chinese text
    [entry] = yaml.safe_load(text)
    assert entry["description"] == draft.description(keys, changes, ("en", "zh"))
    assert load(text).data[0]["description"] == entry["description"]


def test_a_pr_on_the_real_bilingual_changelog_gets_a_bilingual_draft(tmp_path: Path) -> None:
    """InferenceX's real files (its newer, bilingual changelog) and a PR that bumps one key's image
    without an entry: the comment's drafted entry says it in English, then in Chinese."""
    repo, base = e2e_checkout(tmp_path)
    master = "inferencex-e2e/configs/amd-master.yaml"
    old = "  image: lmsysorg/sglang:v0.5.12-rocm700-mi35x\n"
    head = commit(repo, {master: lambda text: text.replace(old, old.replace("v0.5.12", "v0.5.14"), 1)})
    report = run_local(LocalRequest(repo=str(repo), base=base, head=head, offline=True))[0]
    assert report.changelog_langs == ("en", "zh")
    english, _ = halves(render_comment(report))
    shown = english.split("```yaml\n", 1)[1].split("\n  ```", 1)[0]
    [entry] = yaml.safe_load("\n".join(line.removeprefix("  ") for line in shown.splitlines()))
    assert entry["config-keys"] == ["dsr1-fp4-mi355x-sglang"]
    assert entry["description"] == [
        "Update the image from lmsysorg/sglang:v0.5.12-rocm700-mi35x to v0.5.14-rocm700-mi35x.",
        "将镜像从 lmsysorg/sglang:v0.5.12-rocm700-mi35x 更新为 v0.5.14-rocm700-mi35x。",
    ]
