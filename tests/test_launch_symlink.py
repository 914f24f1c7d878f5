"""A launcher stored as a symlink runs its target: at the runfiles history's head (upstream
843c6254f), `runners/launch_b200-dgxc-slurm.sh` is a git symlink to `launch_b200-dgxc.sh`. A PR
that edits only the target changes what the b200-dgxc-slurm machines run too: the shared-file note
names both machines, and a changed script name reaches the keys that run through the symlink."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.local import LocalRequest, run_local
from bot.report import Report
from tests.conftest import commit, replace

LINK, TARGET = "runners/launch_b200-dgxc-slurm.sh", "runners/launch_b200-dgxc.sh"
TILERT_KEY = "glm5.1-fp8-b200-tilert"  # a multi-node key whose runs start a script by name


@pytest.fixture
def checkout(runfiles_history: Path, tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "ix"
    subprocess.run(["git", "clone", "-q", str(runfiles_history), str(repo)], check=True)
    if not (repo / LINK).is_symlink() or (repo / LINK).readlink() != Path(TARGET).relative_to("runners"):
        pytest.skip(f"{LINK} is not a symlink to {TARGET} at this head")
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    return repo, head.stdout.strip()


def _review(repo: Path, base: str, head: str) -> Report:
    return run_local(LocalRequest(str(repo), base, head, offline=True))[0]


def test_an_edit_of_a_symlinked_launchers_target_names_every_machine_that_runs_it(
    checkout: tuple[Path, str],
) -> None:
    repo, base = checkout
    head = commit(repo, {TARGET: replace("#!/usr/bin/bash\n", "#!/usr/bin/bash\nexport NCCL_DEBUG=WARN\n")})
    report = _review(repo, base, head)
    (shared,) = [f for f in report.findings if f.message_id == "launch-shared-changed"]
    assert shared.file == TARGET
    assert shared.params["reach"] == ["b200-dgxc", "b200-dgxc-slurm"]
    assert report.changed_keys == {}  # no run starts another script


def test_a_script_name_changed_in_the_target_reaches_the_keys_run_through_the_symlink(
    checkout: tuple[Path, str],
) -> None:
    repo, base = checkout
    edit = replace('exec bash "$TILERT_DISAGG"', 'exec bash "${TILERT_DISAGG%.sh}-v2.sh"')
    head = commit(repo, {TARGET: edit})
    report = _review(repo, base, head)
    missing = [
        f for f in report.findings if f.message_id == "launch-script-missing" and f.params["launcher"] == LINK
    ]
    assert [f.config_key for f in missing] == [TILERT_KEY]
    assert missing[0].severity == "blocking"
    assert missing[0].params["tried"] == [
        "benchmarks/multi_node/glm5.1_fp8_b200_tilert-disagg.sh",  # the launcher's `-f` test
        "benchmarks/multi_node/glm5.1_fp8_b200_tilert-disagg-v2.sh",  # what it now starts
    ]
    assert "script" in report.changed_keys[TILERT_KEY]


def test_a_key_whose_script_the_launcher_looks_for_and_gives_up_on_blocks(
    checkout: tuple[Path, str],
) -> None:
    """The launcher tests for the TileRT disaggregated script and exits when it is missing
    (`[[ -f "$TILERT_DISAGG" ]] || { echo …; exit 1; }`): a PR that deletes that script leaves the
    key's runs starting nothing, failing at launch, so it blocks, naming the name looked for."""
    repo, base = checkout
    script = "benchmarks/multi_node/glm5.1_fp8_b200_tilert-disagg.sh"
    if not (repo / script).exists():
        pytest.skip(f"{script} is not at this head")
    report = _review(repo, base, commit(repo, {script: None}))
    missing = [f for f in report.findings if f.message_id == "launch-script-missing"]
    assert {f.config_key for f in missing} == {TILERT_KEY}
    assert all(f.severity == "blocking" for f in missing)
    assert {tuple(f.params["tried"]) for f in missing} == {(script,)}


def test_a_launcher_too_large_to_follow_is_not_checked_never_passed(checkout: tuple[Path, str]) -> None:
    """A launcher beyond the bash reader's bounds (here 300 KB of padding) cannot be followed: its
    keys' runs are "not checked" for the script they start, neither passed nor blocked."""
    repo, base = checkout
    head = commit(repo, {TARGET: lambda text: text + "# padding\n" * 30_000})
    report = _review(repo, base, head)
    unresolved = [f for f in report.findings if f.message_id == "launch-unresolved"]
    assert TILERT_KEY in {f.config_key for f in unresolved}
    assert {f.severity for f in unresolved} == {"unverified"}
    assert not [f for f in report.findings if f.check == "launch" and f.severity == "verified"]
