"""Issue #22 item 10: master-config entries, runners.yaml and changelog entries are held to the
strictness of InferenceX's generator (its `utils/matrix_logic/validation.py` at 843c6254f).

The situations of upstream's own `test_validation.py`, written as master-config YAML of our own:
each refusal is a blocking finding naming the field at its line, and each accepted case gets no
finding at all. A few cases also go through the whole review of the bundled example PR.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from bot.findings import Severity
from bot.model import schema
from bot.model.layout import Layout
from bot.model.master import MasterFile
from bot.yamlsafe import load
from tests.conftest import CHANGELOG, MASTER, replace, shared_or_skip

SINGLE = """\
dsr1-fp8-mi300x-sglang:
  image: lmsysorg/sglang:v0.5.9-rocm700-mi30x
  model: deepseek-ai/DeepSeek-R1-0528
  model-prefix: dsr1
  runner: mi300x
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - tp: 8
        conc-start: 4
        conc-end: 64
"""

MULTI = """\
dsr1-fp4-gb200-dynamo-trt:
  image: nvcr.io#nvidia/ai-dynamo/tensorrtllm-runtime:0.5.1
  model: nvidia/DeepSeek-R1-0528-FP4
  model-prefix: dsr1
  runner: gb200
  precision: fp4
  framework: dynamo-trt
  multinode: true
  disagg: true
  kv-p2p-transfer: nixl
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - conc-list: [2048]
        prefill:
          hardware: gb200
          num-worker: 2
          tp: 4
          ep: 4
          dp-attn: true
          additional-settings:
          - PREFILL_MAX_NUM_TOKENS=8448
        decode:
          hardware: gb200
          num-worker: 1
          tp: 8
          ep: 8
          dp-attn: true
"""

AGENTIC = """\
dsv4-fp4-b200-vllm-agentic:
  image: vllm/vllm-openai:v0.21.0
  model: deepseek-ai/DeepSeek-V4-Pro
  model-prefix: dsv4
  runner: cluster:b200-dgxc
  precision: fp4
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.8
      search-space:
      - tp: 8
        kv-offloading: dram
        kv-offload-backend: {name: lmcache, version: 0.5.1}
        conc-list: [1, 2, 4]
      - tp: 8
        kv-offloading: none
        conc-list: [8]
"""

MULTI_AGENTIC = """\
dsv4-fp4-mi355x-sglang-disagg-agentic:
  image: lmsysorg/sglang-rocm:v0.5.15
  model: deepseek-ai/DeepSeek-V4-Pro
  model-prefix: dsv4
  runner: cluster:mi355x-amds
  precision: fp4
  framework: sglang-disagg
  multinode: true
  disagg: true
  kv-p2p-transfer: mori
  scenarios:
    agentic-coding:
    - dram-utilization: 0.6
      search-space:
      - conc-list: [32]
        kv-offloading: dram
        kv-offload-backend: {name: hicache}
        prefill: {num-worker: 1, tp: 8, ep: 1, dp-attn: false}
        decode: {num-worker: 1, tp: 8, ep: 1, dp-attn: false}
