"""`prbot fix` on the seed example PR: each known fix changes exactly the finding's line (or
appends exactly one changelog entry), and once committed, `prbot review` of the same refs no
longer has the finding. Refusals (uncommitted work, a symbolic link) change nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.example import CONFIG_KEY, ExampleRepo
from bot.findings import Finding, Severity
from bot.fix.command import main
from bot.fix.yamledit import append_entry
from bot.local import LocalRequest, run_local
from tests.conftest import CHANGELOG, GIT_ENV, RECIPE, commit, replace, shared_or_skip

PR_URL = "https://github.com/SemiAnalysisAI/InferenceX/pull/2290"
PR = ["--pr-number", "2290", "--pr-url", PR_URL]
C48_TOTAL = "      TOTAL_CPU_DRAM_GB: '1799'\n\noverride_tp8_dcp8_c56_lmcache:"


def fix(example: ExampleRepo, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run `prbot fix` on the example (base to the checked-out HEAD); (status, stdout, stderr)."""
    code = main(["--repo", str(example.path), "--base", example.base, "--offline", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def review(example: ExampleRepo, **pr: object) -> list[Finding]:
    report, _, _ = run_local(example.request(head="HEAD", **pr))
    return report.findings


def ids(findings: list[Finding], severity: Severity | None = None) -> list[str]:
    return [f.message_id for f in findings if severity is None or f.severity is severity]


def read(example: ExampleRepo, path: str) -> bytes:
    return (example.path / path).read_bytes()


def differing_lines(before: bytes, after: bytes) -> list[int]:
    """1-based numbers of the lines that differ (the files have as many lines)."""
    old, new = before.split(b"\n"), after.split(b"\n")
    assert len(old) == len(new)
    return [n for n, (a, b) in enumerate(zip(old, new, strict=True), 1) if a != b]


def git_status(example: ExampleRepo) -> str:
    done = subprocess.run(
        ["git", "-C", str(example.path), "status", "--porcelain"], capture_output=True, text=True, check=True
    )
    return done.stdout


def line_of(data: bytes, text: str) -> int:
    """The 1-based number of the first line that is exactly `text`."""
    return data.split(b"\n").index(text.encode()) + 1


@pytest.mark.parametrize(
    ("setting", "right", "wrong", "message_id"),
    [
        ("      TOTAL_CPU_DRAM_GB", "1799", "1800", "dram-total-mismatch"),
        ("        LMCACHE_MAX_LOCAL_CPU_SIZE", "224", "300", "dram-pool-oversubscribed"),
    ],
)
def test_a_wrong_dram_number_is_fixed_on_its_line_and_the_result_passes_review(
    example: ExampleRepo,
    capsys: pytest.CaptureFixture[str],
    setting: str,
    right: str,
    wrong: str,
    message_id: str,
) -> None:
    seed = read(example, RECIPE)
    commit(example.path, {RECIPE: replace(f"{setting}: '{right}'", f"{setting}: '{wrong}'")})
    assert message_id in ids(review(example), Severity.BLOCKING)
    broken = read(example, RECIPE)
    line = line_of(broken, f"{setting}: '{wrong}'")

    code, out, _ = fix(example, capsys)

    assert code == 0
    assert read(example, RECIPE) == seed  # the seed's own value, comments and quoting included
    assert differing_lines(broken, seed) == [line]
    name = setting.strip()
    assert f"fixed: {RECIPE}:{line}: {name} {wrong} → {right}\n" in out
    assert f"已修复：{RECIPE}:{line}：{name} {wrong} → {right}\n" in out
    commit(example.path, {}, "apply prbot fix")
    after = review(example)
    assert message_id not in ids(after)
    assert ids(after, Severity.BLOCKING) == []


def test_only_the_findings_line_changes_when_the_same_text_is_elsewhere(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """C48 pins the 0.35 block's 1028, the value C14 and C16 rightly pin on identical lines, and a
    comment quotes the same line: only C48's line is the finding's, so only it changes."""
    comment = "# e.g.   TOTAL_CPU_DRAM_GB: '1028' for the 0.35 block\n"
    wrong = C48_TOTAL.replace("1799", "1028")
    commit(example.path, {RECIPE: lambda t: comment + t.replace(C48_TOTAL, wrong)})
    before = read(example, RECIPE)
    (mismatch,) = [f for f in review(example) if f.message_id == "dram-total-mismatch"]

    code, out, _ = fix(example, capsys)

    after = read(example, RECIPE)
    assert code == 0
    assert differing_lines(before, after) == [mismatch.line]
    assert after.count(b"TOTAL_CPU_DRAM_GB: '1028'") == 3  # the comment, C14 and C16
    assert after.split(b"\n")[mismatch.line - 1] == b"      TOTAL_CPU_DRAM_GB: '1799'"
    assert out.count("fixed: ") == 1
    commit(example.path, {}, "apply prbot fix")
    assert ids(review(example), Severity.BLOCKING) == []


def test_a_key_in_a_flow_mapping_beside_other_keys_is_fixed_alone(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    block = "    env:\n      CONC: '48'\n      KV_OFFLOADING: dram\n      TOTAL_CPU_DRAM_GB: '1799'\n"
    flow = "    env: {CONC: '48', KV_OFFLOADING: dram, TOTAL_CPU_DRAM_GB: \"1800\"}  # C48\n"
    commit(example.path, {RECIPE: replace(block, flow)})
    before = read(example, RECIPE)

    code, _, _ = fix(example, capsys)

    assert code == 0
    assert read(example, RECIPE) == before.replace(b'"1800"}  # C48', b'"1799"}  # C48')
    commit(example.path, {}, "apply prbot fix")
    assert ids(review(example), Severity.BLOCKING) == []


def test_a_value_of_the_wrong_type_is_left_for_the_author(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(example.path, {RECIPE: replace(C48_TOTAL, C48_TOTAL.replace("'1799'", "[1799]"))})
    before = read(example, RECIPE)
    line = line_of(before, "      TOTAL_CPU_DRAM_GB: [1799]")

    code, out, _ = fix(example, capsys)

    assert code == 1
    assert read(example, RECIPE) == before
    assert f"not fixed, no known fix: {RECIPE}:{line}: override_tp8_dcp8_c48_lmcache (C48) pins" in out
    assert f"未修复（没有已知的修复方法）：{RECIPE}:{line}：override_tp8_dcp8_c48_lmcache（C48）设定的" in out


@pytest.mark.parametrize(
    "link",
    [
        "XXX",
        "https://github.com/SemiAnalysisAI/InferenceX/pull/XXX",
        "TBD",
        f"{PR_URL[:-4]}XXXX",
        f"{PR_URL[:-4]}2291",
    ],
)
def test_a_new_entrys_pr_link_becomes_this_prs_url(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str], link: str
) -> None:
    if link != "XXX":  # the seed's own placeholder
        commit(example.path, {CHANGELOG: replace("  pr-link: XXX\n", f"  pr-link: {link}\n")})
    before = read(example, CHANGELOG)
    line = line_of(before, f"  pr-link: {link}")

    code, out, _ = fix(example, capsys, *PR)

    after = read(example, CHANGELOG)
    assert code == 0
    assert differing_lines(before, after) == [line]
    assert after.split(b"\n")[line - 1] == f"  pr-link: {PR_URL}".encode()
    assert f"fixed: {CHANGELOG}:{line}: pr-link {link} → {PR_URL}\n" in out
    commit(example.path, {}, "apply prbot fix")
    after_review = review(example, pr_number=2290, pr_url=PR_URL)
    assert not {"changelog-pr-link-placeholder", "changelog-pr-link-other"} & set(ids(after_review))
    assert "changelog-appended" in ids(after_review, Severity.VERIFIED)


def test_without_the_prs_url_the_placeholder_stays(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    before = read(example, CHANGELOG)

    code, out, _ = fix(example, capsys, "--lang", "en")

    assert code == 0
    assert read(example, CHANGELOG) == before
    assert out == "Nothing to fix: the review has no blocking finding and no pr-link to fill in.\n"


#: What the seed PR changes, as the drafted description must say it (English and Chinese).
DRAFTED = (
    "Update the image from rocm/atom-dev:nightly_202610131505 to nightly_202610281457.",
    "At every concurrency: set AITER_FLYDSL_USE_HERD=1, AITER_FLYDSL_HERD_MIN_M=64;",
    "At C1: set ATOM_MONO_ENABLE=1, ATOM_PREFILL_DECODE_INTERVAL=1000000; "
    "change max-num-seqs from 8 to 2; change cudagraph-capture-sizes from [1,2,3,4,5,6,7,8] to [1,2].",
    "At C4, C14, C16: set ATOM_MONO_ENABLE=0.",
    "At C48: set OFFLOAD_STATE_CPU_SIZE=128; change dram-utilization from 0.343 to 0.6; "
    "change ATOM_STATE_CHECKPOINT_DEMAND from 0 to 1.",
    # The generator's budget and the recipe's TOTAL_CPU_DRAM_GB, one fact: said once.
    "At C48: change LMCACHE_MAX_LOCAL_CPU_SIZE from 128 to 224; change TOTAL_CPU_DRAM_GB from 1028 to 1799.",
)


def drop_the_entry(example: ExampleRepo) -> bytes:
    """Commit the base's changelog over the head's (the PR without its entry); the base's bytes."""
    base_log = subprocess.run(
        ["git", "-C", str(example.path), "show", f"{example.base}:{CHANGELOG}"],
        capture_output=True,
        check=True,
    ).stdout
    commit(example.path, {CHANGELOG: base_log.decode()}, "drop the changelog entry")
    return base_log


def appended(before: bytes, after: bytes) -> dict:
    """The one entry appended after `before` (its exact prefix, then one empty line)."""
    assert after.startswith(before + b"\n- config-keys:\n")
    [entry] = yaml.safe_load(after[len(before) :])
    return entry


def assert_drafted(entry: dict, keys: list[str], link: str) -> None:
    """The entry InferenceX's layout wants, its description saying what the seed PR changes."""
    assert list(entry) == ["config-keys", "scenario-type", "description", "pr-link"]
    assert entry["config-keys"] == keys and entry["scenario-type"] == ["agentic-coding"]
    assert entry["pr-link"] == link
    text = "\n".join(entry["description"])
    for said in DRAFTED:
        assert said in text
    assert "TODO" not in text and not any("\u4e00" <= ch <= "\u9fff" for ch in text)  # English only


def test_a_changed_key_without_an_entry_gets_one_appended(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    base_log = drop_the_entry(example)
    assert "changelog-missing" in ids(review(example, pr_number=2290, pr_url=PR_URL), Severity.BLOCKING)

    code, out, _ = fix(example, capsys, *PR)

    assert code == 0
    # The base's bytes stay an exact prefix; one empty line, the entry, one final newline.
    assert_drafted(appended(base_log, read(example, CHANGELOG)), [CONFIG_KEY], PR_URL)
    assert "its description drafted from what the review saw change: read it, and say why" in out
    assert "其 description 根据审阅看到的改动起草" in out
    commit(example.path, {}, "apply prbot fix")
    after = review(example, pr_number=2290, pr_url=PR_URL)
    assert ids(after, Severity.BLOCKING) == []
    assert ids(after, Severity.WARNING) == []  # no placeholder, and every claim of the draft holds
    assert "changelog-appended" in ids(after, Severity.VERIFIED)


def test_an_entry_naming_another_key_gets_a_second_entry_after_it(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    def other_key(text: str) -> str:  # the PR's own entry, the last one, names another key
        last = text.rindex("- config-keys:")
        return text[:last] + text[last:].replace(CONFIG_KEY, "dsr1-fp4-mi355x-atom", 1)

    commit(example.path, {CHANGELOG: other_key})
    before = read(example, CHANGELOG)
    assert "changelog-key-not-covered" in ids(review(example), Severity.BLOCKING)

    code, _, _ = fix(example, capsys)

    assert code == 0
    assert_drafted(appended(before, read(example, CHANGELOG)), [CONFIG_KEY], "XXX")
    commit(example.path, {}, "apply prbot fix")
    after = review(example)
    assert ids(after, Severity.BLOCKING) == [] and "changelog-description-placeholder" not in ids(after)
    assert "changelog-pr-link-placeholder" in ids(after, Severity.INFO)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"- a\n", b"- a\n\nENTRY\n"),
        (b"- a\n\n", b"- a\n\nENTRY\n"),  # the base already ends with the empty line
        (b"- a", b"- a\n\nENTRY\n"),  # a last line without its newline gets one first
    ],
)
def test_the_appended_bytes_follow_the_changelog_gate(data: bytes, expected: bytes) -> None:
    assert append_entry(data, b"ENTRY\n") == expected
    assert append_entry(data, b"ENTRY\n").startswith(data)


def test_dry_run_prints_the_diff_and_changes_nothing(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(example.path, {RECIPE: replace(C48_TOTAL, C48_TOTAL.replace("1799", "1800"))})
    before = read(example, RECIPE)

    code, out, _ = fix(example, capsys, "--dry-run", "--lang", "en")

    assert code == 0
    assert read(example, RECIPE) == before
    assert git_status(example) == ""
    line = line_of(before, "      TOTAL_CPU_DRAM_GB: '1800'")
    assert out.startswith(f"--- a/{RECIPE}\n+++ b/{RECIPE}\n@@ -{line - 3},7 +{line - 3},7 @@\n")
    diff = out.split("would fix:")[0].splitlines()[3:]
    changed = [line for line in diff if line[:1] in "-+"]
    assert changed == ["-      TOTAL_CPU_DRAM_GB: '1800'", "+      TOTAL_CPU_DRAM_GB: '1799'"]
    assert f"would fix: {RECIPE}:{line}: TOTAL_CPU_DRAM_GB 1800 → 1799\n" in out
    assert out.endswith("--dry-run: no file was written.\n")


def test_a_file_with_uncommitted_changes_is_not_overwritten(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(example.path, {RECIPE: replace(C48_TOTAL, C48_TOTAL.replace("1799", "1800"))})
    work = read(example, RECIPE) + b"# my uncommitted note\n"
    (example.path / RECIPE).write_bytes(work)

    code, out, err = fix(example, capsys)

    assert code == 2
    assert read(example, RECIPE) == work
    assert out == ""
    assert f"{RECIPE} has uncommitted changes that differ from HEAD" in err
    assert f"{RECIPE} 有未提交的改动" in err


def test_a_symbolic_link_in_the_working_tree_is_not_written_through(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    commit(example.path, {RECIPE: replace(C48_TOTAL, C48_TOTAL.replace("1799", "1800"))})
    outside = tmp_path / "outside.yaml"
    outside.write_bytes(read(example, RECIPE))
    (example.path / RECIPE).unlink()
    os.symlink(outside, example.path / RECIPE)

    code, _, err = fix(example, capsys, "--lang", "en")

    assert code == 2
    assert b"'1800'" in outside.read_bytes()
    assert "is not a regular file inside the working tree" in err


def test_a_bad_ref_is_an_error_in_both_languages(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = fix(example, capsys, "--head", "no-such-ref")

    assert code == 2
    assert f"prbot: unknown ref 'no-such-ref' in {example.path}\n" in err
    assert f"prbot: {example.path} 中没有引用 'no-such-ref'\n" in err


def test_the_prs_url_comes_from_the_origin_remote_and_the_pr_number(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    origin = "git@github.com:SemiAnalysisAI/InferenceX.git"
    subprocess.run(["git", "-C", str(example.path), "remote", "add", "origin", origin], check=True)

    code, out, _ = fix(example, capsys, "--pr-number", "2290", "--lang", "en")

    assert code == 0
    assert f"  pr-link: {PR_URL}\n".encode() in read(example, CHANGELOG)
    assert out.endswith(f": pr-link XXX → {PR_URL}\n")


def test_a_real_pr_without_its_changelog_entry_gets_one_the_review_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """InferenceX #2707 changed one key of nvidia-master.yaml; here it comes without its entry.
    The history's 6,000-line changelog stays the exact prefix of the fixed file."""
    repo = tmp_path / "inferencex"
    env = {**os.environ, **GIT_ENV}

    def git(*args: str) -> bytes:
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, check=True, env=env
        ).stdout

    subprocess.run(
        ["git", "clone", "-q", str(shared_or_skip("inferencex-history.bundle")), str(repo)], check=True
    )
    git("checkout", "-q", "-b", "no-entry", "1bc6a36^")
    git("checkout", "1bc6a36", "--", "configs/nvidia-master.yaml")
    git("-c", "commit.gpgsign=false", "commit", "-qm", "dsv4 B200 TP8 cudagraphs, no changelog entry")
    url = "https://github.com/SemiAnalysisAI/InferenceX/pull/2707"
    pr = ["--pr-number", "2707", "--pr-url", url]

    code = main(["--repo", str(repo), "--base", "1bc6a36^", "--offline", "--lang", "en", *pr])

    out = capsys.readouterr().out
    assert code == 0, out
    base_log = git("show", f"1bc6a36^:{CHANGELOG}")
    fixed = (repo / CHANGELOG).read_bytes()
    entry = appended(base_log, fixed)
    assert entry["config-keys"] == ["dsv4-fp4-b200-vllm-agentic-mtp"] and entry["pr-link"] == url
    # What #2707's own entry says ("… dropping the published concurrency 16 and 24 points and
    # adding concurrency 14"), for the scenario its real entry names.
    assert entry["scenario-type"] == ["agentic-coding"]
    assert entry["description"] == ["Add C14.", "Remove C16, C24."]
    git("-c", "commit.gpgsign=false", "commit", "-qam", "apply prbot fix")
    request = LocalRequest(
        repo=str(repo), base="1bc6a36^", head="HEAD", pr_number=2707, pr_url=url, offline=True
    )
    report = run_local(request)[0]
    assert ids(report.findings, Severity.BLOCKING) == []
    assert "changelog-appended" in ids(report.findings, Severity.VERIFIED)


def test_the_prbot_command_runs_fix(example: ExampleRepo) -> None:
    """`prbot fix` as a user types it: the subcommand is wired into the `prbot` command line."""
    commit(example.path, {RECIPE: replace("TOTAL_CPU_DRAM_GB: '1799'", "TOTAL_CPU_DRAM_GB: '1800'")})
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "fix",
            "--repo",
            str(example.path),
            "--base",
            example.base,
            "--offline",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "TOTAL_CPU_DRAM_GB 1800 → 1799" in done.stdout
    assert b"TOTAL_CPU_DRAM_GB: '1800'" not in read(example, RECIPE)


@pytest.mark.parametrize("word", ["TODO", "TBD", "XXX"])
def test_a_new_entry_whose_description_is_a_placeholder_is_a_warning(example: ExampleRepo, word: str) -> None:
    """A forgotten "TODO: say what this PR changes…" was reviewed as clean and merged for good."""
    commit(
        example.path,
        {CHANGELOG: replace('  description:\n    - "Retune', f'  description:\n    - "{word}: retune')},
    )
    [warning] = [f for f in review(example) if f.message_id == "changelog-description-placeholder"]
    assert warning.severity is Severity.WARNING and warning.params["word"] == word
    assert warning.file == CHANGELOG and warning.line == max(
        n for n, text in enumerate(read(example, CHANGELOG).split(b"\n"), 1) if text == b"  description:"
    )


def test_with_nothing_to_draft_from_the_entry_says_todo_and_the_review_warns(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """No `changes` view for the key (its checks could not work it out): the TODO skeleton, which
    the review then flags until the author writes the description."""
    from bot.fix.plan import plan

    findings = [f for f in review(example) if f.message_id != "changelog-appended"]
    missing = Finding(
        "changelog", Severity.BLOCKING, "changelog-missing", file=CHANGELOG, params={"keys": [CONFIG_KEY]}
    )
    fixed = plan([*findings, missing], {CHANGELOG: b"- config-keys: [a]\n"}, CHANGELOG, None, changes={})
    text = fixed.files[CHANGELOG].decode()
    assert "TODO: say what this PR changes" in text and "scenario-type" not in text
    assert fixed.fixes[0].message.id == "fix-changelog-entry-todo"


def test_the_review_comment_offers_the_entry_prbot_fix_would_append(
    example: ExampleRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """A PR with no changelog entry: the sticky comment shows the drafted entry under the blocking
    finding (in each language), and `prbot fix` appends the same entry."""
    from bot.output.render import render_comment

    base_log = drop_the_entry(example)
    report, _, _ = run_local(example.request(head="HEAD"))
    comment = render_comment(report)
    english, chinese = comment.split("<details><summary>中文</summary>")
    assert "An entry drafted from what changed, to append to `perf-changelog.yaml`" in english
    assert "根据改动起草的条目，可追加到 `perf-changelog.yaml`" in chinese
    shown = english.split("```yaml\n", 1)[1].split("\n  ```", 1)[0]
    offered = yaml.safe_load("\n".join(line.removeprefix("  ") for line in shown.splitlines()))
    assert fix(example, capsys)[0] == 0
    assert [appended(base_log, read(example, CHANGELOG))] == offered


#: The example's key on `cluster:mi325x-tw`, which the seed PR leaves alone, and that cluster's record.
GLM = "glm5-fp8-mi325x-sglang-agentic-mtp"
MI325X = "  mi325x-tw:\n    gpus-per-node: 8\n    available-cpu-dram-mib: 2_063_104\n"


@pytest.mark.parametrize(
    ("with_seed", "old", "new", "said", "left"),
    [
        # The seed PR also moves the cluster's HF cache: its entry names Kimi-K3 only.
        (
            True,
            "        hf-hub-cache: {path: /data/hf-hub-cache}\n",
            "        hf-hub-cache: {path: /scratch/hf-hub-cache}\n",
            "At every concurrency: change the runner's slurm.volumes.hf-hub-cache.path"
            " from /data/hf-hub-cache to /scratch/hf-hub-cache",
            [],
        ),
        # A PR of its own that only lowers the cluster's host DRAM: the budgets GLM-5's recipe pins
        # at C8 and C16 no longer hold, which is the author's to fix (one line serves both). Its
        # runs read the figure through the DRAM rule: the budget of its two DRAM runs changes.
        (
            False,
            MI325X,
            MI325X.replace("2_063_104", "2_000_000"),
            "At C8, C16: change total-cpu-dram-gb from 973 to 943",
            ["dram-total-mismatch", "dram-total-mismatch"],
        ),
    ],
    ids=["with-the-seed-pr", "runners-yaml-only"],
)
def test_a_key_changed_only_by_its_runners_record_gets_an_entry_appended(
    example: ExampleRepo,
    capsys: pytest.CaptureFixture[str],
    with_seed: bool,
    old: str,
    new: str,
    said: str,
    left: list[str],
) -> None:
    base = example.base if with_seed else example.head
    commit(example.path, {"configs/runners.yaml": replace(old, new)})
    request = example.request(base=base, head="HEAD", pr_number=2290, pr_url=PR_URL)
    if not with_seed:  # its own title and description, not the seed's
        request = request._replace(title="Lower the host DRAM of cluster mi325x-tw", body="")
    asking = "changelog-hardware-key-not-covered" if with_seed else "changelog-missing"
    assert asking in ids(run_local(request)[0].findings, Severity.BLOCKING)
    before = yaml.safe_load(read(example, CHANGELOG))

    code = main(["--repo", str(example.path), "--base", base, "--offline", *PR])

    out = capsys.readouterr().out
    assert code == (1 if left else 0), out
    after = yaml.safe_load(read(example, CHANGELOG))
    assert len(after) == len(before) + 1
    assert after[-1] == {
        "config-keys": [GLM],
        "scenario-type": ["agentic-coding"],
        "description": [f"{said}."],  # in the changelog's language: English
        "pr-link": PR_URL,
    }
    assert f"appended an entry naming {GLM}, pr-link {PR_URL}, its description drafted" in out
    commit(example.path, {}, "apply prbot fix")
    report = run_local(request)[0]  # HEAD is the fixed commit now
    found = ids(report.findings)
    assert not [i for i in found if i == "changelog-missing" or i.endswith("-not-covered")]
    assert not [i for i in found if i.endswith("-placeholder")]
    assert ids(report.findings, Severity.BLOCKING) == left
    assert ids(report.findings, Severity.WARNING) == []
    assert "changelog-appended" in ids(report.findings, Severity.VERIFIED)
