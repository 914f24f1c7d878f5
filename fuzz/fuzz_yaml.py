#!/usr/bin/env python3
"""Fuzz the readers of PR files: the bounded YAML loader and the master / recipe / changelog models.

    python fuzz/fuzz_yaml.py [-max_total_time=30] [other libFuzzer flags] [corpus dirs]
    python fuzz/fuzz_yaml.py --hypothesis [-max_total_time=30]

Each input is one file's bytes. `yamlsafe.load_bytes` may only refuse it with a `YamlProblem`; the
model parsers (which turn every problem into a finding) may not raise at all. Anything else is a
crash. With atheris installed the search is coverage-guided (libFuzzer, seeded with the bundled
example's files); without it, or with `--hypothesis`, hypothesis drives the same target for the
same time. Exit status 0 means nothing was found in the time given.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_SECONDS = 30

try:
    if "--hypothesis" in sys.argv:
        raise ImportError
    import atheris
except ImportError:
    atheris = None

with atheris.instrument_imports(include=["bot"]) if atheris else contextlib.nullcontext():
    from bot.model.changelog import compare
    from bot.model.layout import Layout
    from bot.model.master import MasterFile
    from bot.model.recipe import parse_recipe
    from bot.model.selection import select
    from bot.yamlsafe import YamlProblem, load_bytes

LAYOUT = Layout("")


def target(data: bytes) -> None:
    """Read `data` the way a review reads each kind of file; raise only on a real bug."""
    with contextlib.suppress(YamlProblem):
        load_bytes(data)
    master = MasterFile("configs/amd-master.yaml", data, LAYOUT)
    points = []
    for key in list(master.keys()):
        entry = master.entry(key)
        if entry is not None:
            points += entry.points
    recipe = parse_recipe("recipe.yaml", data)
    for point in points[:8]:
        for conc in point.concurrencies[:4]:
            select(recipe, point, conc)
    half = data[: len(data) // 2]
    compare("perf-changelog.yaml", half, data)
    compare("perf-changelog.yaml", data, data + b"\n- config-keys: [k]\n")


def _seconds(argv: list[str]) -> int:
    for arg in argv:
        if arg.startswith("-max_total_time="):
            return int(arg.split("=", 1)[1])
    return DEFAULT_SECONDS


def _seed(folder: Path) -> None:
    """Start an empty corpus folder from the example PR's files."""
    folder.mkdir(parents=True, exist_ok=True)
    if any(folder.iterdir()):
        return
    for index, path in enumerate(sorted((ROOT / "bot" / "example").rglob("*.yaml"))):
        (folder / f"seed-{index}").write_bytes(path.read_bytes()[:8192])


def run_atheris(argv: list[str]) -> None:
    def one_input(data: bytes) -> None:
        target(data)

    args = [argv[0]]
    if not any(a.startswith("-max_total_time=") for a in argv):
        args.append(f"-max_total_time={DEFAULT_SECONDS}")
    args += ["-timeout=5", "-max_len=8192", "-rss_limit_mb=2048", *argv[1:]]
    corpora = [a for a in argv[1:] if not a.startswith("-")]
    if not corpora:  # libFuzzer adds what it finds to the first corpus folder
        corpora = [tempfile.mkdtemp(prefix="prbot-fuzz-corpus-")]
        args.append(corpora[0])
    for folder in corpora:
        _seed(Path(folder))
    atheris.Setup(args, one_input)
    atheris.Fuzz()


def run_hypothesis(argv: list[str]) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    bits = [
        "- ", ": ", "\n", "  ", "[", "]", "{", "}", ", ", "&a ", "*a", "<<: ", "? ", "!!int ", "!!omap ",
        "'", '"',
        "|", ">", "#", "---\n", "\t", "\x00", "\xff", "config-keys", "base", "override_x", "scenarios",
        "agentic-coding", "search-space", "tp", "conc-list", "conc-start", "conc-end", "benchmark", "env",
        "CONC", "roles", "agg", "args", "1", "8", "-1", "0.6", "null", "true",
    ]  # fmt: skip
    fragments = st.lists(st.sampled_from(bits), max_size=80).map(lambda parts: "".join(parts).encode("utf-8"))

    @settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(data=st.binary(max_size=512) | fragments)
    def check(data: bytes) -> None:
        target(data)

    deadline = time.monotonic() + _seconds(argv)
    rounds = 0
    while time.monotonic() < deadline:
        check()
        rounds += 1
    print(f"fuzz_yaml (hypothesis): {rounds * 200} inputs, no crash")


if __name__ == "__main__":
    argv = [a for a in sys.argv if a != "--hypothesis"]
    if atheris is not None:
        run_atheris(argv)
    else:
        run_hypothesis(argv)
