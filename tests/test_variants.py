"""Variants of the example PR, each breaking one rule: the review must name exactly what broke."""

from __future__ import annotations

from bot.findings import Severity
from bot.output.messages import en, zh
from tests.conftest import CHANGELOG, MASTER, RECIPE, replace

KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"
C2_VARIANT = """
override_tp8_c2:
  roles:
    agg:
      args:
        max-num-seqs: 4
  benchmark:
    env:
      CONC: '2'
"""


def ids(report, severity: Severity, check: str | None = None) -> list[str]:
    return [
        f.message_id
        for f in report.findings
        if f.severity is severity and (check is None or f.check == check)
    ]


def only(report, message_id: str):
    found = [f for f in report.findings if f.message_id == message_id]
    assert len(found) == 1, [f.message_id for f in report.findings]
    return found[0]


def test_demo_has_no_blocking(review_example) -> None:
    report = review_example()
    assert report.verdict == "clean"
    assert ids(report, Severity.WARNING) == []
    # InferenceX accepts the XXX placeholder on a PR (its merge step fills in the URL): info.
    assert "changelog-pr-link-placeholder" in ids(report, Severity.INFO, "changelog")


# --- issue 2: changelog, labels, consistency ------------------------------------------------


def _move_last_entry_up(text: str) -> str:
    entries = text.rstrip("\n").split("\n\n")
    last = entries.pop()
    entries.insert(3, last)
    return "\n\n".join(entries) + "\n"


def test_entry_inserted_mid_file_is_blocking(review_example) -> None:
    report = review_example({CHANGELOG: _move_last_entry_up})
    finding = only(report, "changelog-inserted")
    assert finding.severity is Severity.BLOCKING and finding.file == CHANGELOG and finding.line is not None
    assert "above the end of the changelog" in en(finding) and "末尾" in zh(finding)


def test_no_changelog_change_is_blocking(review_example, example) -> None:
    base_text = (example.path / CHANGELOG).read_text()
    tail = base_text.rstrip("\n").rsplit("\n\n", 1)[0] + "\n"
    report = review_example({CHANGELOG: tail})
    finding = only(report, "changelog-missing")
    assert finding.severity is Severity.BLOCKING and KEY in en(finding)
    # With no appended entry the sweep label now warns that nothing will run.
    assert "labels-primary-without-entry" in ids(report, Severity.WARNING, "labels")


def test_two_primary_labels_are_blocking(review_example) -> None:
    report = review_example(labels=("full-sweep-fail-fast", "full-sweep-enabled"))
    finding = only(report, "labels-several-primaries")
    assert finding.severity is Severity.BLOCKING
    assert "full-sweep-fail-fast" in en(finding) and "full-sweep-enabled" in en(finding)


def test_modifier_alone_is_blocking(review_example) -> None:
    report = review_example(labels=("evals-only",))
    finding = only(report, "labels-modifier-alone")
    assert finding.severity is Severity.BLOCKING and "evals-only" in en(finding)
    assert "full-sweep-fail-fast" in zh(finding)


def test_no_label_with_entry_is_info(review_example) -> None:
    report = review_example(labels=())
    assert only(report, "labels-no-primary").severity is Severity.INFO
    assert report.verdict == "clean"


def test_title_naming_unpublished_concurrency_warns(review_example) -> None:
    report = review_example(title="kimik3 ATOM retune for C1/C2")
    finding = only(report, "consistency-mentioned-not-published")
    assert finding.severity is Severity.WARNING
    assert "C2" in en(finding) and "C1," not in en(finding).split("published")[0]


# --- issue 3: recipe-selection and dram -----------------------------------------------------


def test_every_concurrency_maps_to_one_variant(review_example) -> None:
    report = review_example()
    finding = only(report, "selection-ok")
    assert finding.severity is Severity.VERIFIED
    # What was checked, in numbers; the variant of each run is listed once, in the changes view.
    assert en(finding) == (
        f"{KEY}: each of its 7 runs selects exactly one variant (7 variants of 1 recipe); "
        "no variant is left over."
    )
    variants = {r.concurrency: r.variant_head for r in report.changes[KEY].runs}
    assert variants == {
        1: "override_tp8_c1",
        4: "override_tp8_c4",
        14: "override_tp8_dcp8_c14_lmcache",
        16: "override_tp8_dcp8_c16_lmcache",
        48: "override_tp8_dcp8_c48_lmcache",
        56: "override_tp8_dcp8_c56_lmcache",
        72: "override_tp8_dcp8_c72_lmcache",
    }


