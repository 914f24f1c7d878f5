"""The changelog entry prbot drafts from the `changes` view: what changed said in house style,
bounded whatever the PR, and never a crash on odd report data."""

from __future__ import annotations

from pathlib import Path

import yaml

from bot.checks import changes_view
from bot.example import ExampleRepo
from bot.findings import Severity, finding
from bot.local import LocalRequest, run_local
from bot.output import changelog_draft as draft
from bot.output.render import render_comment
from tests.conftest import commit, replace
from tests.mdcheck import halves

#: The example's key on `cluster:mi325x-tw`, which the seed PR leaves alone.
GLM = "glm5-fp8-mi325x-sglang-agentic-mtp"
#: The start of that cluster's record in the example's runners.yaml.
MI325X = "  mi325x-tw:\n    gpus-per-node: 8\n    available-cpu-dram-mib: "


def _run(concurrency: int, tp: int, status: str = "changed", settings: list | None = None) -> dict:
    topology = {"scenario": "fixed-seq-len", "isl": 8192, "osl": 1024, "tp": tp, "ep": 1}
    return {"concurrency": concurrency, "topology": topology, "status": status, "settings": settings or []}


def test_runs_sharing_a_concurrency_are_named_with_their_config() -> None:
    setting = [{"path": "roles.agg.args.max-num-seqs", "base": 8, "head": 2}]
    view = {"common": [], "runs": [_run(64, 4, settings=setting), _run(64, 8), _run(128, 8, "added")]}
    assert draft.description(["k"], {"k": view}) == [
        "At C64 (8k1k TP4): change max-num-seqs from 8 to 2.",
        "Add 8k1k TP8 at C128.",
    ]
    # In the changelog's language: the Chinese only for a bilingual changelog.
    assert draft.description(["k"], {"k": view}, ("en", "zh"))[2:] == [
        "C64（8k1k TP4）：改动 max-num-seqs（8 → 2）。",
        "新增 8k1k TP8 C128。",
    ]
    assert draft.scenarios(["k"], {"k": view}) == ["fixed-seq-len"]


def test_a_huge_change_is_described_in_bounded_sentences() -> None:
    common = [{"path": f"roles.agg.env.X{i}", "base": None, "head": str(i)} for i in range(20)]
    common.append(
        {
            "path": "b.exclude",
            "base": list(range(50)),
            "head": list(range(30, 400)),
            "added": list(range(50, 400)),
            "removed": list(range(30)),
        }
    )
    lines = draft.description(["k"], {"k": {"common": common, "runs": []}})
    assert lines == [
        "At every concurrency: set X0=0, X1=1, X2=2, X3=3, X4=4, X5=5, X6=6, X7=7, and 12 more; "
        "add 50, 51, 52, 53, 54, 55, 56, 57, and 342 more to exclude; "
        "remove 0, 1, 2, 3, 4, 5, 6, 7, and 22 more from exclude."
    ]
    [chinese] = draft.description(["k"], {"k": {"common": common, "runs": []}}, ("zh",))
    assert "另有 12 项" in chinese and len(chinese) < 200


def test_several_keys_are_named_and_the_rest_counted() -> None:
    def image(i: int) -> dict:  # each key to another image: each is described
        return {
            "path": "image",
            "base": "vllm/vllm-openai:v0.21.0",
            "head": f"vllm/vllm-openai:v0.{25 + i}.0",
        }

    changes = {f"key-{i}": {"common": [image(i)], "runs": [_run(1, 8)]} for i in range(5)}
    lines = draft.description(list(changes), changes)
    assert lines[0] == "key-0: Update the image from vllm/vllm-openai:v0.21.0 to v0.25.0."
    assert lines[3:] == ["2 more config keys change as well."]  # no pointer to the comment


def test_odd_report_data_drafts_nothing_rather_than_crash() -> None:
    odd = {
        "k": {
            "common": None,
            "runs": [None, {"concurrency": 1, "topology": "x", "status": "changed", "settings": 5}],
        }
    }
    assert draft.description(["k", "absent"], odd) == []
    assert draft.scenarios(["k"], odd) == [] and draft.entry_text(["k"], odd, "XXX") is None


