"""What GitHub would render outside code: the yardstick of the output-safety tests.

`outside_code` removes fenced blocks and inline code spans the way CommonMark pairs them (a run
of N backticks is closed only by the next run of exactly N; a backslash-escaped backtick opens
nothing), so whatever is left is text GitHub turns into mentions, HTML and markdown. `leaks`
lists what in that text a PR author could have injected. `parse_html` and `live_links` go by
the renderer itself (cmark-gfm, which GitHub uses): the tags it produced, and what would link.
"""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser

# The only HTML the comment template itself writes.
TEMPLATE_TAGS = {
    "<!-- prbot:sticky -->",
    "<details>",
    "</details>",
    "<summary>",
    "</summary>",
    "<sub>",
    "</sub>",
}
_FENCE = re.compile(r"^ {0,3}(`{3,})")
_MENTION = re.compile(r"@[A-Za-z0-9]")
_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][^>\n]*>?")


def _runs(line: str, start: int) -> int:
    end = start
    while end < len(line) and line[end] == "`":
        end += 1
    return end


def strip_spans(line: str) -> str:
    """One line with its inline code spans replaced by a space."""
    out: list[str] = []
    i = 0
    while i < len(line):
        if line[i] != "`":
            out.append(line[i])
            i += 1
            continue
        backslashes = len(line[:i]) - len(line[:i].rstrip("\\"))
        end = _runs(line, i)
        if backslashes % 2:  # an escaped backtick is literal; the rest of its run may open a span
            out.append("`")
            i += 1
            continue
        width, k, close = end - i, end, None
        while k < len(line):
            if line[k] == "`":
                stop = _runs(line, k)
                if stop - k == width:
                    close = stop
                    break
                k = stop
            else:
                k += 1
        if close is None:
            out.append(line[i:end])
            i = end
        else:
            out.append(" ")
            i = close
    return "".join(out)


def outside_code(markdown: str) -> str:
    """The markdown with fenced code blocks and inline code spans removed."""
    kept: list[str] = []
    fence: str | None = None
    for line in markdown.split("\n"):
        stripped = line.lstrip(" ")
        opener = re.match(r"`{3,}", stripped)
        if fence is not None:
            if opener and len(opener.group(0)) >= len(fence) and not stripped.strip("`").strip():
                fence = None
            continue
        if opener and "`" not in stripped[len(opener.group(0)) :]:
            fence = opener.group(0)
            continue
        kept.append(strip_spans(line))
    return "\n".join(kept)


def leaks(markdown: str) -> list[str]:
    """Mentions and HTML outside code that the template did not write itself."""
    text = outside_code(markdown)
    found = [m.group(0) for m in _MENTION.finditer(text)]
    found += [m.group(0) for m in _TAG.finditer(text) if m.group(0) not in TEMPLATE_TAGS]
    return found


def is_closed_span(span: str) -> bool:
    """True when `span` is exactly one inline code span: no run inside can close it early."""
    opener = re.match(r"`+", span)
    if not opener:
        return False
    width = len(opener.group(0))
    if not span.endswith("`" * width) or len(span) < 2 * width:
        return False
    closer = re.search(r"`+$", span)
    if closer is None or len(closer.group(0)) != width:
        return False
    inner = span[width : len(span) - width]
    return all(len(run) != width for run in re.findall(r"`+", inner)) and "\n" not in span


# --- what GitHub's renderer makes of it ------------------------------------------------------------

# What GitHub links in the text of rendered HTML outside code (after cmark-gfm, on each text node):
# issue references (`#7`, `acme/other#5`, `GH-7`) and commit SHAs (7 or more hex digits).
_REFERENCE = re.compile(r"#\d|(?<![0-9a-z_])gh-\d|(?<![0-9a-z_])[0-9a-f]{7,}(?![0-9a-z_])", re.IGNORECASE)


def to_html(markdown: str) -> str:
    """The markdown as GitHub renders it: cmark-gfm with GitHub's extensions (autolinks among
    them), raw HTML kept as GitHub keeps `<details>` and `<sub>`."""
    import cmarkgfm
    from cmarkgfm.cmark import Options

    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


#: The elements a reader finds the parts of the comment by: headlines, section headings, folds.
TITLES = ("h3", "h4", "summary")


class _Html(HTMLParser):
    """The tags of rendered HTML, its links, its text outside `<code>` and `<pre>`; the comment's
    `outline` in order (each heading and `<summary>` as `(tag, text)`, each table as
    `("table", "")`); its tables as rows of cell texts; and `visible`, all the text a reader sees
    without opening any `<details>` (their summaries included)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: Counter[str] = Counter()
        self.links: list[str] = []
        self.texts: list[str] = []
        self.outline: list[tuple[str, str]] = []
        self.tables: list[tuple[bool, list[list[str]]]] = []  # (visible, rows)
        self.visible: list[str] = []
        self._in_code = 0
        self._closed = 0  # depth of `<details>` around the text, not counting the one whose summary it is
        self._title: tuple[str, list[str]] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        self._in_code += tag in ("code", "pre")
        if tag == "a":
            self.links.append(dict(attrs).get("href") or "")
        if tag in TITLES:
            self._title = (tag, [])
        self._closed += tag == "details"
        self._closed -= tag == "summary"
        if tag == "table":
            self.outline.append(("table", ""))
            self.tables.append((self._closed <= 0, []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        self.tags["/" + tag] += 1
        self._in_code -= tag in ("code", "pre")
        if self._title is not None and tag == self._title[0]:
            self.outline.append((tag, "".join(self._title[1]).strip()))
            self._title = None
        self._closed -= tag == "details"
        self._closed += tag == "summary"
        if tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1][1]:
            self.tables[-1][1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if not self._in_code:
            self.texts.append(data)
        if self._title is not None:
            self._title[1].append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._closed <= 0:
            self.visible.append(data)


def parse_html(markdown: str) -> _Html:
    parser = _Html()
    parser.feed(to_html(markdown))
    parser.close()
    return parser


def live_links(markdown: str) -> list[str]:
    """Everything in the rendered markdown that GitHub shows as a link or resolves as a reference:
    the `<a>` elements (the comment template writes none) and, in the text outside code, issue
    references and commit SHAs."""
    html = parse_html(markdown)
    return html.links + [m.group(0) for text in html.texts for m in _REFERENCE.finditer(text)]


def halves(markdown: str) -> tuple[str, str]:
    """The English and the Chinese review of a bilingual comment, each its first screen (the two
    stand one under the other at the top, before a `---` rule) and its body (the Chinese one folded
    under `中文`)."""
    screens, _, bodies = markdown.partition("\n---\n")
    at = screens.index("\n### ", screens.index("### ") + 1)
    english_body, _, chinese_body = bodies.partition("<details><summary>中文</summary>")
    return screens[:at] + "\n" + english_body, screens[at:] + "\n" + chinese_body
