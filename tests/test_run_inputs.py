"""What a run really reads (issue 32): runners.yaml fields reach a run only through what reads
them, a label no launcher reads never selects, a change of labels alone needs no changelog entry,
and three regressions of the total diff, each on the real PR's files.

Real PRs are reviewed as the action passes them (`--pr-number`, `--pr-url`); the e2e tests edit
the real `inferencex-e2e` files into the shape of the case."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.findings import Finding, Severity
from bot.local import LocalRequest, run_local
from bot.output.messages import en, zh
from bot.report import Report
from tests.conftest import commit, e2e_checkout, replace, squash_merge

URL = "https://github.com/SemiAnalysisAI/InferenceX/pull/"


def _review(repo: Path, base: str, head: str, number: int | None = None, **more: object) -> Report:
    extra: dict[str, object] = {"pr_number": number, "pr_url": f"{URL}{number}"} if number else {}
    request = LocalRequest(repo=str(repo), base=base, head=head, offline=True, **extra, **more)  # type: ignore[arg-type]
    return run_local(request)[0]


def _pr(history: Path, number: int) -> Report:
    parent, merged, _ = squash_merge(history, number)
    return _review(history, parent, merged, number)


def _blocking(report: Report) -> list[Finding]:
    return [f for f in report.findings if f.severity is Severity.BLOCKING]


def _found(report: Report, message_id: str) -> list[Finding]:
    return [f for f in report.findings if f.message_id == message_id]


# --- runners.yaml: a key changes only where one of its runs reads what changed ----------------


def test_2506_removes_a_runner_record_its_keys_never_read_and_names_the_keys_left_on_it(
    history: Path,
) -> None:
    """#2506 removed `cluster:mi325x-tw` (labels, machines and hardware) while two fixed-seq-len
    DSV4 keys still run on it: no run reads the hardware record, so no key changed and no
    changelog entry is asked for; the runner line of each key is named, as its jobs would wait
    forever."""
    report = _pr(history, 2506)
    assert _blocking(report) == [] and report.changes == {}
    stranded = _found(report, "runner-no-machines")
    assert [(f.config_key, f.file, f.line) for f in stranded] == [
        ("dsv4-fp8-mi325x-vllm", "configs/amd-master.yaml", 1780),
        ("dsv4-fp8-mi325x-vllm-mtp", "configs/amd-master.yaml", 1802),
    ]
    assert all(f.severity is Severity.WARNING for f in stranded)
    assert stranded[0].params["machines"] == [f"mi325x-tw_0{i}" for i in range(4)]
    assert "this PR removes from the labels of configs/runners.yaml together with its machines" in en(
        stranded[0]
    )
    assert "从 configs/runners.yaml 的 labels 中删除了" in zh(stranded[0])


def test_b2e6d86_changes_a_dram_value_that_stays_above_the_cap(history: Path) -> None:
    """b2e6d86 (unnumbered) lowered `b200-dgxc`'s DRAM from 3,774,874 to 3,095,781 MiB: both are
    above the 2,861,022 MiB cap, so every budget the DRAM rule computes is the same."""
    report = _review(history, "b2e6d86^", "b2e6d86")
    assert report.verdict == "clean" and report.changes == {}
    assert not _found(report, "changelog-missing")


def test_2121_blocks_only_the_keys_whose_dram_points_read_the_new_record(history: Path) -> None:
    """#2121 added `cluster:gb300-nv`'s hardware record. Of the five DSV4 GB300 AgentX keys on it,
    two have DRAM-offload points, which the generator refused before (no record) and now gives a
    budget: those two need an entry; the other three read nothing of the record."""
    report = _pr(history, 2121)
    uncovered = _found(report, "changelog-hardware-key-not-covered")
    assert sorted(f.config_key for f in uncovered) == [
        "dsv4-fp4-gb300-dynamo-sglang-agentic-agg",
        "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg",
    ]
    assert {f.config_key for f in _blocking(report)} == {f.config_key for f in uncovered}
    finding = uncovered[0]
    assert finding.params["fields"] == ["available-cpu-dram-mib", "gpus-per-node"]
    assert finding.params["settings"] == ["total-cpu-dram-gb"]
    assert "through the DRAM rule" in en(finding) and "通过 DRAM 规则" in zh(finding)


@pytest.fixture
def e2e(tmp_path: Path) -> tuple[Path, str]:
    return e2e_checkout(tmp_path)


CLUSTER = "  mi355x-amds:\n    gpus-per-node: 8\n    available-cpu-dram-mib: "
RUNNERS = "inferencex-e2e/configs/runners.yaml"


@pytest.mark.parametrize(("value", "changes"), [("2_900_000", False), ("2_500_000", True)])
def test_a_dram_value_changes_runs_only_below_the_cap(
    e2e: tuple[Path, str], value: str, changes: bool
) -> None:
    repo, base = e2e
    head = commit(repo, {RUNNERS: replace(CLUSTER + "3_095_781", CLUSTER + value)})
    report = _review(repo, base, head)
    assert bool(report.changes) is changes
    for key, change in report.changes.items():  # only agentic DRAM runs, through their budget
        paths = {s.path for s in change.common} | {s.path for run in change.runs for s in run.settings}
        assert paths == {"total-cpu-dram-gb"}, key


def test_removing_the_dram_fields_dram_points_read_blocks(e2e: tuple[Path, str]) -> None:
    """Upstream's generator refuses a DRAM-offload point whose runner's record has no DRAM figures."""
    repo, base = e2e
    head = commit(repo, {RUNNERS: replace(CLUSTER + "3_095_781\n", "  mi355x-amds:\n")})
    report = _review(repo, base, head)
    missing = _found(report, "dram-missing-hardware")
    assert missing and all(f.severity is Severity.BLOCKING for f in missing)
    assert all("mi355x" in (f.config_key or "") for f in missing)


def test_a_label_dropped_while_its_machines_stay_listed_is_no_warning(history: Path) -> None:
    """#1970 rewrote runners.yaml and dropped the `h200-dgxc` and `b200-dgxc` labels while keys
    still named them, but kept their machines under other labels: nothing says they are gone."""
    assert not _found(_pr(history, 1970), "runner-no-machines")


@pytest.mark.parametrize("written", ["'²'", "'" + "9" * 5000 + "'"])
def test_a_dram_figure_that_is_no_number_blocks_and_crashes_nothing(
    e2e: tuple[Path, str], written: str
) -> None:
    """A superscript digit or 5,000 digits as text: the run model reads the figure for every
    DRAM-offload run, so it must turn it into a finding, never an exception."""
    repo, base = e2e
    head = commit(repo, {RUNNERS: replace(CLUSTER + "3_095_781", CLUSTER + written)})
    report = _review(repo, base, head)
    assert not [f for f in report.findings if f.message_id.endswith("crashed")]
    assert any(f.severity is Severity.BLOCKING for f in _found(report, "dram-missing-hardware"))


# --- a label no launcher reads never selects ---------------------------------------------------


@pytest.mark.parametrize("number", [2708, 2709])
def test_2708_2709_stale_offload_labels_of_flat_recipes_warn_and_need_no_entry(
    history: Path, number: int
) -> None:
    """#2708/#2709 mark TRT AgentX points `kv-offloading: dram`; their multinode recipes have no
    variants and keep `KV_OFFLOADING: none` in `benchmark.env`, which no launcher reads. The
    recipe is the point's one variant (no false "no variant serves this point"), the stale label
    is a warning naming both values, and as only labels changed no entry is demanded."""
    report = _pr(history, number)
    assert _blocking(report) == []
    labels = _found(report, "selection-label-differs")
    assert len(labels) == 6
    assert {(f.params["name"], f.params["stated"], f.params["wanted"]) for f in labels} == {
        ("KV_OFFLOADING", "none", "dram")
    }
    assert "KV_OFFLOADING none" in en(labels[0]) and "dram" in zh(labels[0])
    [only] = _found(report, "changelog-labels-only")
    assert only.severity is Severity.WARNING
    assert only.params["settings"] == [
        "dram-utilization",
        "kv-offload-backend.name",
        "kv-offload-backend.version",
        "kv-offloading",
        "total-cpu-dram-gb",
    ]
    assert "No changelog entry may be needed" in en(only)
    # Each point switched to DRAM is shown as that change of its run, not as a new run.
    [change] = report.changes.values()
    assert not {run.status for run in change.runs} & {"added", "removed"}
    common = {s.path: (s.base, s.head) for s in change.common}
    assert common["kv-offloading"][1] == "dram"  # #2708 wrote none, #2709 left it out


def test_a_label_change_with_a_server_change_still_needs_an_entry(history: Path, tmp_path: Path) -> None:
    """The same #2709 edit plus a new image: the server runs differently, so the entry is asked for."""
    parent, merged, _ = squash_merge(history, 2709)
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(history), str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", merged], check=True)
    key = "glm5.2-fp4-gb300-dynamo-trt-agentic-disagg-mtp:\n  image: "
    text = (repo / "configs/nvidia-master.yaml").read_text(encoding="utf-8")
    start = text.index(key) + len(key)
    image = text[start : text.index("\n", start)]
    head = commit(repo, {"configs/nvidia-master.yaml": replace(key + image, key + image + "-post1")})
    report = _review(repo, parent, head, 2709)
    assert [f.message_id for f in _blocking(report)] == ["changelog-missing"]
    assert not _found(report, "changelog-labels-only")


