"""Rendering the bilingual message catalog (`bot.catalog`): one message in one language.

Values passed in are rendered as plain text for the JSON report, or through the markdown escapes
of `bot.output.textsafe` for the comment, so the same catalog serves both; either way secrets are
cut out of them first, and in markdown nothing outside code links. Filters available inside
messages: `code` (an inline code span in markdown, the bare value in plain text), `num` (thousands
separators), `items` (joined with the language's list separator, `SEPARATORS`;
`items(as_code=True)` puts each item in a code span), `concurrencies` (`[1, 4]` as `C1, C4`) and
`run_list` (`[(concurrency, variant)]` as `C1 · C4 → variant`, each variant a code span; a None
variant shows the concurrency alone).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

import jinja2

from bot import compile_cache
from bot.catalog import LANGS, Msg, catalog
from bot.output import numbers, textsafe

if TYPE_CHECKING:
    from bot.findings import Finding

__all__ = ["LANGS", "LANG_CHOICES", "SEPARATORS", "Safe", "en", "in_languages", "render", "text", "zh"]

#: The languages each `--lang` / `lang` choice shows, English first.
LANG_CHOICES = {"both": ("en", "zh"), "en": ("en",), "zh": ("zh",)}
#: How each language joins a list in running text (templates/glossary.yaml says the same).
SEPARATORS = {"en": ", ", "zh": "、"}


def separator(lang: str) -> str:
    return SEPARATORS.get(lang, SEPARATORS["en"])


class Safe(str):
    """Text that is already escaped for the target format and must not be escaped again."""


def _num(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    numbers.check(value)
    return f"{value:,}"


@cache
def _environment(markdown: bool) -> jinja2.Environment:
    escape = textsafe.md_text if markdown else textsafe.plain

    def finalize(value: Any) -> str:
        if isinstance(value, Safe):
            return value
        if type(value) in (int, float):  # not bool, whose str() is escaped like any other text
            numbers.check(value)
            return str(value)
        if type(value) is not str and type(value) is not Safe:
            numbers.check(value)  # a list or mapping: an integer in it may be too long
        return escape(value)

    def code(value: Any) -> Safe:
        numbers.check(value)
        return Safe(textsafe.md_code(value) if markdown else textsafe.plain(value))

    @jinja2.pass_context
    def join(context: Any, values: Iterable[Any], sep: str | None = None, as_code: bool = False) -> Safe:
        parts = [code(v) if as_code else Safe(finalize(v)) for v in values]
        return Safe((separator(_lang(context)) if sep is None else sep).join(parts))

    @jinja2.pass_context
    def concurrencies(context: Any, values: Iterable[Any]) -> Safe:
        parts = [f"C{v}" if type(v) is int else f"C{finalize(v)}" for v in values]
        return Safe(separator(_lang(context)).join(parts))

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
            label = f"C{finalize(concurrency)}"
            parts.append(f"{label} → {code(variant)}" if variant else label)
        return Safe(" · ".join(parts))

    env.filters.update(code=code, num=num, items=join, concurrencies=concurrencies, run_list=run_list)
    return env


def _lang(context: Any) -> str:
    """The language of the template being rendered (templates are named `message-id/lang`)."""
    return str(context.name or "").rpartition("/")[2]


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


def render(message_id: str, lang: str, params: Mapping[str, Any], *, markdown: bool = False) -> str:
    """One message in one language, as plain text (JSON) or escaped markdown (comment). In markdown
    nothing outside its code spans links: not its values, nor catalog text around a number from
    the PR (`entry #{{ index }}`). An integer too long to show whole is shown shortened
    (`bot.output.numbers`), never a crash."""
    template = _template(message_id, lang, markdown)
    try:
        text = template.render(params)
    except (ValueError, OverflowError, numbers.LongNumber):
        text = template.render(numbers.shown(params, lambda value: long_number(value, lang)))
    return textsafe.no_links(text) if markdown else text


def long_number(value: int, lang: str) -> str:
    """A long integer as plain text in one language: its first and last digits and how many."""
    sign, first, last, count, as_hex = numbers.digits(value)
    message_id = "number-long-hex" if as_hex else "number-long"
    return render(
        message_id, lang, {"sign": "-" if sign else "", "first": first, "last": last, "count": count}
    )


def text(message: Msg, lang: str = "en", *, markdown: bool = False) -> str:
    """A `Msg` in one language; a parameter that is itself a `Msg` (or a list of them, for the
    `items` filter) is rendered first, the same way."""

    def value(v: Any) -> Any:
        if isinstance(v, Msg):
            return Safe(text(v, lang, markdown=markdown))
        if isinstance(v, list) and any(isinstance(item, Msg) for item in v):
            return [value(item) for item in v]
        return v

    return render(message.id, lang, {k: value(v) for k, v in message.params.items()}, markdown=markdown)


def in_languages(message: Msg, lang: str) -> list[str]:
    """A `Msg` as plain text in each language of a `lang` choice (`both`: English, then Chinese)."""
    return [text(message, code) for code in LANG_CHOICES[lang]]


def en(item: Finding) -> str:
    """A finding's message in English, as plain text (the JSON report's `message_en`)."""
    return render(item.message_id, "en", item.params)


def zh(item: Finding) -> str:
    """A finding's message in Chinese, as plain text (the JSON report's `message_zh`)."""
    return render(item.message_id, "zh", item.params)