def test_dram_blocks_verified_with_numbers(review_example) -> None:
    report = review_example()
    blocks = [f for f in report.findings if f.message_id == "dram-block-ok"]
    assert [(f.params["utilization"], f.params["total"], f.params["per_rank"]) for f in blocks] == [
        ("0.343", 1028, 128),
        ("0.6", 1799, 224),
    ]
    assert all(f.severity is Severity.VERIFIED for f in blocks)
    assert "0.6 × 8/8 → 1799 GB, 224 GB/rank" in en(blocks[1])
    assert "OFFLOAD_STATE_CPU_SIZE 128 ≤ 224" in en(blocks[1])


def _with_conc_2(text: str) -> str:
    return text.replace("conc-list: [1, 4]", "conc-list: [1, 2, 4]", 1)


def test_duplicated_conc_variant_is_blocking_and_names_both(review_example) -> None:
    twin = C2_VARIANT.replace("override_tp8_c2", "override_tp8_c2_twin")
    report = review_example({MASTER: _with_conc_2, RECIPE: lambda t: t + C2_VARIANT + twin})
    finding = only(report, "selection-ambiguous")
    assert finding.severity is Severity.BLOCKING and finding.params["concurrency"] == 2
    assert "override_tp8_c2" in en(finding) and "override_tp8_c2_twin" in en(finding)
    assert finding.file == MASTER and finding.line == 56


def test_point_without_variant_is_blocking(review_example) -> None:
    report = review_example({MASTER: _with_conc_2})
    finding = only(report, "selection-none")
    assert finding.severity is Severity.BLOCKING and finding.params["concurrency"] == 2
    assert RECIPE in en(finding)


def test_leftover_variant_is_a_warning(review_example) -> None:
    report = review_example({RECIPE: lambda t: t + C2_VARIANT})
    finding = only(report, "selection-leftover")
    assert finding.severity is Severity.WARNING and finding.params["variant"] == "override_tp8_c2"
    assert report.verdict == "warnings"


def test_wrong_total_is_blocking_with_suggestion(review_example) -> None:
    report = review_example({RECIPE: replace("TOTAL_CPU_DRAM_GB: '1799'", "TOTAL_CPU_DRAM_GB: '1800'")})
    finding = only(report, "dram-total-mismatch")
    assert finding.severity is Severity.BLOCKING and finding.file == RECIPE and finding.line == 164
    assert finding.params["expected"] == 1799
    assert finding.suggestion == "      TOTAL_CPU_DRAM_GB: '1799'"
    assert "1800" in en(finding) and "1799" in zh(finding)


def test_suggestion_is_rendered_as_block(review_example) -> None:
    from bot.output.render import render_comment

    report = review_example({RECIPE: replace("TOTAL_CPU_DRAM_GB: '1799'", "TOTAL_CPU_DRAM_GB: '1800'")})
    comment = render_comment(report, lang="en")
    assert "```suggestion\n        TOTAL_CPU_DRAM_GB: '1799'\n  ```" in comment
    assert f"`{RECIPE}:164`" in comment


def test_oversubscribed_pool_is_blocking(review_example) -> None:
    report = review_example(
        {RECIPE: replace("LMCACHE_MAX_LOCAL_CPU_SIZE: '224'", "LMCACHE_MAX_LOCAL_CPU_SIZE: '225'")}
    )
    finding = only(report, "dram-pool-oversubscribed")
    assert finding.severity is Severity.BLOCKING and finding.params["expected"] == 224
    assert finding.suggestion.endswith("LMCACHE_MAX_LOCAL_CPU_SIZE: '224'")


def test_state_above_pool_is_blocking(review_example) -> None:
    report = review_example(
        {RECIPE: replace("OFFLOAD_STATE_CPU_SIZE: '128'", "OFFLOAD_STATE_CPU_SIZE: '300'")}
    )
    finding = only(report, "dram-state-over-pool")
    assert finding.severity is Severity.BLOCKING and finding.params["pool"] == 224


def test_unknown_runner_is_blocking_not_a_crash(review_example) -> None:
    report = review_example(
        {MASTER: replace("runner: cluster:mi355x-amds", "runner: cluster:mi355x-nowhere")}
    )
    finding = only(report, "dram-unknown-runner")
    assert finding.severity is Severity.BLOCKING and "cluster:mi355x-nowhere" in en(finding)
    assert not [f for f in report.findings if f.message_id == "check-crashed"]


