"""What the checks say without repeating themselves (issue #17, the noise): counts instead of a
second variant list, one note per key, one warning per duplicated key, a canary that names its
parallelism config, and GPU-hours that say when they cannot be known. Real PRs from the history
bundle show each noise; the seed PR shows the ordinary case."""

from __future__ import annotations

from pathlib import Path

from bot.checks.sweep_plan import shown_hours
from bot.findings import Finding, Severity
from bot.local import LocalRequest, run_local
from bot.output import messages
from bot.output.messages import en, zh
from bot.report import Report
from tests.conftest import MASTER, RECIPE, squash_merge

SEED_KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"


def review_pr(repo: Path, number: int) -> Report:
    """The review of the real PR squash-merged as the commit whose subject ends `(#number)`."""
    base, head, _ = squash_merge(repo, number)
    report, _, _ = run_local(LocalRequest(repo=str(repo), base=base, head=head, offline=True))
    return report


def of(report: Report, message_id: str) -> list[Finding]:
    return [f for f in report.findings if f.message_id == message_id]


# --- the seed PR --------------------------------------------------------------------------------


def test_the_variants_are_not_listed_again_by_selection_and_sweep_plan(review_example) -> None:
    report = review_example()
    [selection] = of(report, "selection-ok")
    assert en(selection) == (
        f"{SEED_KEY}: each of its 7 runs selects exactly one variant (7 variants of 1 recipe); "
        "no variant is left over."
    )
    assert zh(selection).endswith("；没有多余的变体。")
    [plan] = of(report, "sweep-key-plan")
    assert en(plan) == (
        f"{SEED_KEY}: 7 runs (all changed by this PR), canary C1; 1 eval job. "
        "GPU-hours: 56 (7 runs × 3600 s × 8 GPUs)."
    )
    assert "override_tp8" not in zh(plan) and "GPU 时间：56 小时（7 次运行 × 3600 秒 × 8 块 GPU）" in zh(plan)
    assert report.sweep_plan["keys"][SEED_KEY]["gpu_hours"] == 56.0  # the JSON data is as it was


def test_a_left_over_variant_is_counted_in_the_verified_line(review_example) -> None:
    spare = "\noverride_tp8_c2:\n  benchmark:\n    env:\n      CONC: '2'\n"
    report = review_example({RECIPE: lambda text: text + spare})
    [leftover] = of(report, "selection-leftover")
    assert leftover.params["variant"] == "override_tp8_c2"
    [selection] = of(report, "selection-ok")
    assert en(selection).endswith("; 1 other variant serves no point (see the warnings).")


def test_a_duplicate_key_in_a_recipe_does_not_make_its_selection_partial(review_example) -> None:
    """The duplicate is reported; every run still selects its one variant, and the verified line
    says so rather than "the key's other points have findings of their own" (it has none)."""
    report = review_example(
        {RECIPE: lambda text: text.replace("  engine: atom\n", "  engine: atom\n  engine: atom\n")}
    )
    [duplicate] = of(report, "recipe-duplicate-key")
    assert duplicate.severity is Severity.BLOCKING and duplicate.params["key"] == "engine"
    assert of(report, "selection-partial") == []
    [selection] = of(report, "selection-ok")
    assert en(selection).startswith(f"{SEED_KEY}: each of its 7 runs selects exactly one variant")


def test_one_host_total_note_per_key_names_the_key_and_its_blocks(review_example) -> None:
    [note] = of(review_example(), "dram-host-total")
    assert note.config_key == SEED_KEY
    assert en(note) == (
        f"{SEED_KEY}: the DRAM budgets of its 2 blocks imply a host total of about 2,997–2,998 GB "
        "(budget ÷ utilization × GPUs per node ÷ GPUs: 1028 GB ÷ 0.343 × 8/8; 1799 GB ÷ 0.6 × 8/8)."
    )
    assert zh(note).startswith(f"{SEED_KEY}：由其 2 个分组的 DRAM 预算推算，主机总量约 2,997–2,998 GB")


# --- real PRs -----------------------------------------------------------------------------------


