"""Reading files at a commit through one `git cat-file --batch` process, many at a time."""

from __future__ import annotations

import pytest

from bot.output import report_json
from bot.output.messages import text
from bot.sources.git import GitError, GitRepo
from tests.conftest import commit


def test_many_files_in_one_exchange_match_reading_them_one_by_one(example) -> None:
    recipes = {f"benchmarks/r{i:03}.yaml": f"model: m{i}\n" + "x" * (i * 997) for i in range(150)}
    sha = commit(example.path, {**recipes, "benchmarks/big.yaml": "y: " + "z" * 300_000 + "\n"})
    snapshot = GitRepo.open(example.path).snapshot(sha)
    wanted = ["benchmarks/big.yaml", *recipes, "benchmarks/nowhere.yaml", "benchmarks/r000.yaml"]
    snapshot.prefetch(wanted)
    one_by_one = GitRepo.open(example.path).snapshot(sha)
    for path in wanted:
        assert snapshot.read(path) == one_by_one.read(path)
    assert snapshot.read("benchmarks/r149.yaml") == recipes["benchmarks/r149.yaml"].encode()
    assert snapshot.read("benchmarks/nowhere.yaml") is None


def test_a_folder_or_a_missing_path_does_not_desynchronise_the_stream(example) -> None:
    """A folder answers with a tree object whose bytes must be consumed, not taken for the next file."""
    repo = GitRepo.open(example.path)
    sha = commit(example.path, {"configs/extra.yaml": "k: 1\n"})
    answers = repo.read_many(sha, ["configs", "no/such/file", "configs/extra.yaml", "bad\nname"])
    assert answers["configs/extra.yaml"] == b"k: 1\n"
    assert answers["configs"] is None and answers["no/such/file"] is None and answers["bad\nname"] is None
    assert repo.read(sha, "configs/extra.yaml") == b"k: 1\n"


def test_paths_a_pr_names_are_read_only_as_git_lists_them(example) -> None:
    """`./x` and `a/../x` would reach `x` through git's path syntax; they are absent instead."""
    snapshot = GitRepo.open(example.path).snapshot(commit(example.path, {"configs/extra.yaml": "k: 1\n"}))
    assert snapshot.read("configs/extra.yaml") == b"k: 1\n"
    odd = ["./configs/extra.yaml", "configs/./extra.yaml", "a/../configs/extra.yaml", "/configs/extra.yaml"]
    assert [snapshot.read(path) for path in odd] == [None] * len(odd)
    # an absent name with spaces answers `<name> missing`, which must not read as a header
    assert snapshot.read("no such [file](https://x) 12") is None
    assert snapshot.read("configs/extra.yaml") == b"k: 1\n"


def test_asked_ahead_files_arrive_right_whatever_the_order_they_are_read_in(example) -> None:
    """Two refs share one git process; answers queue in the order asked, reads take them in any order."""
    old = {f"benchmarks/deep/folder/name/r{i:03}.yaml": f"v: {i}\n" * (i + 1) for i in range(120)}
    base_sha = commit(example.path, old)
    head_sha = commit(example.path, {path: text + "w: 1\n" for path, text in old.items()})
    repo = GitRepo.open(example.path)
    base, head = repo.snapshot(base_sha), repo.snapshot(head_sha)
    paths = list(old)
    for start in range(0, len(paths), 7):  # interleaved, as a review asks key by key
        base.prefetch(paths[start : start + 7])
        head.prefetch([*paths[start : start + 7], "benchmarks/absent.yaml"])
    for path in reversed(paths):  # the last asked is read first: everything before it is kept
        assert head.read(path) == (old[path] + "w: 1\n").encode()
        assert base.read(path) == old[path].encode()
    assert head.read("benchmarks/absent.yaml") is None and base.read("benchmarks/absent.yaml") is None
    assert repo.read_many(base_sha, paths[:3]) == {p: old[p].encode() for p in paths[:3]}
    head.prefetch([f"benchmarks/extra{i}.yaml" for i in range(500)])  # asked, never read
    repo.close()  # unread answers are dropped: closing does not hang


def test_a_git_process_that_dies_with_answers_owed_is_an_error_not_a_hang(example) -> None:
    repo = GitRepo.open(example.path)
    snapshot = repo.snapshot(commit(example.path, {"configs/extra.yaml": "k: 1\n"}))
    snapshot.prefetch([f"benchmarks/r{i}.yaml" for i in range(100)] + ["configs/extra.yaml"])
    repo._cat.kill()  # as if git were killed mid-review
    repo._cat.wait()
    with pytest.raises(GitError) as caught:
        snapshot.read("configs/extra.yaml")
    assert text(caught.value.message) == "git cat-file stopped before answering"
    assert repo.snapshot(snapshot.sha).read("configs/extra.yaml") == b"k: 1\n"  # a new process starts


def test_the_review_is_the_same_from_any_working_folder(example) -> None:
    """`cd configs && prbot review` must not see every master config as removed."""
    from bot.local import LocalRequest, run_local

    def report(folder: str) -> bytes:
        request = LocalRequest(repo=folder, base=example.base, head=example.head, offline=True)
        return report_json.json_bytes(run_local(request)[0])

    root = report(str(example.path))
    assert report(str(example.path / "configs")) == root
    assert report(str(example.path / "benchmarks" / "single_node")) == root
    assert b"kimik3-fp4-mi355x-atom-agentic-mtp" in root and b'"removed":[48' not in root
