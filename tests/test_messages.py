"""The message catalog: the names each message needs, and one text serving JSON and markdown."""

from __future__ import annotations

import pytest
from jinja2 import meta

from bot import catalog
from bot.output import messages


@pytest.mark.parametrize("message_id", sorted(catalog.catalog()))
def test_variables_are_what_jinja_says_the_templates_need(message_id: str) -> None:
    env = messages._environment(markdown=False)
    texts = catalog.catalog()[message_id].values()
    expected = set().union(*(meta.find_undeclared_variables(env.parse(text)) for text in texts))
    assert catalog.variables(message_id) == expected


def test_missing_params_fail_where_the_finding_is_made() -> None:
    with pytest.raises(KeyError, match="needs key"):
        catalog.require("changelog-key-not-covered", {})
    with pytest.raises(KeyError, match="not in templates"):
        catalog.require("no-such-message", {})


def test_constant_code_spans_survive_rendering_plain_text_first() -> None:
    """The JSON (plain) rendering of a message must not change how the comment renders it later."""
    plain = messages.render("changelog-pr-link-other", "en", {"link": "a", "expected": "b", "gate": "merge"})
    markdown = messages.render(
        "changelog-pr-link-other", "en", {"link": "a", "expected": "b", "gate": "merge"}, markdown=True
    )
    assert plain.startswith("pr-link is a, but this PR is b (or write the placeholder XXX)")
    assert markdown.startswith("`pr-link` is `a`, but this PR is `b` (or write the placeholder `XXX`)")
