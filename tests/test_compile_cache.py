"""The disk cache of compiled message templates (jinja2's own) and of the parsed catalog: used when
it can be, invisible when it cannot."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest
from jinja2.bccache import bc_magic

from bot import compile_cache

ROOT = Path(__file__).resolve().parents[1]
RENDER = """
import json, sys
from bot import catalog
from bot.output import messages
params = dict(key="dsr1-fp8-b200-sglang", count=3, changed=2, evals=1, append_only=False, canary=4,
              canary_topology="8k1k TP8", removed=1, gpu_hours=2, duration=600, gpus=[[8, 3]], timed=3,
              untimed=0, no_gpus=0)
print(json.dumps([messages.render("sweep-key-plan", lang, params, markdown=md)
                  for lang in ("en", "zh") for md in (False, True)]
                 + sorted(catalog.variables("sweep-key-plan"))))
"""


@pytest.fixture
def cache_at(monkeypatch: pytest.MonkeyPatch):
    def use(value: str) -> None:
        monkeypatch.setenv("PRBOT_CACHE_DIR", value)
        compile_cache.directory.cache_clear()

    yield use
    compile_cache.directory.cache_clear()


def _render_in_a_new_process(cache: str, root: Path = ROOT) -> list[str]:
    env = {**os.environ, "PRBOT_CACHE_DIR": cache, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", RENDER], capture_output=True, text=True, env=env, cwd=root, check=True
    )
    return json.loads(done.stdout)


def _entries(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _kinds(folder: Path) -> list[str]:
    return sorted(name.split("-", 1)[0] for name in _entries(folder))


def test_a_second_run_loads_what_the_first_compiled_and_renders_the_same(tmp_path: Path) -> None:
    cold = _render_in_a_new_process(str(tmp_path))
    entries = _entries(tmp_path)
    # plain and markdown for each language (of the message and the short ones it includes), the
    # variables, and the parsed catalog
    assert set(_kinds(tmp_path)) == {"catalog", "markdown", "plain", "variables"}
    assert _kinds(tmp_path).count("catalog") == 1
    assert _render_in_a_new_process(str(tmp_path)) == cold
    assert _entries(tmp_path) == entries  # nothing compiled or written again
    assert cold[0] == (
        "dsr1-fp8-b200-sglang: 3 runs (2 changed by this PR), canary C4 (8k1k TP8); 1 eval job; "
        "1 run removed. GPU-hours: 2 (3 runs × 600 s × 8 GPUs)."
    )
    assert cold[1].startswith("`dsr1-fp8-b200-sglang`: 3 runs") and "canary C4 (8k1k TP8)" in cold[1]
    assert _render_in_a_new_process("") == cold  # no cache at all


def test_an_edited_message_is_compiled_again(tmp_path: Path) -> None:
    """Editing a message's text in the catalog shows the new text on the next run, from the same
    warm cache (the stale compiled template is replaced, not used)."""
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "bot", checkout / "bot", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "templates", checkout / "templates", ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    before = _render_in_a_new_process(str(cache), checkout)
    entries = _entries(cache)
    catalog = checkout / "templates" / "messages" / "sweep.yaml"
    catalog.write_text(
        catalog.read_text(encoding="utf-8").replace("changed by this PR", "edited here"), "utf-8"
    )
    after = _render_in_a_new_process(str(cache), checkout)
    assert before[0].startswith("dsr1-fp8-b200-sglang: 3 runs (2 changed by this PR)")
    assert after[0].startswith("dsr1-fp8-b200-sglang: 3 runs (2 edited here)")
    assert after[1].startswith("`dsr1-fp8-b200-sglang`: 3 runs (2 edited here)")
    assert after[2:] == before[2:]  # the Chinese text and the variables did not change
    plain_en = [name for name in entries if name.startswith("plain-")]
    assert any(_entries(cache)[name] != entries[name] for name in plain_en)  # compiled again, in place
    assert set(_kinds(cache)) == {"catalog", "markdown", "plain", "variables"}
    assert _kinds(cache).count("catalog") == 2  # the edited catalog parsed again, beside the old


def test_damaged_template_entries_are_compiled_again(tmp_path: Path) -> None:
    """Garbage, or an entry cut short just after jinja2's header (which jinja2 alone would fail
    on): the review renders the same, and the entries are written whole again."""
    cold = _render_in_a_new_process(str(tmp_path))
    compiled = sorted(p for p in tmp_path.iterdir() if p.name.startswith(("plain-", "markdown-")))
    compiled[0].write_bytes(b"\x00garbage")
    compiled[1].write_bytes(bc_magic + b"\x00garbage")
    for entry in compiled[2:]:
        entry.write_bytes(entry.read_bytes()[: len(bc_magic)])
    assert _render_in_a_new_process(str(tmp_path)) == cold
    assert all(len(entry.read_bytes()) > 100 for entry in compiled)


def test_a_cache_folder_removed_during_the_run_changes_nothing(tmp_path: Path, cache_at) -> None:
    """The folder was usable when the run started, then went away (cleaned by another process):
    templates are compiled and rendered as usual, only not kept."""
    cache_at(str(tmp_path / "cache"))
    cache = compile_cache.bytecode_cache("plain")
    assert cache is not None
    shutil.rmtree(tmp_path / "cache")
    env = jinja2.Environment(loader=jinja2.DictLoader({"hello": "Hello {{ name }}"}), bytecode_cache=cache)
    assert env.get_template("hello").render(name="prbot") == "Hello prbot"
    assert not (tmp_path / "cache").exists()


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
    assert compile_cache.directory() is None and compile_cache.bytecode_cache("plain") is None
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
    assert compile_cache.directory() is None and compile_cache.bytecode_cache("markdown") is None
    assert compile_cache.get("plain", ("{{ x }}",), lambda: ["made"]) == ["made"]
