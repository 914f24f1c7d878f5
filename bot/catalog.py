"""The bilingual message catalog, `templates/messages/*.yaml`: which messages exist and what each
needs. Every layer names its user-visible text by id (a `Msg`, or a finding's `message_id` and
`params`); `bot.output.messages` renders it, in English or Chinese, as plain text or markdown.

Each catalog entry is `message-id: {en: "...", zh: "..."}`, a jinja template per language.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

import yaml

from bot import compile_cache
from bot.resources import template_dir

if TYPE_CHECKING:
    import jinja2

LANGS = ("en", "zh")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Msg:
    """A catalog message, not yet rendered: language and format are chosen by whoever shows it.
    A parameter may itself be a `Msg` (an API error names what was being done)."""

    id: str
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        require(self.id, self.params)


def msg(message_id: str, **params: Any) -> Msg:
    return Msg(message_id, params)


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


@cache
def variables(message_id: str) -> frozenset[str]:
    """The names a message's templates read, in either language, less the loop variables they set,
    with those of the messages it includes (`{% include 'other-id/en' %}`: a long message is
    composed of short ones, which see its values).

    A plain walk of the syntax tree: jinja2.meta.find_undeclared_variables gives the same answer
    for this catalog (a test checks it) but runs a whole code generator, three times slower. Kept
    in the disk cache: parsing the messages a large review uses takes about 1% of it."""
    sources = tuple(catalog()[message_id][lang] for lang in LANGS)

    def walk() -> list[str]:
        from jinja2 import nodes

        names: set[str] = set()
        for source in sources:
            tree = _parser().parse(source)
            loaded = {n.name for n in tree.find_all(nodes.Name) if n.ctx == "load"}
            names |= loaded - {n.name for n in tree.find_all(nodes.Name) if n.ctx == "store"} - {"loop"}
            names |= {
                f"\0{n.template.value}"
                for n in tree.find_all(nodes.Include)
                if isinstance(n.template, nodes.Const)
            }
        return sorted(names)

    names = compile_cache.get("variables", sources, walk)
    found = {name for name in names if not name.startswith("\0")}
    for name in names:
        if name.startswith("\0"):
            found |= variables(name[1:].partition("/")[0])
    return frozenset(found)


@cache
def _parser() -> jinja2.Environment:
    """Only parses: filters are looked up when a template is compiled, in `bot.output.messages`."""
    import jinja2

    return jinja2.Environment()


def require(message_id: str, params: Mapping[str, Any]) -> None:
    """Fail fast (a programming error) when code names a message the catalog does not have, or
    leaves out a value its text needs."""
    if message_id not in catalog():
        raise KeyError(f"message {message_id!r} is not in templates/messages/")
    missing = variables(message_id) - params.keys()
    if missing:
        raise KeyError(f"message {message_id!r} needs {', '.join(sorted(missing))}")
