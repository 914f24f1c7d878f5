"""The documentation holds together: every relative link in the README, docs/ and bench/README.md
points to a file that exists and, where it names a heading, to a heading that file has."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.mdcheck import to_html

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").glob("*.md")])


class _Links(HTMLParser):
    """The `href`s of rendered HTML, and the ids GitHub gives its headings."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.headings: list[str] = []
        self._heading: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a" and dict(attrs).get("href"):
            self.hrefs.append(str(dict(attrs)["href"]))
        if re.fullmatch(r"h[1-6]", tag):
            self._heading = []

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._heading.append(data)

    def handle_endtag(self, tag: str) -> None:
        if re.fullmatch(r"h[1-6]", tag) and self._heading is not None:
            self.headings.append("".join(self._heading))
            self._heading = None


def _parsed(page: Path) -> _Links:
    links = _Links()
    links.feed(to_html(page.read_text(encoding="utf-8")))
    return links


def _anchors(page: Path) -> set[str]:
    """Heading anchors as GitHub makes them: lower case, punctuation dropped, spaces to dashes,
    a repeated heading numbered -1, -2, …"""
    seen: dict[str, int] = {}
    anchors = set()
    for heading in _parsed(page).headings:
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if not count else f"{slug}-{count}")
    return anchors


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for href in _parsed(page).hrefs:
        if re.match(r"[a-z]+:", href):  # https:, mailto:
            continue
        path, _, anchor = href.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{href}: no such file")
        elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
            broken.append(f"{href}: no such heading")
    assert not broken, broken


def test_the_readme_is_the_front_door() -> None:
    """About 10 KB: what prbot is, the two set-up commands, local use, the action; links to the rest.
    (12.5 KB: the example workflow it shows spells out the `/review` rule, #25.)"""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode()) < 12_500
    assert "pip install . && prbot demo" in readme and "pip install '.[test]' && pytest" in readme
    for page in ("docs/checks.md", "docs/action.md", "docs/security.md", "docs/architecture.md"):
        assert f"]({page}" in readme, page


def test_the_readme_usage_lines_list_the_flags_each_command_takes() -> None:
    """README's `prbot demo …` line once offered flags the demo does not have, and the other way round."""
    import re

    from bot.cli import _parser

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    usage = readme.split("All the commands and their flags:", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    lines = re.split(r"\n(?=prbot )", usage.strip())
    commands = _parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for line in lines:
        name = line.split()[1]
        documented = set(re.findall(r"--[a-z-]+", line.split("#")[0]))
        taken = {o for a in commands[name]._actions for o in a.option_strings if o.startswith("--")}
        assert documented == taken - {"--help"}, name


def test_action_yml_says_how_it_reads_the_pr() -> None:
    action = (ROOT / "action.yml").read_text(encoding="utf-8")
    description = action.split("description: >-", 1)[1].split("author:", 1)[0]
    assert "with git" in description and "through the GitHub API" not in description
