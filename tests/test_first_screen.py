"""Issue #34: the first screen says what changed, whether it is safe, and what to do next — in both
languages, one under the other, above everything else; a run whose identity setting changed is
that setting's change, paired with its base run.

Each test reviews the bundled example PR (or an edit on top of it) and reads the comment as GitHub
renders it (cmark-gfm, `tests.mdcheck`)."""

from __future__ import annotations

from bot.checks.changes_view import KeyChanges, RunChange, Setting, Status, Topology
from bot.findings import Severity, finding
from bot.output import report_json
from bot.output.messages import en, render, zh
from bot.output.render import render_comment
from bot.output.screen import change_lines, key_facts
from bot.report import Report
from tests.conftest import MASTER, replace
from tests.mdcheck import parse_html

KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"
C1_C4 = "{ tp: 8, kv-offloading: none, conc-list: [1, 4]"
C1_C4_DRAM = "{ tp: 8, kv-offloading: dram, conc-list: [1, 4]"
C14_C16 = 'kv-offloading: dram, kv-offload-backend: { name: lmcache, version: "0.4.5" }, conc-list: [14, 16]'
C14_C16_NONE = "kv-offloading: none, conc-list: [14, 16]"


def _screens(comment: str) -> tuple[list[str], str]:
    """The comment's first screens (above its rule) as the text of their lines, and the rest."""
    screens, rule, rest = comment.partition("\n---\n")
    assert rule, "no rule below the first screens"
    return [line for line in screens.splitlines() if line.strip()], rest


def test_both_first_screens_are_on_top_unfolded_english_then_chinese(review_example) -> None:
    comment = render_comment(review_example())
    lines, rest = _screens(comment)
    # Title, what changes, next step: in English, then the same in Chinese; nothing folded.
    assert [line.split(" ", 1)[0] for line in lines[1:]] == [
        "###", "**What", "**Next", "###", "**改动：**", "**下一步：**"
    ]  # fmt: skip
    assert "<details>" not in "\n".join(lines)
    html = parse_html(comment)
    assert [text for tag, text in html.outline[:2]] == [lines[1][4:], lines[4][4:]]
    # The verdict counts what was not checked: the demo asks no registry and has no PR to sign off.
    assert (
        lines[1] == "### ❔ prbot review — no blocking issues, no warnings · 5 not checked"
        " (digest, codeowners, scripts)"
    )
    assert lines[4] == "### ❔ prbot 审阅 — 无阻塞问题，无警告 · 5 项未检查（digest、codeowners、scripts）"
    assert "✅ prbot" not in comment
    # What changes, in one line: the image (as its tags) first.
    assert lines[2].startswith(
        f"**What changes:** `{KEY}`: `image` `nightly_202610131505` → `nightly_202610281457`"
    )
    assert lines[5].startswith(f"**改动：** `{KEY}`：`image` `nightly_202610131505` → `nightly_202610281457`")
    # The next step: the sign-off the CODEOWNERs must give.
    assert "sign-off by one of `@amd-bench-lin`" in lines[3] and "任意一位签署" in lines[6]
    # The rest follows once in English and once in Chinese, folded.
    assert rest.count("<details><summary>中文</summary>") == 1 and "prbot review" not in rest


def test_a_blocking_review_says_which_finding_to_fix_first(review_example) -> None:
    report = review_example({MASTER: replace("conc-list: [1, 4]", "conc-list: [1, 2, 4]")})
    lines, _ = _screens(render_comment(report))
    first = report.of(Severity.BLOCKING)[0]
    assert lines[1].startswith("### ❌ prbot review — ")
    assert f"**Next step:** Fix the {len(report.of(Severity.BLOCKING))} blocking issue" in lines[3]
    assert f"starting with `{first.check}` at `{first.file}:{first.line}`" in lines[3]
    assert "+C2" in lines[2] and "+C2" in lines[5]


def test_an_identity_setting_that_changed_is_shown_as_that_change(review_example) -> None:
    """#2709's shape: `kv-offloading` none → dram on some points is one change per run, paired
    with its base run, not a new run and a removed run."""
    report = review_example({MASTER: replace(C1_C4, C1_C4_DRAM)})
    runs = {run.concurrency: run for run in report.changes[KEY].runs}
    assert {runs[c].status for c in (1, 4)} == {"changed"}
    assert "added" not in {run.status for run in runs.values()}
    assert runs[1].topology.kv_offloading == "dram"
    assert runs[1].topology_base is not None and runs[1].topology_base.kv_offloading == "none"
    assert runs[14].topology_base is None
    assert Setting("kv-offloading", "none", "dram") in runs[1].settings
    assert '"topology_base"' in report_json.dumps(report)  # the JSON report carries it
    comment = render_comment(report)
    lines, _ = _screens(comment)
    assert "`kv-offloading` `none` → `dram` at 2 runs" in lines[2]
    assert "2 次运行的 `kv-offloading` `none` → `dram`" in lines[5]
    assert "new run" not in comment and "removed run" not in comment


def test_settings_changed_at_every_run_are_not_called_as_before(review_example) -> None:
    """The image changed at every run: a run with no change of its own is not "as before"."""
    comment = render_comment(review_example())
    assert "as before" not in comment and "与之前相同" not in comment


