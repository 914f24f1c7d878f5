"""`changes`: what each run of a changed key serves at base and at head (DESIGN.md §2, §3).

Each test commits edits on top of the bundled example PR's head and reviews that step alone, so
that what changed is exactly the edit."""

from __future__ import annotations

from bot.checks.changes_view import RunChange, Setting
from bot.example import ExampleRepo
from bot.findings import Severity
from bot.local import LocalRequest, run_local
from bot.output.messages import en, zh
from bot.report import Report
from tests.conftest import MASTER, RECIPE, commit, replace

KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"
BASE_ARGS = "        block-size: 64\n"  # in the recipe's `base.roles.agg.args`
C1_ARGS = "        max-num-seqs: 2\n"  # in `override_tp8_c1.roles.agg.args`
FLAGS = "roles.agg.args.extra-flags"


def _review(example: ExampleRepo, base: str, head: str) -> Report:
    request = LocalRequest(repo=str(example.path), base=base, head=head, labels=example.labels, offline=True)
    return run_local(request)[0]


def _runs(report: Report) -> dict[int, RunChange]:
    return {run.concurrency: run for run in report.changes[KEY].runs}


def test_lists_are_compared_as_lists_and_a_change_at_every_run_is_common(example: ExampleRepo) -> None:
    first = commit(example.path, {RECIPE: replace(BASE_ARGS, BASE_ARGS + "        extra-flags: [a, b, c]\n")})
    second = commit(example.path, {RECIPE: replace("extra-flags: [a, b, c]", "extra-flags: [a, c, e]")})
    report = _review(example, first, second)
    [setting] = report.changes[KEY].common
    assert setting == Setting(FLAGS, ["a", "b", "c"], ["a", "c", "e"], added=["e"], removed=["b"])
    assert {run.status for run in _runs(report).values()} == {"as-before"}
    [said] = [f for f in report.findings if f.message_id == "changes-runs"]
    assert f"1 setting changed the same way at every run of a key ({FLAGS})" in en(said)
    assert "7 次运行与之前相同" in zh(said)


def test_an_override_that_drops_items_of_a_base_list_is_a_warning(example: ExampleRepo) -> None:
    """Deep merge replaces lists: C1's variant no longer has `b` and `c`."""
    first = commit(example.path, {RECIPE: replace(BASE_ARGS, BASE_ARGS + "        extra-flags: [a, b, c]\n")})
    second = commit(example.path, {RECIPE: replace(C1_ARGS, C1_ARGS + "        extra-flags: [a]\n")})
    report = _review(example, first, second)
    [dropped] = [f for f in report.findings if f.message_id == "changes-list-dropped"]
    assert dropped.severity is Severity.WARNING and dropped.params["variant"] == "override_tp8_c1"
    assert dropped.params["items"] == ["b", "c"] and dropped.file == RECIPE
    line = (example.path / RECIPE).read_text(encoding="utf-8").splitlines()[dropped.line - 1]
    assert line.strip() == "extra-flags: [a]"
    runs = _runs(report)
    assert runs[1].status == "changed" and runs[1].settings[0].removed == ["b", "c"]
    assert runs[4].status == "as-before"


def test_added_and_removed_runs_are_named(example: ExampleRepo) -> None:
    head = commit(example.path, {MASTER: replace("conc-list: [48, 56, 72]", "conc-list: [48, 56, 64]")})
    runs = _runs(_review(example, example.head, head))
    assert (runs[72].status, runs[72].variant_base, runs[72].variant_head) == (
        "removed",
        "override_tp8_dcp8_c72_lmcache",
        None,
    )
    assert runs[64].status == "added" and runs[64].variant_base is None
    assert runs[48].status == "as-before" and runs[48].topology.dcp == 8


def test_a_serving_argument_written_as_json_is_compared_by_its_parts(example: ExampleRepo) -> None:
    """The seed PR's C1 keeps three more layers in BF16 inside a JSON string argument: the view
    names the layers added to `exclude_layer`, and the capture sizes dropped, as lists."""
    report = _review(example, example.base, example.head)
    c1 = {s.path: s for s in _runs(report)[1].settings}
    layers = c1["roles.agg.args.online_quant_config.exclude_layer"]
    assert layers.added == ["model.layers.0.*", "*mlp.shared_experts*", "*self_attn.kv_a_proj*"]
    assert layers.removed == []
    assert "roles.agg.args.online_quant_config.global_quant_config" not in c1  # unchanged part
    sizes = c1["roles.agg.args.cudagraph-capture-sizes"]
    assert (sizes.head, sizes.removed) == ([1, 2], [3, 4, 5, 6, 7, 8])


def test_a_json_looking_value_that_is_not_json_stays_text(example: ExampleRepo) -> None:
    head = commit(example.path, {RECIPE: replace(C1_ARGS, C1_ARGS + "        odd: '[not json'\n")})
    [setting] = _runs(_review(example, example.head, head))[1].settings
    assert setting == Setting("roles.agg.args.odd", None, "[not json")
