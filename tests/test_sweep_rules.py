"""The sweep plan and the labels line, as InferenceX's `process_changelog.py` and `run-sweep.yml`
decide them (DESIGN.md §2 `sweep-plan`, `labels`), on the bundled example repository.

The example's keys: `dsr1-fp4-b200-sglang` (8k1k, C4…C128: 6 runs, evals at C64 and C128),
`gptoss-fp4-h200-vllm` (1k8k, C4…C64: 5 runs, no evals off 8k1k) and the PR's own
`kimik3-fp4-mi355x-atom-agentic-mtp` (agentic, 7 runs in 3 parallelism configs)."""

from __future__ import annotations

from bot.findings import Severity
from bot.local import LocalRequest, run_local
from bot.output.messages import en, zh
from tests.conftest import CHANGELOG, MASTER, commit, replace

KIMI = "kimik3-fp4-mi355x-atom-agentic-mtp"
DSR1 = "dsr1-fp4-b200-sglang"
GPTOSS = "gptoss-fp4-h200-vllm"
FAIL_FAST = ("full-sweep-fail-fast",)


def retrigger(*keys: str, extra: str = "") -> dict:
    """Append a changelog entry naming keys (a rerun after a launch-script fix, say)."""
    listed = "".join(f'    - "{key}"\n' for key in keys)
    why = '  description:\n    - "Rerun after a launch-script fix"\n'
    text = f"\n- config-keys:\n{listed}{why}  pr-link: XXX\n{extra}"
    return {CHANGELOG: lambda old: old + text}


def plan_of(report) -> dict[str, tuple[int, int]]:
    return {key: (len(p["runs"]), p["eval_jobs"]) for key, p in report.sweep_plan["keys"].items()}


def messages(report, check: str) -> dict[str, Severity]:
    return {f.message_id: f.severity for f in report.findings if f.check == check}


def test_an_entry_reruns_the_whole_matrix_of_every_key_it_names(review_example) -> None:
    report = review_example(retrigger(DSR1, GPTOSS))
    assert plan_of(report) == {KIMI: (7, 1), DSR1: (6, 2), GPTOSS: (5, 0)}
    dsr1 = report.sweep_plan["keys"][DSR1]
    assert dsr1["changed"] == [] and not any(run["changed"] for run in dsr1["runs"])
    assert report.sweep_plan["keys"][KIMI]["changed"] == [1, 4, 14, 16, 48, 56, 72]
    assert report.sweep_plan["starts"] is True and report.sweep_plan["total_runs"] == 18


def test_a_wildcard_names_every_key_it_matches_whole(review_example) -> None:
    report = review_example(retrigger("*-b200-*"))
    assert set(plan_of(report)) == {KIMI, DSR1}
    unknown = review_example(retrigger("b200"))
    assert messages(unknown, "changelog")["changelog-unknown-key"] is Severity.BLOCKING
    assert unknown.sweep_plan["starts"] is False and unknown.sweep_plan["reason"] == "gate"


def test_the_scenario_type_of_an_entry_limits_its_runs(review_example) -> None:
    report = review_example(retrigger(DSR1, extra="  scenario-type:\n    - agentic-coding\n"))
    assert DSR1 not in plan_of(report)  # it has no agentic scenario


def test_no_changelog_change_runs_nothing(review_example, example) -> None:
    base_text = (example.path / CHANGELOG).read_text()
    without_entry = base_text.rstrip("\n").rsplit("\n\n", 1)[0] + "\n"
    report = review_example({CHANGELOG: without_entry})
    assert report.sweep_plan["keys"] == {} and report.sweep_plan["reason"] == "no-entry"
    assert messages(report, "sweep-plan") == {"sweep-nothing": Severity.INFO}
    # The labels line agrees with the blocking changelog finding: no "as intended".
    assert "changelog-missing" in messages(report, "changelog")
    assert "labels-none-needed" not in messages(report, "labels")


def test_the_trimming_label_keeps_the_lowest_concurrency_of_each_parallelism_config(review_example) -> None:
    report = review_example(retrigger(DSR1), labels=("sweep-enabled",))
    assert report.sweep_plan["trimmed"] is True
    assert plan_of(report) == {KIMI: (3, 1), DSR1: (1, 2)}  # evals are never trimmed
    assert [r["concurrency"] for r in report.sweep_plan["keys"][KIMI]["runs"]] == [1, 14, 48]


def test_evals_only_runs_no_throughput(review_example) -> None:
    report = review_example(retrigger(DSR1), labels=(*FAIL_FAST, "evals-only"))
    assert plan_of(report) == {KIMI: (0, 1), DSR1: (0, 2)}


def test_an_evals_only_entry_runs_no_throughput_for_its_own_keys(review_example) -> None:
    report = review_example(retrigger(DSR1, extra="  evals-only: true\n"))
    assert plan_of(report) == {KIMI: (7, 1), DSR1: (0, 2)}


def test_all_evals_widens_the_eval_selection(review_example) -> None:
    report = review_example(retrigger(DSR1), labels=(*FAIL_FAST, "all-evals"))
    assert plan_of(report) == {KIMI: (7, 7), DSR1: (6, 6)}  # every 8k1k and agentic row


