"""Render a Report as the bilingual markdown review comment (templates/comment.md.j2)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import jinja2

from bot import __version__, messages, textsafe
from bot.findings import Finding, Severity
from bot.report import Report
from bot.resources import template_dir

COMMENT_LIMIT = 65_536
MARKER = "<!-- prbot:sticky -->"
LANG_CHOICES = {"both": ("en", "zh"), "en": ("en",), "zh": ("zh",)}


def _t(lang: str, message_id: str, **params: Any) -> str:
    return messages.render(message_id, lang, params, markdown=True)


def _msg(lang: str, f: Finding) -> str:
    return messages.render(f.message_id, lang, f.params, markdown=True)


def _loc(f: Finding) -> str:
    return textsafe.md_code(f"{f.file}:{f.line}" if f.line else f.file)


@cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir())),
        autoescape=False,
        trim_blocks=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["aspect"] = lambda aspect, lang: _t(lang, f"ui-aspect-{aspect}")
    env.filters["setlist"] = lambda values: "[" + ", ".join(str(v) for v in values) + "]"
    return env.get_template("comment.md.j2")


def render_comment(
    report: Report, *, lang: str = "both", base: str = "", head: str = "", limit: int | None = COMMENT_LIMIT
) -> str:
    """The full comment, cut to `limit` (GitHub's comment size; None: uncut, for the job summary)
    with a pointer to the job summary when it had to be cut."""
    groups: dict[str, list[Finding]] = {str(s): [] for s in Severity}
    sweep: list[Finding] = []
    for f in report.findings:
        if f.check == "sweep-plan":
            sweep.append(f)
        elif not (f.check == "consistency" and f.message_id.startswith("consistency-published")):
            groups[str(f.severity)].append(f)
    blocking, warnings = len(groups["blocking"]), len(groups["warning"])
    if not report.reviewed:
        title = "ui-title-error"
    else:
        title = "ui-title-blocking" if blocking else "ui-title-warnings" if warnings else "ui-title-clean"
    stream = _template().generate(
        langs=LANG_CHOICES[lang],
        title_id=title,
        counts={"blocking": blocking, "warning": warnings},
        keys=report.changed_keys,
        published=report.published_sets,
        groups=groups,
        sweep=sweep,
        t=_t,
        msg=_msg,
        loc=_loc,
        code=textsafe.md_code,
        fence=textsafe.fence_for,
        version=__version__,
        base=base,
        head=head,
    )
    if limit is None:
        return "".join(stream)
    return fit(_prefix(stream, limit), lang, limit)


def _prefix(stream: Iterator[str], limit: int) -> str:
    """The rendered text up to just past `limit` characters (all of it if shorter): what `fit`
    needs. Rendering stops there, so a huge review renders only the findings that will be shown."""
    parts: list[str] = []
    size = 0
    for part in stream:
        parts.append(part)
        size += len(part)
        if size > limit:
            break
    return "".join(parts)


def fit(text: str, lang: str, limit: int = COMMENT_LIMIT) -> str:
    """Cut a comment at a line boundary so that it fits, closing an open <details> block."""
    if len(text) <= limit:
        return text
    notes = "\n\n" + "\n\n".join(f"> {_t(code, 'ui-truncated')}" for code in LANG_CHOICES[lang]) + "\n"
    budget = limit - len(notes) - len("\n</details>\n")
    cut = text[:budget].rsplit("\n", 1)[0]
    while True:  # close a code block cut open (its fence may be long: it outgrows any backtick run)
        fence = _open_fence(cut)
        closer = "\n" + fence if fence else ""
        if len(cut) + len(closer) <= budget:
            break
        cut = cut[: budget - len(closer)].rsplit("\n", 1)[0]
    cut += closer
    # Only the template writes tags at the start of a line; PR text sits inside list items.
    if len(re.findall(r"^<details>", cut, re.M)) > len(re.findall(r"^</details>", cut, re.M)):
        cut += "\n</details>\n"
    return cut + notes


def _open_fence(text: str) -> str | None:
    """The fence of a fenced code block left open at the end of `text`, if any."""
    fence = None
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        run = re.match(r"`{3,}", stripped)
        if fence is not None:
            if run and len(run.group(0)) >= len(fence) and not stripped.strip("`").strip():
                fence = None
        elif run and "`" not in stripped[run.end() :]:
            fence = run.group(0)
    return fence