def test_missing_recipe_is_blocking(review_example) -> None:
    report = review_example({RECIPE: None})
    found = [f for f in report.findings if f.message_id == "selection-recipe-missing"]
    assert found and all(f.severity is Severity.BLOCKING for f in found)


LEGACY_KEY = """
dsr1-fp4-mi355x-sglang-disagg:
  image: lmsysorg/sglang:v0.5.14-rocm700-mi35x
  runner: cluster:mi355x-amds
  multinode: true
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - conc-list: [1, 2]
        prefill: {num-worker: 1, tp: 8, additional-settings: ["CONFIG_FILE=recipes/dsr1/a.yaml:override_x"]}
        decode: {num-worker: 1, tp: 8}
      - conc-list: [4]
        prefill: {num-worker: 1, tp: 8, additional-settings: ["CONFIG_FILE=recipes/dsr1/b.yaml:override_y"]}
        decode: {num-worker: 1, tp: 8}
"""


def test_recipes_outside_the_repository_are_one_unverified_finding_per_key(review_example) -> None:
    report = review_example({MASTER: lambda text: text + LEGACY_KEY})
    [finding] = [f for f in report.findings if f.message_id == "selection-legacy-missing"]
    assert finding.severity is Severity.UNVERIFIED and finding.config_key == "dsr1-fp4-mi355x-sglang-disagg"
    assert (finding.params["points"], finding.params["paths"]) == (2, 2)
    assert "benchmarks/multi_node/srt-slurm-recipes/dsr1/a.yaml" in en(finding)


def test_a_config_file_path_from_the_repository_root_is_found_there(review_example) -> None:
    """`CONFIG_FILE=benchmarks/multi_node/srt-slurm-recipes/…` names the file from the root (2b16782):
    it must not get the recipes folder prefixed a second time."""
    recipe = "benchmarks/multi_node/srt-slurm-recipes/dsr1/a.yaml"
    text = "name: a\nbenchmark:\n  env:\n    CONC: '1'\nroles:\n  prefill:\n    tensor-parallel-size: 8\n"
    key = LEGACY_KEY.replace("CONFIG_FILE=recipes/dsr1/a.yaml:override_x", f"CONFIG_FILE={recipe}")
    key = key.split("      - conc-list: [4]")[0].replace("conc-list: [1, 2]", "conc-list: [1]")
    report = review_example({MASTER: lambda master: master + key, recipe: text})
    messages = {f.message_id for f in report.findings if f.config_key == "dsr1-fp4-mi355x-sglang-disagg"}
    assert "selection-legacy-missing" not in messages and "selection-recipe-missing" not in messages
    assert "selection-ok" in messages


def test_a_key_with_one_unserved_point_still_shows_what_was_checked(review_example) -> None:
    """The verified summary used to leave out every key that also had a zero-match point."""
    report = review_example(
        {MASTER: lambda t: t.replace("conc-list: [48, 56, 72]", "conc-list: [48, 56, 72, 80]", 1)}
    )
    [missing] = [f for f in report.findings if f.message_id == "selection-none"]
    assert missing.params["concurrency"] == 80 and missing.severity is Severity.BLOCKING
    [partial] = [f for f in report.findings if f.message_id == "selection-partial"]
    assert partial.severity is Severity.VERIFIED
    assert partial.params["runs"] == 7  # C1 … C72, each with its one variant; C80 has none
    assert "7 runs select exactly one variant each" in en(partial) and "其余的点" in zh(partial)


def test_a_suggestion_rewrites_only_a_value_that_is_all_digits() -> None:
    """The suggested line replaces the whole number, never the leading digits of another value."""
    from bot.checks.dram import _suggestion

    name = "TOTAL_CPU_DRAM_GB"
    assert _suggestion(f"      {name}: '1800'", name, 1799) == f"      {name}: '1799'"
    assert _suggestion(f"      {name}: 1800  # host", name, 1799) == f"      {name}: 1799  # host"
    assert _suggestion(f"  {{CONC: '48', {name}: '1800'}}", name, 1799) == f"  {{CONC: '48', {name}: '1799'}}"
    assert _suggestion(f"      {name}: '18x00'", name, 1799) is None
    assert _suggestion(f"      {name}: 1800GB", name, 1799) is None
