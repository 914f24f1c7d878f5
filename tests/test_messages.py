"""The message catalog: the names each message needs, and one text serving JSON and markdown."""

from __future__ import annotations

import pytest
from jinja2 import meta

from bot import catalog
from bot.output import messages


def _needed(message_id: str) -> set[str]:
    """What jinja says a message's templates need, with the messages they include."""
    env = messages._environment(markdown=False)
    trees = [env.parse(text) for text in catalog.catalog()[message_id].values()]
    needed = set().union(*(meta.find_undeclared_variables(tree) for tree in trees))
    for tree in trees:
        for name in meta.find_referenced_templates(tree):
            needed |= _needed(str(name).partition("/")[0])
    return needed


@pytest.mark.parametrize("message_id", sorted(catalog.catalog()))
def test_variables_are_what_jinja_says_the_templates_need(message_id: str) -> None:
    assert catalog.variables(message_id) == _needed(message_id)


def test_a_long_message_composed_of_short_ones_needs_what_they_need() -> None:
    assert {"reason", "untimed", "gpus"} <= catalog.variables("sweep-total")
    with pytest.raises(KeyError, match="needs reason"):
        catalog.require("digest-offline", {"pin": "p", "image": "i"})


def test_missing_params_fail_where_the_finding_is_made() -> None:
    with pytest.raises(KeyError, match="needs key"):
        catalog.require("changelog-key-not-covered", {})
    with pytest.raises(KeyError, match="not in templates"):
        catalog.require("no-such-message", {})


def test_constant_code_spans_survive_rendering_plain_text_first() -> None:
    """The JSON (plain) rendering of a message must not change how the comment renders it later."""
    plain = messages.render("changelog-pr-link-other", "en", {"link": "a", "expected": "b"})
    markdown = messages.render("changelog-pr-link-other", "en", {"link": "a", "expected": "b"}, markdown=True)
    assert plain.startswith("pr-link is a, but this PR is b (or write the placeholder XXX)")
    assert markdown.startswith("`pr-link` is `a`, but this PR is `b` (or write the placeholder `XXX`)")


#: A template line a maintainer can read in an editor or a diff; a longer message is folded
#: (YAML `>-`) or composed of short messages (`{% include 'other-id/en' %}`).
LINE_LIMIT = 160


def test_no_template_line_is_too_long_to_read() -> None:
    from bot.resources import template_dir

    files = [*sorted((template_dir() / "messages").glob("*.yaml")), template_dir() / "comment.md.j2"]
    long = [
        f"{path.name}:{number} has {len(line)} characters (at most {LINE_LIMIT}: fold it or compose it)"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if len(line) > LINE_LIMIT
    ]
    assert long == []
