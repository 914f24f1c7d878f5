"""Render a Report as the bilingual markdown review comment (templates/comment.md.j2), cut to fit.

A review too long for GitHub's limit is cut by importance, never by position. The headline and
every language stay; a finding is shown in all the languages or in none; findings are kept in this
order while they fit: blocking, warnings, "Not checked", the published sets, "What was checked",
notes, the sweep plan, and within each section the first finding of every kind of message before
the second of any, so that a flood of one kind cannot push another out. Once cutting, a finding
longer than 1/32 of the limit is shortened. Each section says how many of its findings are left
out, and a note at the end of each language says where the whole review is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import jinja2

from bot import __version__, compile_cache, messages, textsafe
from bot.findings import Finding
from bot.report import Report
from bot.resources import template_dir

COMMENT_LIMIT = 65_536
MARKER = "<!-- prbot:sticky -->"
LANG_CHOICES = {"both": ("en", "zh"), "en": ("en",), "zh": ("zh",)}
#: Once a review is cut, one finding takes at most this fraction of the limit.
ITEM_SHARE = 32
#: Sections in the order they are shown, and in the order they are kept when the review is cut.
SHOWN = ("published", "blocking", "warning", "verified", "info", "unverified", "sweep")
KEPT = ("blocking", "warning", "unverified", "published", "verified", "info", "sweep")
HEADINGS = {
    "blocking": "ui-blocking",
    "warning": "ui-warnings",
    "verified": "ui-checked",
    "info": "ui-notes",
    "unverified": "ui-not-checked",
    "sweep": "ui-sweep",
}
ALWAYS_HEADED = ("verified", "unverified", "sweep")
SUGGESTED = ("blocking", "warning")  # the sections whose findings show their suggested change


@dataclass(frozen=True)
class Target:
    """Where a review goes: GitHub's size limit there, measured the way GitHub measures it, and
    the room kept free for the notes about the run that the action puts above the review."""

    name: str  # "comment" or "summary": the note saying that it was cut names it
    limit: int
    room: int = 0
    in_bytes: bool = False

    def size(self, text: str) -> int:
        return len(text.encode("utf-8", "surrogatepass")) if self.in_bytes else len(text)


#: A comment: GitHub counts characters.
COMMENT = Target("comment", COMMENT_LIMIT, room=4_096)


@dataclass(frozen=True)
class Rendered:
    text: str
    cut: bool  # something was left out or shortened


def _t(lang: str, message_id: str, **params: Any) -> str:
    return messages.render(message_id, lang, params, markdown=True)


def _loc(f: Finding) -> str:
    return textsafe.md_code(f"{f.file}:{f.line}" if f.line else f.file)


@cache
def _layout() -> Any:
    """The template's macros, one per piece of the comment."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir())),
        bytecode_cache=compile_cache.bytecode_cache("layout"),  # compiling it takes ~50 ms
        autoescape=False,
        trim_blocks=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["aspect"] = lambda aspect, lang: _t(lang, f"ui-aspect-{aspect}")
    env.filters["setlist"] = lambda values: "[" + ", ".join(str(v) for v in values) + "]"
    env.globals.update(t=_t, code=textsafe.md_code, fence=textsafe.fence_for)
    return env.get_template("comment.md.j2").module


def _sections(report: Report) -> dict[str, list[Any]]:
    """The findings by section (published sets as `(key, sets)`), in the report's order."""
    sections: dict[str, list[Any]] = {name: [] for name in SHOWN}
    sections["published"] = list(report.published_sets.items())
    for f in report.findings:
        if f.check == "sweep-plan":
            sections["sweep"].append(f)
        elif not (f.check == "consistency" and f.message_id.startswith("consistency-published")):
            sections[str(f.severity)].append(f)
    return sections


def _kind_first(entries: Sequence[Any]) -> list[int]:
    """The indices of `entries`, the first finding of every message id before the second of any."""
    seen: Counter[str] = Counter()
    ranks = []
    for index, entry in enumerate(entries):
        kind = entry.message_id if isinstance(entry, Finding) else ""
        ranks.append((seen[kind], index))
        seen[kind] += 1
    return [index for _, index in sorted(ranks)]


