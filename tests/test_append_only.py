"""`append-only` entries as InferenceX's `process_changelog.py` treats them (its own tests in
`utils/test_process_changelog.py`, translated to prbot's example repository): only runs the base
did not generate are swept, each once; an existing run removed or changed (an image change
changes them all), another key's config changed, a change outside the entry's `scenario-type`,
or nothing added, and the sweep refuses the whole change at PR time (`starts: false`). Moving a
field from the key into its points changes no generated run, and is accepted."""

from __future__ import annotations

from bot.checks.sweep_matrix import Row, trim
from bot.findings import Severity
from bot.local import run_local
from bot.model.master import ConfigEntry, Point
from tests.conftest import CHANGELOG, MASTER, commit, replace

KIMI = "kimik3-fp4-mi355x-atom-agentic-mtp"
DSR1 = "dsr1-fp4-b200-sglang"
FAIL_FAST = ("full-sweep-fail-fast",)
LAST_BLOCK = "conc-list: [48, 56, 72]"


def append_only(key: str = KIMI, scenario: str | None = None) -> dict:
    scope = f"  scenario-type:\n    - {scenario}\n" if scenario else ""
    why = '  description:\n    - "Add C96"\n  pr-link: XXX\n  append-only: true\n'
    text = f"\n- config-keys:\n    - {key}\n{scope}{why}"
    return {CHANGELOG: lambda old: old + text}


def review(example, edits: dict, base: str | None = None):
    """Review `edits` committed on top of the example's head (which is then the base)."""
    base = base or example.head
    head = commit(example.path, edits, "append-only change")
    report, _, _ = run_local(example.request(base=base, head=head, labels=FAIL_FAST))
    return report


def refusals(report) -> list[tuple[str, str]]:
    return [
        (f.message_id, f.params.get("reason", ""))
        for f in report.findings
        if f.message_id.startswith("changelog-append-only") and f.severity is Severity.BLOCKING
    ]


def runs(report, key: str = KIMI) -> list[int]:
    return [r["concurrency"] for r in report.sweep_plan["keys"].get(key, {}).get("runs", [])]


def test_only_new_runs_are_swept_each_once(example) -> None:
    report = review(
        example, {MASTER: replace(LAST_BLOCK, "conc-list: [48, 56, 72, 96, 96]"), **append_only()}
    )
    assert refusals(report) == []
    assert runs(report) == [96]  # listed twice, run once
    assert report.sweep_plan["starts"] is True


def test_an_image_change_under_append_only_is_refused(example) -> None:
    image = replace("image: rocm/atom-dev:nightly_202610281457", "image: rocm/atom-dev:nightly_202611010000")
    edits = {MASTER: lambda text: image(replace(LAST_BLOCK, "conc-list: [48, 56, 72, 96]")(text))}
    report = review(example, {**edits, **append_only()})
    assert refusals(report) == [("changelog-append-only-refused", "image")]
    assert report.sweep_plan["starts"] is False and report.sweep_plan["reason"] == "gate"


def test_a_new_run_outside_the_entry_scenario_type_is_refused(example) -> None:
    report = review(
        example,
        {MASTER: replace(LAST_BLOCK, "conc-list: [48, 56, 72, 96]"), **append_only(scenario="fixed-seq-len")},
    )
    assert ("changelog-append-only-refused", "outside-scope") in refusals(report)
    assert report.sweep_plan["starts"] is False


def test_a_key_wide_change_reaching_an_unselected_scenario_is_refused(example) -> None:
    router = replace(
        "  model-prefix: kimik3\n", "  model-prefix: kimik3\n  router: { name: r, version: '2' }\n"
    )
    report = review(example, {MASTER: router, **append_only(scenario="fixed-seq-len")})
    assert ("changelog-append-only-refused", "key-wide") in refusals(report)


def test_another_key_changed_beside_an_append_only_entry_is_refused(example) -> None:
    other = replace("conc-end: 128", "conc-end: 256")
    edits = {MASTER: lambda text: other(replace(LAST_BLOCK, "conc-list: [48, 56, 72, 96]")(text))}
    report = review(example, {**edits, **append_only()})
    assert ("changelog-append-only-refused", "unselected") in refusals(report)


def test_an_existing_run_changed_is_refused_naming_it(example) -> None:
    report = review(example, {MASTER: replace(LAST_BLOCK, "conc-list: [48, 60, 72]"), **append_only()})
    [lost] = [f for f in report.findings if f.message_id == "changelog-append-only-lost"]
    assert lost.params["concurrencies"] == [56] and lost.params["gate"] == "pr"


def test_nothing_added_is_refused(example) -> None:
    report = review(example, append_only())
    assert refusals(report) == [("changelog-append-only-refused", "nothing")]


def test_moving_a_key_field_into_its_points_generates_the_same_runs(example) -> None:
    """Upstream's test: `router` moves from the key into its points, and a new point with another
    router is added; the old points generate the same rows, so only the new one runs."""
    prefix = "  model-prefix: kimik3\n"
    base = commit(example.path, {MASTER: replace(prefix, prefix + "  router: { name: a }\n")})
    new_point = (
        "      - { router: { name: b }, tp: 4, kv-offloading: none, conc-list: [96], spec-decoding: mtp,"
        " srt-recipe: benchmarks/single_node/srt-slurm-recipes/kimik3/atom/mi355x-fp4-mtp/agentic.yaml }\n"
    )

    def restructure(text: str) -> str:
        head, _, rest = text.partition(prefix + "  router: { name: a }\n")
        block, separator, tail = rest.partition("\n\n")
        block = block.replace("{ tp: 8,", "{ router: { name: a }, tp: 8,") + "\n" + new_point.rstrip("\n")
        return head + prefix + block + separator + tail

    report = review(example, {MASTER: restructure, **append_only()}, base=base)
    assert refusals(report) == []
    assert runs(report) == [96]


def _point(conc: int, backend: str) -> Point:
    raw = {"tp": 8, "kv-offloading": "dram", "kv-offload-backend": {"name": backend}, "conc-list": [conc]}
    return Point(KIMI, MASTER, 1, "agentic-coding", 0, 0, (conc,), 8, kv_offloading="dram", raw=raw)


def test_trimming_keeps_one_run_per_parallelism_config_and_kv_offload_backend() -> None:
    points = tuple(_point(c, b) for c, b in ((8, "vllm-simple"), (2, "vllm-simple"), (4, "lmcache")))
    entry = ConfigEntry(KIMI, MASTER, 1, None, None, None, False, points, raw={"image": "rocm/atom-dev"})
    matrix = [Row(KIMI, entry, point, point.concurrencies) for point in points]
    kept = trim(matrix)
    assert [(row.concurrencies[0], row.point.raw["kv-offload-backend"]["name"]) for row in kept] == [
        (2, "vllm-simple"),
        (4, "lmcache"),
    ]
