"""The two commits of a pull request fetched with git into a bare repository, for the action.

`fetch_pull` runs, with a timeout each and a configuration of its own (no system, global or user
git configuration is read): a shallow, blobless `git fetch --depth=1 --filter=blob:none` of the
merge base and the head, then one batched fetch of the blobs of the files the caller wants (the
action: the data paths of `bot.model.layout.read_by_review` and its settings file). The review then
reads the commits through `bot.sources.git.GitRepo`, as in local mode; any other file is fetched
when first read. Nothing is checked out and nothing from the pull request is run.

The token reaches git only through the environment of the fetching git processes: a credential
helper given on the command line prints `$PRBOT_GIT_TOKEN` (the variable's name is in the argument,
never its value). It is never in a URL, an argument, a log line or a file, and the bare repository
keeps no remote URL, so no later git process can reach the network.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from bot.catalog import msg
from bot.sources.git import GitRepo, GitSnapshot
from bot.sources.snapshot import SourceError

TOKEN_VARIABLE = "PRBOT_GIT_TOKEN"
#: Seconds each git process may take.
TIMEOUT = 120.0
# Prints the credentials git asks for; the shell expands the variable inside git's child process.
_CREDENTIAL_HELPER = (
    f'!f() {{ test "$1" = get && echo username=x-access-token && echo "password=${TOKEN_VARIABLE}"; }}; f'
)
# Passed through to git so that a runner behind a proxy or with its own certificates still works.
_PASSED_THROUGH = (
    "PATH",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "GIT_SSL_CAINFO",
)


class FetchError(SourceError):
    """The commits could not be fetched with git; `message` says why, in one line."""


def remote_url(server: str, repository: str) -> str:
    """`<server>/<owner>/<name>.git`; the server must be a plain http(s) address, without credentials."""
    server = server.rstrip("/")
    parts = urlsplit(server)
    if parts.scheme not in ("https", "http") or not parts.hostname or "@" in parts.netloc or parts.query:
        raise FetchError(msg("action-git-server-url"))
    return f"{server}/{repository}.git"


@dataclass
class FetchedRepo:
    """A bare repository under a temporary folder holding the two commits; `close` removes it."""

    folder: Path
    url: str
    token: str
    timeout: float = TIMEOUT
    repo: GitRepo = field(init=False)
    data_blobs: int = 0  # how many blobs the batch under the data paths fetched
    _unfetched: dict[str, dict[str, str]] = field(default_factory=dict)  # sha -> path -> blob id
    _submodules: dict[str, set[str]] = field(default_factory=dict)  # sha -> paths

    def __post_init__(self) -> None:
        self.repo = GitRepo(self.folder / "repo.git")

    def git(self, *args: str, stdin: str = "") -> str:
        """One git process in the bare repository, isolated from the runner's configuration."""
        home = self.folder / "home"
        env = {name: os.environ[name] for name in _PASSED_THROUGH if name in os.environ}
        env.update(
            HOME=str(home),
            XDG_CONFIG_HOME=str(home),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_TERMINAL_PROMPT="0",
            LC_ALL="C",
            **{TOKEN_VARIABLE: self.token},
        )
        server = "{0.scheme}://{0.netloc}/".format(urlsplit(self.url))
        settings = {
            "credential.helper": "",  # no other helper is asked
            f"credential.{server}.helper": _CREDENTIAL_HELPER,  # the token for this server only
            "http.followRedirects": "false",  # nor for a server it would redirect to
            "remote.origin.url": self.url,  # only for this process: the repository keeps no remote URL
            "fetch.negotiationAlgorithm": "noop",  # nothing is here to negotiate with
        }
        command = ["git", "-C", str(self.repo.path)]
        for key, value in settings.items():
            command += ["-c", f"{key}={value}"]
        command += args
        try:
            done = subprocess.run(
                command, input=stdin.encode(), capture_output=True, env=env, timeout=self.timeout, check=False
            )
        except FileNotFoundError:
            raise FetchError(msg("action-git-missing")) from None
        except OSError as exc:  # git not runnable here, a folder not writable, …
            raise FetchError(msg("action-git-os-error", detail=_os_detail(exc))) from None
        except subprocess.TimeoutExpired:
            raise FetchError(msg("action-git-timeout", command=args[0], seconds=int(self.timeout))) from None
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise FetchError(msg("action-git-failed", command=args[0], detail=lines[-1] if lines else ""))
        return done.stdout.decode("utf-8", "surrogateescape")

    def init(self) -> None:
        """An empty bare repository whose `origin` is a promisor remote of blobless fetches."""
        (self.folder / "home").mkdir()
        self.repo.path.mkdir()
        self.git("init", "-q", "--bare", "--template=", ".")
        for key, value in (
            ("core.repositoryformatversion", "1"),
            ("extensions.partialClone", "origin"),
            ("remote.origin.promisor", "true"),
            ("remote.origin.partialCloneFilter", "blob:none"),
        ):
            self.git("config", key, value)

    def fetch(self, oids: list[str], *, commits: bool = False) -> None:
        """Blobs, or commits (shallow, with their trees only), in one fetch."""
        if oids:
            shallow = ["--depth=1"] if commits else []
            self.git(
                "fetch",
                "-q",
                "--no-tags",
                "--no-write-fetch-head",
                "--recurse-submodules=no",
                "--filter=blob:none",
                *shallow,
                "--stdin",
                "origin",
                stdin="".join(f"{oid}\n" for oid in oids),
            )

    def fetch_data(self, shas: list[str], wanted: Callable[[str], bool]) -> None:
        """List each commit's tree and fetch the blobs of the files `wanted` names in one batch."""
        oids: set[str] = set()
        for sha in shas:
            blobs, self._submodules[sha] = self._entries(sha)
            oids.update(oid for path, oid in blobs.items() if wanted(path))
            self._unfetched[sha] = {p: oid for p, oid in blobs.items() if not wanted(p)}
        self.fetch(sorted(oids))
        self.data_blobs = len(oids)

    def _entries(self, sha: str) -> tuple[dict[str, str], set[str]]:
        """path -> blob id of every file of a commit, and the paths of its submodules (the trees
        are here; no blob is needed to list them)."""
        blobs: dict[str, str] = {}
        submodules: set[str] = set()
        for entry in self.git("ls-tree", "-r", "-z", "--full-tree", sha).split("\0"):
            if not entry:
                continue  # after the last NUL
            info, _, path = entry.partition("\t")
            _mode, kind, oid = info.split(" ")
            if kind == "blob":
                blobs[path] = oid
            elif kind == "commit":
                submodules.add(path)
        return blobs, submodules

    def is_submodule(self, sha: str, path: str) -> bool:
        """A submodule is no file; git is not asked for its commit, which no remote here has."""
        return path in self._submodules.get(sha, set())

    def complete(self, sha: str, paths: list[str]) -> None:
        """Fetch, in one batch, the blobs of these paths that are not here yet."""
        missing = self._unfetched.get(sha, {})
        oids = sorted({missing.pop(p) for p in paths if p in missing})
        if not oids:
            return
        for other in self._unfetched.values():  # the same blob at the other commit is here now too
            for path in [p for p, oid in other.items() if oid in oids]:
                del other[path]
        self.fetch(oids)

    def snapshot(self, sha: str) -> FetchedSnapshot:
        return FetchedSnapshot(self, self.repo.snapshot(sha))

    def changed_files(self, base: str, head: str) -> list[str]:
        return self.repo.changed_files(base, head)

    def close(self) -> None:
        self.repo.close()
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class FetchedSnapshot:
    """One commit of a `FetchedRepo` (implements `bot.sources.snapshot.Snapshot`): a `GitSnapshot`
    whose files outside the data paths are fetched before git is asked for them."""

    fetched: FetchedRepo
    inner: GitSnapshot

    @property
    def label(self) -> str:
        return self.inner.label

    def read(self, path: str) -> bytes | None:
        if self.fetched.is_submodule(self.inner.sha, path):
            return None
        self.fetched.complete(self.inner.sha, [path])
        return self.inner.read(path)

    def prefetch(self, paths: list[str]) -> None:
        files = [p for p in paths if not self.fetched.is_submodule(self.inner.sha, p)]
        self.fetched.complete(self.inner.sha, files)
        self.inner.prefetch(files)

    def list_files(self, prefix: str) -> list[str]:
        return self.inner.list_files(prefix)


