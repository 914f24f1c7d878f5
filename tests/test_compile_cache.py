"""The disk cache of compiled message templates: used when it can be, invisible when it cannot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot import compile_cache

ROOT = Path(__file__).resolve().parents[1]
RENDER = """
import json, sys
from bot import messages
params = dict(key="dsr1-fp8-b200-sglang", count=3, changed=2, evals=1, append_only=False, canary=4,
              removed=[8], runs=[(4, None), (16, "override_tp8_c16")], gpu_hours=2, duration=600, gpus=[8],
              untimed=0)
print(json.dumps([messages.render("sweep-key-plan", lang, params, markdown=md)
                  for lang in ("en", "zh") for md in (False, True)]
                 + sorted(messages.variables("sweep-key-plan"))))
"""


@pytest.fixture
def cache_at(monkeypatch: pytest.MonkeyPatch):
    def use(value: str) -> None:
        monkeypatch.setenv("PRBOT_CACHE_DIR", value)
        compile_cache.directory.cache_clear()

    yield use
    compile_cache.directory.cache_clear()


def _render_in_a_new_process(cache: str) -> list[str]:
    env = {**os.environ, "PRBOT_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", RENDER], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)


def test_a_second_run_loads_what_the_first_compiled_and_renders_the_same(tmp_path: Path) -> None:
    cold = _render_in_a_new_process(str(tmp_path))
    entries = sorted(p.name for p in tmp_path.iterdir())
    # plain and markdown for each language, the variables, and the parsed catalog
    assert len(entries) == 6 and sum(name.startswith("catalog-") for name in entries) == 1
    assert _render_in_a_new_process(str(tmp_path)) == cold
    assert sorted(p.name for p in tmp_path.iterdir()) == entries  # nothing compiled again
    assert cold[0].startswith(
        "dsr1-fp8-b200-sglang: 3 runs (2 changed by this PR), canary C4: C4 · C16 → override_tp8_c16"
    )
    assert cold[1].startswith("`dsr1-fp8-b200-sglang`: 3 runs") and "`override_tp8_c16`" in cold[1]
    assert _render_in_a_new_process("") == cold  # no cache at all


def test_values_come_back_without_being_made_again(tmp_path: Path, cache_at) -> None:
    cache_at(str(tmp_path))
    made: list[int] = []

    def make() -> list[str]:
        made.append(1)
        return ["a", "b"]

    assert compile_cache.get("variables", ("x",), make) == ["a", "b"]
    assert compile_cache.get("variables", ("x",), make) == ["a", "b"]
    assert compile_cache.get("variables", ("y",), make) == ["a", "b"]
    assert len(made) == 2


def test_a_damaged_entry_is_made_again(tmp_path: Path, cache_at) -> None:
    cache_at(str(tmp_path))
    compile_cache.get("variables", ("x",), lambda: ["a"])
    (entry,) = tmp_path.iterdir()
    entry.write_bytes(b"\x00garbage")
    assert compile_cache.get("variables", ("x",), lambda: ["b"]) == ["b"]
    assert compile_cache.get("variables", ("x",), lambda: ["c"]) == ["b"]


def test_a_file_where_the_folder_should_be_turns_the_cache_off(tmp_path: Path, cache_at) -> None:
    """The cache folder cannot be made: every value is simply made, and nothing fails."""
    (tmp_path / "cache").write_text("not a folder")
    cache_at(str(tmp_path / "cache"))
    assert compile_cache.directory() is None
    assert compile_cache.get("variables", ("x",), lambda: ["a"]) == ["a"]


def test_a_folder_others_can_write_to_is_not_used(tmp_path: Path, cache_at) -> None:
    """Its entries are code that a review would run: another user must not be able to plant any."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    cache_at(str(shared))
    assert compile_cache.directory() is None
    assert compile_cache.get("variables", ("x",), lambda: ["a"]) == ["a"]
    assert list(shared.iterdir()) == []


def test_an_empty_setting_turns_the_cache_off(tmp_path: Path, cache_at) -> None:
    cache_at("")
    assert compile_cache.directory() is None
    assert compile_cache.get("plain", ("{{ x }}",), lambda: ["made"]) == ["made"]
