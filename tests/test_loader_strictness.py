"""The files InferenceX's generator would refuse, made from the real files: the review blocks.

Each construction is injected into the real InferenceX files (`../shared/real-world/inferencex-e2e/`)
and reviewed end to end: tags on collections (`yaml.safe_load` refuses them), master-config keys
that are not strings and a master config deleted or emptied (upstream's `load_config_files` fails
on each), scalars pydantic 2 refuses (`"false "`, `"８"`), and a decoy copy of the tree under
`inferencex-e2e/` while the repository root holds the master configs the generator reads.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bot.findings import Finding, Severity
from bot.local import LocalRequest, run_local
from bot.output.messages import en, zh
from bot.report import Report
from tests.conftest import commit, e2e_checkout, replace, shared_or_skip

KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"
AMD = "configs/amd-master.yaml"
NVIDIA = "configs/nvidia-master.yaml"
RUNNERS = "configs/runners.yaml"
CHANGELOG = "perf-changelog.yaml"
RECIPE = "benchmarks/single_node/srt-slurm-recipes/kimik3/atom/mi355x-fp4-mtp/agentic.yaml"
E2E = "inferencex-e2e/"
OLD_IMAGE = "rocm/atom-dev:nightly_202609251613"
NEW_IMAGE = "rocm/atom-dev:nightly_202610131505"


def _entry(**extra: str) -> str:
    """A changelog entry for KEY, with extra fields written as given."""
    fields = "".join(f"  {name}: {value}\n" for name, value in extra.items())
    return (
        f"\n- config-keys:\n    - {KEY}\n  description:\n    - Move to ATOM nightly_202610131505\n"
        f"{fields}  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n"
    )


def _real(path: str) -> str:
    return shared_or_skip("inferencex-e2e", path).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def e2e(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return e2e_checkout(tmp_path_factory.mktemp("loader"))


def _review(repo: Path, base: str, edits: dict) -> Report:
    """Review one PR: `edits` committed on top of `base` (each test starts from the real files)."""
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "--detach", base], check=True)
    head = commit(repo, edits)
    report, _, _ = run_local(LocalRequest(repo=str(repo), base=base, head=head, offline=True))
    return report


def _blocking(report: Report, message_id: str) -> list[Finding]:
    found = [f for f in report.findings if f.message_id == message_id]
    assert found, f"no {message_id}: {sorted({f.message_id for f in report.findings})}"
    assert all(f.severity is Severity.BLOCKING for f in found)
    assert report.verdict == "blocking"
    return found


# ------------------------------------------------------------------ master-config keys (item 7)


@pytest.mark.parametrize("key", ["12345", "true", "2026-01-01", "1.5", "~"])
def test_a_master_config_key_that_is_not_a_string_blocks(e2e: tuple[Path, str], key: str) -> None:
    repo, base = e2e
    real = _real(AMD)
    entry = real.split(f"\n{KEY}:\n", 1)[1].split("\n\n", 1)[0]
    report = _review(repo, base, {E2E + AMD: lambda text: f"{text}\n{key}:\n{entry}\n"})
    [found] = _blocking(report, "master-key-not-string")
    assert found.file == E2E + AMD and found.line == real.count("\n") + 2
    assert found.params["key"] == {"~": "null"}.get(key, key)  # as YAML writes it
    assert "load_config_files" in en(found) and "load_config_files" in zh(found)


def test_the_same_key_quoted_is_a_string(e2e: tuple[Path, str]) -> None:
    repo, base = e2e
    real = _real(AMD)
    entry = real.split(f"\n{KEY}:\n", 1)[1].split("\n\n", 1)[0]
    report = _review(repo, base, {E2E + AMD: lambda text: f'{text}\n"12345":\n{entry}\n'})
    assert not [f for f in report.findings if f.message_id == "master-key-not-string"]


# ------------------------------------------------------------------ a master config gone (item 8)


def test_a_deleted_master_config_blocks(e2e: tuple[Path, str]) -> None:
    repo, base = e2e
    report = _review(repo, base, {E2E + AMD: None})
    [found] = _blocking(report, "master-missing")
    assert found.file == E2E + AMD
    assert "refuses to run without it" in en(found)


@pytest.mark.parametrize("text", ["# every entry moved elsewhere\n", "", "[]\n", "just a string\n"])
def test_an_emptied_master_config_blocks(e2e: tuple[Path, str], text: str) -> None:
    repo, base = e2e
    report = _review(repo, base, {E2E + AMD: text})
    [found] = _blocking(report, "master-not-mapping")
    assert found.file == E2E + AMD


def test_a_repository_with_one_master_config_is_not_asked_for_the_other(tmp_path: Path) -> None:
    """Only a master config the base read is missed: a repository that never had the NVIDIA one."""
    repo, base = e2e_checkout(tmp_path)
    base = commit(repo, {E2E + NVIDIA: None}, "a repository of AMD configs only")
    report = _review(
        repo,
        base,
        {E2E + AMD: replace(OLD_IMAGE, NEW_IMAGE), E2E + CHANGELOG: lambda text: text + _entry()},
    )
    assert not [f for f in report.findings if f.message_id == "master-missing"]
    assert KEY in report.published_sets


# ------------------------------------------------------------------ tags on collections (item 9)


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        (AMD, f"{KEY}:\n  image:", f"{KEY}: !custom\n  image:"),
        (AMD, "  scenarios:\n    agentic-coding:", "  scenarios: !!str\n    agentic-coding:"),
        (
            AMD,
            "  scenarios:\n    agentic-coding:",
            "  scenarios: !!python/object:os.system\n    agentic-coding:",
        ),
        (AMD, "conc-list: [1, 4]", "conc-list: !!set {1, 4}"),
        (RECIPE, "base:", "base: !!python/object/apply:os.system"),
        (RUNNERS, "clusters:", "clusters: !custom"),
    ],
)
def test_a_tag_on_a_collection_blocks(e2e: tuple[Path, str], path: str, old: str, new: str) -> None:
    repo, base = e2e
    edits = {E2E + path: replace(old, new)}
    if path == RECIPE:  # a changed recipe is read when its key runs it
        edits[E2E + AMD] = replace(OLD_IMAGE, NEW_IMAGE)
    report = _review(repo, base, edits)
    found = [f for f in report.findings if f.message_id in ("yaml-syntax", "yaml-collection-tag")]
    assert found and {f.file for f in found} == {E2E + path}
    assert all(f.severity is Severity.BLOCKING for f in found)
    assert report.verdict == "blocking"


def test_a_tag_on_a_changelog_entry_blocks(e2e: tuple[Path, str]) -> None:
    repo, base = e2e
    tagged = _entry().replace("- config-keys:", "- !custom\n  config-keys:", 1)
    report = _review(
        repo, base, {E2E + AMD: replace(OLD_IMAGE, NEW_IMAGE), E2E + CHANGELOG: lambda text: text + tagged}
    )
    [found] = _blocking(report, "yaml-syntax")
    assert found.file == E2E + CHANGELOG and "!custom" in en(found)


def test_the_tags_safe_load_reads_as_plain_collections_still_load(e2e: tuple[Path, str]) -> None:
    repo, base = e2e
    report = _review(
        repo,
        base,
        {
            E2E + AMD: replace(f"{KEY}:\n  image: {OLD_IMAGE}", f"{KEY}: !!map\n  image: {NEW_IMAGE}"),
            E2E + CHANGELOG: lambda text: text + _entry().replace("config-keys:", "config-keys: !!seq", 1),
        },
    )
    assert not [f for f in report.findings if f.severity is Severity.BLOCKING]
    assert report.published_sets[KEY]["head"] == [1, 4, 14, 16, 48, 56, 72]


# ---------------------------------------------------------- scalars at pydantic's strictness (item 10)


@pytest.mark.parametrize(("field", "value"), [("all-evals", '"false "'), ("eval-min-prefill-ep", '"８"')])
def test_a_changelog_scalar_pydantic_refuses_blocks(e2e: tuple[Path, str], field: str, value: str) -> None:
    repo, base = e2e
    entry = _entry(**{field: value})
    report = _review(
        repo, base, {E2E + AMD: replace(OLD_IMAGE, NEW_IMAGE), E2E + CHANGELOG: lambda text: text + entry}
    )
    [found] = _blocking(report, "changelog-field-invalid")
    assert found.params["field"] == field


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        (
            "          ep: 8\n          dp-attn: false\n",
            '          ep: 8\n          dp-attn: "false "\n',
            "dp-attn",
        ),
        (
            "          ep: 8\n          dp-attn: false\n",
            '          ep: "８"\n          dp-attn: false\n',
            "ep",
        ),
    ],
)
def test_a_decode_worker_scalar_pydantic_refuses_blocks(
    e2e: tuple[Path, str], old: str, new: str, field: str
) -> None:
    repo, base = e2e
    real = _real(NVIDIA)
    report = _review(repo, base, {E2E + NVIDIA: replace(old, new)})
    found = [f for f in _blocking(report, "schema-wrong-type") if f.params.get("field") == field]
    assert [f.line for f in found] == [real[: real.index(old)].count("\n") + (2 if field == "dp-attn" else 1)]
    assert ".decode" in found[0].params["where"]


def test_the_spellings_pydantic_takes_stay_clean(e2e: tuple[Path, str]) -> None:
    """`"8"`, `" 8 "`, `"8_0"` and `"8.0"` are whole numbers and `"False"`, `"off"` booleans to pydantic."""
    repo, base = e2e
    old = "          ep: 8\n          dp-attn: false\n"
    report = _review(
        repo, base, {E2E + NVIDIA: replace(old, '          ep: " 8.0 "\n          dp-attn: "Off"\n')}
    )
    assert not [f for f in report.findings if f.message_id == "schema-wrong-type"]


# ------------------------------------------------------------------ the tree the generator reads (item 3)


@pytest.fixture(scope="module")
def at_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The real files at the repository root, as InferenceX at 843c6254f keeps them."""
    source = shared_or_skip("inferencex-e2e")
    repo = tmp_path_factory.mktemp("root") / "InferenceX"
    shutil.copytree(source, repo, ignore=shutil.ignore_patterns("_repo_root", "MANIFEST.tsv"))
    shutil.copytree(source / "_repo_root", repo, dirs_exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    return repo, commit(repo, {}, "base: real files at the root")


def _tree_copy(tree: Path) -> dict[str, str]:
    """Every data file of `tree`, byte for byte, at its path under `inferencex-e2e/`."""
    return {
        E2E + str(path.relative_to(tree)): path.read_text(encoding="utf-8")
        for folder in ("configs", "benchmarks")
        for path in sorted((tree / folder).rglob("*"))
        if path.is_file()
    } | {E2E + CHANGELOG: (tree / CHANGELOG).read_text(encoding="utf-8")}


def test_a_decoy_copy_of_the_tree_does_not_hide_a_root_change(at_root: tuple[Path, str]) -> None:
    repo, base = at_root
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "--detach", base], check=True)
    decoy = _tree_copy(repo)
    report = _review(repo, base, {**decoy, AMD: replace(OLD_IMAGE, NEW_IMAGE)})
    assert KEY in report.published_sets  # the root's key changed: the root is what was reviewed
    [missing] = _blocking(report, "changelog-missing")
    assert missing.file == CHANGELOG
    not_read = {f.file for f in report.findings if f.message_id == "master-not-read"}
    assert not_read == {E2E + AMD, E2E + NVIDIA}
    assert not [f for f in report.findings if f.message_id == "layout-moved"]