class _Review:
    """The pieces of one review in the chosen languages, each rendered once, when first needed."""

    def __init__(self, report: Report, langs: tuple[str, ...], base: str, head: str) -> None:
        self.langs = langs
        self.sections = _sections(report)
        self.keys = report.changed_keys
        self.footer = {"version": __version__, "base": base, "head": head}
        self.counts = {"blocking": len(self.sections["blocking"]), "warning": len(self.sections["warning"])}
        if not report.reviewed:
            self.title_id = "ui-title-error"
        elif self.counts["blocking"]:
            self.title_id = "ui-title-blocking"
        else:
            self.title_id = "ui-title-warnings" if self.counts["warning"] else "ui-title-clean"
        self._entries: dict[tuple[str, int, str, int | None], tuple[str, bool]] = {}
        self._texts: dict[tuple[str, int, str], str] = {}

    @property
    def findings(self) -> int:
        return sum(len(entries) for name, entries in self.sections.items() if name != "published")

    def entry(self, name: str, index: int, lang: str, limit: int | None = None) -> tuple[str, bool]:
        """One finding as a list item (a published set as its line), and whether it was shortened
        to `limit` characters (a suggestion longer than that is left out)."""
        if limit is not None and not self._longer(name, index, lang, limit):
            limit = None  # nothing to shorten: the same item as uncut
        key = (name, index, lang, limit)
        if key not in self._entries:
            self._entries[key] = self._entry(name, index, lang, limit)
        return self._entries[key]

    def _text(self, name: str, index: int, lang: str) -> str:
        """A finding's message, rendered once whatever the limits it is then measured against."""
        key = (name, index, lang)
        if key not in self._texts:
            entry = self.sections[name][index]
            self._texts[key] = messages.render(entry.message_id, lang, entry.params, markdown=True)
        return self._texts[key]

    def _suggestion(self, name: str, index: int) -> str | None:
        entry = self.sections[name][index]
        return textsafe.redact(entry.suggestion) if entry.suggestion and name in SUGGESTED else None

    def _longer(self, name: str, index: int, lang: str, limit: int) -> bool:
        """Whether the finding's message or suggestion is longer than `limit`."""
        if name == "published":
            return False
        return len(self._text(name, index, lang)) > limit or len(self._suggestion(name, index) or "") > limit

    def _entry(self, name: str, index: int, lang: str, limit: int | None) -> tuple[str, bool]:
        entry = self.sections[name][index]
        if name == "published":
            key, sets = entry
            return _layout().published(lang, key, sets, len(self.sections["published"]) > 1), False
        text = self._text(name, index, lang)
        suggestion = self._suggestion(name, index)
        shortened = False
        if limit is not None and len(text) > limit:
            text, shortened = textsafe.cut_markdown(text, limit, _t(lang, "ui-shortened")), True
        if limit is not None and suggestion is not None and len(suggestion) > limit:
            suggestion, shortened = None, True
        check = "" if name == "sweep" else entry.check
        return _layout().finding(lang, check, self._where(name, entry), text, suggestion), shortened

    @staticmethod
    def _where(name: str, f: Finding) -> str:
        if not f.file or name in ("verified", "unverified", "sweep"):
            return ""
        return _loc(f) if f.line or name != "info" else ""

    def compose(
        self,
        chosen: dict[str, list[int]],
        item_limit: int | None,
        note: dict[str, Any] | None,
        entry: Callable[[str, int, str], str],
    ) -> str:
        """The comment showing the `chosen` entries of each section (`entry` renders one) and
        counting the others, its changed-keys line shortened to `item_limit`; with the note saying
        that it was cut when `note` has its params."""
        layout = _layout()
        parts = [MARKER, "\n"]
        for lang in self.langs:
            folded = lang == "zh" and len(self.langs) > 1
            keys = layout.keys_changed(lang, self.keys)
            if item_limit is not None:
                keys = textsafe.cut_markdown(keys, item_limit, _t(lang, "ui-shortened"))
            parts += [layout.opening(folded), layout.headline(lang, self.title_id, self.counts), keys, "\n"]
            for name in SHOWN:
                entries = self.sections[name]
                if name in HEADINGS and (entries or name in ALWAYS_HEADED):
                    parts.append(layout.heading(lang, HEADINGS[name]))
                parts += [entry(name, index, lang) for index in chosen[name]]
                hidden = len(entries) - len(chosen[name])
                if hidden:
                    parts.append((layout.more_keys if name == "published" else layout.more)(lang, hidden))
                elif name == "unverified" and not entries:
                    parts.append(layout.nothing(lang))
            parts.append(layout.foot(lang, **self.footer))
            if note is not None:
                parts.append(layout.cut(lang, note))
            parts.append(layout.closing(folded))
        return "".join(parts)

    def everything(self) -> str:
        """The review uncut."""
        every = {name: list(range(len(entries))) for name, entries in self.sections.items()}
        return self.compose(every, None, None, lambda *at: self.entry(*at)[0])


