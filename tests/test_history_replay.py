"""Every real merged InferenceX PR that touched a master config or the perf changelog, reviewed again.

The history bundle in `../shared/real-world/` holds 873 squash-merged PRs; the 846 that touch
`configs/*master.yaml` or `perf-changelog.yaml` are reviewed here, `COMMIT^` → `COMMIT`, in local
mode and offline, in-process, each with its own PR number and URL (as on GitHub). No review may
raise or report `check-crashed`. The blocking findings
are counted per check and message id (PRs, findings), printed and written to
`$TMPDIR/prbot-history-replay.txt`, and compared with the counts below, each of which was traced
to real defects in the merged PRs. The changelog rules are InferenceX's own gate (DESIGN.md §2);
measured against today's upstream (843c6254f) on the same history, prbot agrees on 823 of 831
changelog changes; the eight others are a base upstream already refuses and pr-link corrections
alone (a warning: the merge step accepts them, the PR-time check does not), see docs/gates.md.

- changelog-inserted (142): the PR's entry sits above entries merged before it (the branch was
  cut earlier and squash-merged later); 142 of them are pure insertions (the base list is a
  subsequence of the head list). The other three: #963 spliced its entry into the middle of
  #962's (so #962's entry also reads as removed, and `description`/`pr-link` are doubled), #988
  reverted that splice, and #1161 rewrote the whole file ("cleanup perf-changelog").
- (trailing whitespace on new lines, 72 PRs, is a warning: upstream dropped `git diff --check`.)
- changelog-separator (61): the new entry follows a line of spaces (most of them), no empty line,
  or two empty lines.
- changelog-history-bytes (35): entries appended while bytes above them changed, mostly
  whitespace (a `"  "` line removed, trailing spaces trimmed by an editor).
- changelog-removed (32): reverts that took their changelog entry out again (`Revert "…"`), the
  removal of a duplicated entry (#1296), #1184 returning to an older baseline, and #963 above.
- changelog-pr-link-other (108): a new entry's pr-link is neither this PR's URL nor a placeholder:
  `…/pull/XXXX` (#1072–#1088, #880), `…/pull/TBD` (#1119), `test`, `…/pull/2305/changes`, and
  entries that link the PR they were copied from; the merge step refuses them all.
- changelog-trailing-blank (15) and changelog-no-final-newline (4): the file ends with an empty
  line, or without a newline.
- changelog-missing (5): runs added or changed with no changelog entry: #1992 (the move of the
  master configs from `.github/configs/`, outside the bundle, so every key looks added), AgentX
  v1.0 (#1970), recipe clean-up (#2002), P2P metadata (#2096), DSV4 GB200 synthetic acceptance.
  The host-KV-offload markings (#2708, #2709) change only what labels their multinode recipe
  runs (`kv-offloading`, its backend, the utilization and budget, read by no launcher): a
  warning that no entry may be needed (issue 32). Removals alone need no entry: the 1k1k
  deprecation (#2263) and the dropped hung Qwen3.5 points (#2661) no longer count.
- changelog-field-invalid (5): the first changelog format (#267: `description: |` blocks and no
  `pr-link`; #256 and #330 in the same format) and entries without `pr-link` (#1147, #1159).
- changelog-edited (4) and changelog-more-edits (2): #343 rewrote the format of every entry, #586
  and two other reverts edited older entries, #759's rebranding also rewrote a URL inside #57's
  description (its other entries only had their pr-link corrected: info), and #343's whole-file
  rewrite. changelog-moved (1): #1161 reordered the file (one finding) and removed 3 duplicates.
- recipe-duplicate-key-files (4) and recipe-duplicate-key (1): recipes that really write a key
  twice (`moe-a2a-backend` and `deepep-config` in the DSV4 GB200 SGLang recipes,
  `moe-runner-backend` in the GLM-5 GB300 low-latency recipes, `VLLM_MINIMAX_M3_MSA_DECODE_BACKEND`,
  `compilation-config`); the same key twice in several sibling recipes is one finding naming them.
- changelog-key-not-covered (3): #1780 changed `glm5-fp4-gb300-dynamo-sglang` but its entry names
  only the new gb200 key; #2601 added two keys besides the two its entry names; a revert of
  MiniMax-M3 master changes that also removed their entries. (#2184 moved points out of
  `minimaxm3-fp4-b300-dynamo-vllm` into new keys its entry names: the old key only lost points.)
- (selection-none, 0: #2708 and #2709 mark TRT AgentX points `kv-offloading: dram` while their
  flat recipes still say `KV_OFFLOADING: none`, a label no launcher reads: a warning naming both
  values, as the recipe is the point's one variant and serves DRAM offload.)
- changelog-duplicate-key (1), changelog-link-edit-mixed (1), changelog-correction-invalid (1):
  #963's splice; #1073 fixed an older pr-link in the same PR that appended its own entry, and its
  revert took that entry out while leaving a non-canonical correction.
- yaml-syntax (1): #1767 indented its new entry by two spaces, so the file did not parse (#1798,
  which repaired it, is reviewed as a repair: the base's error is `unverified`, not blocking).
- dram-unknown-runner (1): DSV4 GB300 agentic points offload KV to DRAM on `cluster:gb300-nv`,
  which has no hardware record in runners.yaml.
- runs-duplicate (1): `dsr1-fp4-mi355x-sglang-disagg-8k1k-mtp` lists two identical 1P2D TP8
  points that both run C32, so the generator launches that run twice; #1992 (every key looks
  added) is where it is the PR's own. Later PRs that change the key only carry it over: a warning.
- changelog-hardware-key-not-covered (1): #2121 added `cluster:gb300-nv` to runners.yaml, which
  gives a DRAM budget to the DRAM-offload runs of two DSV4 GB300 AgentX keys on it (the generator
  refused them before: no hardware record), and its entry names only the new Qwen3.5 keys (issue
  #22: a runners.yaml change counts; issue #32: only where a run reads it, so the three keys on
  that runner without DRAM points are not asked for).
- schema-* (20 PRs, all merged after #1992): master-config entries and runners.yaml held to the
  generator's models as they are now (upstream 843c6254f), which tightened after these PRs:
  schema-disagg-no-transfer (17) disaggregated keys added or changed before every one needed
  `kv-p2p-transfer`; schema-wrong-type (4) `kv-offload-backend` written as a plain name before it
  became `{name, version}` (AgentX v1.0 #1970, #2109, #2112, #2127); #1992 itself (the move of the
  configs) adds agentic groups with `duration` and points with `offloading` (schema-unknown-field)
  and a runners.yaml without `labels` (schema-runner-labels). Upstream's own validator refuses
  each of these entries too (docs/checks.md, "Schema").
- verifier-engine-first (2): a framework other than vLLM / SGLang first on a model and SKU with
  no vLLM or SGLang key there (the sign-off verifier's Check 6 (b)): #1803's
  `glm5-fp4-gb200-dynamo-trt` (the GB200 `dynamo-sglang` keys are GLM-5.1's, `model-prefix:
  glm5.1`) and #2533's `glm5.1-fp8-b200-tilert`; #1803 is the one PR it newly blocks.
"""