# --- regressions of the total diff -------------------------------------------------------------

KIMI = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/kimik3/atom/mi355x-fp4-mtp/agentic.yaml"
C1_ARGS = "override_tp8_c1:\n  roles:\n    agg:\n      args:\n"


def test_an_override_of_a_json_argument_that_drops_base_list_items_warns(e2e: tuple[Path, str]) -> None:
    """The real Kimi-K3 MI355X recipe keeps `exclude_layer` inside a JSON-valued
    `online_quant_config`; C1's override rewrites it without `context_proj` and `lm_head`."""
    repo, base = e2e
    text = (repo / KIMI).read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if "online_quant_config:" in x)
    cut = line.replace('"lm_head",', "").replace(',"context_proj"', "")
    assert cut != line
    head = commit(repo, {KIMI: replace(C1_ARGS, C1_ARGS + "        " + cut.strip() + "\n")})
    report = _review(repo, base, head)
    [dropped] = _found(report, "changes-list-dropped")
    assert dropped.severity is Severity.WARNING and dropped.params["variant"] == "override_tp8_c1"
    assert dropped.params["path"] == "roles.agg.args.online_quant_config.exclude_layer"
    assert dropped.params["items"] == ["lm_head", "context_proj"]
    written = (repo / KIMI).read_text(encoding="utf-8").splitlines()[dropped.line - 1]
    assert written.strip().startswith("online_quant_config:") and "context_proj" not in written