def test_a_key_duplicated_in_five_sibling_recipes_is_one_warning(history: Path) -> None:
    """#2263 touched the GLM-5 GB300 key whose five low-latency recipes all write
    `moe-runner-backend` twice: five identical warnings became one naming the files."""
    report = review_pr(history, 2263)
    assert of(report, "recipe-duplicate-key") == []
    [warning] = of(report, "recipe-duplicate-key-files")
    assert warning.severity is Severity.WARNING and warning.config_key == "glm5-fp4-gb300-dynamo-sglang"
    assert warning.params["files"] == [f"8k1k_stp_lowlat_{i}.yaml" for i in range(5)]
    text = en(warning)
    assert text.startswith("Recipe key moe-runner-backend is written twice in each of 5 recipes in ")
    assert "glm5/gb300-fp4/8k1k/disagg/stp (8k1k_stp_lowlat_0.yaml, " in text
    assert text.endswith(", on lines 140 and 158); YAML keeps only the last one.")
    assert "均在第 140 行和第 158 行" in zh(warning)
    partial = {f.config_key for f in of(report, "selection-partial")}
    legacy = {f.config_key for f in of(report, "selection-legacy-missing")}
    assert warning.config_key in partial and warning.config_key in legacy  # partial for its old points


def test_duplicates_in_recipes_the_pr_adds_stay_blocking_once_per_key(history: Path) -> None:
    """#1157 added five DSV4 GB200 recipes, each writing `moe-a2a-backend` and `deepep-config`
    twice: ten blocking findings became two."""
    report = review_pr(history, 1157)
    grouped = of(report, "recipe-duplicate-key-files")
    assert sorted(f.params["key"] for f in grouped) == ["deepep-config", "moe-a2a-backend"]
    assert all(f.severity is Severity.BLOCKING and len(f.params["files"]) == 5 for f in grouped)
    assert of(report, "recipe-duplicate-key") == []


def test_the_canary_names_its_parallelism_config_and_never_a_removed_run(history: Path) -> None:
    """#1978 replaced MiniMax-M3 B200's search space: C1 lost its TP8 EP8 and 1k1k TP4 runs but
    kept 1k1k TP8, the canary. "canary C1 … removed C1" read as if the canary was removed."""
    key = "minimaxm3-fp4-b200-vllm"
    report = review_pr(history, 1978)
    [plan] = of(report, "sweep-key-plan")
    text = en(plan)
    assert "canary C1 (1k1k TP8); 4 eval jobs; 52 runs removed." in text
    assert "C1 · C1" not in text and "removed C1" not in text
    removed_at_c1 = [
        (r.topology.tp, r.topology.ep)
        for r in report.changes[key].runs
        if r.status == "removed" and r.concurrency == 1
    ]
    assert removed_at_c1 and (8, 1) not in removed_at_c1  # the canary's run is not among them
    assert "canary 为 C1（1k1k TP8）" in zh(plan) and "删除了 52 次运行" in zh(plan)
    # Its runs are all fixed-seq-len: their GPU-hours are not known, not 0.0.
    assert text.endswith("GPU-hours: not known for the 34 fixed-seq-len runs (no set duration).")
    assert zh(plan).endswith("GPU 时间：未知（34 次 fixed-seq-len 运行没有固定时长）。")
    [total] = of(report, "sweep-total")
    assert "0.0" not in en(total) and "not known for the 34 fixed-seq-len runs" in en(total)
    json_plan = report.sweep_plan["keys"][key]
    assert json_plan["gpu_hours"] == 0.0 and json_plan["removed"][:3] == [1, 2, 4]  # JSON as before