def test_the_drafted_entry_names_each_uncovered_key_once_in_order_of_first_mention() -> None:
    """One function collects the keys for the review comment, the inline suggestion and `prbot fix`."""
    findings = [
        finding("changelog", Severity.BLOCKING, "changelog-recipe-key-not-covered", key="b"),
        finding("changelog", Severity.BLOCKING, "changelog-unknown-key", key="x", gate="pr"),
        finding("changelog", Severity.BLOCKING, "changelog-missing", keys=["a", "b", 7]),
        finding("changelog", Severity.BLOCKING, "changelog-key-not-covered", key="c"),
        finding("changelog", Severity.BLOCKING, "changelog-key-not-covered", key="a"),
        finding(
            "changelog",
            Severity.BLOCKING,
            "changelog-hardware-key-not-covered",
            key="d",
            fields=[],
            settings=[],
            budget=False,
        ),
    ]
    assert draft.drafted_keys(findings) == ["b", "a", "c", "d"]
    assert draft.drafted_keys(findings[1:2]) == []


def test_the_runners_record_is_named_as_the_runners() -> None:
    """A runners.yaml record's settings are its runs' `hardware.…`: the draft says whose they are,
    by their path in the record, and every run of the key changed with them."""
    common = [
        {"path": "hardware.available-cpu-dram-mib", "base": 3095781, "head": 2500000},
        {"path": "hardware.slurm.volumes.hf-hub-cache.path", "base": "/scratch/hf", "head": "/data/hf"},
        {"path": "hardware.arch", "base": None, "head": "aarch64"},
        {"path": "hardware.slurm.exclusive", "base": True, "head": None},
    ]
    view = {"common": common, "runs": [_run(1, 8, "as-before"), _run(4, 8, "as-before")]}
    assert draft.description(["k"], {"k": view}) == [
        "At every concurrency: set the runner's arch to aarch64; change the runner's available-cpu-dram-mib "
        "from 3095781 to 2500000; change the runner's slurm.volumes.hf-hub-cache.path from /scratch/hf to "
        "/data/hf.",
        "At every concurrency: remove the runner's slurm.exclusive.",
    ]
    assert draft.scenarios(["k"], {"k": view}) == ["fixed-seq-len"]
    assert draft.scenarios(["k"], {"k": {**view, "common": []}}) == []  # nothing changed after all


def test_keys_that_changed_alike_are_described_once() -> None:
    """One cluster's record, and every key on it says the same: once, the keys in `config-keys`."""
    dram = [{"path": "hardware.available-cpu-dram-mib", "base": 3774874, "head": 3095781}]
    changes = {
        "a": {"common": dram, "runs": [_run(1, 8, "as-before")]},
        "b": {"common": dram, "runs": [_run(4, 8, "as-before"), _run(8, 8, "as-before")]},
        "c": {"common": dram, "runs": [_run(2, 4, "as-before")]},
        "d": {"common": dram, "runs": [_run(2, 4, "as-before")]},
    }
    assert draft.description(list(changes), changes) == [
        "At every concurrency: change the runner's available-cpu-dram-mib from 3774874 to 3095781.",
    ]
    changes["d"] = {"common": dram, "runs": [_run(2, 4, "added")]}
    lines = draft.description(list(changes), changes)
    # The runner's change is every key's: said once; d's new run, past the three keys named, counted.
    assert lines == [
        "At every concurrency: change the runner's available-cpu-dram-mib from 3774874 to 3095781.",
        "One more config key changes as well.",
    ]


def test_a_runners_yaml_change_no_new_entry_names_gets_the_drafted_entry_in_the_comment(
    example: ExampleRepo,
) -> None:
    """The seed PR also lowers the host DRAM of the cluster GLM-5 runs on: its new entry names only
    the Kimi-K3 key, so GLM-5 is uncovered through its runner alone, and the comment offers its
    entry, saying what changed on the runner."""
    head = commit(example.path, {"configs/runners.yaml": replace(MI325X + "2_063_104", MI325X + "2_000_000")})
    report = run_local(example.request(head=head))[0]
    [uncovered] = [f for f in report.findings if f.message_id == "changelog-hardware-key-not-covered"]
    assert (uncovered.severity, uncovered.config_key) == (Severity.BLOCKING, GLM)
    english, chinese = halves(render_comment(report))
    assert "An entry drafted from what changed, to append to `perf-changelog.yaml`" in english
    assert "根据改动起草的条目，可追加到 `perf-changelog.yaml`" in chinese
    shown = english.split("```yaml\n", 1)[1].split("\n  ```", 1)[0]
    offered = yaml.safe_load("\n".join(line.removeprefix("  ") for line in shown.splitlines()))
    assert offered == [
        {
            "config-keys": [GLM],
            "scenario-type": ["agentic-coding"],
            "description": [
                # What the runs read of the record: the DRAM budget of its two DRAM-offload points.
                "At C8, C16: change total-cpu-dram-gb from 973 to 943.",
            ],
            "pr-link": "XXX",
        }
    ]