def fetch_pull(
    server: str,
    repository: str,
    base: str,
    head: str,
    token: str,
    *,
    temp: str | None = None,
    wanted: Callable[[str], bool],
    timeout: float = TIMEOUT,
) -> FetchedRepo:
    """Fetch commits `base` and `head` of `owner/name` into a new folder under `temp` (a system
    temporary folder if None or unusable) with, in one batch, the blobs of the files `wanted` names (the
    others come one batch at a time when they are read); raises FetchError."""
    url = remote_url(server, repository)
    try:
        fetched = FetchedRepo(_temp_folder(temp), url, token, timeout)
        try:
            fetched.init()
            commits = list(dict.fromkeys([base, head]))
            fetched.fetch(commits, commits=True)
            fetched.fetch_data(commits, wanted)
        except BaseException:
            fetched.close()
            raise
    except OSError as exc:  # the REST path still runs: the caller falls back on any FetchError
        raise FetchError(msg("action-git-os-error", detail=_os_detail(exc))) from None
    return fetched


def _os_detail(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _temp_folder(temp: str | None) -> Path:
    """A new folder under `temp`, or under the system's temporary folder when `temp` is unset or
    unusable: a runner before v2.331 hands a Docker action the host's `RUNNER_TEMP`, which does not
    exist in the container, and a self-hosted runner's folders may belong to another user."""
    if temp:
        with contextlib.suppress(OSError):
            return Path(tempfile.mkdtemp(prefix="prbot-git-", dir=temp))
    return Path(tempfile.mkdtemp(prefix="prbot-git-"))
