"""The sign-off verifier's Check 7, per-model deprecations (bot/checks/deprecations.py): the
`Deprecated scenarios` cell of MODELS.md's support matrix, read at the base, against keys seeded in
a clone of the real InferenceX history (#1992..#2707)."""

from __future__ import annotations

import re
import subprocess
from datetime import date
from pathlib import Path

import pytest

from bot.findings import Severity
from bot.local import LocalRequest, run_local
from bot.model.models_md import deprecations
from tests.conftest import commit, squash_merge

NVIDIA = "configs/nvidia-master.yaml"
BLOCKING, UNVERIFIED = Severity.BLOCKING, Severity.UNVERIFIED


def _said(repo: Path, base: str, head: str) -> list[tuple[str, str | None, Severity, dict]]:
    report, _, _ = run_local(LocalRequest(str(repo), base, head, offline=True))
    return [
        (f.message_id, f.config_key, f.severity, f.params)
        for f in report.findings
        if f.message_id.startswith("deprecations-")
    ]


def _clone(history: Path, tmp_path: Path, ref: str) -> Path:
    repo = tmp_path / "ix"
    subprocess.run(["git", "clone", "-q", str(history), str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", ref], check=True)
    return repo


def _show(repo: Path, ref: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "show", f"{ref}:{path}"], capture_output=True, text=True, check=True
    ).stdout


def _entry(text: str, key: str) -> str:
    """A real entry's block, from its key line to the blank line after it."""
    return re.search(rf"^{re.escape(key)}:\n(?:.+\n)+", text, re.MULTILINE).group(0)


def _readd(repo: Path, ref: str, key: str, name: str) -> callable:
    """An edit that appends the entry `key` had at `ref` under a new name."""
    block = _entry(_show(repo, ref, NVIDIA), key).replace(key, name, 1)
    return lambda text: text + "\n" + block


@pytest.fixture
def after_2493(runfiles_history: Path, tmp_path: Path) -> tuple[Path, str, str]:
    """A clone at #2493, which removed MiniMax-M3's 8k1k and Qwen3.5's bf16 recipes and said so in
    MODELS.md (`removed 2026-08-04`); and #2493's parent, which still had them."""
    parent, merged, _ = squash_merge(runfiles_history, 2493)
    return _clone(runfiles_history, tmp_path, merged), merged, parent


@pytest.mark.parametrize(("day", "blocks"), [("2026-08-03T12:00:00Z", False), ("2026-08-10T12:00:00Z", True)])
def test_a_minimaxm3_8k1k_key_added_after_2493_blocks_from_the_removal_day(
    after_2493: tuple[Path, str, str], monkeypatch: pytest.MonkeyPatch, day: str, blocks: bool
) -> None:
    repo, base, parent = after_2493
    monkeypatch.setenv("GIT_COMMITTER_DATE", day)
    head = commit(
        repo, {NVIDIA: _readd(repo, parent, "minimaxm3-fp8-b300-vllm", "minimaxm3-fp8-b300-vllm-v2")}
    )
    found = _said(repo, base, head)
    if not blocks:
        assert found == []
        return
    [(message, key, severity, params)] = found
    assert (message, key, severity) == ("deprecations-deprecated", "minimaxm3-fp8-b300-vllm-v2", BLOCKING)
    assert params["item"] == "Single-turn 8k1k (removed 2026-08-04, #2493)"
    assert params["match"] == "fixed-seq-len, isl 8192 / osl 1024"
    assert _show(repo, base, "MODELS.md").splitlines()[params["models_line"] - 1].startswith("| MiniMax-M3 |")
    assert params["new"] and params["day"] == "2026-08-10"


def test_a_qwen35_bf16_key_blocks_and_its_fp8_sibling_passes(
    after_2493: tuple[Path, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, base, parent = after_2493
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-08-10T12:00:00Z")
    head = commit(
        repo,
        {
            NVIDIA: lambda text: _readd(
                repo, parent, "qwen3.5-bf16-b200-sglang", "qwen3.5-bf16-b200-sglang-v2"
            )(_readd(repo, parent, "qwen3.5-fp8-b200-sglang", "qwen3.5-fp8-b200-sglang-v2")(text))
        },
    )
    [(message, key, severity, params)] = _said(repo, base, head)
    assert (message, key, severity) == ("deprecations-deprecated", "qwen3.5-bf16-b200-sglang-v2", BLOCKING)
    assert (params["match"], params["prefix"]) == ("precision: bf16", "qwen3.5")
    assert params["item"].startswith("all bf16 recipes")


def test_runs_added_to_a_dsr1_8k1k_key_pass(
    after_2493: tuple[Path, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`dsr1` deprecates 1k1k and 1k8k, not 8k1k: a concurrency added to its 8k1k key is fine."""
    repo, base, _ = after_2493
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-08-10T12:00:00Z")
    text = (repo / NVIDIA).read_text(encoding="utf-8")
    block = _entry(text, "dsr1-fp8-b200-sglang")
    assert "isl: 8192" in block
    end = re.search(r"conc-end: (\d+)", block)
    head = commit(
        repo, {NVIDIA: text.replace(block, block.replace(end[0], f"conc-end: {int(end[1]) * 2}", 1))}
    )
    assert _said(repo, base, head) == []


def test_kimik3_arms_are_not_checked_never_guessed(
    runfiles_history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The head's MODELS.md: Kimi-K3 "Agentic coding non-DSpark arm (deprecated from day 0)". A copy
    of its `nospec` key (`spec-decoding: none`: the arm, or the unspeculated tail of a DSpark
    Pareto, as #2637 and #2639 merged it) and a copy of its DSpark key (`mtp`, the label of every
    draft method) are both reported not checked, neither blocks."""
    repo = _clone(runfiles_history, tmp_path, "HEAD")
    base = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-08-25T12:00:00Z")
    plain, dspark = (
        "kimik3-fp4-gb200-dynamo-vllm-agentic-mooncake-dcp16-agg",
        "kimik3-fp4-b300-vllm-agentic-dspark",
    )
    head = commit(
        repo,
        {
            NVIDIA: lambda t: _readd(repo, base, plain, plain + "-v2")(
                _readd(repo, base, dspark, dspark + "-v2")(t)
            )
        },
    )
    found = {k: (m, s, p["specs"]) for m, k, s, p in _said(repo, base, head)}
    assert found == {
        plain + "-v2": ("deprecations-arm-unknown", UNVERIFIED, ["none"]),
        dspark + "-v2": ("deprecations-arm-unknown", UNVERIFIED, ["mtp"]),
    }


def _minimax_cell(cell: str) -> callable:
    """An edit of MODELS.md giving MiniMax-M3's row this deprecated-scenarios cell."""
    return lambda text: re.sub(
        r"^(\| MiniMax-M3 \|(?:[^|\n]*\|){3}).*$", lambda m: m[1] + " " + cell + " |", text, flags=re.M
    )


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("Single-turn 8k1k (H100 only)", "deprecations-qualifier-unread"),
        ("Single-turn 8k1k (removed 2026-13-45)", "deprecations-qualifier-unread"),
        ("Benchmarks on Tuesdays", "deprecations-item-unread"),
        ("Single-turn 8k1k (" + "(" * 5000 + "x" * 5000, "deprecations-item-unread"),
    ],
)
def test_a_hostile_cell_is_not_checked_never_guessed(
    after_2493: tuple[Path, str, str], monkeypatch: pytest.MonkeyPatch, cell: str, expected: str
) -> None:
    repo, _, parent = after_2493
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-08-10T12:00:00Z")
    base = commit(repo, {"MODELS.md": _minimax_cell(cell)})
    head = commit(
        repo, {NVIDIA: _readd(repo, parent, "minimaxm3-fp8-b300-vllm", "minimaxm3-fp8-b300-vllm-v2")}
    )
    assert [(m, s) for m, _, s, _ in _said(repo, base, head)] == [(expected, UNVERIFIED)]


HEADER = "| Model | Prefix | Date added | Active scenarios | Deprecated scenarios |\n|---|---|---|---|---|\n"


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("Single-turn 1k8k", [("x", (1024, 8192), None, None, None)]),
        (
            "Agentic coding non-MTP arm (removed after 2026-08-03, [#1](u))",
            [("x", None, "mtp", date(2026, 8, 4), None)],
        ),
        ("all fp4 recipes (deprecated from day 0) [^2]", [("x", None, None, None, None)]),
        ("Single-turn 8k1k (GLM-5 only)", [("x", (8192, 1024), None, None, "qualifier")]),
        ("Single-turn 8k1k, (((", [("x", (8192, 1024), None, None, None), ("x", None, None, None, "item")]),
        ("", []),
    ],
)
def test_deprecated_cells(cell: str, expected: list) -> None:
    found = deprecations(HEADER + f"| X | `x` | 2026 | Agentic coding | {cell} |\n")
    assert [(d.prefix, d.seq, d.arm, d.effective, d.unread) for d in found] == expected


def test_a_models_md_without_the_column_or_out_of_bounds_never_crashes() -> None:
    assert deprecations("# Models\n\nNo table here.\n") == []
    assert deprecations(HEADER.replace("| Deprecated scenarios ", "") + "| X | `x` | 2026 | A |\n") == []
    hostile = HEADER + ("| a | `p` | b | c | " + "(" * 3000 + ", )" * 300 + " |\n") * 50
    assert {d.unread for d in deprecations(hostile)} <= {"item", "qualifier"}