def test_the_real_runners_yaml_only_commit_drafts_nothing_as_no_run_reads_the_change(history: Path) -> None:
    """InferenceX b2e6d86 ("Update available CPU DRAM for cluster b200-dgxc") changed runners.yaml
    alone, with no changelog entry: 3,774,874 → 3,095,781 MiB, both above the DRAM rule's cap, so
    no budget and no run of the seven keys on that cluster changed (issue 32), and nothing is
    drafted."""
    request = LocalRequest(repo=str(history), base="b2e6d86^", head="b2e6d86", offline=True)
    report = run_local(request)[0]
    assert draft.drafted_keys(report.findings) == [] and report.changes == {}


def test_what_changed_names_a_runners_field_by_its_place_in_the_record(example: ExampleRepo) -> None:
    """Moving the HF cache of the cluster GLM-5 runs on: the comment's "What changed" said
    `path` `/data/hf-hub-cache` → …, which could be any path; it names the runner's field as the
    drafted entry does, in both languages."""
    moved = replace("hf-hub-cache: {path: /data/hf-hub-cache}", "hf-hub-cache: {path: /scratch/hf}")
    head = commit(example.path, {"configs/runners.yaml": moved})
    english, chinese = halves(render_comment(run_local(example.request(head=head))[0]))
    changed = "`slurm.volumes.hf-hub-cache.path` `/data/hf-hub-cache` → `/scratch/hf`"
    assert f"the runner's {changed}" in english
    assert f"runner 的 {changed}" in chinese
    assert "`path` `/data/hf-hub-cache`" not in english


# --- issue #34: the draft in the changelog's language, one fact a line, nothing cut ---------------


def test_a_new_key_is_named_by_model_hardware_framework_image_and_topology() -> None:
    view = {
        "common": [],
        "entry": {
            "model": "zai-org/GLM-5.2-MXFP4",
            "precision": "fp4",
            "runner": "cluster:mi355x-amds",
            "framework": "atom",
            "image": "rocm/atom-dev:glm52_agentic_0813",
        },
        "runs": [
            {"concurrency": c, "topology": {"tp": tp, "kv_offloading": kv}, "status": "added", "settings": []}
            for c, tp, kv in ((1, 8, "none"), (2, 8, "none"), (2, 4, "dram"), (4, 4, "dram"))
        ],
    }
    assert draft.description(["k"], {"k": view}) == [
        "Add GLM-5.2-MXFP4 FP4 on MI355X with atom, image rocm/atom-dev:glm52_agentic_0813.",
        "TP8: C1, C2.",
        "TP4 dram-offload: C2, C4.",
    ]


def test_an_image_bump_is_named_with_its_tag_and_a_digest_pin_is_not_spelled_out() -> None:
    pinned = "vllm/vllm-openai:nightly-b22afe45@sha256:" + "1" * 64
    common = [{"path": "image", "base": "vllm/vllm-openai:kimi-k3", "head": pinned}]
    recipe_pin = {
        "path": "frontend.container_image",
        "base": "r@sha256:" + "a" * 64,
        "head": "r@sha256:" + "b" * 64,
    }
    runs = [_run(1, 8, "as-before"), _run(2, 8, "changed", [recipe_pin])]
    [image, pin] = draft.description(["k"], {"k": {"common": common, "runs": runs}})
    assert image == "Update the image from vllm/vllm-openai:kimi-k3 to nightly-b22afe45 (pinned by digest)."
    assert pin == "At C2: change container_image from r@sha256:aaaaaaaaaaaa to r@sha256:bbbbbbbbbbbb."


