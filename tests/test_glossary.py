"""One vocabulary: every message in templates/messages/*.yaml (other topics' new files too) uses the
terms of templates/glossary.yaml, and one list separator per language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from bot.output import messages
from bot.resources import template_dir

GLOSSARY = yaml.safe_load((template_dir() / "glossary.yaml").read_text(encoding="utf-8"))
FILES = sorted((template_dir() / "messages").glob("*.yaml"))
_TAG = re.compile(r"\{\{(.*?)\}\}|\{%(.*?)%\}", re.S)
#: A string literal inside a jinja tag that is not shown as code (`'x' | code`) or compared
#: (`reason == 'image'`): text the reader sees.
_LITERAL = re.compile(r"""(?<!==\s)(?<!in\s)(['"])((?:(?!\1).)*)\1(?!\s*\|\s*code)""")
_CODE_SPAN = re.compile(r"`[^`]*`")


def prose(template: str) -> str:
    """What a reader sees of a template, less values and code: the text outside jinja tags, plus
    the string literals inside them that are not code spans."""
    literals = [m.group(2) for tag in _TAG.finditer(template) for m in _LITERAL.finditer(tag.group(0))]
    return _CODE_SPAN.sub(" ", _TAG.sub(" ", template) + " " + " ".join(literals))


def _messages() -> list[tuple[str, str, dict[str, str]]]:
    return [
        (path.name, message_id, texts)
        for path in FILES
        for message_id, texts in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items()
    ]


def _violations(lang: str) -> list[str]:
    found = []
    for concept, term in GLOSSARY["terms"].items():
        for pattern in (term.get("avoid") or {}).get(lang, []):
            for name, message_id, texts in _messages():
                match = re.search(pattern, prose(texts[lang]))
                if match:
                    found.append(
                        f"{name}: {message_id} ({lang}) says {match.group(0)!r}; "
                        f"the glossary's term for {concept} is {term[lang]!r}"
                    )
    return found


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_messages_use_the_glossary_terms(lang: str) -> None:
    assert _violations(lang) == []


def test_the_glossary_catches_a_replaced_term() -> None:
    """The check itself bites: the terms the glossary replaced are found in prose and in the text
    of a jinja literal, but not in code spans or values."""
    assert re.search("配置项", prose("{{ key | code }} 配置项"))
    assert re.search("审查", prose("{{ '已审查' if done else '' }}"))
    assert not re.search("recipe", prose("{{ 'srt-recipe' | code }} 与 `recipe` {{ recipe }}"))


def test_one_list_separator_per_language() -> None:
    """The catalog's separator is the glossary's, and no template names its own for a list."""
    assert GLOSSARY["separators"] == messages.SEPARATORS
    named = [
        f"{name}: {message_id} ({lang})"
        for name, message_id, texts in _messages()
        for lang in ("en", "zh")
        if re.search(r"""items\(\s*(sep\s*=\s*)?['"](, |、)""", texts[lang])
    ]
    assert named == []


def test_lists_join_with_the_language_separator() -> None:
    en = messages.render("labels-several-primaries", "en", {"labels": ["a", "b"]})
    zh = messages.render("labels-several-primaries", "zh", {"labels": ["a", "b"]})
    assert "a, b" in en
    assert "a、b" in zh


def test_glossary_is_not_a_message_file() -> None:
    assert not (Path(template_dir()) / "messages" / "glossary.yaml").exists()


def test_the_glossary_follows_inferencex_translation_table() -> None:
    """Every row of InferenceX's translation table that names a concept of the glossary is the
    glossary's Chinese term for it (a row with alternatives, `a / b`, is the term as written), and
    the glossary avoids the English word for each in Chinese prose."""
    rows = GLOSSARY["upstream"]
    assert {row["en"].split(" ")[0] for row in rows} >= {
        "sweep",
        "evaluation",
        "launcher",
        "artifact",
        "image",
        "config",
    }
    for row in rows:
        concept = row.get("concept")
        if concept is None:
            continue
        term = GLOSSARY["terms"][concept]
        assert term["zh"] == row["zh"], (
            f"{concept}: the glossary says {term['zh']!r}, InferenceX {row['zh']!r}"
        )
        words = row["en"].split(" (")[0].split(" / ")
        avoided = [w for w in words if any(re.search(p, w) for p in term.get("avoid", {}).get("zh", []))]
        assert avoided, f"{concept}: none of {words} is avoided in Chinese prose"


def test_one_word_per_concept_in_chinese() -> None:
    """The concepts the Chinese catalog used to spell several ways each have one word, and the
    others are refused: finding, change, job, check."""
    one_word = {"finding": "检查结果", "change": "改动", "job": "作业", "check": "检查"}
    for concept, word in one_word.items():
        term = GLOSSARY["terms"][concept]
        assert term["zh"] == word and term["avoid"]["zh"], concept
    assert _violations("zh") == []