def test_an_agentic_key_with_two_blocks_of_one_utilization(history: Path) -> None:
    """#2514 added Qwen3.5 FP8 B200 AgentX MTP: TP4 and TP8 points at the same concurrencies,
    both offloading at 0.8. Two "Block 0.8" notes without the key became one naming it."""
    key = "qwen3.5-fp8-b200-sglang-agentic-mtp"
    report = review_pr(history, 2514)
    [note] = of(report, "dram-host-total")
    assert en(note) == (
        f"{key}: the DRAM budgets of its 2 blocks imply a host total of about 2,997–2,998 GB "
        "(budget ÷ utilization × GPUs per node ÷ GPUs: 1199 GB ÷ 0.8 × 8/4; 2399 GB ÷ 0.8 × 8/8)."
    )
    [plan] = of(report, "sweep-key-plan")
    assert en(plan).startswith(f"{key}: 33 runs (all changed by this PR), canary C1 (TP8 MTP); 1 eval job.")
    assert en(plan).endswith("GPU-hours: 216 (3600 s × (12 runs × 4 GPUs + 21 runs × 8 GPUs)).")


# --- GPU-hours that are partly known ------------------------------------------------------------


def test_gpu_hours_of_a_mixed_sweep_say_which_runs_they_cover() -> None:
    params = {
        "runs": 43,
        "jobs": 43,
        "evals": 0,
        "starts": True,
        "reason": "",
        "trimmed": False,
        "duration": 3600,
        "timed": 3,
        "untimed": 40,
        "no_gpus": 0,
        "gpus": [[4, 1], [8, 2]],
        "gpu_hours": 12.5,
    }
    assert messages.render("sweep-total", "en", params) == (
        "In all: 43 benchmark runs in 43 jobs and 0 eval jobs. GPU-hours: 12.5 for the 3 agentic runs "
        "(3600 s × (1 run × 4 GPUs + 2 runs × 8 GPUs)); "
        "not known for the 40 fixed-seq-len runs (no set duration). "
        "The sweep starts on this PR."
    )
    assert (
        "GPU 时间：12.5 小时（3 次 agentic 运行：3600 秒 × （1 次运行 × 4 块 GPU + 2 次运行 × 8 块 GPU））；"
        "另有 40 次 fixed-seq-len 运行没有固定时长，其 GPU 时间未知。"
    ) in messages.render("sweep-total", "zh", params)
    no_gpus = messages.render("sweep-total", "en", params | {"untimed": 0, "no_gpus": 2})
    assert (
        "GPU-hours: 12.5 for the 3 agentic runs (3600 s × (1 run × 4 GPUs + 2 runs × 8 GPUs)); "
        "not known for the 2 runs with no GPUs." in no_gpus
    )


def test_gpu_hours_are_rounded_for_reading() -> None:
    """Whole hours without `.0`, one decimal from an hour up, two below (never 0 for a short run)."""
    assert [shown_hours(h) for h in (56.0, 93.33, 1234.56, 0.0833)] == [56, 93.3, 1234.6, 0.08]


def test_a_run_without_a_variant_names_its_whole_parallelism_config(review_example) -> None:
    """`C80 (TP8)` did not say which of a key's TP8 points it was; the label names all of it."""
    report = review_example(
        {MASTER: lambda t: t.replace("conc-list: [48, 56, 72]", "conc-list: [48, 56, 72, 80]", 1)}
    )
    [missing] = of(report, "selection-none")
    assert en(missing).startswith(f"{SEED_KEY} C80 (TP8 DCP8 MTP dram-offload): no variant of ")
    assert zh(missing).startswith(f"{SEED_KEY} C80（TP8 DCP8 MTP dram-offload）：")


def test_the_unused_variants_of_one_zip_override_are_one_warning(history: Path) -> None:
    """#2263's GLM-5 MTP recipe has two zip_overrides whose 4 and 3 variants serve no point: two
    warnings naming the variants, not seven, and the verified line still counts all seven."""
    report = review_pr(history, 2263)
    leftovers = of(report, "selection-leftover")
    assert [f.params["variants"] for f in leftovers] == [
        [f"zip_override_mtp_1k1k_hightpt[{i}]" for i in range(4)],
        [f"zip_override_mtp_1k1k_lowlat[{i}]" for i in range(3)],
    ]
    assert en(leftovers[0]).startswith("Variants zip_override_mtp_1k1k_hightpt[0], ")
    [ok] = [f for f in of(report, "selection-ok") if f.config_key == "glm5-fp4-gb200-dynamo-sglang-mtp"]
    assert ok.params["leftovers"] == 7
