"""The one parse of a shell file (`bot.model.bash`), shared by the launcher resolution
(`bot.model.scripts`) and the scripts check's reader (`bot.model.shell`): one tree per distinct
bytes, one set of bounds, and what either reader does with a file beyond them."""

from __future__ import annotations

import contextlib
import random
import subprocess
import time
from pathlib import Path

import pytest

from bot.local import LocalRequest, run_local
from bot.model import bash, scripts, shell
from bot.sources.snapshot import Oversized
from tests.conftest import commit, replace

LAUNCHER = b"""#!/usr/bin/env bash
export HF_HUB_CACHE_MOUNT="/raid/hf_hub_cache/"
SCRIPT_FW="benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi355x_${FRAMEWORK}.sh"
SCRIPT_FALLBACK="benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi355x.sh"
if [[ -f "$SCRIPT_FW" ]]; then
    SCRIPT="$SCRIPT_FW"
else
    SCRIPT="$SCRIPT_FALLBACK"
fi
docker run --rm --network=host \\
    -v "$GITHUB_WORKSPACE:/workspace" \\
    "$IMAGE" bash "$SCRIPT"
"""
FILES = frozenset({"benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x.sh"})
RUN = scripts.RunVars("dsr1", "fp8", "sglang", "none", agentic=False, multinode=False)
ENV = RUN.env("mi355x-amds_0")


class _Counting:
    """tree-sitter's parser, counting the files it is given."""

    def __init__(self, parser: object) -> None:
        self.parser = parser
        self.parsed: list[bytes] = []

    def parse(self, data: bytes) -> object:
        self.parsed.append(data)
        return self.parser.parse(data)  # type: ignore[attr-defined]


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> _Counting:
    bash.parse(b"true\n")  # the parser exists
    trees = bash._Trees()
    trees.parser = _Counting(bash._TREES.parser)  # type: ignore[assignment]
    monkeypatch.setattr(bash, "_TREES", trees)
    return trees.parser  # type: ignore[return-value]


def test_a_launcher_both_readers_read_is_parsed_once(counting: _Counting) -> None:
    """The launcher resolution follows it for two runs, the scripts check reads it: one parse."""
    first = scripts.follow("runners/launch_mi355x-amds.sh", LAUNCHER, ENV, FILES)
    again = scripts.follow(
        "runners/launch_mi355x-amds.sh", LAUNCHER, RUN._replace(precision="fp4").env("x"), FILES
    )
    read = shell.parse(LAUNCHER)
    assert first.script == "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x.sh" and first.exists
    assert again.tried == (
        "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x_sglang.sh",
        "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x.sh",
    )
    (docker,) = [c for c in read.commands if c.texts[:1] == ["docker"]]
    assert docker.line == 10 and docker.end_line == 12
    assert counting.parsed == [LAUNCHER]
    # The same bytes read at the other ref are the same file: still one parse.
    shell.parse(bytes(bytearray(LAUNCHER)))
    assert len(counting.parsed) == 1


