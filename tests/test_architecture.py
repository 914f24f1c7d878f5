"""The layers of DESIGN.md §4, checked on the code: every import of a `bot` module points down the
list below (or stays in its own layer), never up. `docs/architecture.md` describes the layers."""

from __future__ import annotations

import ast
from pathlib import Path

BOT = Path(__file__).resolve().parents[1] / "bot"

# Bottom first. A module may import modules of its own layer and of the layers before it.
LAYERS: tuple[tuple[str, ...], ...] = (
    # what every layer speaks: YAML reading, the message catalog's ids, settings, the PR's context
    (
        *("bot", "bot.yamlsafe", "bot.compile_cache", "bot.resources"),
        *("bot.catalog", "bot.settings", "bot.pullrequest"),
    ),
    ("bot.sources",),  # git, the GitHub API, OCI registries: bytes and answers, never judged
    ("bot.model",),  # parsing into typed objects with line numbers
    ("bot.diff", "bot.findings"),  # base against head; what a check can say
    ("bot.checks",),  # one pure module per check id
    ("bot.engine", "bot.report"),  # every check run, within the deadline; the verdict
    ("bot.pipeline",),  # the one seam: a review input in, a report out
    ("bot.output",),  # everything a reader sees, in both languages
    ("bot.cli", "bot.local", "bot.fix", "bot.example", "bot.github_action", "bot.__main__"),  # entry points
)


def _module(path: Path) -> str:
    parts = path.relative_to(BOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> int:
    """The layer of the most specific name that `module` is or is inside of."""
    found = [
        (len(name), index)
        for index, names in enumerate(LAYERS)
        for name in names
        if module == name or module.startswith(name + ".")
    ]
    assert found, f"{module} is in no layer of tests/test_architecture.py"
    return max(found)[1]


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every `bot` module this file imports (at the top, inside functions or for type checking)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names if alias.name.split(".")[0] == "bot"]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "bot":
            for alias in node.names:
                target = f"{node.module}.{alias.name}"
                is_module = (BOT.parent / target.replace(".", "/")).with_suffix(".py").exists() or (
                    BOT.parent / target.replace(".", "/") / "__init__.py"
                ).exists()
                found.append((target if is_module else node.module, node.lineno))
    return found


def test_every_bot_module_imports_only_its_own_layer_or_lower_ones() -> None:
    upward = []
    files = sorted(BOT.rglob("*.py"))
    assert len(files) > 40
    for path in files:
        importer = _module(path)
        for imported, line in _imports(path):
            if _layer(imported) > _layer(importer):
                upward.append(f"{path.relative_to(BOT.parent)}:{line} {importer} imports {imported}")
    assert not upward, "imports that point up:\n" + "\n".join(upward)


def test_the_layer_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The check itself can fail: a source importing the comment renderer is caught."""
    probe = tmp_path / "probe.py"
    probe.write_text("from bot.output.render import MARKER\nimport bot.github_action.run\n", encoding="utf-8")
    imported = [name for name, _line in _imports(probe)]
    assert imported == ["bot.output.render", "bot.github_action.run"]
    assert all(_layer(name) > _layer("bot.sources.github") for name in imported)
