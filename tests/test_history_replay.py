"""Every real merged InferenceX PR that touched a master config or the perf changelog, reviewed again.

The history bundle in `../shared/real-world/` holds 873 squash-merged PRs; the 846 that touch
`configs/*master.yaml` or `perf-changelog.yaml` are reviewed here, `COMMIT^` → `COMMIT`, in local
mode and offline, in-process. No review may raise or report `check-crashed`. The blocking findings
are counted per check and message id (PRs, findings), printed and written to
`$TMPDIR/prbot-history-replay.txt`, and compared with the counts below, each of which was traced
to real defects in the merged PRs:

- changelog-inserted (145): the PR's entry sits above entries merged before it (the branch was
  cut earlier and squash-merged later); 142 of them are pure insertions (the base list is a
  subsequence of the head list). The other three: #963 spliced its entry into the middle of
  #962's (so #962's entry also reads as removed, and `description`/`pr-link` are doubled), #988
  reverted that splice, and #1161 rewrote the whole file ("cleanup perf-changelog").
- changelog-removed (33): reverts that took their changelog entry out again (`Revert "…"`), the
  removal of a duplicated entry (#1296), #1184 returning to an older baseline, and #963 above.
- changelog-missing (9): entries changed with no changelog entry: the move of the master configs
  from `.github/configs/` (outside the bundle) to `configs/` (#1992, so every key looks added),
  AgentX v1.0 (#1970), recipe clean-up (#2002), P2P metadata (#2096), the 1k1k deprecation that
  dropped groups from live keys (#2263), DSV4 GB200 synthetic acceptance (PR3), dropped hung
  Qwen3.5 points merged with [skip-sweep] (#2661), and the host-KV-offload markings (#2708, #2709).
- changelog-field-invalid (5): the first changelog format (#267: `description: |` blocks and no
  `pr-link`; #256 and #330 in the same format) and entries without `pr-link` (#1147, #1159).
- recipe-duplicate-key (5): recipes that really write a key twice (`moe-a2a-backend` and
  `deepep-config` in the DSV4 GB200 SGLang recipes, `moe-runner-backend` in the GLM-5 GB300
  low-latency recipes, `VLLM_MINIMAX_M3_MSA_DECODE_BACKEND`, `compilation-config`).
- changelog-key-not-covered (4): #1780 changed `glm5-fp4-gb300-dynamo-sglang` but its entry names
  only the new gb200 key; #2184 names `-8k1k-tp1`/`-legacy-max-tput` keys but changed
  `minimaxm3-fp4-b300-dynamo-vllm`; #2601 added two keys besides the two its entry names; a
  revert of MiniMax-M3 master changes that also removed their entries.
- changelog-edited (3): #343 rewrote the format of every entry, #586 (a revert) edited #31, and
  #759's rebranding also rewrote a URL inside #57's description (pr-link-only edits are allowed).
- changelog-pr-link-invalid (3): `test`, `…/pull/TBD` and `…/pull/2305/changes`.
- changelog-more-edits (2): the two whole-file rewrites (#343, #1161).
- changelog-duplicate-key (1), changelog-link-edit-mixed (1): #963's splice; #1073 fixed an older
  pr-link in the same PR that appended its own entry.
- yaml-syntax (1): #1767 indented its new entry by two spaces, so the file did not parse (#1798,
  which repaired it, is reviewed as a repair: `changelog-base-unreadable`, not blocking).
- dram-unknown-runner (1): DSV4 GB300 agentic points offload KV to DRAM on `cluster:gb300-nv`,
  which has no hardware record in runners.yaml.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from bot.findings import Severity
from bot.local import LocalRequest, run_local
from tests.conftest import SHARED, shared_or_skip

EXPECTED_PRS = {
    ("changelog", "changelog-inserted"): 145,
    ("changelog", "changelog-removed"): 33,
    ("changelog", "changelog-missing"): 9,
    ("changelog", "changelog-field-invalid"): 5,
    ("recipe-selection", "recipe-duplicate-key"): 5,
    ("changelog", "changelog-key-not-covered"): 4,
    ("changelog", "changelog-edited"): 3,
    ("changelog", "changelog-pr-link-invalid"): 3,
    ("changelog", "changelog-more-edits"): 2,
    ("changelog", "changelog-duplicate-key"): 1,
    ("changelog", "changelog-link-edit-mixed"): 1,
    ("changelog", "yaml-syntax"): 1,
    ("dram", "dram-unknown-runner"): 1,
}
EXPECTED_BLOCKED = 204
SUMMARY = Path(tempfile.gettempdir()) / "prbot-history-replay.txt"


def _bundle() -> Path:
    if os.environ.get("CI") == "true" and not (SHARED / "inferencex-history.bundle").exists():
        pytest.fail(f"CI must replay the real history: {SHARED / 'inferencex-history.bundle'} is missing")
    return shared_or_skip("inferencex-history.bundle")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def test_every_real_pr_reviews_without_error(tmp_path: Path) -> None:
    repo = tmp_path / "history"
    subprocess.run(["git", "clone", "-q", str(_bundle()), str(repo)], check=True)
    shas = _git(
        repo, "log", "--reverse", "--format=%H", "--", "configs/*master.yaml", "perf-changelog.yaml"
    ).split()
    assert len(shas) >= 840
    by_message: Counter[tuple[str, str]] = Counter()
    prs_by_message: Counter[tuple[str, str]] = Counter()
    blocked, crashed, failed = 0, [], []
    started = time.perf_counter()
    for sha in shas:
        try:
            report, _, _ = run_local(LocalRequest(repo=str(repo), base=f"{sha}^", head=sha, offline=True))
        except Exception as exc:  # reported below, all at once
            failed.append(f"{sha[:10]}: {type(exc).__name__}: {exc}")
            continue
        crashed += [
            f"{sha[:10]} {f.check}: {f.params}" for f in report.findings if f.message_id.endswith("crashed")
        ]
        blocking = [(f.check, f.message_id) for f in report.findings if f.severity is Severity.BLOCKING]
        blocked += bool(blocking)
        by_message.update(blocking)
        prs_by_message.update(set(blocking))
    elapsed = time.perf_counter() - started
    lines = [
        f"history replay: {len(shas)} PRs in {elapsed:.1f} s ({elapsed / len(shas) * 1000:.0f} ms per PR); "
        f"{blocked} with blocking findings, {len(crashed)} crashed checks, {len(failed)} exceptions",
        "blocking findings by check and message id (PRs, findings):",
        *(
            f"  {check:<17} {message:<28} {count:>4} {by_message[(check, message)]:>5}"
            for (check, message), count in prs_by_message.most_common()
        ),
    ]
    summary = "\n".join(lines) + "\n"
    SUMMARY.write_text(summary, encoding="utf-8")
    print(f"\n{summary}(written to {SUMMARY})")
    assert not failed, failed[:20]
    assert not crashed, crashed[:20]
    # Each count is explained in this module's docstring; a change means a new false or missed finding.
    assert dict(prs_by_message) == EXPECTED_PRS, summary
    assert blocked == EXPECTED_BLOCKED, summary