def test_the_same_field_of_prefill_and_decode_is_two_facts_not_one_line_twice() -> None:
    """#2471's draft said "set kv-cache-dtype to fp8" twice: the prefill's and the decode's."""
    settings = [
        {"path": "prefill.kv-cache-dtype", "base": None, "head": "fp8"},
        {"path": "decode.kv-cache-dtype", "base": None, "head": "fp8"},
    ]
    [line] = draft.description(["k"], {"k": {"common": settings, "runs": [_run(1, 8), _run(2, 8)]}})
    assert (
        line == "At every concurrency: set prefill.kv-cache-dtype to fp8; set decode.kv-cache-dtype to fp8."
    )


def test_the_entry_never_scrolls_nor_cuts_a_word_and_reads_back_whole() -> None:
    """Long facts are folded over YAML lines at spaces: every line fits, and YAML reads each
    description back exactly as drafted."""
    runs = [_run(c, tp, "added") for tp in (2, 4, 8) for c in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)]
    image = {"path": "image", "base": "vllm/vllm-openai:" + "a" * 60, "head": "vllm/vllm-openai:" + "b" * 60}
    changes = {"minimaxm3-fp4-b300-vllm-mtp-a-rather-long-config-key": {"common": [image], "runs": runs}}
    keys = list(changes)
    text = draft.entry_text(keys, changes, "XXX")
    assert text is not None and max(map(len, text.splitlines())) <= draft.LINE_CHARS
    [entry] = yaml.safe_load(text)
    assert entry["description"] == draft.description(keys, changes)
    assert not any("…" in line or "prbot" in line for line in entry["description"])
    assert len(entry["description"]) == len(set(entry["description"]))


def test_the_dram_budget_and_the_recipes_total_cpu_dram_gb_are_one_fact(example: ExampleRepo) -> None:
    """The seed PR moves C48 to the 0.6 block: the generator's budget (`total-cpu-dram-gb`) and the
    recipe's `TOTAL_CPU_DRAM_GB` both go 1028 → 1799. The draft said so twice, once under each
    name; it says it once, as the recipe names it."""
    report = run_local(example.request())[0]
    lines = draft.description(list(report.changes), changes_view.as_json(report.changes))
    budget = [line for line in lines if "1028 to 1799" in line]
    assert len(budget) == 1 and "change TOTAL_CPU_DRAM_GB from 1028 to 1799" in budget[0]
    assert not any("total-cpu-dram-gb" in line for line in lines)


def test_a_recipe_pinning_another_budget_keeps_both_values() -> None:
    """Turning DRAM offload on sets both; a recipe that pins a value other than the budget is two
    facts (the `dram` check blocks on it), so neither is dropped."""
    settings = [
        {"path": "kv-offloading", "base": "none", "head": "dram"},
        {"path": "total-cpu-dram-gb", "base": None, "head": 2849},
        {"path": "benchmark.env.TOTAL_CPU_DRAM_GB", "base": None, "head": "2849"},
    ]
    [line] = draft.description(["k"], {"k": {"common": settings, "runs": [_run(1, 8)]}})
    assert line == "At every concurrency: set TOTAL_CPU_DRAM_GB=2849; change kv-offloading from none to dram."
    settings[2] = {**settings[2], "head": "2800"}
    [line] = draft.description(["k"], {"k": {"common": settings, "runs": [_run(1, 8)]}})
    assert "TOTAL_CPU_DRAM_GB=2800" in line and "set total-cpu-dram-gb to 2849" in line


def test_an_edited_benchmark_script_is_named_by_its_path_without_ids() -> None:
    """#2178: the draft said "add …sh@ccae830b8d9c to script; remove …sh@c18ec20b0afe from script"."""
    path = "benchmarks/single_node/agentic/dsv4_fp4_b200_vllm.sh"
    edited = {"path": "script", "base": [f"{path}@c18ec20b0afe"], "head": [f"{path}@ccae830b8d9c"]}
    edited |= {"added": [edited["head"][0]], "removed": [edited["base"][0]]}
    [line] = draft.description(["k"], {"k": {"common": [edited], "runs": [_run(1, 8)]}})
    assert line == f"Update benchmark script {path}."
    other = "benchmarks/single_node/agentic/dsv4_fp4_b200.sh"
    switched = {"path": "script", "base": [f"{other}@c18ec20b0afe"], "head": [f"{path}@ccae830b8d9c"]}
    [line] = draft.description(["k"], {"k": {"common": [switched], "runs": [_run(1, 8)]}})
    assert line == f"Run benchmark script {path} instead of {other}."
    assert "@" not in line
