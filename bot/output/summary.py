"""The texts of an action run besides the review itself: the job summary, the notes about the
run placed above the review, and the comment shown when the review could not complete, which says
that nothing was checked."""

from __future__ import annotations

from collections.abc import Iterable

from bot import __version__
from bot.catalog import Msg
from bot.findings import CHECK_IDS
from bot.output.messages import LANG_CHOICES, text
from bot.output.render import COMMENT, MARKER, Target, layout, render_comment, render_review
from bot.report import Report

#: GitHub accepts at most 1 MiB (of UTF-8) of job summary per step; stay clearly below it.
SUMMARY_LIMIT = 1_000_000
SUMMARY = Target("summary", SUMMARY_LIMIT, room=16_384, in_bytes=True)


def full_review(report: Report, lang: str, base: str, head: str) -> str:
    """The review for the job summary, cut only at the summary's own (much larger) limit."""
    return render_comment(report, lang=lang, base=base, head=head, target=SUMMARY)


def review_texts(report: Report, lang: str, base: str, head: str) -> tuple[str, str]:
    """The comment and the job summary of one review. A cut comment points to the job summary
    only when the summary holds the whole review; else to the JSON report."""
    full = render_review(report, lang=lang, base=base, head=head, target=SUMMARY)
    rest = "report" if full.cut else "summary"
    return render_comment(report, lang=lang, base=base, head=head, target=COMMENT, rest=rest), full.text


def _notes_block(notes: Iterable[Msg], lang: str) -> str:
    lines = [f"> ⚠️ {text(note, code, markdown=True)}" for note in notes for code in LANG_CHOICES[lang]]
    return "\n>\n".join(lines) + "\n\n" if lines else ""


def _fitting_notes(notes: list[Msg], lang: str, room: int, target: Target) -> str:
    """The notes block with as many of the notes as fit in `room` (the review keeps room for them)."""
    kept = list(notes)
    while kept and target.size(_notes_block(kept, lang)) > room:
        kept.pop()
    return _notes_block(kept, lang)


def with_notes(comment: str, notes: list[Msg], lang: str, limit: int) -> str:
    """The comment with notes placed right under its marker line, within `limit` characters."""
    if not notes:
        return comment
    block = _fitting_notes(notes, lang, limit - len(comment), COMMENT)
    marker, _, rest = comment.partition("\n")
    if marker != MARKER:
        return block + comment
    return f"{MARKER}\n{block}{rest}"


def summary_text(body: str, notes: list[Msg], lang: str) -> str:
    """The job summary: notes about this run first, then the review as in the comment."""
    return _fitting_notes(notes, lang, SUMMARY.limit - SUMMARY.size(body), SUMMARY) + body


def failure_comment(reason: Msg, lang: str, base: str = "", head: str = "", *, ran: bool = False) -> str:
    """The comment of a review that could not run: why, and that none of the checks ran (the
    `failure` macro of the comment template); or, `ran`, of one whose checks ran but whose result
    could not be shown: why, and nothing else (the `unshown` macro). Either way it names the head
    it is about, so that no earlier verdict stays up for it."""
    parts = [MARKER, "\n"]
    for code in LANG_CHOICES[lang]:  # a few lines each: both languages unfolded, one under the other
        shown = base or "?", head or "?"
        if ran:
            body = layout().unshown(code, text(reason, code, markdown=True), __version__, *shown)
        else:
            reason_text = text(Msg("action-failed-reason", {"reason": reason}), code, markdown=True)
            body = layout().failure(code, reason_text, CHECK_IDS, __version__, *shown)
        parts.append(body)
    return "".join(parts)
