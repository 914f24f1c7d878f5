"""The changelog entry prbot drafts from the `changes` view: what changed said in house style,
bounded whatever the PR, and never a crash on odd report data."""

from __future__ import annotations

from bot.findings import Severity, finding
from bot.output import changelog_draft as draft


def _run(concurrency: int, tp: int, status: str = "changed", settings: list | None = None) -> dict:
    topology = {"scenario": "fixed-seq-len", "isl": 8192, "osl": 1024, "tp": tp, "ep": 1}
    return {"concurrency": concurrency, "topology": topology, "status": status, "settings": settings or []}


def test_runs_sharing_a_concurrency_are_named_with_their_config() -> None:
    setting = [{"path": "args.max-num-seqs", "base": 8, "head": 2}]
    view = {"common": [], "runs": [_run(64, 4, settings=setting), _run(64, 8), _run(128, 8, "added")]}
    assert draft.description(["k"], {"k": view}) == [
        "At C64 (8k1k TP4): change max-num-seqs from 8 to 2.",
        "Add C128 (8k1k TP8) (new point).",
        "C64（8k1k TP4）：修改 max-num-seqs（8 → 2）。",
        "新增 C128（8k1k TP8）（新的点）。",
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
    english, chinese = draft.description(["k"], {"k": {"common": common, "runs": []}})
    assert english == (
        "At every concurrency: set X0=0, X1=1, X2=2, X3=3, X4=4, X5=5, X6=6, X7=7, and 12 more; "
        "add 50, 51, 52, 53, 54, 55, 56, 57, and 342 more to exclude; "
        "remove 0, 1, 2, 3, 4, 5, 6, 7, and 22 more from exclude."
    )
    assert "另有 12 项" in chinese and len(chinese) < 200


def test_several_keys_are_named_and_the_rest_counted() -> None:
    image = {"path": "image", "base": "vllm/vllm-openai:v0.21.0", "head": "vllm/vllm-openai:v0.25.0"}
    changes = {f"key-{i}": {"common": [image], "runs": [_run(1, 8)]} for i in range(5)}
    lines = draft.description(list(changes), changes)
    assert (
        lines[0] == "key-0: At every concurrency: update the image from vllm/vllm-openai:v0.21.0 to v0.25.0."
    )
    assert lines[3] == "The other 2 config keys change in the same review; see the prbot comment."
    assert lines[4] == "key-0：所有并发：将镜像从 vllm/vllm-openai:v0.21.0 更新为 v0.25.0。"


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
    ]
    assert draft.drafted_keys(findings) == ["b", "a", "c"]
    assert draft.drafted_keys(findings[1:2]) == []