def test_a_launcher_beyond_the_bounds_is_unresolved_never_read_as_empty(counting: _Counting) -> None:
    """An `Oversized` launcher (a source knew its size only) or one over the limit names no
    script, as one bash could not be followed through; neither reaches tree-sitter."""
    big = LAUNCHER + b"# padding\n" * (bash.MAX_BYTES // 10)
    for data in (Oversized(5_000_000, "0" * 40), big):
        launch = scripts.follow("runners/launch_mi355x-amds.sh", data, ENV, FILES)
        assert launch.unresolved and launch.script is None and launch.launcher_exists
    with pytest.raises(shell.ScriptTooLarge, match=f"limit {bash.MAX_BYTES}"):
        shell.parse(big)
    assert counting.parsed == []


def test_a_file_of_too_many_syntax_nodes_is_refused_by_both_readers_once(counting: _Counting) -> None:
    many = b"a;" * (bash.MAX_BYTES // 2)  # 131,072 commands: more than 400,000 nodes
    for _ in range(2):
        with pytest.raises(shell.ScriptTooLarge, match=f"more than {bash.MAX_NODES} syntax nodes"):
            shell.parse(many)
        assert scripts.follow("runners/launch_x.sh", many, ENV, FILES).unresolved
    assert counting.parsed == [many]  # the refusal is kept, not parsed again per run


def test_the_largest_hostile_files_parse_quickly() -> None:
    """The size limit bounds tree-sitter's time: the worst inputs tried, at the limit."""
    rng = random.Random(7)
    size = bash.MAX_BYTES
    hostile = {
        "random bytes": bytes(rng.randrange(256) for _ in range(size)),
        "nested parentheses": b"((" * (size // 2),
        "nested substitutions": b'"$(' * (size // 3),
        "unclosed expansions": b"${a:-" * (size // 5),
        "if without fi": b"if true; then " * (size // 14),
    }
    for name, data in hostile.items():
        started = time.monotonic()
        with contextlib.suppress(bash.ScriptTooLarge):
            bash.parse(data[:size])
        assert time.monotonic() - started < 5, name


def test_the_trees_kept_are_bounded_by_their_sources_size(monkeypatch: pytest.MonkeyPatch) -> None:
    trees = bash._Trees()
    monkeypatch.setattr(bash, "_TREES", trees)
    monkeypatch.setattr(bash, "CACHE_BYTES", 64 * 1024)
    files = [LAUNCHER + f"# {i}\n".encode() + b"#" * 10_000 + b"\n" for i in range(20)]
    for data in files:
        bash.parse(data)
    assert trees.size <= 64 * 1024 < sum(len(f) for f in files)
    assert list(trees.found) == files[-len(trees.found) :]  # the most recent ones
    # A file dropped from the cache is parsed again, to the same result.
    launch = scripts.follow("runners/launch_mi355x-amds.sh", files[0], ENV, FILES)
    assert launch.script == "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x.sh"


def test_both_readers_unquote_a_word_as_bash_does() -> None:
    """Quotes and backslash escapes: outside quotes a backslash escapes any character, inside
    "…" only `"`, `\\`, `$`, a backquote and a newline; '…' keeps everything."""
    script = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x.sh"
    for line, starts in (
        (b"bash benchmarks/single_node/fixed_seq_len/dsr1_\\fp8_mi355x.sh\n", script),
        (b"bash 'benchmarks/single_node/fixed_seq_len/'\"dsr1_fp8_mi355x.sh\"\n", script),
        (
            b'bash "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x\\.sh"\n',
            script.replace(".sh", "\\.sh"),
        ),
        (b'bash "\\$GITHUB_WORKSPACE/benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x.sh"\n', None),
    ):
        launch = scripts.follow("runners/launch_mi355x-amds.sh", line, ENV, FILES)
        assert launch.script == starts, line
        (command,) = shell.parse(line).commands
        assert command.texts[1] == (starts or "$GITHUB_WORKSPACE/" + script), line


def test_a_review_parses_each_shell_file_once(
    counting: _Counting, runfiles_history: Path, tmp_path: Path
) -> None:
    """A PR that edits a real launcher: the launcher resolution follows it at both refs for every
    run of its machines and the scripts check reads it at the head; each distinct file is parsed
    once, the edited launcher's head too."""
    repo = tmp_path / "ix"
    subprocess.run(["git", "clone", "-q", str(runfiles_history), str(repo)], check=True)
    launcher = "runners/launch_mi355x-amds.sh"
    if not (repo / launcher).exists():
        pytest.skip(f"{launcher} is not at this head")
    base = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout
    head = commit(
        repo, {launcher: replace("#!/usr/bin/env bash\n", "#!/usr/bin/env bash\nexport NCCL_DEBUG=WARN\n")}
    )
    report = run_local(LocalRequest(str(repo), base.strip(), head, offline=True))[0]
    assert [f.params["path"] for f in report.findings if f.message_id == "launch-shared-changed"] == [
        launcher
    ]
    edited = (repo / launcher).read_bytes()
    assert counting.parsed.count(edited) == 1
    assert len(counting.parsed) == len(set(counting.parsed)) > 10  # every launcher at both refs