def test_moving_the_tree_says_so(at_root: tuple[Path, str]) -> None:
    repo, base = at_root
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "--detach", base], check=True)
    moved = _tree_copy(repo)
    gone = {path.removeprefix(E2E): None for path in moved}
    report = _review(repo, base, {**moved, **gone})
    [found] = [f for f in report.findings if f.message_id == "layout-moved"]
    assert found.severity is Severity.WARNING
    assert found.params["before"] == "configs/" and found.params["after"] == E2E + "configs/"
    assert "inferencex-e2e/configs/" in zh(found)
    assert not [f for f in report.findings if f.message_id == "master-missing"]
    assert not report.published_sets  # the same entries under the other tree change no key


def test_a_second_tree_beside_the_one_the_base_read_blocks(e2e: tuple[Path, str]) -> None:
    """The other way round: the real `inferencex-e2e/` tree, and a PR that adds a copy at the root
    (which the review then reads) while changing the `inferencex-e2e/` files."""
    repo, base = e2e
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "--detach", base], check=True)
    copy = {path.removeprefix(E2E): text for path, text in _tree_copy(repo / E2E).items()}
    report = _review(repo, base, {**copy, E2E + AMD: replace(OLD_IMAGE, NEW_IMAGE)})
    [found] = _blocking(report, "layout-two-trees")
    assert found.params["before"] == E2E + "configs/" and found.params["after"] == "configs/"
    assert "keep one tree" in en(found) and "请只保留一套目录" in zh(found)
