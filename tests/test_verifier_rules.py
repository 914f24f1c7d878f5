"""The sign-off verifier's Check 6 (b) (vLLM / SGLang land before other frameworks) and Check 7's
dated per-model retirements in MODELS.md, on the real InferenceX configs and MODELS.md of the
runfiles bundle (seeded with a defect in a clone) and on hostile MODELS.md texts."""

from __future__ import annotations

import re
import subprocess
from datetime import date
from pathlib import Path

import pytest

from bot.findings import Severity
from bot.local import LocalRequest, run_local
from bot.model.models_md import retirements
from bot.sources.git import GitRepo
from tests.conftest import commit, squash_merge

AMD = "configs/amd-master.yaml"
ATOM_KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"  # the real ATOM key for Kimi-K3 on MI355X
BLOCKING, UNVERIFIED = Severity.BLOCKING, Severity.UNVERIFIED
IDS = ("verifier-engine-first", "verifier-engine-first-new-hardware", "verifier-retired-model")


@pytest.fixture(scope="session")
def runfiles(runfiles_checkout: Path) -> Path:
    """The real InferenceX scripts and configs (`conftest.runfiles_checkout`)."""
    return runfiles_checkout


def _clone(runfiles: Path, tmp_path: Path, ref: str = "HEAD") -> tuple[Path, str]:
    repo = tmp_path / "ix"
    subprocess.run(["git", "clone", "-q", str(runfiles), str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", ref], check=True)
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    return repo, sha.stdout.strip()


def _said(repo: Path, base: str, head: str) -> list[tuple[str, str | None, Severity, dict]]:
    report, _, _ = run_local(LocalRequest(str(repo), base, head, offline=True))
    return [
        (f.message_id, f.config_key, f.severity, f.params) for f in report.findings if f.message_id in IDS
    ]


def _entry(text: str, key: str) -> str:
    """A real entry's block, from its key line to the blank line after it."""
    return re.search(rf"^{re.escape(key)}:\n(?:.+\n)+", text, re.MULTILINE).group(0)


def _history_pr(runfiles: Path, number: int) -> tuple[str, str]:
    """(parent, commit) of a real squash-merged PR."""
    return squash_merge(runfiles, number)[:2]


# --- Check 6 (b): engine-first ordering ------------------------------------------------------------


def _seed_atom(runner: str, name: str) -> callable:
    """Append a copy of the real Kimi-K3 ATOM entry as a new key on another runner."""

    def edit(text: str) -> str:
        block = _entry(text, ATOM_KEY).replace(ATOM_KEY, name, 1)
        return text + "\n" + block.replace("runner: cluster:mi355x-amds", f"runner: {runner}", 1)

    return edit


@pytest.mark.parametrize(
    ("runner", "name", "expected"),
    [
        # Kimi-K3 has no key at all on MI325X: ATOM there first blocks.
        (
            "cluster:mi325x-amds",
            "kimik3-fp4-mi325x-atom-agentic-mtp",
            ("verifier-engine-first", Severity.BLOCKING),
        ),
        # MI455X is not established hardware: whether it is new is the sign-off's to say.
        (
            "mi455x",
            "kimik3-fp4-mi455x-atom-agentic-mtp",
            ("verifier-engine-first-new-hardware", Severity.UNVERIFIED),
        ),
        # On MI355X `kimik3-fp4-mi355x-vllm-agentic-mtp` landed first: nothing to say.
        ("cluster:mi355x-amds", "kimik3-fp4-mi355x-atom-agentic-mtp-2", None),
    ],
)
def test_another_framework_first_on_a_model_and_sku(
    tmp_path: Path, runfiles: Path, runner: str, name: str, expected: tuple | None
) -> None:
    repo, base = _clone(runfiles, tmp_path)
    head = commit(repo, {AMD: _seed_atom(runner, name)})
    found = _said(repo, base, head)
    if expected is None:
        assert found == []
        return
    assert [(m, k, s) for m, k, s, _ in found] == [(expected[0], name, expected[1])]
    params = found[0][3]
    assert (params["framework"], params["prefix"], params["sku"]) == (
        "atom",
        "kimik3",
        runner.split(":")[-1][:6],
    )


def test_a_vllm_key_landing_in_the_same_pr_or_before_lets_another_framework_in(
    tmp_path: Path, runfiles: Path
) -> None:
    repo, base = _clone(runfiles, tmp_path)
    vllm = "kimik3-fp4-mi355x-vllm-agentic-mtp"

    def both(text: str) -> str:
        atom = _seed_atom("cluster:mi325x-amds", "kimik3-fp4-mi325x-atom-agentic-mtp")(text)
        block = _entry(text, vllm).replace(vllm, "kimik3-fp4-mi325x-vllm-agentic-mtp", 1)
        return atom + "\n" + block.replace("runner: cluster:mi355x-amds", "runner: cluster:mi325x-amds", 1)

    assert _said(repo, base, commit(repo, {AMD: both})) == []


def test_a_framework_that_landed_before_the_pr_is_not_judged_again(tmp_path: Path, runfiles: Path) -> None:
    """A second key of a framework the base already runs there (history) raises nothing; the first
    one, judged alone, does."""
    repo, _ = _clone(runfiles, tmp_path)
    first = commit(repo, {AMD: _seed_atom("cluster:mi325x-amds", "kimik3-fp4-mi325x-atom-agentic-mtp")})
    second = commit(repo, {AMD: _seed_atom("cluster:mi325x-amds", "kimik3-fp4-mi325x-atom-agentic-mtp-b")})
    assert _said(repo, first, second) == []


def test_tilert_first_for_glm51_on_b200_blocks_in_history(runfiles: Path) -> None:
    """#2533 added `glm5.1-fp8-b200-tilert`; the base had no vLLM or SGLang key for `glm5.1` on B200."""
    base, head = _history_pr(runfiles, 2533)
    found = [(m, k, s) for m, k, s, _ in _said(runfiles, base, head) if m == "verifier-engine-first"]
    assert found == [("verifier-engine-first", "glm5.1-fp8-b200-tilert", Severity.BLOCKING)]


# --- Check 7: dated per-model retirements ---------------------------------------------------------


def _models(runfiles: Path, ref: str) -> str:
    return subprocess.run(
        ["git", "-C", str(runfiles), "show", f"{ref}:MODELS.md"], capture_output=True, text=True, check=True
    ).stdout


def _first_commit_of(runfiles: Path, number: int) -> str:
    return _history_pr(runfiles, number)[1]


def test_the_real_support_matrix_retires_models_and_not_precisions(runfiles: Path) -> None:
    """#2406's MODELS.md schedules `kimik2.5`'s retirement after 2026-08-06 and retires Qwen3.5's
    bf16 recipes (not the model); the head's has the retirements that were carried out."""
    scheduled = retirements(_models(runfiles, _first_commit_of(runfiles, 2406)))
    assert {r.prefix: r.effective for r in scheduled}["kimik2.5"] == date(2026, 8, 7)
    assert "qwen3.5" not in {r.prefix for r in scheduled}
    now = {r.prefix: r.effective for r in retirements(_models(runfiles, "HEAD"))}
    assert now["glm5"] == now["glm5.1"] == date(2026, 7, 18)
    assert {"kimik2.5", "gptoss", "minimaxm2.5", "llama70b"} <= now.keys()
    assert not {"dsv4", "kimik3", "minimaxm3", "qwen3.5", "dsr1", "glm5.2"} & now.keys()


def _seed_kimik25(text: str) -> str:
    """A new key for the retired `kimik2.5`: a copy of the file's first real entry."""
    key = re.match(r"(\S+):\n", text).group(1)
    block = _entry(text, key).replace(key, KIMI_KEY, 1)
    return text + "\n" + re.sub(r"model-prefix: \S+", "model-prefix: kimik2.5", block, count=1)


KIMI_KEY = "kimik2.5-fp4-mi355x-vllm-agentic"


@pytest.mark.parametrize(("day", "blocks"), [("2026-08-06T23:30:00Z", False), ("2026-08-07T00:30:00Z", True)])
def test_a_key_for_a_model_retired_by_the_review_date_blocks(
    tmp_path: Path, runfiles: Path, monkeypatch: pytest.MonkeyPatch, day: str, blocks: bool
) -> None:
    """The base is #2406's, whose MODELS.md retires `kimik2.5` after 2026-08-06: the same PR is
    allowed on the 6th (UTC) and blocked from the 7th."""
    repo, base = _clone(runfiles, tmp_path, _first_commit_of(runfiles, 2406))
    monkeypatch.setenv("GIT_COMMITTER_DATE", day)
    head = commit(repo, {AMD: _seed_kimik25})
    found = _said(repo, base, head)
    if not blocks:
        assert found == []
        return
    [(message, key, severity, params)] = found
    assert (message, key, severity) == (
        "verifier-retired-model",
        "kimik2.5-fp4-mi355x-vllm-agentic",
        Severity.BLOCKING,
    )
    assert (params["prefix"], params["effective"], params["day"]) == ("kimik2.5", "2026-08-07", "2026-08-07")
    assert "fully retired after 2026-08-06" in params["cell"]


def test_runs_added_to_a_retired_models_key_block_and_changed_ones_do_not(
    tmp_path: Path, runfiles: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#2406's base still has `kimik2.5` keys; on 2026-08-08 a PR that adds a concurrency to one is
    blocked, one that only changes its image is not."""
    repo, base = _clone(runfiles, tmp_path, _first_commit_of(runfiles, 2406))
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-08-08T12:00:00Z")
    text = (repo / "configs/nvidia-master.yaml").read_text(encoding="utf-8")
    key = next(k for k in re.findall(r"^(kimik2\.5-[^:\s]+):", text, re.MULTILINE))
    block = _entry(text, key)
    end = re.search(r"conc-end: (\d+)", block)
    assert end, block
    more = block.replace(end.group(0), f"conc-end: {int(end.group(1)) * 2}", 1)  # one more run
    head = commit(repo, {"configs/nvidia-master.yaml": text.replace(block, more, 1)})
    found = _said(repo, base, head)
    assert [(m, k, p["runs"], p["new"]) for m, k, _, p in found] == [
        ("verifier-retired-model", key, 1, False)
    ]
    image = re.search(r"image: (\S+)", block).group(1)
    retag = commit(
        repo, {"configs/nvidia-master.yaml": text.replace(block, block.replace(image, image + "-x"), 1)}
    )
    assert _said(repo, head, retag) == []


def test_commit_date_is_the_committers_day_in_utc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-08-06T23:30:00-05:00")  # 04:30 on the 7th, UTC
    sha = commit(repo, {"a": "x\n"})
    assert GitRepo.open(repo).commit_date(sha) == "2026-08-07"


# --- hostile MODELS.md ------------------------------------------------------------------------------

HEADER = "| Model | Prefix | Date added | Active scenarios | Deprecated scenarios |\n|---|---|---|---|---|\n"
ROW = HEADER + "| X | {} | 2026 | {} | |\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            HEADER + "| X | `x1`, `x2` | 2026 | None (retired 2026-07-18, [#1](u)) | all |\n",
            {"x1": "2026-07-18", "x2": "2026-07-18"},
        ),
        (
            HEADER + "| X | `x` | 2026 | 8k1k (until 2026-08-06) — fully retired after August 6, 2026 | |\n",
            {"x": "2026-08-07"},
        ),
        (HEADER + "| X | `x` | 2026 | 8k1k; bf16 recipes retired 2026-08-03 | |\n", {}),
        (HEADER + "| X | `x` | 2026 | None (retired 2026-02-30) | |\n", {}),  # no such day
        (HEADER + "| X | `x` | 2026 | None (retired) | |\n", {}),  # no date: not a dated retirement
        (HEADER + "| X | `x` |\n", {}),  # a short row
        (
            HEADER + "| X \\| Y | `x` | 2026 | — (retired 2026-01-02) | |\n",
            {"x": "2026-01-02"},
        ),  # escaped pipe
        (HEADER + "| X | `x` | 2026 | None (retired 99999-01-01) | |\n", {}),
    ],
)
def test_support_matrix_rows(text: str, expected: dict[str, str]) -> None:
    found = retirements(text)
    assert {r.prefix: r.effective.isoformat() for r in found} == expected


def test_a_models_md_without_the_table_or_out_of_bounds_is_not_checked_and_never_crashes() -> None:
    assert retirements("# Models\n\nNo table here.\n") is None
    assert retirements("\x00\xff" * 1000) is None
    hostile = HEADER + ("| a | `p` | b | None retired " + "retired " * 5000 + "|\n") * 20
    assert retirements(hostile) == []
    long_cell = HEADER + "| a | `p` | b | None (retired 2026-01-01) " + "x" * 100_000 + " |\n"
    [only] = retirements(long_cell)
    assert len(only.cell) <= 161


def _kimik25_pr(runfiles: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, models: str | None) -> tuple:
    """#2406's base with its MODELS.md replaced (None: left as it is), and a head that adds a key
    for `kimik2.5` after its retirement."""
    repo, _ = _clone(runfiles, tmp_path, _first_commit_of(runfiles, 2406))
    base = commit(repo, {"MODELS.md": models}) if models is not None else _first_commit_of(runfiles, 2406)
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-08-20T12:00:00Z")
    return repo, base, commit(repo, {AMD: _seed_kimik25})


@pytest.mark.parametrize(
    ("models", "expected"),
    [
        ("# Models\n\nThe support matrix moved to the wiki.\n", "verifier-models-no-table"),
        ("# Models\n" + "x" * 300_000 + "\n", "verifier-models-too-large"),
    ],
)
def test_a_models_md_that_cannot_be_read_is_not_checked(
    tmp_path: Path, runfiles: Path, monkeypatch: pytest.MonkeyPatch, models: str, expected: str
) -> None:
    repo, base, head = _kimik25_pr(runfiles, tmp_path, monkeypatch, models)
    report, _, _ = run_local(LocalRequest(str(repo), base, head, offline=True))
    said = [(f.message_id, f.severity) for f in report.findings if f.message_id.startswith("verifier-")]
    assert said == [(expected, UNVERIFIED)]


def test_without_a_day_to_judge_on_a_retirement_is_not_checked(
    tmp_path: Path, runfiles: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot import diff as diff_mod
    from bot.checks import retirements as rule
    from bot.model import prfiles

    repo, base, head = _kimik25_pr(runfiles, tmp_path, monkeypatch, None)
    git = GitRepo.open(repo)
    old, new = git.snapshot(base), git.snapshot(head)
    changed = git.changed_files(base, head)
    review = diff_mod.compute(old, new, changed)
    files = prfiles.read(old, new, changed, "", None)
    assert [f.message_id for f in rule.check(review, files, None)] == ["verifier-retired-no-date"]
    assert [f.message_id for f in rule.check(review, files, "2026-08-06")] == []  # scheduled, not yet
    assert [f.message_id for f in rule.check(review, files, "2026-08-07")] == ["verifier-retired-model"]


@pytest.mark.parametrize("new", [True, False])
def test_the_retired_model_message_shows_the_prefix_as_code_not_escaped(new: bool) -> None:
    """The message once joined the code span inside a string, which rendered as \\`glm5.1\\`."""
    from bot.output.messages import render

    params = {
        "new": new,
        "runs": 31,
        "prefix": "kimik2.5",
        "models": "MODELS.md",
        "effective": "2026-08-07",
        "models_line": 145,
        "cell": "None (fully retired 2026-08-07)",
        "day": "2026-08-09",
    }
    for lang in ("en", "zh"):
        text = render("verifier-retired-model", lang, params, markdown=True)
        assert "`kimik2.5`" in text and "\\`" not in text, text
    assert ("31 runs" in render("verifier-retired-model", "en", params)) is not new