def _run(concurrency: int, status: Status) -> RunChange:
    """A run of a 1k1k TP8 point, with no settings of its own."""
    topology = Topology("fixed-seq-len", 1024, 1024, 8, 1, 1, 1, 1, False, "none", "none")
    return RunChange(concurrency, topology, None, None, status, ())


def test_many_keys_share_one_line_each_fact_counted_over_its_keys() -> None:
    """#2169's shape: four keys, the image bumped to one tag from three, runs added on two."""
    image = [("v0.21.0", 2), ("v0.22.0", 1), ("nightly-3f0a91bb", 1)]
    sets, changes, keys = {}, {}, []
    for index, old in enumerate(tag for tag, n in image for _ in range(n)):
        key = f"dsv4-{index}"
        keys.append(key)
        sets[key] = {"base": [1, 2], "head": [1, 2]}
        common = (Setting("image", f"vllm/vllm-openai:{old}", "vllm/vllm-openai:v0.25.0"),)
        runs = [_run(1, "as-before")] + [_run(2, "added")] * (index % 2)
        changes[key] = KeyChanges(common, tuple(runs))
    [line] = change_lines(sets, changes, keys)
    assert line.key is None and line.keys == 4
    (image_fact, on), (added, on_added) = line.facts
    assert dict(image_fact.params)["head"] == "v0.25.0" and dict(image_fact.params)["bases"] == 3 and on == 4
    assert dict(added.params)["count"] == 2 and on_added == 2


def test_a_key_whose_runs_did_not_change_says_so() -> None:
    facts = key_facts({"base": [1], "head": [1]}, KeyChanges((), ()))
    assert [f.message_id for f in facts] == ["screen-no-run-changed"]


def test_a_review_that_could_not_run_says_so_on_top() -> None:
    report = Report([finding("changes", Severity.UNVERIFIED, "review-crashed", error="E", where="x:1")])
    lines, _ = _screens(render_comment(report))
    assert lines[1].startswith("### ❌ prbot review — the review could not run")
    assert "**Next step:** The review could not run" in lines[3]


def test_no_variant_serves_names_the_selector_that_fails_and_both_values(review_example) -> None:
    """#2709's blocking finding said only "no variant serves this point": it names the nearest
    variants' failing selectors, what each states and what the point has, in both languages.
    Here C14/C16 lose their DRAM offload while their variants still say `KV_OFFLOADING: dram`."""
    report = review_example({MASTER: replace(C14_C16, C14_C16_NONE)})
    none = [f for f in report.of(Severity.BLOCKING) if f.message_id == "selection-none"]
    assert {f.params["concurrency"] for f in none} == {14, 16}
    [c14] = [f for f in none if f.params["concurrency"] == 14]
    wrong = ["benchmark.env.KV_OFFLOADING", "dram", "none"]
    assert ("override_tp8_dcp8_c14_lmcache", *wrong) in c14.params["misses"]
    assert all(list(miss[1:]) == wrong for miss in c14.params["misses"])  # only the nearest variants
    variant = "override_tp8_dcp8_c14_lmcache"
    assert f"{variant} has benchmark.env.KV_OFFLOADING dram where the point has none." in en(c14)
    assert f"{variant}的 benchmark.env.KV_OFFLOADING 为 dram，而该点为 none。" in zh(c14)


def test_swapped_refs_are_said_in_the_comment_not_only_on_the_terminal(example) -> None:
    """`--base` and `--head` the wrong way round: the review is not clean, and its first screen
    says why in both languages, with the next step."""
    from bot.local import run_local

    report = run_local(example.request(base=example.head, head=example.base))[0]
    assert report.verdict == "warnings"
    [said] = [f for f in report.findings if f.message_id == "refs-swapped"]
    assert said.severity is Severity.WARNING
    lines, _ = _screens(render_comment(report))
    assert lines[2].startswith("> ⚠️ Head `") and "are `--base` and `--head` swapped?" in lines[2]
    assert "**Next step:** Check the refs (the note above) and review again." in lines
    assert any(line.startswith("> ⚠️ head `") and "是否写反了" in line for line in lines)


def test_an_edited_benchmark_script_is_named_as_such_not_as_a_setting() -> None:
    """#2178's shape: three keys whose one benchmark script each was edited."""
    sets, changes, keys = {}, {}, []
    for index in range(3):
        key = f"dsv4-agentic-{index}"
        keys.append(key)
        sets[key] = {"base": [1, 2], "head": [1, 2]}
        path = f"benchmarks/single_node/agentic/dsv4_{index}.sh"
        script = Setting("script", [f"{path}@c1a2b3c4d5e6"], [f"{path}@c6e5d4c3b2a1"])
        changes[key] = KeyChanges((script,), (_run(1, "as-before"), _run(2, "as-before")))
    [line] = change_lines(sets, changes, keys)
    [(fact, on)] = line.facts
    assert fact.message_id == "screen-script" and on == 3
    assert render(fact.message_id, "en", dict(fact.params)) == "benchmark script changed"
    assert render(fact.message_id, "zh", dict(fact.params)) == "基准测试脚本有改动"