QWEN_2048 = '      - spec-decoding: "none"\n        kv-p2p-transfer: nixl\n        conc-list: [2048]\n'
QWEN_NEXT = "      # 6P1D wide-EP: 6 prefill workers @ DEP4 + 1 decode worker @ DEP16.\n"


def test_two_disagg_points_that_differ_only_in_kv_p2p_transfer_are_two_runs(e2e: tuple[Path, str]) -> None:
    """The real 5P1D C2048 point of `qwen3.5-fp4-gb300-dynamo-sglang`, copied with Mooncake in place
    of NIXL: the generator hands `kv-p2p-transfer` on, so these are two runs, not a duplicate; the
    NIXL one is as before, the Mooncake one added."""
    repo, base = e2e
    path = "inferencex-e2e/configs/nvidia-master.yaml"
    text = (repo / path).read_text(encoding="utf-8")
    start = text.index(QWEN_2048)
    block = text[start : text.index(QWEN_NEXT, start)]
    copy = block.replace("kv-p2p-transfer: nixl", "kv-p2p-transfer: mooncake")
    head = commit(repo, {path: replace(QWEN_NEXT, copy + QWEN_NEXT)})
    report = _review(repo, base, head)
    assert not _found(report, "runs-duplicate")
    runs = report.changes["qwen3.5-fp4-gb300-dynamo-sglang"].runs
    assert sorted(r.status for r in runs if r.concurrency == 2048) == ["added", "as-before"]


def test_a_sentence_about_every_other_point_is_not_a_claim_about_the_bullets_concurrency(
    review_example: Callable[..., Report], example: object
) -> None:
    """The seed PR's C1 bullet, followed by a true sentence about the other points: C1 has
    `ATOM_MONO_ENABLE=1`, every other point 0. Read as a claim about C1 it warned."""
    body = example.body  # type: ignore[attr-defined]
    bullet_end = "kept in BF16 by the online FP8 quantizer."
    assert bullet_end in body
    other = body.replace(bullet_end, bullet_end + " Every other point keeps `ATOM_MONO_ENABLE=0`.")
    claims = ("consistency-claim-setting", "consistency-claim-as-before")
    assert [f for f in review_example(body=other).findings if f.message_id in claims] == []
    # The same sentence without "every other" is about C1, and false there.
    about_c1 = body.replace(bullet_end, bullet_end + " It keeps `ATOM_MONO_ENABLE=0`.")
    [wrong] = [f for f in review_example(body=about_c1).findings if f.message_id in claims]
    assert wrong.params["scope"] == [1]


def test_a_key_changed_only_through_its_recipe_keeps_its_entrys_old_problems_as_warnings(example) -> None:
    """#2110 and #2178 changed only the benchmark scripts of keys whose entries already held a
    `kv-offload-backend` string today's schema refuses: the PR did not write it, so it warns (as
    a duplicate run the base had already does); an entry the PR edits still blocks on it."""
    from bot.findings import Severity
    from bot.local import run_local
    from tests.conftest import MASTER, RECIPE, commit, replace

    c14 = "conc-list: [14, 16]"
    broken = commit(example.path, {MASTER: replace(c14, f"bogus-field: 1, {c14}")})
    recipe_only = commit(example.path, {RECIPE: replace("max-num-seqs: 28", "max-num-seqs: 24")})
    report = run_local(example.request(base=broken, head=recipe_only))[0]
    assert report.changed_keys, "the recipe edit changes the key's runs"
    found = [f for f in report.findings if f.message_id == "schema-unknown-field"]
    assert found and all(f.severity is Severity.WARNING for f in found)
    edited = run_local(example.request(base=example.head, head=broken))[0]
    assert any(
        f.message_id == "schema-unknown-field" and f.severity is Severity.BLOCKING for f in edited.findings
    )
