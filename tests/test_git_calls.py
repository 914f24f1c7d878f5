"""What a local review asks of git: how many processes it starts, and that each answer is the one
the git command it replaced gave (`rev-parse --verify` and `merge-base`, `log -1 --format=%B`,
`diff --name-only --no-renames`, `cat-file <commit>:<path>`)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.example import ExampleRepo
from bot.local import run_local
from bot.output.messages import text
from bot.sources.git import Compared, GitError, GitRepo
from tests.conftest import GIT_ENV


def _git(repo: Path, *args: str, stdin: bytes = b"") -> bytes:
    env = {
        **os.environ,
        **GIT_ENV,
        "GIT_AUTHOR_DATE": "@1700000000 +0000",
        "GIT_COMMITTER_DATE": "@1700000000 +0000",
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], input=stdin, capture_output=True, env=env, check=True
    ).stdout


def _sha(repo: Path, ref: str = "HEAD") -> str:
    return _git(repo, "rev-parse", ref).decode().strip()


def _repo(path: Path) -> Path:
    path.mkdir()
    _git(path, "init", "-q", "-b", "main", ".")
    _git(path, "config", "commit.gpgsign", "false")
    return path


def _commit_all(repo: Path, message: str = "edit") -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return _sha(repo)


def _old_way(path: Path, base: str, head: str) -> Compared:
    """What `run_local` did before `open_compared`: four git processes."""
    repo = GitRepo.open(path)
    head_sha, base_sha = repo.resolve(head), repo.resolve(base)
    return Compared(base_sha, head_sha, repo.merge_base(base_sha, head_sha))


def _new_way(path: Path, base: str, head: str) -> Compared:
    return GitRepo.open_compared(path, base, head)[1]


def _outcome(find: Callable[[Path, str, str], Compared], path: Path, base: str, head: str) -> Compared | str:
    """The commits `find` finds, or the text of its error."""
    try:
        return find(path, base, head)
    except GitError as exc:
        return text(exc.message)


def test_a_local_review_starts_five_git_processes(
    example: ExampleRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One `rev-parse` (repository, both refs, merge base), one `ls-tree` per commit and the two
    long-lived `cat-file`s: every git process spawned costs the CLI ~5 ms of wall time."""
    log, folder = tmp_path / "git.log", tmp_path / "bin"
    folder.mkdir()
    wrapper = folder / "git"
    real = shutil.which("git")
    assert real
    wrapper.write_text(f'#!/bin/sh\necho "$3 $4" >> {shlex.quote(str(log))}\nexec {shlex.quote(real)} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")

    report = run_local(example.request())[0]

    assert report.reviewed
    assert log.read_text().split("\n")[:-1] == [
        "rev-parse --is-inside-work-tree",
        "ls-tree -r",
        "cat-file --batch-check",
        "cat-file --batch",
        "ls-tree -r",
    ]


@pytest.fixture(scope="module")
def forks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Branches a and b forked from main and each merged into the other (a criss-cross: two
    merge bases), an annotated tag, a branch with a history of its own (`lonely`) and a commit
    found by its message."""
    repo = _repo(tmp_path_factory.mktemp("forks") / "repo")
    (repo / "sub").mkdir()
    (repo / "sub" / "f").write_text("0\n")
    _commit_all(repo, "root")
    for branch in ("a", "b"):
        _git(repo, "checkout", "-q", "-b", branch, "main")
        (repo / branch).write_text("1\n")
        _commit_all(repo, f"{branch} one")
    _git(repo, "checkout", "-q", "a")
    _git(repo, "merge", "-q", "--no-edit", "b", "-m", "b into a")
    _git(repo, "checkout", "-q", "b")
    _git(repo, "merge", "-q", "--no-edit", "a~1", "-m", "a into b")
    for branch in ("a", "b"):
        _git(repo, "checkout", "-q", branch)
        (repo / branch).write_text("2\n")
        _commit_all(repo, f"{branch} two: findable")
    _git(repo, "tag", "-a", "-m", "a tag", "tagged", "a~1")
    _git(repo, "checkout", "-q", "--orphan", "lonely")
    _commit_all(repo, "lonely")
    _git(repo, "checkout", "-q", "a")
    return repo


REFS = ["a", "b", "main", "tagged", "a~1", "HEAD", "b~1^2", "lonely", ":/b two", "refs/heads/b"]
WRONG = ["nope", "-x", "", "a..b", "a...b", "HEAD^{tree}", "HEAD:a", "a^@", "^a", "@{-9}", "tagged^{tag}"]
PAIRS = [
    *((base, head) for base in REFS for head in REFS[:5]),
    *((wrong, "a") for wrong in WRONG),
    *(("a", wrong) for wrong in WRONG),
    *((base, head) for base in WRONG[:3] for head in WRONG[:3]),
]


@pytest.mark.parametrize(("base", "head"), PAIRS)
def test_one_rev_parse_finds_what_the_calls_one_by_one_found(forks: Path, base: str, head: str) -> None:
    """Both commits and the merge base (two of them here: `git merge-base`'s first), or the same
    error: the ref that is wrong, the head's when both are."""
    assert _outcome(_new_way, forks, base, head) == _outcome(_old_way, forks, base, head)


def test_merge_bases_and_abbreviated_ids_match(forks: Path) -> None:
    """With two merge bases, in both directions; with abbreviated commit ids."""
    short = _sha(forks, "b")[:7], _sha(forks, "a~1")[:9]
    for base, head in (("a", "b"), ("b", "a"), short, ("lonely", "a"), ("a", "a")):
        assert _new_way(forks, base, head) == _old_way(forks, base, head), (base, head)
    assert len(_git(forks, "merge-base", "--all", "a", "b").split()) == 2


def test_any_folder_of_a_repository_or_its_bare_clone_and_nothing_else(forks: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    _git(forks, "clone", "-q", "--bare", str(forks), str(bare))
    for folder in (forks / "sub", bare):
        assert _outcome(_new_way, folder, "b", "a") == _outcome(_old_way, folder, "b", "a")
    for folder, error in (
        (forks / ".git", f"{forks / '.git'} is not a git repository"),
        (tmp_path, f"{tmp_path} is not a git repository"),
        (tmp_path / "none", f"{tmp_path / 'none'} is not a folder"),
    ):
        assert _outcome(_new_way, folder, "b", "a") == error
        assert _outcome(_old_way, folder, "b", "a") == error


def _log_message(repo: Path, sha: str) -> str:
    """What `commit_message` gave before it read the commit itself."""
    return _git(repo, "log", "-1", "--format=%B", sha).decode("utf-8", "surrogateescape")


def _raw_commit(repo: Path, headers: bytes, message: bytes) -> str:
    """A commit object written as given (an `encoding` header, a signature's continued lines)."""
    tree = _git(repo, "write-tree").decode().strip()
    person = b"T <t@example.invalid> 1700000000 +0000"
    body = b"tree %s\nauthor %s\ncommitter %s\n%s\n%s" % (tree.encode(), person, person, headers, message)
    return (
        _git(repo, "hash-object", "-t", "commit", "-w", "--stdin", "--literally", stdin=body).decode().strip()
    )


MESSAGES = [
    (b"", b"subject\n\nbody line one\nline two\n"),
    (b"", b"subject\n\ntrailing blank lines\n\n\n\n"),
    (b"", b"no newline at the end"),
    (b"", b"one\n\n\n\ntwo\n\n  indented [skip-sweep]\n"),
    (b"", b""),
    (b"", b"\n"),
    (b"", b"caf\xe9 not UTF-8, no encoding header\n"),
    (b"", b"\xe4\xb8\xad\xe6\x96\x87 UTF-8\n"),
    (b"", b"before a NUL\x00after it\n"),
    (b"encoding ISO-8859-1\n", b"caf\xe9 Latin-1\n\nna\xefve\n"),
    (b"encoding iso-8859-15\n", b"\xa4 euro\n"),
    (b"encoding UTF-8\n", b"caf\xe9 declared UTF-8 but not\n"),
    (b"encoding utf8\n", b"\xe6\x97\xa5\n"),
    (b"encoding Shift_JIS\n", b"\x93\xfa\x96\x7b\n"),
    (b"encoding EUC-JP\n", b"\xff\xff not EUC-JP\n"),
    (b"encoding x-no-such-encoding\n", b"caf\xe9 unknown\n"),
    (b"gpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n", b"signed\n\nbody\n"),
    (b"mergetag object 0000000000000000000000000000000000000000\n type commit\n", b"merged\n"),
]


@pytest.mark.parametrize(("headers", "message"), MESSAGES)
def test_a_commit_message_is_what_git_log_prints(forks: Path, headers: bytes, message: bytes) -> None:
    sha = _raw_commit(forks, headers, message)
    repo = GitRepo.open(forks)
    try:
        assert repo.commit_message(sha) == _log_message(forks, sha)
    finally:
        repo.close()


def test_a_commit_message_read_between_files_asked_ahead(example: ExampleRepo) -> None:
    """The message travels in the same `cat-file --batch` stream as the files asked before it."""
    repo = GitRepo.open(example.path)
    try:
        snapshot = repo.snapshot(example.head)
        paths = repo.list_files(example.head, "")
        snapshot.prefetch(paths)
        assert repo.commit_message(example.head) == _log_message(example.path, example.head)
        assert [snapshot.read(path) for path in paths] == [
            repo.snapshot(example.head).read(path) for path in paths
        ]
    finally:
        repo.close()


def _diff(repo: Path, base: str, head: str) -> list[str]:
    """What `changed_files` gave before it compared the two listings."""
    out = _git(repo, "diff", "--name-only", "--no-relative", "--no-renames", "-z", base, head)
    return [path for path in out.decode("utf-8", "surrogateescape").split("\0") if path]


def _commit_with_submodules(repo: Path, submodules: dict[str, str]) -> str:
    """Every file of the folder and these submodules (path: commit), no other (never checked out)."""
    _git(repo, "add", "-A")
    for path, sha in submodules.items():
        _git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sha},{path}")
    _git(repo, "commit", "-q", "-m", "edit")
    return _sha(repo)


def test_changed_files_are_what_git_diff_lists(tmp_path: Path) -> None:
    """Edits, additions, deletions, renames, mode-only changes, symlinks, type changes (file,
    symlink, folder, submodule), names that sort around `/`, names that are not UTF-8."""
    repo = _repo(tmp_path / "repo")
    files = {
        "same": "s\n", "edit": "1\n", "gone": "g\n", "old-name": "r\n", "run.sh": "x\n",
        "to-link": "t\n", "to-dir": "d\n", "dir/inner": "i\n", "a-b": "1\n", "a.b": "1\n",
        "a/x": "1\n", "a0": "1\n", "deep/er/than/one": "1\n",
    }  # fmt: skip
    for path, content in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(content)
    (repo / "link").symlink_to("same")
    os.link(repo / "same", repo / os.fsdecode(b"caf\xe9"))
    base = _commit_with_submodules(
        repo, {"module": "1" * 40, "module-gone": "2" * 40, "same-module": "5" * 40}
    )

    (repo / "edit").write_text("2\n")
    (repo / "gone").unlink()
    (repo / "old-name").rename(repo / "new-name")
    (repo / "run.sh").chmod(0o755)
    (repo / "to-link").unlink()
    (repo / "to-link").symlink_to("edit")
    (repo / "link").unlink()
    (repo / "link").symlink_to("edit")
    (repo / "to-dir").unlink()
    (repo / "to-dir").mkdir()
    (repo / "to-dir" / "f").write_text("f\n")
    shutil.rmtree(repo / "dir")
    (repo / "dir").write_text("now a file\n")
    for path in ("a-b", "a/x", "a0", "deep/er/than/one"):
        (repo / path).write_text("2\n")
    (repo / os.fsdecode(b"caf\xe9")).unlink()
    (repo / os.fsdecode(b"\xff\xfe")).write_text("new\n")
    (repo / "\u00e9t\u00e9").write_text("new\n")
    (repo / "\uff21").write_text("new\n")  # after b"\xff\xfe" as text, before it as bytes, as git sorts
    head = _commit_with_submodules(
        repo, {"module": "3" * 40, "new-module": "4" * 40, "same-module": "5" * 40}
    )

    git_repo = GitRepo.open(repo)
    listed = _diff(repo, base, head)
    assert {"run.sh", "module", "module-gone", "to-dir/f"} <= set(listed)  # the cases are there
    assert "same-module" in git_repo.tree(head) and "same-module" not in listed
    assert git_repo.changed_files(base, head) == listed
    assert git_repo.changed_files(head, base) == _diff(repo, head, base)
    assert git_repo.changed_files(base, base) == []
    for sha in (base, head):  # and the listing each snapshot lists files from
        names = _git(repo, "ls-tree", "-r", "--full-tree", "--name-only", "-z", sha)
        assert git_repo.snapshot(sha).list_files("") == sorted(
            path for path in names.decode("utf-8", "surrogateescape").split("\0") if path
        )


def _by_path(repo: Path, sha: str, path: str, max_bytes: int) -> bytes | str | None:
    """What reading `sha:path` gave before files were asked for by their blob ids: the bytes of a
    blob (its size alone, over `max_bytes`), None for anything else or nothing."""
    spec = f"{sha}:{path}".encode("utf-8", "surrogateescape")
    answer = _git(repo, "cat-file", "--batch-check", stdin=spec + b"\n").rstrip(b"\n")
    if answer.endswith((b" missing", b" ambiguous")) or answer.split(b" ")[1] != b"blob":
        return None
    size = int(answer.split(b" ")[2])
    return (
        f"oversized {size}"
        if size > max_bytes
        else _git(repo, "cat-file", "blob", spec.decode("utf-8", "surrogateescape"))
    )


def test_a_file_read_by_its_blob_id_is_what_sha_colon_path_gave(tmp_path: Path) -> None:
    """Files, an executable, an empty file, symlinks (to a file, to a folder, dangling), a path
    through a symlinked folder, a folder, a submodule, a missing path, names that are not UTF-8
    or need quoting, and a file over the size limit: each reads as `git cat-file sha:path` did."""
    repo = _repo(tmp_path / "repo")
    first = _commit_all(repo, "a commit the submodule names, so that git finds one by its id")
    files = {"plain": "p\n", "run.sh": "x\n", "empty": "", "dir/inner": "i\n", "big": "b" * 100,
             "with space": "s\n", 'quo"te': "q\n", "caf\u00e9": "c\n", "dir/deeper/leaf": "l\n"}  # fmt: skip
    for path, content in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(content)
    (repo / "run.sh").chmod(0o755)
    (repo / os.fsdecode(b"\xff\xfe")).write_text("not utf-8\n")
    (repo / "to-file").symlink_to("plain")
    (repo / "to-dir").symlink_to("dir")
    (repo / "dangling").symlink_to("nowhere")
    sha = _commit_with_submodules(repo, {"module": first})
    asked = [*files, os.fsdecode(b"\xff\xfe"), "to-file", "to-dir", "dangling", "to-dir/inner", "dir",
             "dir/deeper", "module", "missing", "dir/missing", "plain/under-a-file"]  # fmt: skip

    git_repo = GitRepo(repo, max_bytes=50)
    try:
        read = git_repo.read_many(sha, asked)
        got = {
            path: f"oversized {len(data)}" if len(data or b"") > 50 else data for path, data in read.items()
        }
    finally:
        git_repo.close()

    assert got == {path: _by_path(repo, sha, path, 50) for path in asked}
    assert got["to-file"] == b"plain" and got["big"] == "oversized 100" and got["module"] is None