"""


def edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def line_of(text: str, needle: str) -> int:
    """1-based line of the first occurrence of `needle`."""
    assert needle in text, needle
    return text[: text.index(needle)].count("\n") + 1


def problems_of(text: str) -> list:
    """The problems of the one entry in `text`, read as prbot reads a master config."""
    master = MasterFile(MASTER, text.encode(), Layout(""))
    (key,) = master.keys()
    entry = master.entry(key)
    assert entry is not None
    return [*master.problems, *entry.problems]


@dataclass(frozen=True)
class Refused:
    """A refusal: the text, the message, the field it names and where (the line of `at`)."""

    text: str
    message_id: str
    field: str
    at: str


def refused(base: str, old: str, new: str, message_id: str, field: str, at: str | None = None) -> Refused:
    text = edit(base, old, new)
    return Refused(text, message_id, field, at if at is not None else new.strip().split("\n")[-1])


POINT_END = "        conc-end: 64\n"
PREFILL = "          num-worker: 2\n"
AGENTIC_POINT = "        conc-list: [8]\n"

REFUSED: dict[str, Refused] = {
    # Workers (upstream: TestWorkerConfig)
    "worker pp 0": refused(MULTI, PREFILL, PREFILL + "          pp: 0\n", "schema-wrong-type", "pp"),
    "worker dcp-size 0": refused(
        MULTI, PREFILL, PREFILL + "          dcp-size: 0\n", "schema-wrong-type", "dcp-size"
    ),
    "worker pcp-size 0": refused(
        MULTI, PREFILL, PREFILL + "          pcp-size: 0\n", "schema-wrong-type", "pcp-size"
    ),
    "worker dcp-size not dividing tp": refused(
        MULTI, PREFILL, PREFILL + "          dcp-size: 3\n", "schema-dcp-not-divisor", "dcp-size"
    ),
    "worker without ep": refused(MULTI, "          ep: 4\n", "", "schema-missing-field", "ep", "prefill:"),
    "worker without dp-attn": refused(
        MULTI,
        "          dp-attn: true\n          additional",
        "          additional",
        "schema-missing-field",
        "dp-attn",
        "prefill:",
    ),
    "worker unknown field": refused(
        MULTI,
        PREFILL,
        PREFILL + "          gpu-memory-utilization: 0.9\n",
        "schema-unknown-field",
        "gpu-memory-utilization",
    ),
    # Component metadata, KV offload and P2P transfer (upstream: TestAgenticMatrixEntries)
    "router without version": refused(
        AGENTIC,
        AGENTIC_POINT,
        AGENTIC_POINT + "        router: {name: vllm-router}\n",
        "schema-missing-field",
        "version",
        "router:",
    ),
    "router without name": refused(
        AGENTIC,
        AGENTIC_POINT,
        AGENTIC_POINT + "        router: {version: 0.1.14}\n",
        "schema-missing-field",
        "name",
        "router:",
    ),
    "router extra field": refused(
        AGENTIC,
        AGENTIC_POINT,
        AGENTIC_POINT + "        router: {name: vllm-router, version: 0.1.14, mode: round-robin}\n",
        "schema-unknown-field",
        "mode",
        "router:",
    ),
    "router empty name": refused(
        AGENTIC,
        AGENTIC_POINT,
        AGENTIC_POINT + "        router: {name: '', version: 0.1.14}\n",
        "schema-wrong-type",
        "name",
        "router:",
    ),
    "router empty version": refused(
        AGENTIC,
        AGENTIC_POINT,
        AGENTIC_POINT + "        router: {name: vllm-router, version: ''}\n",
        "schema-wrong-type",
        "version",
        "router:",
    ),
    "router version is an image": refused(
        SINGLE,
        "  runner: mi300x\n",
        "  runner: mi300x\n  router: {name: nixl, version: 'image:vllm/vllm-openai:v0.23.0'}\n",
        "schema-wrong-type",
        "version",
        "router:",
    ),
    "kv-p2p-transfer empty": refused(
        MULTI, "  kv-p2p-transfer: nixl\n", "  kv-p2p-transfer: ''\n", "schema-wrong-type", "kv-p2p-transfer"
    ),
    "kv-p2p-transfer as metadata": refused(
        MULTI,
        "  kv-p2p-transfer: nixl\n",
        "  kv-p2p-transfer: {name: nixl}\n",
        "schema-wrong-type",
        "kv-p2p-transfer",
    ),
    "backend unknown field": refused(
        AGENTIC,
        "{name: lmcache, version: 0.5.1}",
        "{name: lmcache, mode: cpu}",
        "schema-unknown-field",
        "mode",
        "kv-offload-backend:",
    ),
    "backend version is an image": refused(
        AGENTIC,
        "{name: lmcache, version: 0.5.1}",
        "{name: lmcache, version: 'image:vllm/vllm-openai:v0.23.0'}",
        "schema-wrong-type",
        "version",
        "kv-offload-backend:",
    ),
    "backend without dram": refused(
        AGENTIC,
        AGENTIC_POINT,
        AGENTIC_POINT + "        kv-offload-backend: {name: lmcache}\n",
        "schema-backend-without-dram",
        "kv-offload-backend",
    ),
    "dram without backend": refused(
        AGENTIC,
        "        kv-offload-backend: {name: lmcache, version: 0.5.1}\n",
        "",
        "schema-dram-without-backend",
        "kv-offloading",
        "kv-offloading: dram",
    ),
    "single-node agentic without kv-offloading": refused(
        AGENTIC,
        "        kv-offloading: none\n",
        "",
        "schema-missing-field",
        "kv-offloading",
        "- tp: 8\n        conc",
    ),
    "dram without dram-utilization": refused(
        AGENTIC,
        "    - dram-utilization: 0.8\n      search-space:",
        "    - search-space:",
        "schema-dram-no-utilization",
        "dram-utilization",
        "kv-offloading: dram",
    ),
    "total-cpu-dram-gb on a point": refused(
        AGENTIC,
        AGENTIC_POINT,
        AGENTIC_POINT + "        total-cpu-dram-gb: 1000\n",
        "schema-unknown-field",
        "total-cpu-dram-gb",
    ),
    "gpus-per-node on a group": refused(
        AGENTIC,
        "    - dram-utilization: 0.8\n",
        "    - dram-utilization: 0.8\n      gpus-per-node: 8\n",
        "schema-unknown-field",
        "gpus-per-node",
    ),
    "available-cpu-dram-mib on a group": refused(
        AGENTIC,
        "    - dram-utilization: 0.8\n",
        "    - dram-utilization: 0.8\n      available-cpu-dram-mib: 2964436\n",
        "schema-unknown-field",
        "available-cpu-dram-mib",
    ),
    "duration on a group": refused(
        AGENTIC,
        "    - dram-utilization: 0.8\n",
        "    - dram-utilization: 0.8\n      duration: 1800\n",
        "schema-unknown-field",
        "duration",
    ),
    "a typo'd kv-offloading": refused(
        AGENTIC,
        "        kv-offloading: none\n",
        "        kv-ofloading: none\n",
        "schema-unknown-field",
        "kv-ofloading",
    ),
    # Single-node search-space points (upstream: TestSingleNodeSearchSpaceEntry)
    "pp 0": refused(SINGLE, POINT_END, POINT_END + "        pp: 0\n", "schema-wrong-type", "pp"),
    "dcp-size not dividing tp": refused(
        SINGLE,
        POINT_END,
        POINT_END + "        dcp-size: 3\n        pcp-size: 2\n",
        "schema-dcp-not-divisor",
        "dcp-size",
        "dcp-size: 3",
    ),
    "conc-list beside conc-start/conc-end": refused(
        SINGLE, POINT_END, POINT_END + "        conc-list: [4, 8, 16]\n", "schema-conc-both", "conc-list"
    ),
    "no concurrency": refused(
        SINGLE,
        "        conc-start: 4\n        conc-end: 64\n",
        "",
        "schema-conc-none",
        "conc-list",
        "- tp: 8",
    ),
    "conc-start above conc-end": refused(
        SINGLE,
        "conc-start: 4\n        conc-end: 64",
        "conc-start: 64\n        conc-end: 4",
        "schema-conc-order",
        "conc-start",
        "conc-start: 64",
    ),
    "conc-start 0": refused(
        SINGLE, "conc-start: 4", "conc-start: 0", "schema-conc-not-positive", "conc-start"
    ),
    "conc-start negative": refused(
        SINGLE, "conc-start: 4", "conc-start: -1", "schema-conc-not-positive", "conc-start"
    ),
    "conc-end 0": refused(
        SINGLE,
        "conc-start: 4\n        conc-end: 64",
        "conc-start: 1\n        conc-end: 0",
        "schema-conc-not-positive",
        "conc-start",
        "conc-start: 1",
    ),
    "conc-list with 0": refused(
        SINGLE,
        "        conc-start: 4\n        conc-end: 64\n",
        "        conc-list: [4, 0, 16]\n",
        "schema-conc-not-positive",
        "conc-list",
    ),
    "spec-decoding not a known method": refused(
        SINGLE, POINT_END, POINT_END + "        spec-decoding: eagle\n", "schema-wrong-type", "spec-decoding"
    ),
    # Multinode search-space points (upstream: TestMultiNodeSearchSpaceEntry)
    "multinode point without concurrency": refused(
        MULTI,
        "      - conc-list: [2048]\n        prefill:",
        "      - prefill:",
        "schema-conc-none",
        "conc-list",
        "- prefill:",
    ),
    "multinode point with an empty prefill": Refused(
        MULTI[: MULTI.index("        prefill:")]
        + "        prefill:\n"
        + MULTI[MULTI.index("        decode:") :],
        "schema-null",
        "prefill",
        "        prefill:",
    ),
    # Master-config entries (upstream: TestMasterConfigEntries, TestValidateMasterConfig)
    "hardware on the prefill worker only": refused(
        MULTI,
        "          hardware: gb200\n          num-worker: 1",
        "          num-worker: 1",
        "schema-hardware-one-side",
        "hardware",
        "hardware: gb200",
    ),
    "single-node entry marked multinode": refused(
        SINGLE, "  multinode: false", "  multinode: true", "schema-unknown-field", "tp", "- tp: 8"
    ),
    "multinode entry marked single-node": refused(
        MULTI,
        "  multinode: true",
        "  multinode: false",
        "schema-unknown-field",
        "kv-p2p-transfer",
        "kv-p2p-transfer:",
    ),
    "single-node entry with kv-p2p-transfer": refused(
        SINGLE,
        "  multinode: false\n",
        "  multinode: false\n  kv-p2p-transfer: nixl\n",
        "schema-unknown-field",
        "kv-p2p-transfer",
    ),
    "router at both scopes": Refused(
        edit(
            edit(
                MULTI,
                "  kv-p2p-transfer: nixl\n",
                "  kv-p2p-transfer: nixl\n  router: {name: r, version: 1.0.0}\n",
            ),
            "      - conc-list: [2048]\n",
            "      - conc-list: [2048]\n        router: {name: r, version: 1.0.0}\n",
        ),
        "schema-scope-both",
        "router",
        "        router: {name: r",
    ),
    "kv-p2p-transfer at both scopes": refused(
        MULTI,
        "      - conc-list: [2048]\n",
        "      - conc-list: [2048]\n        kv-p2p-transfer: nixl\n",
        "schema-scope-both",
        "kv-p2p-transfer",
        "        kv-p2p-transfer: nixl",
    ),
    "disagg without kv-p2p-transfer": refused(
        MULTI, "  kv-p2p-transfer: nixl\n", "", "schema-disagg-no-transfer", "kv-p2p-transfer", "disagg: true"
    ),
    "disagg with kv-p2p-transfer on some points only": Refused(
        edit(
            edit(MULTI, "  kv-p2p-transfer: nixl\n", ""),
            "      - conc-list: [2048]\n",
            "      - conc-list: [4096]\n        prefill: {num-worker: 1, tp: 4, ep: 4, dp-attn: true}\n"
            "        decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}\n"
            "      - conc-list: [2048]\n        kv-p2p-transfer: nixl\n",
        ),
        "schema-disagg-no-transfer",
        "kv-p2p-transfer",
        "disagg: true",
    ),
    "disagg on a single-node entry": refused(
        SINGLE,
        "  multinode: false\n",
        "  multinode: false\n  disagg: true\n",
        "schema-disagg-single-node",
        "disagg",
    ),
    "agentic entry on a SKU runner": refused(
        AGENTIC, "  runner: cluster:b200-dgxc", "  runner: b200", "schema-agentic-runner", "runner"
    ),
    "multinode agentic entry on a SKU runner": refused(
        MULTI_AGENTIC, "  runner: cluster:mi355x-amds", "  runner: mi355x", "schema-agentic-runner", "runner"
    ),
    "multinode agentic point with pp": refused(
        MULTI_AGENTIC,
        "      - conc-list: [32]\n",
        "      - conc-list: [32]\n        pp: 2\n",
        "schema-worker-field-on-point",
        "pp",
    ),
    "agentic point with tp and workers": refused(
        MULTI_AGENTIC,
        "      - conc-list: [32]\n",
        "      - conc-list: [32]\n        tp: 8\n",
        "schema-agentic-topology",
        "tp",
        "- conc-list: [32]",
    ),
    "entry without model": refused(
        SINGLE,
        "  model: deepseek-ai/DeepSeek-R1-0528\n",
        "",
        "schema-missing-field",
        "model",
        "dsr1-fp8-mi300x",
    ),
    "entry without multinode": refused(
        SINGLE, "  multinode: false\n", "", "schema-missing-field", "multinode", "dsr1-fp8-mi300x"
    ),
    "no scenario group": refused(
        SINGLE, SINGLE[SINGLE.index("  scenarios:") :], "  scenarios: {}\n", "schema-no-scenario", "scenarios"
    ),
    "image is a number": refused(
        SINGLE, "  image: lmsysorg/sglang:v0.5.9-rocm700-mi30x", "  image: 5", "schema-wrong-type", "image"
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_upstream_refusal_is_a_finding_naming_the_field_and_line(name: str) -> None:
    case = REFUSED[name]
    problems = [p for p in problems_of(case.text) if p.message_id.startswith("schema-")]
    named = [(p.message_id, p.params["field"], p.line) for p in problems]
    assert (case.message_id, case.field, line_of(case.text, case.at)) in named, named
    assert all(p.file == MASTER for p in problems)


def _drop(text: str, *lines: str) -> str:
    for line in lines:
        text = edit(text, line, "")
    return text


ACCEPTED: dict[str, str] = {
    "single node, conc range": SINGLE,
    "single node, conc list and optional fields": edit(
        SINGLE,
        "        conc-start: 4\n        conc-end: 64\n",
        "        ep: 4\n        dp-attn: true\n        pp: 2\n        dcp-size: 4\n        pcp-size: 1\n"
        "        spec-decoding: mtp\n        router: {name: vllm-router, version: 0.1.14}\n"
        "        conc-list: [4, 8, 16, 32, 64, 128]\n",
    ),
    "multinode disaggregated": MULTI,
    "multinode without hardware on either worker": _drop(
        MULTI, "          hardware: gb200\n", "          hardware: gb200\n"
    ),
    "aggregated multinode with kv-p2p-transfer": edit(MULTI, "  disagg: true", "  disagg: false"),
    "router at the top, kv-p2p-transfer on the point": edit(
        edit(MULTI, "  kv-p2p-transfer: nixl\n", "  router: {name: dynamo-router, version: 1.0.0}\n"),
        "      - conc-list: [2048]\n",
        "      - conc-list: [2048]\n        kv-p2p-transfer: nixl\n",
    ),
    "kv-p2p-transfer on every point": edit(
        edit(MULTI, "  kv-p2p-transfer: nixl\n", ""),
        "      - conc-list: [2048]\n",
        "      - conc-list: [4096]\n        kv-p2p-transfer: mooncake\n"
        "        prefill: {num-worker: 1, tp: 4, ep: 4, dp-attn: true, pp: 2, dcp-size: 2, pcp-size: 2}\n"
        "        decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}\n"
        "      - conc-list: [2048]\n        kv-p2p-transfer: nixl\n",
    ),
    "agentic with a backend of any name and no version": edit(
        AGENTIC, "{name: lmcache, version: 0.5.1}", "{name: future-backend}"
    ),
    "agentic multinode": MULTI_AGENTIC,
    "newer layout fields": edit(
        edit(
            SINGLE, "  multinode: false\n", "  multinode: false\n  srt-recipe-dir: dsr1/sglang/mi300x-fp8\n"
        ),
        POINT_END,
        POINT_END + "        srt-recipe: agg.yaml:override_tp8\n",
    ),
}


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_what_upstream_accepts_gets_no_finding(name: str) -> None:
    assert problems_of(ACCEPTED[name]) == []


def test_values_are_read_as_upstream_reads_them() -> None:
    """`'8'` is a whole number and `'yes'` a boolean to upstream's parser, so not a schema finding
    (prbot's own reader still asks for real numbers: docs/checks.md, "Schema")."""
    text = edit(SINGLE, "      - tp: 8\n", "      - tp: '8'\n        dp-attn: 'yes'\n        ep: 4.0\n")
    data = load(text).data
    (key,) = data
    assert schema.master_entry(key, data[key], MASTER, 1) == []
    wrong = edit(text, "ep: 4.0", "ep: 4.5")
    assert [p.params["field"] for p in schema.master_entry(key, load(wrong).data[key], MASTER, 1)] == ["ep"]


def test_the_real_master_configs_get_no_schema_finding() -> None:
    paths = sorted(shared_or_skip("inferencex-e2e", "configs").glob("*-master.yaml"))
    assert len(paths) == 2
    for path in paths:
        data = load(path.read_text()).data
        for key, raw in data.items():
            assert schema.master_entry(key, raw, str(path), data.lines[key]) == [], key


def test_a_typo_blocks_the_review_at_its_line(review_example) -> None:
    """The issue's `kv-ofloading: dram`: named as an unknown field, not only through its effects."""
    report = review_example(
        {MASTER: replace("dcp-size: 8, kv-offloading: dram", "dcp-size: 8, kv-ofloading: dram")}
    )
    named = [f for f in report.findings if f.message_id == "schema-unknown-field"]
    assert [(f.severity, f.check, f.file, f.line, f.params["field"]) for f in named] == [
        (Severity.BLOCKING, "consistency", MASTER, 57, "kv-ofloading")
    ]
    assert report.verdict == "blocking"


def test_a_wrong_field_is_reported_once(review_example) -> None:
    report = review_example({MASTER: replace("tp: 8, kv-offloading: none", "tp: [8], kv-offloading: none")})
    about_tp = [f.message_id for f in report.findings if f.params.get("field") == "tp"]
    assert about_tp == ["schema-wrong-type"]


RUNNERS_OK = """\
labels:
  mi355x:
  - mi355x-amds_0
  cluster:mi355x-amds:
  - mi355x-amds_0
hardware:
  cluster:mi355x-amds:
    available-cpu-dram-mib: 3_095_781
    gpus-per-node: 8
"""


@pytest.mark.parametrize(
    ("old", "new", "message_id", "field", "at"),
    [
        (
            "  mi355x:\n  - mi355x-amds_0\n",
            "  mi355x: mi355x-amds_0\n",
            "schema-runner-label-list",
            "mi355x",
            "  mi355x:",
        ),
        (
            "  - mi355x-amds_0\n  cluster",
            "  - 123\n  cluster",
            "schema-runner-label-list",
            "mi355x",
            "  mi355x:",
        ),
        (
            "  mi355x:\n  - mi355x-amds_0\n",
            "  mi355x: []\n",
            "schema-runner-label-list",
            "mi355x",
            "  mi355x:",
        ),
        ("labels:\n", "runner-labels:\n", "schema-unknown-field", "runner-labels", "runner-labels:"),
        ("3_095_781", "0", "schema-wrong-type", "available-cpu-dram-mib", "available-cpu-dram-mib"),
        ("gpus-per-node: 8", "gpus-per-node: 0", "schema-wrong-type", "gpus-per-node", "gpus-per-node"),
        (
            "    gpus-per-node: 8\n",
            "    gpus-per-node: 8\n    numa-nodes: 2\n",
            "schema-unknown-field",
            "numa-nodes",
            "numa",
        ),
    ],
)
def test_runners_refusals(old: str, new: str, message_id: str, field: str, at: str) -> None:
    text = edit(RUNNERS_OK, old, new)
    found = [
        (p.message_id, p.params["field"], p.line)
        for p in schema.runners(load(text).data, "configs/runners.yaml")
    ]
    assert (message_id, field, line_of(text, at)) in found, found


def test_runners_accepted() -> None:
    assert schema.runners(load(RUNNERS_OK).data, "configs/runners.yaml") == []
    path = shared_or_skip("inferencex-e2e", "configs", "runners.yaml")
    assert schema.runners(load(path.read_text()).data, str(path)) == []


def test_a_broken_runners_yaml_blocks_the_review(review_example) -> None:
    report = review_example({"configs/runners.yaml": replace("gpus-per-node: 8", "gpus-per-node: 0")})
    named = [
        f
        for f in report.findings
        if f.params.get("field") == "gpus-per-node" and f.message_id.startswith("schema-")
    ]
    assert named and all(f.severity is Severity.BLOCKING and f.file == "configs/runners.yaml" for f in named)


ENTRY = "- config-keys:\n  - dsr1-fp8-mi300x-sglang\n  description:\n  - Retune\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1\n"


@pytest.mark.parametrize(
    ("extra", "message_id", "field"),
    [
        ("  scenario-type: []\n", "changelog-field-invalid", "scenario-type"),
        ("  scenario-type: [unsupported]\n", "changelog-field-invalid", "scenario-type"),
        ("  append-only: true\n  evals-only: true\n", "changelog-append-only-evals", "evals-only"),
        ("  evals-only: maybe\n", "changelog-field-invalid", "evals-only"),
        ("  sweep: full\n", "changelog-unknown-field", "sweep"),
    ],
)
def test_changelog_entry_refusals(extra: str, message_id: str, field: str) -> None:
    text = ENTRY + extra
    data = load(text).data
    found = [
        (p.message_id, p.params["field"], p.line) for p in schema.changelog_entry(data[0], CHANGELOG, 1, 0)
    ]
    assert (message_id, field, line_of(text, field)) in found, found


@pytest.mark.parametrize(
    "extra", ["", "  all-evals: true\n", "  evals-only: true\n  all-evals: true\n", "  append-only: true\n"]
)
def test_changelog_entry_accepted(extra: str) -> None:
    data = load(ENTRY + extra).data
    assert schema.changelog_entry(data[0], CHANGELOG, 1, 0) == []


# The agentic multinode key above with a prefill worker of TP6: it does not divide an 8-GPU node.
TP6_KEY = "\n" + MULTI_AGENTIC.replace("prefill: {num-worker: 1, tp: 8", "prefill: {num-worker: 1, tp: 6")


@pytest.mark.parametrize(
    ("tp", "message_id"), [(6, "schema-worker-not-divisor"), (12, "schema-worker-spans-nodes")]
)
def test_a_prefill_worker_that_does_not_tile_the_node_blocks(review_example, example, tp, message_id) -> None:
    """The generator cannot size a TP6 (or TP12) prefill worker's DRAM share of an 8-GPU node."""
    key = TP6_KEY.replace("tp: 6", f"tp: {tp}")
    changelog_entry = ENTRY.replace("dsr1-fp8-mi300x-sglang", "dsv4-fp4-mi355x-sglang-disagg-agentic")
    report = review_example(
        {MASTER: lambda t: t + key, CHANGELOG: lambda t: t + "\n" + changelog_entry.replace("/1\n", "/XXX\n")}
    )
    text = (example.path / MASTER).read_text()
    named = [f for f in report.findings if f.message_id == message_id]
    assert [(f.severity, f.check, f.line, f.params["gpus"], f.params["gpus_per_node"]) for f in named] == [
        (Severity.BLOCKING, "dram", line_of(text, "      - conc-list: [32]"), tp, 8)
    ]
    new_key = "dsv4-fp4-mi355x-sglang-disagg-agentic"
    assert not [f for f in report.findings if f.config_key == new_key and f.severity is Severity.VERIFIED]


def test_a_prefill_worker_that_tiles_the_node_is_sized() -> None:
    assert schema.worker_tiling(4, 8) is None and schema.worker_tiling(16, 8) is None
    assert schema.worker_tiling(8, 8) is None


def test_a_huge_wrong_value_is_quoted_short() -> None:
    text = edit(SINGLE, "      - tp: 8\n", "      - tp: [" + ", ".join(["8"] * 100_000) + "]\n")
    (problem,) = [p for p in problems_of(text) if p.message_id == "schema-wrong-type"]
    assert problem.params["field"] == "tp" and len(problem.params["value"]) <= 60