from __future__ import annotations

import os
import re
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
    ("changelog", "changelog-inserted"): 142,
    ("changelog", "changelog-pr-link-other"): 108,
    ("changelog", "changelog-separator"): 61,
    ("changelog", "changelog-history-bytes"): 35,
    ("changelog", "changelog-removed"): 32,
    ("changelog", "changelog-trailing-blank"): 15,
    ("changelog", "changelog-missing"): 5,
    ("changelog", "changelog-field-invalid"): 5,
    ("changelog", "changelog-edited"): 4,
    ("changelog", "changelog-no-final-newline"): 4,
    ("recipe-selection", "recipe-duplicate-key-files"): 4,
    ("changelog", "changelog-key-not-covered"): 3,
    ("changelog", "changelog-more-edits"): 2,
    ("changelog", "changelog-duplicate-key"): 1,
    ("changelog", "changelog-link-edit-mixed"): 1,
    ("changelog", "changelog-correction-invalid"): 1,
    ("changelog", "changelog-moved"): 1,
    ("changelog", "yaml-syntax"): 1,
    ("dram", "dram-unknown-runner"): 1,
    ("recipe-selection", "recipe-duplicate-key"): 1,
    ("consistency", "runs-duplicate"): 1,
    ("changelog", "changelog-hardware-key-not-covered"): 1,
    ("consistency", "schema-disagg-no-transfer"): 17,
    ("consistency", "schema-wrong-type"): 4,
    ("consistency", "schema-unknown-field"): 1,
    ("consistency", "schema-runner-labels"): 1,
    # #1992 moved the master configs out of `.github/configs/`, which this bundle does not hold: its
    # keys look added, and one SGLang key on MI355X runs `rocm/sgl-dev` (on InferenceX, unchanged).
    ("scripts", "scripts-upstream-image"): 1,
    ("scripts", "verifier-engine-first"): 2,
}
EXPECTED_BLOCKED = 381  # #22: #2121 and 9 schema-only PRs; #32 clears #2708, #2709; #35 adds #1803
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
    log = _git(
        repo, "log", "--reverse", "--format=%H%x09%s", "--", "configs/*master.yaml", "perf-changelog.yaml"
    )
    subjects = dict(line.split("\t", 1) for line in log.splitlines())
    shas = list(subjects)
    assert len(shas) >= 840
    by_message: Counter[tuple[str, str]] = Counter()
    prs_by_message: Counter[tuple[str, str]] = Counter()
    blocked, crashed, failed = 0, [], []
    started = time.perf_counter()
    for sha in shas:
        numbers = re.findall(r"\(#(\d+)\)", subjects[sha])  # a squash merge appends its own last
        url = f"https://github.com/SemiAnalysisAI/InferenceX/pull/{numbers[-1]}" if numbers else None
        request = LocalRequest(
            repo=str(repo),
            base=f"{sha}^",
            head=sha,
            offline=True,
            pr_number=int(numbers[-1]) if numbers else None,
            pr_url=url,
        )
        try:
            report, _, _ = run_local(request)
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