def _blank(_name: str, _index: int, _lang: str) -> str:
    return ""


def render_review(
    report: Report,
    *,
    lang: str = "both",
    base: str = "",
    head: str = "",
    target: Target | None = COMMENT,
    rest: str = "report",
) -> Rendered:
    """The review for `target` (None: uncut). When cut, its note says where the rest is: `rest` is
    "summary" when the job summary of the same run holds the whole review, else "report" (the
    JSON report, which always has every finding)."""
    review = _Review(report, LANG_CHOICES[lang], base, head)
    if target is None:
        return Rendered(review.everything(), cut=False)
    whole = _whole(review, target)
    if whole is not None:
        return Rendered(whole, cut=False)
    item_limit = target.limit // ITEM_SHARE
    worst = {"target": target.name, "rest": rest, "hidden": review.findings, "shortened": review.findings}
    chosen = _fill(review, target, item_limit, worst)
    shown = [(name, index) for name in chosen if name != "published" for index in chosen[name]]
    shortened = [at for at in shown if any(review.entry(*at, lang, item_limit)[1] for lang in review.langs)]
    note = {**worst, "hidden": review.findings - len(shown), "shortened": len(shortened)}
    text = review.compose(chosen, item_limit, note, lambda *at: review.entry(*at, item_limit)[0])
    return Rendered(text, cut=True)


def _whole(review: _Review, target: Target) -> str | None:
    """The uncut review, or None when it does not fit `target`: rendering stops as soon as its
    findings alone are known to be too long."""
    budget, used = target.limit - target.room, 0
    for name in KEPT:
        for index in range(len(review.sections[name])):
            used += sum(target.size(review.entry(name, index, lang)[0]) for lang in review.langs)
            if used > budget:
                return None
    text = review.everything()
    return text if target.size(text) <= budget else None


def _fill(review: _Review, target: Target, item_limit: int, worst: dict[str, Any]) -> dict[str, list[int]]:
    """The entries of each section to show: taken in the order of `KEPT`, kinds first, until the
    next one does not fit beside the layout (measured with every count at its largest)."""
    chosen: dict[str, list[int]] = {name: [] for name in SHOWN}
    frame = review.compose(chosen, item_limit, worst, _blank)
    left = target.limit - target.room - target.size(frame)
    for name in KEPT:
        for index in _kind_first(review.sections[name]):
            cost = sum(target.size(review.entry(name, index, lang, item_limit)[0]) for lang in review.langs)
            if cost > left:
                return {name: sorted(indices) for name, indices in chosen.items()}
            left -= cost
            chosen[name].append(index)
    return {name: sorted(indices) for name, indices in chosen.items()}


def render_comment(report: Report, **options: Any) -> str:
    """The review comment, cut to its target: `render_review`'s text (same options)."""
    return render_review(report, **options).text