def test_append_only_runs_only_the_new_points(example) -> None:
    base = example.head
    add = replace("conc-list: [48, 56, 72]", "conc-list: [48, 56, 72, 96]")
    head = commit(
        example.path,
        {MASTER: add, **retrigger(KIMI, extra="  append-only: true\n")},
        "add C96",
    )
    report, _, _ = run_local(
        LocalRequest(repo=str(example.path), base=base, head=head, labels=FAIL_FAST, offline=True)
    )
    plan = report.sweep_plan["keys"][KIMI]
    assert [r["concurrency"] for r in plan["runs"]] == [96] and plan["append_only"] and plan["eval_jobs"] == 0
    refused, _, _ = run_local(
        LocalRequest(
            repo=str(example.path), base=base, head=head, labels=(*FAIL_FAST, "evals-only"), offline=True
        )
    )
    assert messages(refused, "labels")["labels-append-only-evals"] is Severity.BLOCKING
    assert refused.sweep_plan["starts"] is False and refused.sweep_plan["reason"] == "gate"


def test_skip_sweep_a_draft_or_a_fork_holds_the_sweep_back(review_example, example) -> None:
    head = commit(example.path, {"notes.txt": "x\n"}, "Retune C1 [skip-sweep]")
    report, _, _ = run_local(
        LocalRequest(repo=str(example.path), base=example.base, head=head, labels=FAIL_FAST, offline=True)
    )
    assert messages(report, "labels") == {"labels-not-yet-skip": Severity.INFO}
    assert report.sweep_plan["starts"] is False and report.sweep_plan["reason"] == "skip"
    total = next(f for f in report.findings if f.message_id == "sweep-total")
    assert "will not start for this commit" in en(total) and "[skip-sweep]" in zh(total)


def test_a_label_that_looks_like_a_sweep_label_warns(review_example) -> None:
    report = review_example(labels=("full-sweep",))
    [typo] = [f for f in report.findings if f.message_id == "labels-typo"]
    assert typo.severity is Severity.WARNING and typo.params["nearest"].startswith("full-sweep-")
    assert review_example(labels=("sweep-enable",)).verdict == "warnings"
    assert review_example(labels=("documentation",)).verdict == "clean"


# --- two gates: the sweep starts unless InferenceX's PR-time check fails ------------------------


def test_a_rule_only_the_merge_step_enforces_does_not_stop_the_sweep(example) -> None:
    """Two empty lines before the new entry: `prepare_perf_changelog_merge.py` refuses it when
    merging, but the PR-time check (final newline, `process_changelog.py`) passes and the sweep
    runs (f984e74611 and six other real PRs, where upstream ran 1–36 jobs per key)."""
    two_blank_lines = "\n\n- config-keys:".join
    head = commit(example.path, {CHANGELOG: lambda text: two_blank_lines(text.rsplit("\n- config-keys:", 1))})
    report, _, _ = run_local(example.request(head=head, labels=FAIL_FAST))
    [separator] = [f for f in report.findings if f.message_id == "changelog-separator"]
    assert separator.severity is Severity.BLOCKING and separator.params["gate"] == "merge"
    assert "prepare_perf_changelog_merge.py" in en(separator) and "合并时" in zh(separator)
    assert report.sweep_plan["starts"] is True and report.sweep_plan["reason"] is None
    assert messages(report, "labels")["labels-ok"] is Severity.VERIFIED


def test_a_pr_time_refusal_stops_the_sweep(example) -> None:
    """A new entry that fails the entry schema: `process_changelog.py` refuses the added lines, so
    `check-changelog` fails on the PR and nothing is swept."""
    head = commit(example.path, {CHANGELOG: lambda text: text + "  evals-only: maybe\n"})
    report, _, _ = run_local(example.request(head=head, labels=FAIL_FAST))
    [invalid] = [f for f in report.findings if f.message_id == "changelog-field-invalid"]
    assert invalid.params["gate"] == "pr" and "check-changelog" in en(invalid)
    assert report.sweep_plan["starts"] is False and report.sweep_plan["reason"] == "gate"
    assert "labels-not-yet-gate" in messages(report, "labels")


def test_an_append_only_entry_that_loses_a_point_stops_the_sweep(example) -> None:
    """`process_changelog.py` refuses an append-only entry whose key lost a point."""
    base = example.head
    head = commit(
        example.path,
        {
            MASTER: replace("conc-list: [48, 56, 72]", "conc-list: [48, 56, 96]"),
            **retrigger(KIMI, extra="  append-only: true\n"),
        },
    )
    report, _, _ = run_local(
        LocalRequest(repo=str(example.path), base=base, head=head, labels=FAIL_FAST, offline=True)
    )
    [lost] = [f for f in report.findings if f.message_id == "changelog-append-only-lost"]
    assert lost.params["gate"] == "pr"
    assert report.sweep_plan["starts"] is False and report.sweep_plan["reason"] == "gate"
