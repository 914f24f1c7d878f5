"""The bilingual message catalog: `templates/messages/*.yaml`, one jinja template per language.

Each catalog entry is `message-id: {en: "...", zh: "..."}`. Values passed in are rendered as plain
text for the JSON report, or through the markdown escapes of `bot.textsafe` for the comment, so
the same catalog serves both; either way secrets are cut out of them first, and in markdown
nothing outside code links. Filters available inside messages: `code` (an inline code span in
markdown, the bare value in plain text), `num` (thousands separators), `items` (comma-joined;
`items(as_code=True)` puts each item in a code span) and `run_list` (`[(concurrency, variant)]` as
`C1 · C4 → variant`, each variant a code span; a None variant shows the concurrency alone).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

import jinja2
import yaml
from jinja2 import nodes

from bot import compile_cache, textsafe
from bot.resources import template_dir

LANGS = ("en", "zh")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Safe(str):
    """Text that is already escaped for the target format and must not be escaped again."""


def _num(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:,}"


@cache
def _environment(markdown: bool) -> jinja2.Environment:
    escape = textsafe.md_text if markdown else textsafe.plain

    def finalize(value: Any) -> str:
        if isinstance(value, Safe):
            return value
        if type(value) in (int, float):  # not bool, whose str() is escaped like any other text
            return str(value)
        return escape(value)

    def code(value: Any) -> Safe:
        return Safe(textsafe.md_code(value) if markdown else textsafe.plain(value))

    def join(values: Iterable[Any], sep: str = ", ", as_code: bool = False) -> Safe:
        parts = [code(v) if as_code else Safe(finalize(v)) for v in values]
        return Safe(sep.join(parts))

    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        finalize=finalize,
        autoescape=False,
        keep_trailing_newline=False,
        loader=jinja2.FunctionLoader(_source),  # templates are named `message-id/lang`
        # Compiled per mode: compiling folds constant filters (`'x' | code`) into the code.
        bytecode_cache=compile_cache.bytecode_cache("markdown" if markdown else "plain"),
    )

    def num(value: Any) -> Safe:
        is_number = isinstance(value, int | float) and not isinstance(value, bool)
        return Safe(_num(value)) if is_number else Safe(finalize(value))

    def run_list(pairs: Iterable[tuple[Any, Any]]) -> Safe:
        parts = []
        for concurrency, variant in pairs:
            label = f"C{concurrency}" if type(concurrency) is int else f"C{finalize(concurrency)}"
            parts.append(f"{label} → {code(variant)}" if variant else label)
        return Safe(" · ".join(parts))

    env.filters.update(code=code, num=num, items=join, run_list=run_list)
    return env


@cache
def catalog() -> dict[str, dict[str, str]]:
    """All message templates, merged from every catalog file (parsed once, then from the cache:
    parsing takes some 2% of a large review)."""
    folder = template_dir() / "messages"
    files = {path.name: path.read_text(encoding="utf-8") for path in folder.glob("*.yaml")}
    names = sorted(files)
    return compile_cache.get("catalog", (*names, *(files[n] for n in names)), lambda: _merge(names, files))


def _merge(names: list[str], files: dict[str, str]) -> dict[str, dict[str, str]]:
    merged: dict[str, dict[str, str]] = {}
    for name in names:
        entries = yaml.load(files[name], Loader=_LOADER) or {}
        for message_id, texts in entries.items():
            if message_id in merged:
                raise ValueError(f"message id {message_id!r} is defined twice (second time in {name})")
            missing = [lang for lang in LANGS if not texts.get(lang)]
            if missing:
                raise ValueError(f"message {message_id!r} in {name} lacks {', '.join(missing)}")
            merged[message_id] = {lang: texts[lang] for lang in LANGS}
    return merged


def _source(name: str) -> str:
    """The text of the template `message-id/lang`."""
    message_id, lang = name.split("/")
    return catalog()[message_id][lang].strip()


@cache
def _template(message_id: str, lang: str, markdown: bool) -> jinja2.Template:
    template = _environment(markdown).get_template(f"{message_id}/{lang}")
    # jinja copies the globals into every render's context: a dict copies faster than its ChainMap
    # (a sixth of a render, 1.3% of a large review).
    template.globals = dict(template.globals)
    return template


@cache
def variables(message_id: str) -> frozenset[str]:
    """The names a message's templates read, in either language, less the loop variables they set.

    A plain walk of the syntax tree: jinja2.meta.find_undeclared_variables gives the same answer
    for this catalog (a test checks it) but runs a whole code generator, three times slower. Kept
    in the disk cache: parsing the messages a large review uses takes about 1% of it."""
    sources = tuple(catalog()[message_id][lang] for lang in LANGS)

    def walk() -> list[str]:
        names: set[str] = set()
        for source in sources:
            tree = _environment(markdown=False).parse(source)
            loaded = {n.name for n in tree.find_all(nodes.Name) if n.ctx == "load"}
            names |= loaded - {n.name for n in tree.find_all(nodes.Name) if n.ctx == "store"} - {"loop"}
        return sorted(names)

    return frozenset(compile_cache.get("variables", sources, walk))


def require(message_id: str, params: Mapping[str, Any]) -> None:
    """Fail fast (a programming error) when code names a message the catalog does not have, or
    leaves out a value its text needs."""
    if message_id not in catalog():
        raise KeyError(f"message {message_id!r} is not in templates/messages/")
    missing = variables(message_id) - params.keys()
    if missing:
        raise KeyError(f"message {message_id!r} needs {', '.join(sorted(missing))}")


def render(message_id: str, lang: str, params: Mapping[str, Any], *, markdown: bool = False) -> str:
    """One message in one language, as plain text (JSON) or escaped markdown (comment). In markdown
    nothing outside its code spans links: not its values, nor catalog text around a number from
    the PR (`entry #{{ index }}`)."""
    text = _template(message_id, lang, markdown).render(params)
    return textsafe.no_links(text) if markdown else text
