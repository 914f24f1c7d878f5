"""Issue #6: a hostile pull request never crashes the bot, never makes it lie, never leaks.

Each case commits one hostile change on top of the bundled example PR and checks that the review
names the problem with a finding of the right check, at the right file and line, that no check
crashed, and that the comment renders (in both languages, within GitHub's size limit).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from bot import engine
from bot.cli import main
from bot.findings import Severity
from bot.local import LocalRequest, run_local
from bot.output import report_json
from bot.output.render import COMMENT_LIMIT, render_comment
from bot.report import EXIT_BLOCKING, EXIT_CLEAN, EXIT_ERROR, Report
from tests.conftest import CHANGELOG, MASTER, RECIPE, commit, replace
from tests.mdcheck import leaks, outside_code

RUNNERS = "configs/runners.yaml"
KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"
POINT = f"{{ tp: 8, kv-offloading: none, conc-list: [1, 4], spec-decoding: mtp, srt-recipe: {RECIPE} }}"
NEW_ENTRY = (
    "\n- config-keys:\n    - {key}\n  description:\n    - {description}\n"
    "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n"
)
KEY_CHECKS = ("recipe-selection", "dram", "changelog", "sweep-plan", "digest")


def point(old: str, new: str):
    """Edit the first search-space point of the example key (master config line 56)."""
    return replace(POINT, POINT.replace(old, new, 1))


def append(text: str):
    return lambda old: old + text


def entry(**fields: str) -> str:
    """A new changelog entry with some fields replaced (raw YAML text for each)."""
    lines = {
        "config-keys": f"\n    - {KEY}",
        "description": '\n    - "hostile test"',
        "pr-link": " https://github.com/SemiAnalysisAI/InferenceX/pull/XXX",
        **fields,
    }
    return (
        "\n- " + "\n  ".join(f"{name}:{value}" for name, value in lines.items() if value is not None) + "\n"
    )


def bomb(levels: int = 8) -> str:
    lines = ["bomb:", "  a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(levels):
        prev, name = chr(97 + i), chr(98 + i)
        lines.append(f"  {name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    return "\n".join(lines) + "\n"


# Edits reused below (kept short so that each case reads on a few lines).
SCENARIOS = "  scenarios:\n    agentic-coding:\n    - dram-utilization: 0.343"
GROUP_06 = "    - dram-utilization: 0.6\n      search-space:\n"
POINT_60 = "      - { tp: 8, dcp-size: 8, kv-offloading: dram, kv-offload-backend: { name: lmcache"
IMAGE = "image: rocm/atom-dev:nightly_202610281457"
RUNNER = "  runner: cluster:mi355x-amds\n"
C4_VARIANT = (
    "override_tp8_c4:\n  roles:\n    agg:\n      args:\n"
    "        cudagraph-capture-sizes: '[1,2,4,8,12,16,24,32]'\n      env:\n        ATOM_MONO_ENABLE: '0'\n"
    "  benchmark:\n    env:\n      CONC: '4'\n"
)
C14_ENV = (
    "  benchmark:\n    env:\n      CONC: '14'\n      KV_OFFLOADING: dram\n      TOTAL_CPU_DRAM_GB: '1028'"
)
GPN = "    gpus-per-node: 8\n    # Host"
MIB = "available-cpu-dram-mib: 3_095_781"
DEEP_BLOCK = "deep:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 100)) + "  " * 100 + "v: 1\n"
CHANGELOG_BOMB = "\n- config-keys: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"  k{i}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]\n" for i in range(8)
)


def case(edits: dict, check: str, message_id: str, file: str, line: int | None) -> tuple:
    return edits, check, message_id, file, line


def master(old: str, new: str) -> tuple[dict, str, str, str]:
    """A wrong value in the master config, reported by `consistency` (the usual case)."""
    return {MASTER: replace(old, new)}, "consistency"


def on_point(old: str, new: str) -> tuple[dict, str]:
    return {MASTER: point(old, new)}, "consistency"


HUGE = "0x" + "f" * 5000  # 6,021 decimal digits

# name: (edits, check, message id, file, line or None for "any line")
CASES: dict[str, tuple[dict, str, str, str, int | None]] = {
    # --- master config: wrong types in every field the checks read --------------------------
    # Values Python cannot write in decimal (over 4,300 digits), and a date, where each was read
    # as text or converted: each ended the review (or its comment) with a crash.
    "utilization-huge-int": case(
        {MASTER: replace("    - dram-utilization: 0.45", "    - dram-utilization: " + HUGE)},
        "consistency",
        "schema-wrong-type",
        MASTER,
        34,
    ),
    "recipe-path-a-date": case(
        {
            MASTER: replace(
                "srt-recipe: benchmarks/single_node/srt-slurm-recipes/qwen3.5", "srt-recipe: 2024-01-01 #"
            )
        },
        "consistency",
        "schema-wrong-type",
        MASTER,
        80,
    ),
    "old-changelog-entry-huge-int": case(
        {CHANGELOG: replace('    - "Upgrade vLLM to v0.12.1', "    - " + HUGE + ' # "')},
        "changelog",
        "changelog-field-invalid",
        CHANGELOG,
        18,
    ),
    "runner-record-huge-int": case(
        {RUNNERS: replace("2_063_104\n    arch: x86_64", "2_063_104\n    arch: " + HUGE)},
        "changelog",
        "changelog-hardware-key-not-covered",
        MASTER,
        None,
    ),
    "old-changelog-link-huge-int": case(
        {CHANGELOG: replace("https://github.com/SemiAnalysisAI/InferenceX/pull/2133", HUGE)},
        "changelog",
        "changelog-field-invalid",
        CHANGELOG,
        None,
    ),
    "dram-pin-huge-negative": case(
        {RECIPE: replace("LMCACHE_MAX_LOCAL_CPU_SIZE: '128'", "LMCACHE_MAX_LOCAL_CPU_SIZE: -" + HUGE)},
        "dram",
        "dram-pool-oversubscribed",
        RECIPE,
        None,
    ),
    "dram-total-huge-list": case(
        {RECIPE: replace("TOTAL_CPU_DRAM_GB: '1799'", "TOTAL_CPU_DRAM_GB: [" + HUGE + "]")},
        "dram",
        "dram-total-mismatch",
        RECIPE,
        None,
    ),
    "recipe-arg-huge-list": case(
        {RECIPE: replace("decode-context-parallel-size: 8", "decode-context-parallel-size: [" + HUGE + "]")},
        "recipe-selection",
        "recipe-wrong-type",
        RECIPE,
        98,
    ),
    "selector-huge-mapping": case(
        {RECIPE: replace("      KV_OFFLOADING: dram", "      KV_OFFLOADING: {a: " + HUGE + "}")},
        "recipe-selection",
        "recipe-wrong-type",
        RECIPE,
        None,
    ),
    "selector-huge-digits": case(
        {RECIPE: replace("      CONC: '48'", "      CONC: '" + "9" * 5000 + "'")},
        "recipe-selection",
        "selection-none",
        MASTER,
        None,
    ),
    # Runs are named by their parallelism (`TP8`) in several findings: that crashed recipe selection.
    "tp-huge-int": case(
        {MASTER: point("tp: 8", "tp: " + HUGE)}, "recipe-selection", "selection-none", MASTER, 56
    ),
    # The drafted entry names runs by their sequence lengths (`1k1k`): it crashed the comment.
    "osl-huge-int": case(
        {MASTER: replace("      osl: 1024", "      osl: " + HUGE)},
        "changelog",
        "changelog-key-not-covered",
        MASTER,
        None,
    ),
    # A mapping where the sweep groups rows by model: the sweep plan crashed on it.
    "model-a-mapping": case(
        {MASTER: replace("  model: moonshotai/Kimi-K3\n", "  model: {}\n")},
        "consistency",
        "schema-wrong-type",
        MASTER,
        46,
    ),
    "tp-string": case(*on_point("tp: 8", 'tp: "8"'), "master-wrong-type", MASTER, 56),
    "tp-true": case(*on_point("tp: 8", "tp: true"), "master-wrong-type", MASTER, 56),
    "tp-list": case(*on_point("tp: 8", "tp: [8]"), "schema-wrong-type", MASTER, 56),
    "tp-float": case(*on_point("tp: 8", "tp: 8.5"), "schema-wrong-type", MASTER, 56),
    "tp-zero": case(*on_point("tp: 8", "tp: 0"), "master-not-positive", MASTER, 56),
    "tp-negative": case(*on_point("tp: 8", "tp: -8"), "master-not-positive", MASTER, 56),
    "tp-missing": case(*on_point("tp: 8, ", ""), "schema-agentic-topology", MASTER, 56),
    "ep-zero": case(*on_point("tp: 8", "tp: 8, ep: 0"), "master-not-positive", MASTER, 56),
    "dcp-string": case(*master("dcp-size: 8", "dcp-size: eight"), "schema-wrong-type", MASTER, 57),
    "dp-attn-string": case(*on_point("tp: 8", "tp: 8, dp-attn: 'yes'"), "master-wrong-type", MASTER, 56),
    "conc-list-of-strings": case(
        *on_point("conc-list: [1, 4]", 'conc-list: ["1", "4"]'), "master-bad-conc-list", MASTER, 56
    ),
    "conc-list-scalar": case(*on_point("conc-list: [1, 4]", "conc-list: 4"), "schema-wrong-type", MASTER, 56),
    "conc-list-empty": case(*on_point("conc-list: [1, 4]", "conc-list: []"), "schema-conc-none", MASTER, 56),
    "conc-list-mapping": case(
        *on_point("conc-list: [1, 4]", "conc-list: {a: 1}"), "schema-wrong-type", MASTER, 56
    ),
    "conc-list-booleans": case(
        *on_point("conc-list: [1, 4]", "conc-list: [true, 4]"), "master-bad-conc-list", MASTER, 56
    ),
    "conc-start-above-end": case(
        *on_point("conc-list: [1, 4]", "conc-start: 8, conc-end: 2"), "schema-conc-order", MASTER, 56
    ),
    "conc-start-string": case(
        *on_point("conc-list: [1, 4]", "conc-start: '1', conc-end: 4"), "master-wrong-type", MASTER, 56
    ),
    "no-concurrency": case(*on_point("conc-list: [1, 4], ", ""), "schema-conc-none", MASTER, 56),
    "utilization-negative": case(
        *master("dram-utilization: 0.6", "dram-utilization: -0.6"), "schema-wrong-type", MASTER, 58
    ),
    "utilization-zero": case(
        *master("dram-utilization: 0.6", "dram-utilization: 0"), "schema-wrong-type", MASTER, 58
    ),
    "utilization-above-one": case(
        *master("dram-utilization: 0.6", "dram-utilization: 60"), "schema-wrong-type", MASTER, 58
    ),
    "utilization-nan": case(
        *master("dram-utilization: 0.6", "dram-utilization: .nan"), "schema-wrong-type", MASTER, 58
    ),
    "utilization-string": case(
        *master("dram-utilization: 0.6", "dram-utilization: lots"), "schema-wrong-type", MASTER, 58
    ),
    "utilization-list": case(
        *master("dram-utilization: 0.6", "dram-utilization: [0.6]"), "schema-wrong-type", MASTER, 58
    ),
    "scenarios-as-list": case(
        *master(SCENARIOS, SCENARIOS.replace("    agentic-coding:\n  ", "  - agentic-coding:\n  ")),
        "master-no-scenarios",
        MASTER,
        44,
    ),
    "scenario-as-mapping": case(
        *master(
            SCENARIOS, SCENARIOS.replace("agentic-coding:\n", "agentic-coding: all\n    fixed-seq-len:\n")
        ),
        "schema-wrong-type",
        MASTER,
        53,
    ),
    "search-space-as-mapping": case(
        *master(GROUP_06 + "      -", GROUP_06 + "        only:"), "master-no-search-space", MASTER, 58
    ),
    "point-as-string": case(
        *master(GROUP_06 + POINT_60, GROUP_06 + "      - hello\n" + POINT_60),
        "schema-wrong-type",
        MASTER,
        60,
    ),
    "group-as-string": case(
        *master(GROUP_06, "    - just a string\n" + GROUP_06), "schema-wrong-type", MASTER, 58
    ),
    "entry-as-list": case(
        *master(f"{KEY}:\n  image:", f"{KEY}:\n- image:"), "master-entry-not-mapping", MASTER, 44
    ),
    "image-as-list": case(
        *master(IMAGE, IMAGE.replace(": ", ": [") + "]"),
        "schema-wrong-type",
        MASTER,
        45,
    ),
    "runner-as-number": case(*master(RUNNER, "  runner: 42\n"), "schema-wrong-type", MASTER, 48),
    "multinode-as-string": case(
        *master("  multinode: false\n" + SCENARIOS, "  multinode: 'no'\n" + SCENARIOS),
        "schema-wrong-type",
        MASTER,
        51,
    ),
    "spec-decoding-list": case(
        *on_point("spec-decoding: mtp", "spec-decoding: [mtp]"), "schema-wrong-type", MASTER, 56
    ),
    "kv-offloading-number": case(
        *on_point("kv-offloading: none", "kv-offloading: 1"), "schema-wrong-type", MASTER, 56
    ),
    "srt-recipe-number": case(
        *on_point(f"srt-recipe: {RECIPE}", "srt-recipe: 42"), "schema-wrong-type", MASTER, 56
    ),
    "srt-recipe-outside-repo": case(
        {MASTER: point(f"srt-recipe: {RECIPE}", "srt-recipe: ../../../../etc/passwd")},
        "recipe-selection",
        "selection-recipe-missing",
        MASTER,
        56,
    ),
    "unknown-selector": case(
        {MASTER: point(f"srt-recipe: {RECIPE}", f"srt-recipe: {RECIPE}:override_nope")},
        "recipe-selection",
        "selection-unknown-selector",
        MASTER,
        56,
    ),
    "duplicate-field": case(*master(RUNNER, RUNNER + RUNNER), "master-duplicate-key", MASTER, 49),
    "duplicate-config-key": case(
        {MASTER: append(f"\n{KEY}:\n  image: x\n")}, "consistency", "master-duplicate-key", MASTER, 82
    ),
    # --- master config: YAML limits ------------------------------------------------------------
    "master-tab": case(*master(RUNNER, "\t" + RUNNER.lstrip()), "yaml-syntax", MASTER, 48),
    "master-nul": case({MASTER: append("\x00\n")}, "consistency", "yaml-nul-byte", MASTER, 81),
    "master-syntax": case(*master(RUNNER, "  runner: [cluster:mi355x-amds\n"), "yaml-syntax", MASTER, None),
    "master-root-list": case({MASTER: "- a\n- b\n"}, "consistency", "master-not-mapping", MASTER, 1),
    "master-root-scalar": case({MASTER: "just words\n"}, "consistency", "master-not-mapping", MASTER, 1),
    "master-deep-block": case({MASTER: append(DEEP_BLOCK)}, "consistency", "yaml-too-deep", MASTER, None),
    "master-deep-flow": case(
        {MASTER: append("deep: " + "[" * 5000 + "]" * 5000 + "\n")},
        "consistency",
        "yaml-too-deep",
        MASTER,
        81,
    ),
    "master-alias-bomb": case({MASTER: append(bomb())}, "consistency", "yaml-alias-bomb", MASTER, None),
    "master-recursive-alias": case(
        {MASTER: append("loop: &loop [*loop]\n")}, "consistency", "yaml-alias-bomb", MASTER, 81
    ),
    "master-too-large": case(
        {MASTER: append("# " + "x" * (5 * 1024 * 1024) + "\n")}, "consistency", "yaml-too-large", MASTER, None
    ),
    # --- recipe ----------------------------------------------------------------------------------
    "recipe-root-list": case({RECIPE: "- a\n- b\n"}, "recipe-selection", "recipe-not-mapping", RECIPE, 1),
    "recipe-base-string": case(
        {RECIPE: replace("base:\n  schema: 2", "base: hello\nxbase:\n  schema: 2")},
        "recipe-selection",
        "recipe-variant-not-mapping",
        RECIPE,
        8,
    ),
    "recipe-variant-string": case(
        {RECIPE: replace(C4_VARIANT, "override_tp8_c4: hello\n")},
        "recipe-selection",
        "recipe-variant-not-mapping",
        RECIPE,
        80,
    ),
    "recipe-env-list": case(
        {RECIPE: replace(C14_ENV, "  benchmark:\n    env:\n      - CONC=14")},
        "recipe-selection",
        "recipe-wrong-type",
        RECIPE,
        118,
    ),
    "recipe-benchmark-string": case(
        {
            RECIPE: replace(
                C4_VARIANT, C4_VARIANT.replace("  benchmark:\n", "  benchmark: CONC=4\n  xbenchmark:\n")
            )
        },
        "recipe-selection",
        "recipe-wrong-type",
        RECIPE,
        87,
    ),
    "recipe-roles-list": case(
        {RECIPE: replace("  roles:\n    agg:\n      nodes: 1", "  roles:\n    - agg:\n      nodes: 1")},
        "recipe-selection",
        "recipe-wrong-type",
        RECIPE,
        19,
    ),
    "recipe-args-list": case(
        {
            RECIPE: replace(
                "      gpus: 8\n      args:\n", "      gpus: 8\n      args:\n        - x\n      xargs:\n"
            )
        },
        "recipe-selection",
        "recipe-wrong-type",
        RECIPE,
        24,
    ),
    "recipe-conc-list": case(
        {RECIPE: replace("      CONC: '4'", "      CONC: [4]")},
        "recipe-selection",
        "recipe-wrong-type",
        RECIPE,
        89,
    ),
    "recipe-gpus-string": case(
        {RECIPE: replace("      gpus: 8\n", "      gpus: eight\n")},
        "recipe-selection",
        "recipe-wrong-type",
        RECIPE,
        23,
    ),
    "recipe-dp-attention-list": case(
        {
            RECIPE: replace(
                "        decode-context-parallel-size: 1\n", "        enable-dp-attention: [true]\n"
            )
        },
        "recipe-selection",
        "recipe-wrong-type",
        RECIPE,
        28,
    ),
    "recipe-zip-unequal": case(
        {
            RECIPE: append(
                "\nzip_override_z:\n  benchmark:\n    env:\n      CONC: ['1', '2']\n      TP: ['8']\n"
            )
        },
        "recipe-selection",
        "recipe-bad-zip",
        RECIPE,
        208,
    ),
    "recipe-zip-huge": case(
        {RECIPE: append("\nzip_override_z:\n  benchmark:\n    env:\n      CONC: [" + "'1'," * 5000 + "]\n")},
        "recipe-selection",
        "recipe-bad-zip",
        RECIPE,
        208,
    ),
    "recipe-duplicate-key": case(
        {RECIPE: replace("      CONC: '4'", "      CONC: '4'\n      CONC: '4'")},
        "recipe-selection",
        "recipe-duplicate-key",
        RECIPE,
        90,
    ),
    "recipe-syntax": case({RECIPE: append("\nfoo: [\n")}, "recipe-selection", "yaml-syntax", RECIPE, None),
    "recipe-alias-bomb": case({RECIPE: append(bomb())}, "recipe-selection", "yaml-alias-bomb", RECIPE, None),
    "recipe-nul": case({RECIPE: append("\x00")}, "recipe-selection", "yaml-nul-byte", RECIPE, None),
    "recipe-total-string": case(
        {RECIPE: replace("TOTAL_CPU_DRAM_GB: '1799'", "TOTAL_CPU_DRAM_GB: lots")},
        "dram",
        "dram-total-mismatch",
        RECIPE,
        164,
    ),
    "recipe-total-list": case(
        {RECIPE: replace("TOTAL_CPU_DRAM_GB: '1799'", "TOTAL_CPU_DRAM_GB: [1799]")},
        "dram",
        "dram-total-mismatch",
        RECIPE,
        164,
    ),
    "recipe-pool-string": case(
        {RECIPE: replace("LMCACHE_MAX_LOCAL_CPU_SIZE: '224'", "LMCACHE_MAX_LOCAL_CPU_SIZE: big")},
        "dram",
        "dram-pool-oversubscribed",
        RECIPE,
        157,
    ),
    "recipe-state-string": case(
        {RECIPE: replace("OFFLOAD_STATE_CPU_SIZE: '128'", "OFFLOAD_STATE_CPU_SIZE: half")},
        "dram",
        "dram-state-over-pool",
        RECIPE,
        158,
    ),
    # --- runners.yaml ----------------------------------------------------------------------------
    "clusters-as-list": case(
        {RUNNERS: replace("\nclusters:\n", "\nclusters:\n  - unused\nxclusters:\n")},
        "dram",
        "dram-runners-not-mapping",
        RUNNERS,
        36,
    ),
    "runners-root-list": case({RUNNERS: "- a\n- b\n"}, "dram", "dram-runners-not-mapping", RUNNERS, 1),
    "cluster-as-string": case(
        {RUNNERS: replace("  mi355x-amds:\n" + GPN, "  mi355x-amds: big\n  xx:\n" + GPN)},
        "dram",
        "dram-missing-hardware",
        RUNNERS,
        37,
    ),
    "gpus-per-node-string": case(
        {RUNNERS: replace(GPN, GPN.replace("8", "eight"))}, "dram", "dram-missing-hardware", RUNNERS, 37
    ),
    "gpus-per-node-zero": case(
        {RUNNERS: replace(GPN, GPN.replace("8", "0"))}, "dram", "dram-missing-hardware", RUNNERS, 37
    ),
    "gpus-per-node-negative": case(
        {RUNNERS: replace(GPN, GPN.replace("8", "-8"))}, "dram", "dram-missing-hardware", RUNNERS, 37
    ),
    "dram-mib-negative": case(
        {RUNNERS: replace(MIB, MIB.replace(": ", ": -"))}, "dram", "dram-missing-hardware", RUNNERS, 37
    ),
    "dram-mib-float": case({RUNNERS: replace(MIB, MIB + ".5")}, "dram", "dram-missing-hardware", RUNNERS, 37),
    "runners-syntax": case({RUNNERS: "clusters: [\n"}, "dram", "yaml-syntax", RUNNERS, None),
    "runners-nul": case({RUNNERS: append("\x00")}, "dram", "yaml-nul-byte", RUNNERS, None),
    "runners-missing": case({RUNNERS: None}, "dram", "runners-missing", RUNNERS, None),
    # --- perf changelog ----------------------------------------------------------------------------
    "changelog-as-mapping": case(
        {CHANGELOG: "entries: []\n"}, "changelog", "changelog-not-list", CHANGELOG, 1
    ),
    "changelog-tail-mapping": case(
        {CHANGELOG: append("\nnot: a list\n")}, "changelog", "yaml-syntax", CHANGELOG, None
    ),
    "config-keys-string": case(
        {CHANGELOG: append(entry(**{"config-keys": f" {KEY}"}))},
        "changelog",
        "changelog-field-invalid",
        CHANGELOG,
        75,
    ),
    "changelog-entry-string": case(
        {CHANGELOG: append("\n- hello\n")}, "changelog", "changelog-entry-not-mapping", CHANGELOG, 75
    ),
    "changelog-entry-list": case(
        {CHANGELOG: append("\n- - a\n  - b\n")}, "changelog", "changelog-entry-not-mapping", CHANGELOG, 75
    ),
    "description-string": case(
        {CHANGELOG: append(entry(description=" just a string"))},
        "changelog",
        "changelog-field-invalid",
        CHANGELOG,
        77,
    ),
    "pr-link-number": case(
        {CHANGELOG: append(entry(**{"pr-link": " 42"}))},
        "changelog",
        "changelog-field-invalid",
        CHANGELOG,
        79,
    ),
    "pr-link-missing": case(
        {CHANGELOG: append(entry(**{"pr-link": None}))}, "changelog", "changelog-field-invalid", CHANGELOG, 75
    ),
    "scenario-type-string": case(
        {CHANGELOG: append(entry(**{"scenario-type": " agentic-coding"}))},
        "changelog",
        "changelog-field-invalid",
        CHANGELOG,
        80,
    ),
    "scenario-type-unhashable": case(
        {CHANGELOG: append(entry(**{"scenario-type": " [[a], {b: 1}]"}))},
        "changelog",
        "changelog-field-invalid",
        CHANGELOG,
        80,
    ),
    "append-only-string": case(
        {CHANGELOG: append(entry(**{"append-only": " yes please"}))},
        "changelog",
        "changelog-field-invalid",
        CHANGELOG,
        80,
    ),
    "changelog-duplicate-field": case(
        {CHANGELOG: append(entry(**{"pr-link": " https://github.com/o/r/pull/1\n  pr-link: x"}))},
        "changelog",
        "changelog-duplicate-key",
        CHANGELOG,
        80,
    ),
    "changelog-tab-in-text": case(
        {CHANGELOG: append(entry(description='\n    - "a\tb"'))}, "changelog", "changelog-tab", CHANGELOG, 78
    ),
    "changelog-tab-indent": case(
        {CHANGELOG: append("\n- config-keys:\n\t- x\n")}, "changelog", "yaml-syntax", CHANGELOG, None
    ),
    "changelog-cr": case(
        {CHANGELOG: append(entry().replace("\n", "\r\n"))}, "changelog", "changelog-cr", CHANGELOG, None
    ),
    "changelog-nul": case({CHANGELOG: append("\x00")}, "changelog", "yaml-nul-byte", CHANGELOG, None),
    "changelog-alias-bomb": case(
        {CHANGELOG: append(CHANGELOG_BOMB)}, "changelog", "yaml-alias-bomb", CHANGELOG, None
    ),
    "changelog-too-large": case(
        {CHANGELOG: append("# " + "x" * (5 * 1024 * 1024) + "\n")},
        "changelog",
        "yaml-too-large",
        CHANGELOG,
        None,
    ),
    "changelog-unknown-key-glob": case(
        {CHANGELOG: append(entry(**{"config-keys": "\n    - '[z-a]*'\n    - '['"}))},
        "changelog",
        "changelog-unknown-key",
        CHANGELOG,
        75,
    ),
}


def assert_sound(report: Report) -> None:
    """No check crashed, the JSON report is valid, the comment renders in every language and fits."""
    crashed = [f for f in report.findings if f.message_id in ("check-crashed", "review-crashed")]
    assert not crashed, [(f.check, f.params) for f in crashed]
    assert json.loads(report_json.dumps(report))["verdict"] == report.verdict
    for lang in ("both", "en", "zh"):
        comment = render_comment(report, lang=lang)
        assert len(comment) <= COMMENT_LIMIT
        assert not leaks(comment), leaks(comment)


def describe(report: Report) -> list[tuple[str, str, str, str | None, int | None]]:
    return [(str(f.severity), f.check, f.message_id, f.file, f.line) for f in report.findings]


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_change_is_named_not_crashed(review_example, name: str) -> None:
    edits, check, message_id, file, line = CASES[name]
    report = review_example(edits)
    assert_sound(report)
    named = [f for f in report.findings if f.check == check and f.message_id == message_id]
    assert named, describe(report)
    assert any(f.file == file and (line is None or f.line == line) for f in named), describe(report)
    assert all(f.severity is Severity.BLOCKING for f in named), describe(report)
    assert report.verdict == "blocking" and report.exit_code == EXIT_BLOCKING


@pytest.mark.parametrize(
    ("name", "data", "message_id"),
    [
        ("invalid-utf8", b"\n# \xff\xfe caf\xe9\n", "yaml-invalid-utf8"),
        ("nul", b"\n# \x00\n", "yaml-nul-byte"),
    ],
)
@pytest.mark.parametrize(
    ("path", "check"),
    [(MASTER, "consistency"), (RECIPE, "recipe-selection"), (CHANGELOG, "changelog"), (RUNNERS, "dram")],
)
def test_undecodable_bytes_are_named(example, review_example, name, data, message_id, path, check) -> None:
    target = example.path / path
    target.write_bytes(target.read_bytes() + data)
    report = review_example({"notes.txt": "touch\n"})
    assert_sound(report)
    named = [f for f in report.findings if f.message_id == message_id]
    assert named and all(f.check == check and f.file == path and f.line for f in named), describe(report)


_LONG_KEY = "? 0x" + "f" * 5000 + "\n: 1\n"  # over 4,300 decimal digits: Python cannot write it


@pytest.mark.parametrize(
    ("path", "check", "text"),
    [
        (MASTER, "consistency", "\n" + _LONG_KEY),
        (RECIPE, "recipe-selection", "\n" + _LONG_KEY),
        (RUNNERS, "dram", "\n" + _LONG_KEY),
        (CHANGELOG, "changelog", "\n- config-keys: [x]\n  " + _LONG_KEY.replace("\n:", "\n  :")),
    ],
)
def test_a_mapping_key_no_reader_can_name_refuses_its_file(example, review_example, path, check, text):
    """Every reader names keys in its findings (`a.b.c`); a key that is an integer too long for
    Python's decimal text (a top-level key, a field, a changelog entry's) ended the whole review
    with `review-crashed` and exit 2. Now its file is refused, named, and the review goes on."""
    target = example.path / path
    target.write_text(target.read_text(encoding="utf-8") + text + "\n", encoding="utf-8")
    report = review_example({"notes.txt": "touch\n"})
    assert_sound(report)
    named = [f for f in report.findings if f.message_id == "yaml-long-key"]
    assert named and all(f.check == check and f.file == path and f.line for f in named), describe(report)
    assert report.verdict == "blocking"


def test_a_changed_setting_too_long_to_write_is_quoted_in_the_claim_warning(review_example) -> None:
    """The example PR says its other concurrencies serve as before; a recipe argument they all run
    with set to an integer of over 4,300 digits makes that claim wrong, and its warning quotes the
    value by its hex digits (it ended the consistency check with a crash)."""
    report = review_example({RECIPE: replace("interval-tokens: null", "interval-tokens: " + HUGE)})
    assert_sound(report)
    [claim] = [f for f in report.findings if f.message_id == "consistency-claim-as-before"]
    assert claim.severity is Severity.WARNING
    assert "0xffffffff…ffff" in json.dumps(claim.params, ensure_ascii=False)


def test_alias_bomb_in_a_pr_is_refused_in_milliseconds(review_example) -> None:
    edits = {
        MASTER: append(bomb(12)),
        RECIPE: append(bomb(12)),
        CHANGELOG: append("\n" + bomb(12).replace("bomb:", "- bomb:")),
    }
    started = time.perf_counter()
    report = review_example(edits)
    elapsed = time.perf_counter() - started
    assert_sound(report)
    assert {f.file for f in report.findings if f.message_id == "yaml-alias-bomb"} == {
        MASTER,
        RECIPE,
        CHANGELOG,
    }
    assert elapsed < 2.0, elapsed  # includes git; the refusal itself takes milliseconds


# --- a file that cannot be read: its keys are unknown, not removed, and nothing claims a pass ----------


@pytest.mark.parametrize(
    "name", ["master-tab", "master-nul", "master-syntax", "master-root-list", "master-alias-bomb"]
)
def test_unreadable_master_leaves_its_keys_unchecked_not_removed(review_example, name: str) -> None:
    report = review_example(CASES[name][0])
    assert_sound(report)
    assert not report.changed_keys  # nothing was claimed added or removed
    unchecked = {f.check for f in report.findings if f.message_id == "unchecked-unreadable-master"}
    assert unchecked == set(KEY_CHECKS)
    assert all(
        f.severity is Severity.UNVERIFIED for f in report.findings if f.message_id.startswith("unchecked")
    )
    claims = {f.message_id for f in report.findings if f.severity is Severity.VERIFIED}
    assert not claims & {
        "dram-nothing",
        "selection-nothing-changed",
        "changelog-not-needed",
        "changelog-appended",
    }
    assert "changelog-unknown-key" not in {f.message_id for f in report.findings}
    # The other checks still ran.
    assert {f.check for f in report.findings} >= {"labels", "codeowners", "digest", "consistency"}


def test_wrong_tp_is_reported_once_and_no_leftover_is_invented(review_example) -> None:
    report = review_example(CASES["tp-string"][0])
    ids = [f.message_id for f in report.findings]
    assert ids.count("master-wrong-type") == 1 and "master-no-tp" not in ids
    assert "selection-leftover" not in ids  # C1 and C4 were not read, not dropped


def test_removed_key_needs_no_changelog_entry(review_example, example) -> None:
    text = (example.path / MASTER).read_text()
    start = text.index("# Kimi-K3 MXFP4 agentic coding")
    end = text.index("# Qwen3.5 FP8 on MI355X")
    base_changelog = (example.path / CHANGELOG).read_text().rsplit("\n\n- config-keys:", 1)[0] + "\n"
    report = review_example({MASTER: text[:start] + text[end:], CHANGELOG: base_changelog})
    assert_sound(report)
    assert report.changed_keys == {KEY: ["points", "removed"]}
    assert "changelog-missing" not in [f.message_id for f in report.findings]


def test_adding_the_missing_final_newline_is_not_an_edit(example, review_example) -> None:
    path = example.path / CHANGELOG
    path.write_text(path.read_text().rstrip("\n"))
    commit(example.path, {}, "base without final newline")
    base = commit(example.path, {"notes.txt": "x\n"})
    head = commit(example.path, {CHANGELOG: lambda t: t + "\n"})
    report, _, _ = run_local(LocalRequest(repo=str(example.path), base=base, head=head, offline=True))
    assert not [f for f in report.findings if f.check == "changelog" and f.severity is Severity.BLOCKING]


def test_entry_inserted_mid_file_still_covers_its_key(review_example) -> None:
    def move_last_up(text: str) -> str:
        entries = text.rstrip("\n").split("\n\n")
        entries.insert(3, entries.pop())
        return "\n\n".join(entries) + "\n"

    report = review_example({CHANGELOG: move_last_up})
    ids = [f.message_id for f in report.findings if f.severity is Severity.BLOCKING]
    assert ids == ["changelog-inserted"]  # not also "key not covered": the inserted entry names it


def test_repairing_a_broken_changelog_is_not_reported_as_broken(example) -> None:
    path = example.path / CHANGELOG
    good = path.read_text()
    broken = good.replace("\n- config-keys:\n    - kimik3", "\n  - config-keys:\n    - kimik3", 1)
    path.write_text(broken)
    base = commit(example.path, {}, "broken base")
    head = commit(example.path, {CHANGELOG: good + NEW_ENTRY.format(key=KEY, description="again")})
    report, _, _ = run_local(LocalRequest(repo=str(example.path), base=base, head=head, offline=True))
    assert_sound(report)
    ids = {f.message_id: f for f in report.findings if f.check == "changelog"}
    # The base's own syntax error is named, but as the base's: unverified, never blocking.
    assert ids["yaml-syntax"].severity is Severity.UNVERIFIED
    assert ids["changelog-base-broken"].severity is Severity.UNVERIFIED
    assert not [f for f in report.findings if f.check == "changelog" and f.severity is Severity.BLOCKING]


# --- partial results and exit status --------------------------------------------------------------


def _boom(_ctx):
    raise RuntimeError("boom")


def test_one_crashing_check_leaves_the_others_running(review_example, monkeypatch) -> None:
    real = engine.function
    monkeypatch.setattr(engine, "function", lambda check: _boom if check.id == "dram" else real(check))
    report = review_example()
    crashed = [f for f in report.findings if f.message_id == "check-crashed"]
    assert [(f.check, f.severity) for f in crashed] == [("dram", Severity.BLOCKING)]  # fails closed
    assert crashed[0].params["error"] == "RuntimeError"
    ids = {f.message_id for f in report.findings}
    assert {"selection-ok", "changelog-appended", "labels-ok"} <= ids
    assert report.reviewed and report.exit_code == EXIT_BLOCKING and report.verdict == "blocking"
    comment = render_comment(report, lang="en")
    blocking = comment.split("#### Blocking", 1)[1].split("####", 1)[0]
    assert "**dram** — This check stopped on an unexpected RuntimeError" in blocking
    assert "no blocking issues" not in comment


def test_a_crash_beside_a_real_blocking_finding_exits_1(review_example, monkeypatch) -> None:
    real = engine.function
    monkeypatch.setattr(engine, "function", lambda check: _boom if check.id == "labels" else real(check))
    report = review_example({RECIPE: replace("TOTAL_CPU_DRAM_GB: '1799'", "TOTAL_CPU_DRAM_GB: '1800'")})
    assert report.exit_code == EXIT_BLOCKING


def test_every_check_crashing_exits_2(review_example, monkeypatch) -> None:
    monkeypatch.setattr(engine, "function", lambda _check: _boom)
    report = review_example()
    assert not report.reviewed and report.exit_code == EXIT_ERROR and report.verdict == "error"
    comment = render_comment(report, lang="en")
    assert "prbot review — the review could not run" in comment and "no blocking issues" not in comment


def test_a_failing_diff_is_reported_by_every_check_and_exits_2(review_example, monkeypatch) -> None:
    def broken(*_args):
        raise KeyError("lost")

    monkeypatch.setattr(engine, "compute", broken)
    report = review_example()
    assert {f.check for f in report.findings} == set(engine.CHECK_IDS)
    assert {f.message_id for f in report.findings} == {"review-crashed"}
    assert report.exit_code == EXIT_ERROR and report.verdict == "error"
    assert "the review could not run" in render_comment(report, lang="en")
    assert "no check could run" in render_comment(report, lang="en")


def test_a_concurrency_beyond_64_bits_still_gives_a_valid_json_report(review_example) -> None:
    """orjson refuses integers over 64 bits; the report then falls back to the json module, whole.
    A concurrency that large is a blocking finding of its own (#23), its point left out."""
    huge = 2**70
    report = review_example({MASTER: point("conc-list: [1, 4]", f"conc-list: [1, {huge}]")})
    assert_sound(report)
    data = json.loads(report_json.json_bytes(report))
    [finding] = [f for f in data["findings"] if "names the concurrency" in f["message_en"]]
    assert finding["severity"] == "blocking" and f"the concurrency {huge}, which" in finding["message_en"]
    assert huge not in data["published_sets"][KEY]["head"]


def test_cli_exit_statuses(example, monkeypatch, capsys) -> None:
    args = [
        "review",
        "--repo",
        str(example.path),
        "--base",
        example.base,
        "--head",
        example.head,
        "--offline",
    ]
    assert main(args) == EXIT_CLEAN
    head = commit(example.path, {RECIPE: replace("TOTAL_CPU_DRAM_GB: '1799'", "TOTAL_CPU_DRAM_GB: '1800'")})
    assert main([*args[:-2], head, "--offline"]) == EXIT_BLOCKING
    monkeypatch.setattr(engine, "function", lambda _check: _boom)
    capsys.readouterr()
    assert main(args) == EXIT_ERROR
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "nothing could be reviewed" in err and "未能审阅" in err
    assert "Traceback" not in err


# --- output safety -------------------------------------------------------------------------------

PAYLOADS = (
    "@SemiAnalysisAI/core",
    "<img src=x onerror=alert(1)>",
    "<details><summary>x</summary>",
    "```",
    "`` ` ``",
    "`x`",
    "]]>[link](https://evil.example)",
    "\\`@org/team\\`",
    "line1\nline2 @org/team\n# heading\n- item",
    "</details>\n\n@org/team",
)


def _hostile(payload: str) -> str:
    return f"PWN {payload} @org/team <b>bold</b> ~~x~~ | *em* _u_ #1 !x"


def _yaml_str(value: str) -> str:
    return json.dumps(value)  # a double-quoted YAML scalar


@pytest.mark.parametrize("payload", PAYLOADS)
def test_pr_text_is_inert_in_every_place_it_is_shown(
    example, review_example, payload: str, tmp_path: Path
) -> None:
    hostile = _hostile(payload)
    bad_key = f"{KEY}-{hostile}"
    variant = f"override_{hostile}"
    recipe_path = f"benchmarks/{hostile}/agentic.yaml"
    settings = tmp_path / "prbot.yml"
    settings.write_text(
        "primary-labels: " + json.dumps([f"full-{hostile}", "full-sweep-fail-fast"]) + "\n", encoding="utf-8"
    )
    edits = {
        MASTER: lambda text: (
            text.replace(f"{KEY}:\n", f"{_yaml_str(bad_key)}:\n", 1)
            .replace("runner: cluster:mi355x-amds", f"runner: {_yaml_str('cluster:' + hostile)}", 1)
            .replace(
                POINT, POINT.replace(f"srt-recipe: {RECIPE}", f"srt-recipe: {_yaml_str(recipe_path)}"), 1
            )
        ),
        RECIPE: lambda text: (
            text + f"\n{_yaml_str(variant)}:\n  benchmark:\n    env:\n      CONC: '999'\n"
            f"      TOTAL_CPU_DRAM_GB: {_yaml_str(hostile)}\n"
        ),
        CHANGELOG: lambda text: text.replace(
            f'    - {KEY}\n  scenario-type:\n    - agentic-coding\n  description:\n    - "Retune',
            f"    - {_yaml_str(bad_key)}\n    - {_yaml_str(hostile)}\n  scenario-type:\n"
            '    - agentic-coding\n  description:\n    - "Retune',
            1,
        ).replace("pull/XXX", "pull/XXX" + hostile.replace("\n", " ").replace('"', "'"), 1),
    }
    report = review_example(
        edits,
        title=f"C9999 {hostile}",
        body=f"{hostile}\n\nC1/C2 {hostile}",
        labels=(f"full-{hostile}", "full-sweep-fail-fast", hostile),
        config=str(settings),
    )
    assert_sound(report)
    shown = {f.message_id for f in report.findings}
    # The payload reached the comment through each of these messages.
    assert {
        "selection-recipe-missing",
        "selection-leftover",
        "dram-unknown-runner",
        "labels-several-primaries",
        "changelog-unknown-key",
        "consistency-mentioned-not-published",
    } <= shown, sorted(shown)
    for lang in ("both", "en", "zh"):
        comment = render_comment(report, lang=lang)
        assert comment.count("PWN") >= 5
        text = outside_code(comment)
        assert "@org" not in text and "@SemiAnalysisAI" not in text and "<img" not in text
        assert text.count("<details>") == text.count("</details>")
        assert text.count("<summary>中文</summary>") == (1 if lang == "both" else 0)
        for line in comment.split("\n"):
            if "PWN" in line:  # every PR value stays inside its own list item or header line
                assert line.startswith(("- ", "**", "  ", "| ")), line
    plain = json.loads(report_json.dumps(report))
    for item in plain["findings"]:
        assert "\n" not in item["message_en"] and "\n" not in item["message_zh"]
