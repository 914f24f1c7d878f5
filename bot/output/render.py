"""Render a Report as the bilingual markdown review comment (templates/comment.md.j2), cut to fit.

The comment (DESIGN.md §3): first, in each language one under the other (English, then Chinese,
neither folded), the first screen (`bot.output.screen`: the verdict, counting what was not
checked; what the PR changes, a line per key; the one next step). Then a table of the changed
keys (published set as `+C2 −C76`, sweep runs, GPU-hours, a mark for the key's worst finding);
blocking findings and warnings; "What changed", the `changes` view (the settings changed at
every run once, then a table of the runs grouped by what changed there; one line per key when
there are many keys);
then "What was checked", notes, "Not checked" and the sweep plan, each folded in `<details>` when
long and left out when empty. The same again in Chinese, folded under `中文`.

A review too long for GitHub's limit is cut by importance, never by position. The first screens
and every language stay; a finding is shown in all the languages or in none; entries are kept in this
order while they fit: blocking, warnings, "Not checked", the key table's rows, "What was checked",
notes, the sweep plan, the changes view, and within each section the first finding of every kind
of message before the second of any, so that a flood of one kind cannot push another out. Once
cutting, a finding longer than 1/32 of the limit is shortened. Each section says how many of its
entries are left out, and a note at the end of each language says where the whole review is.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, NamedTuple

import jinja2

from bot import __version__, compile_cache
from bot.catalog import Msg
from bot.checks import changes_view, runlabels
from bot.checks.changes_view import KeyChanges, RunChange, Setting
from bot.findings import Finding, Severity
from bot.output import changelog_draft, messages, numbers, screen, textsafe
from bot.output.messages import Safe
from bot.report import Report
from bot.resources import template_dir

COMMENT_LIMIT = 65_536
MARKER = "<!-- prbot:sticky -->"
#: Once a review is cut, one finding takes at most this fraction of the limit.
ITEM_SHARE = 32
#: Sections in the order they are shown, and in the order they are kept when the review is cut.
SHOWN = ("keys", "blocking", "warning", "changes", "verified", "info", "unverified", "sweep")
KEPT = ("blocking", "warning", "unverified", "keys", "verified", "info", "sweep", "changes")
HEADINGS = {
    "blocking": "ui-blocking",
    "warning": "ui-warnings",
    "changes": "ui-changes",
    "verified": "ui-checked",
    "info": "ui-notes",
    "unverified": "ui-not-checked",
    "sweep": "ui-sweep",
}
SUGGESTED = ("blocking", "warning")  # the sections whose findings show their suggested change
#: Sections folded in `<details>` when they have more than FOLD_AT entries.
FOLDABLE = ("changes", "verified", "info", "unverified", "sweep")
FOLD_AT = 3
#: Rows of the changed-keys table; the other keys are counted in one line below it.
KEY_ROWS = 10
#: Up to this many changed keys get a table of their runs; more get one line each.
DETAILED_KEYS = 3
#: What one cell of the changes view shows at most; the JSON report has everything.
VALUE_CHARS = 40
LIST_ITEMS = 3
SETTINGS_SHOWN = 12
RUN_LABELS = 10
VARIANTS_SHOWN = 3
ROWS_PER_KEY = 12
MARKS = {"blocking": "❌", "warning": "⚠️", "": "✅"}


class Target(NamedTuple):
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


class Rendered(NamedTuple):
    text: str
    cut: bool  # something was left out or shortened


def _t(lang: str, message_id: str, **params: Any) -> str:
    return messages.render(message_id, lang, params, markdown=True)


def _loc(f: Finding) -> str:
    return textsafe.md_code(f"{f.file}:{f.line}" if f.line else f.file)


def _cell(markdown: str) -> str:
    """Markdown placed in a table cell: a pipe, even inside a code span, would end the cell."""
    return markdown.replace("|", "\\|")


#: Between two CJK characters, or a space before one (`GPU 时间`).
_CJK = "\u3000-\u303f\u3400-\u9fff\uff00-\uffef"
_CJK_GAP = re.compile(f"(?<=[{_CJK}])(?=[{_CJK}])| (?=[{_CJK}])")
WORD_JOINER, NO_BREAK_SPACE = "\u2060", "\u00a0"


def unbroken(text: str) -> str:
    """A short Chinese word that a narrow table column must not break (`扫描运行数`, not `扫描运
    / 行数`): a browser may break a line between any two CJK characters, and GitHub keeps neither
    `<nobr>` nor a style, so a WORD JOINER goes between them and a space before one is a no-break
    space. English text is returned as it is."""
    return _CJK_GAP.sub(lambda m: NO_BREAK_SPACE if m.group() else WORD_JOINER, text)


@cache
def layout() -> Any:
    """The template's macros, one per piece of the comment."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir())),
        bytecode_cache=compile_cache.bytecode_cache("layout"),  # compiling it takes ~50 ms
        autoescape=False,
        trim_blocks=True,  # a line holding only a block tag leaves no line behind
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["cell"] = _cell
    env.filters["unbroken"] = unbroken
    env.globals.update(t=_t, code=textsafe.md_code, fence=textsafe.fence_for, marks=MARKS)
    return env.get_template("comment.md.j2").module


# --- the changes view: what each run serves at base and at head ------------------------------------


def _value(value: Any) -> str:
    """A setting's value as one line of text (a list or mapping as compact JSON)."""
    if isinstance(value, str):
        return textsafe.clip(value)
    return textsafe.clip(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))


def _short(text: str, before: bool = False, after: bool = False) -> str:
    """`text` within VALUE_CHARS, with an ellipsis where something was left out (`before` it,
    `after` it, or cut here)."""
    if len(text) > VALUE_CHARS:
        text, after = text[: VALUE_CHARS - 1], True
    return ("…" if before else "") + text + ("…" if after else "")


def _common(one: str, other: str) -> int:
    """How many characters the two strings have in common at their start."""
    return next(
        (i for i, (a, b) in enumerate(zip(one, other, strict=False)) if a != b), min(len(one), len(other))
    )


#: An image reference: repository, then `:tag` or `@digest`.
_IMAGE = re.compile(r"(?P<repo>[\w.-]+(?::\d+)?(?:/[\w.-]+)+)(?P<sep>[:@])(?P<tag>[\w.:-]+)")
#: How much of a long tag or digest is kept before and around where the two differ.
TAG_CHARS = 24


def _images(base: str, head: str) -> tuple[str, str] | None:
    """Two image references as shown side by side, when both are one: a long tag its start and
    the part where the two differ (`v0.5.5-c…-20260811`), a long digest its start, and, when that
    is still too long, the repository path the two share elided to its last part (`…/sglang`).
    None for other values."""
    found = [_IMAGE.fullmatch(value) for value in (base, head)]
    if found[0] is None or found[1] is None:
        return None
    tags = [m["tag"] for m in found]
    start, keep = _common(*tags), TAG_CHARS // 3
    if max(map(len, tags)) > TAG_CHARS and start > TAG_CHARS // 2:
        # the tag's start, then from a little before where the two differ
        tags = [_short(tag[:keep] + "…" + tag[start - keep :]) for tag in tags]
    else:
        tags = [tag if len(tag) <= TAG_CHARS else tag[: TAG_CHARS - 1] + "…" for tag in tags]
    repos = [m["repo"] for m in found]
    long = max(len(repo) + 1 + len(tag) for repo, tag in zip(repos, tags, strict=True)) > VALUE_CHARS
    if long and repos[0] == repos[1] and "/" in repos[0]:
        repos = ["…/" + repo.rsplit("/", 1)[1] for repo in repos]
    shown = [f"{repo}{m['sep']}{tag}" for repo, m, tag in zip(repos, found, tags, strict=True)]
    return shown[0], shown[1]


def _pair(old: Any, new: Any) -> tuple[str | None, str | None]:
    """Two values as shown side by side (None where absent): two image references with their
    repository and tag readable; two long strings from a little before where they start to differ
    to where they stop differing, so that a 300-character JSON argument shows its change."""
    base, head = (None if v is None else _value(v) for v in (old, new))
    if (
        isinstance(old, str)
        and isinstance(new, str)
        and base
        and head
        and max(len(base), len(head)) > VALUE_CHARS
    ):
        images = _images(base, head)
        if images is not None:
            return images
    if base is None or head is None or max(len(base), len(head)) <= VALUE_CHARS:
        return (None if base is None else _short(base)), (None if head is None else _short(head))
    start = _common(base, head)
    tail = _common(base[start:][::-1], head[start:][::-1])
    start = 0 if start <= VALUE_CHARS * 3 // 4 else start - VALUE_CHARS // 4  # else the change is cut off
    return (
        _short(base[start : len(base) - tail], before=start > 0, after=tail > 0),
        _short(head[start : len(head) - tail], before=start > 0, after=tail > 0),
    )


def _items(lang: str, values: Sequence[Any]) -> str:
    shown = [textsafe.md_code(_short(_value(v))) for v in values[:LIST_ITEMS]]
    return messages.separator(lang).join(shown + (["…"] if len(values) > LIST_ITEMS else []))


def _setting(lang: str, setting: Setting) -> str:
    """One changed setting: its name (the last part of its path; for the runner's record, its path
    in the record, `the runner's slurm.partition`), then how it changed."""
    path = setting.path
    field = changelog_draft.runner_field(path)
    name = textsafe.md_code(field if field is not None else path.rsplit(".", 1)[-1])
    if field is not None:
        name = _t(lang, "draft-runner-setting", name=Safe(name))
    added, removed = setting.added, setting.removed
    short = all(len(_value(side)) <= VALUE_CHARS for side in (setting.base, setting.head))
    if added is not None and removed is not None and not short:  # short lists: old → new
        changes = [
            Safe(_t(lang, f"ui-list-{side}", count=len(values), items=Safe(_items(lang, values))))
            for side, values in (("added", added), ("removed", removed))
            if values
        ]
        return _t(lang, "ui-setting-list", name=Safe(name), changes=changes)
    base, head = _pair(setting.base, setting.head)
    if base is None:
        return _t(lang, "ui-setting-new", name=Safe(name), head=head)
    if head is None:
        return _t(lang, "ui-setting-gone", name=Safe(name), base=base)
    return _t(lang, "ui-setting-changed", name=Safe(name), base=base, head=head)


def _settings(lang: str, settings: Sequence[Setting], limit: int) -> str:
    """The first `limit` settings, joined (an ellipsis for the others)."""
    shown = [_setting(lang, s) for s in settings[:limit]]
    return " · ".join(shown + (["…"] if len(settings) > limit else []))


def _shared(runs: Sequence[RunChange]) -> bool:
    """Whether a concurrency runs in several configs among a key's `runs`: then every run is named
    with its config (`C64 (TP4)`, `C64 (TP8)`), as in the checks' messages."""
    concurrencies = [run.concurrency for run in runs]
    return len(set(concurrencies)) < len(concurrencies)


def _labels(lang: str, runs: Sequence[RunChange], topologies: bool) -> str:
    """The runs as `C4, C14, C16` (with their `topologies`), each label once, the first RUN_LABELS."""
    numbers.check([run.concurrency for run in runs])
    labels = list(
        dict.fromkeys(
            _t(
                lang,
                "run-label",
                concurrency=run.concurrency,
                config=runlabels.describe(run.topology.as_json()) if topologies else "",
            )
            for run in runs
        )
    )
    shown = labels[:RUN_LABELS] + ([f"… (+{len(labels) - RUN_LABELS})"] if len(labels) > RUN_LABELS else [])
    return messages.separator(lang).join(shown)


#: The name the model gives the one variant of a recipe without overrides (`bot.model.recipe`).
DEFAULTS = "base"


def _variant(lang: str, name: str) -> str:
    """A variant as the variant column shows it: its name, or for a recipe's defaults (no
    override) those words, not the model's name `base`."""
    return _t(lang, "ui-variant-defaults") if name == DEFAULTS else textsafe.md_code(name)


def _variants(lang: str, runs: Sequence[RunChange]) -> str:
    names: list[str] = []
    for run in runs:
        base, head = run.variant_base, run.variant_head
        name = _variant(lang, head or base) if head or base else "—"
        if base and head and base != head:
            name = f"{_variant(lang, base)} → {name}"
        elif base and not head and run.status == "changed":  # selects no variant at the head
            name = f"{_variant(lang, base)} → —"
        if name not in names:
            names.append(name)
    return messages.separator(lang).join(
        names[:VARIANTS_SHOWN] + (["…"] if len(names) > VARIANTS_SHOWN else [])
    )


def _groups(runs: Sequence[RunChange]) -> list[list[RunChange]]:
    """The runs that changed the same way (same status, same settings of their own), in order."""
    groups: dict[tuple[Any, ...], list[RunChange]] = {}
    for run in runs:
        groups.setdefault((run.status, *(s.key() for s in run.settings)), []).append(run)
    return list(groups.values())


def _lengths(run: RunChange) -> str | None:
    return runlabels.lengths(run.topology.isl, run.topology.osl)


def _gone(runs: Sequence[RunChange]) -> dict[str, list[RunChange]]:
    """The sequence-length configs (`1k1k`) all of whose runs are removed, with those runs."""
    left = {_lengths(run) for run in runs if run.status != "removed"}
    gone: dict[str, list[RunChange]] = {}
    for run in runs:
        lengths = _lengths(run)
        if run.status == "removed" and lengths is not None and lengths not in left:
            gone.setdefault(lengths, []).append(run)
    return gone


def _status(run: RunChange, common: bool) -> str:
    """A run's state as shown: "as-before" only when nothing changed at it, "common" when only the
    settings common to every run did."""
    return "common" if common and run.status == "as-before" else run.status


def _states(lang: str, runs: Sequence[RunChange], topologies: bool, common: bool = False) -> str:
    """How many runs changed, are as before, new or removed (`2 changed (C1, C4) · 5 as before`);
    a sequence-length config none of whose runs is left is named as removed (`1k1k removed (11
    runs)`)."""
    parts = []
    gone = _gone(runs)
    for lengths, removed in gone.items():
        parts.append(_t(lang, "ui-lengths-removed", lengths=lengths, count=len(removed)))
    gone_runs = {id(run) for removed in gone.values() for run in removed}
    for status in ("changed", "common", "as-before", "added", "removed"):
        found = [run for run in runs if _status(run, common) == status and id(run) not in gone_runs]
        if found:
            parts.append(
                _t(lang, f"ui-runs-{status}", count=len(found), runs=Safe(_labels(lang, found, topologies)))
            )
    return " · ".join(parts) or _t(lang, "ui-runs-none")


class RunsRow(NamedTuple):
    """A row of a key's table of runs: the runs, the variants they select, what changed there."""

    runs: str
    variants: str
    what: str


class KeyShown(NamedTuple):
    """One key of "What changed" as the layout shows it, all rendered: the settings common to every
    run; `detailed`, the rows of its table of runs and how many rows are left out; else `states`,
    how many runs are in which state."""

    key: str
    common: str
    rows: tuple[RunsRow, ...] = ()
    more: int = 0
    states: str = ""


def _key_view(lang: str, key: str, view: KeyChanges | None, detailed: bool) -> KeyShown:
    """What the layout shows of one key's `changes`: its common settings and, `detailed`, a row
    per group of runs; else how many runs are in each state."""
    runs = view.runs if view is not None else ()
    common = _settings(lang, view.common if view is not None else (), SETTINGS_SHOWN)
    topologies = _shared(runs)
    if not detailed:
        return KeyShown(key, common, states=_states(lang, runs, topologies, bool(common)))
    gone = _gone(runs)
    rows = [
        RunsRow(
            _t(lang, "ui-lengths-all-runs", lengths=lengths, count=len(removed)),
            _variants(lang, removed),
            _t(lang, "ui-run-removed"),
        )
        for lengths, removed in gone.items()
    ]
    gone_runs = {id(run) for removed in gone.values() for run in removed}
    for group in _groups([run for run in runs if id(run) not in gone_runs]):
        status = _status(group[0], bool(common))
        what = _settings(lang, group[0].settings, SETTINGS_SHOWN)
        if status in ("as-before", "common", "added", "removed") or not what:
            what = _t(lang, f"ui-run-{'common' if status == 'changed' else status}")
        rows.append(RunsRow(_labels(lang, group, topologies), _variants(lang, group), what))
    return KeyShown(key, common, tuple(rows[:ROWS_PER_KEY]), max(0, len(rows) - ROWS_PER_KEY))


# --- the changed-keys table -----------------------------------------------------------------------


def _delta(base: list[Any], head: list[Any]) -> str:
    """A published set's change as `+C2 −C76` (the first RUN_LABELS)."""
    added = [c for c in head if c not in base]
    removed = [c for c in base if c not in head]
    for concurrency in added + removed:
        numbers.check(concurrency)
    words = [f"+C{c}" for c in added] + [f"−C{c}" for c in removed]
    shown = " ".join(words[:RUN_LABELS]) + (
        f" … (+{len(words) - RUN_LABELS})" if len(words) > RUN_LABELS else ""
    )
    return textsafe.md_text(shown)


def _hours(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "—"
    return f"{value:,.1f}".removesuffix(".0")


def _key_hours(plan: dict[str, Any], runs: int) -> str:
    """A key's GPU-hours: "—" when no run has a known duration (fixed-seq-len runs have none), a
    lower bound "≥ …" when only some do."""
    untimed = plan.get("untimed_runs")
    untimed = untimed if isinstance(untimed, int) and not isinstance(untimed, bool) else 0
    if runs and untimed >= runs:
        return "—"
    hours = _hours(plan.get("gpu_hours"))
    return f"≥ {hours}" if untimed and hours != "—" else hours


class KeyRow(NamedTuple):
    """The cells of one key's row in the table of changed keys, rendered."""

    key: str
    published: str
    runs: str
    hours: str
    mark: str


def _key_row(lang: str, key: str, report: Report, mark: str) -> KeyRow:
    """The cells of one key's row: its published set, sweep runs, GPU-hours and mark."""
    sets = report.published_sets.get(key) or {}
    base, head = list(sets.get("base") or []), list(sets.get("head") or [])
    view = report.changes.get(key)
    statuses = Counter(run.status for run in (view.runs if view is not None else ()))
    if base == head and (statuses["added"] or statuses["removed"]):  # the same concurrencies, other runs
        published = _t(
            lang, "ui-set-same-runs", count=len(head), added=statuses["added"], removed=statuses["removed"]
        )
    elif base == head:
        published = _t(lang, "ui-set-unchanged", count=len(head))
    elif not base or not head:
        published = _t(lang, "ui-set-new" if head else "ui-set-removed", count=len(head or base))
    else:
        published = _delta(base, head)
    plan = (report.sweep_plan.get("keys") or {}).get(key)
    if isinstance(plan, dict):
        runs = [run for run in plan.get("runs") or [] if isinstance(run, dict)]
        changed = sum(1 for run in runs if run.get("changed"))
        runs_text = _t(lang, "ui-runs", count=len(runs), changed=changed)
        hours = _key_hours(plan, len(runs))
    else:
        runs_text, hours = unbroken(_t(lang, "ui-no-sweep")), "—"
    return KeyRow(textsafe.md_code(key), published, runs_text, hours, MARKS[mark])


# --- the review -----------------------------------------------------------------------------------


def _aspects(aspects: list[str] | None) -> list[str]:
    """What changed about a key, as counted below the key table: a new or removed key is that
    alone (all its points are new), anything else each aspect that changed."""
    aspects = list(aspects or ["other"])
    return next(([a] for a in ("added", "removed") if a in aspects), aspects)


def _marks(report: Report) -> dict[str, str]:
    """Per config key, its most severe finding that needs action: "blocking", "warning" or ""."""
    marks: dict[str, str] = {}
    for f in report.findings:  # blocking first: the report is sorted by severity
        if f.config_key and f.severity in (Severity.BLOCKING, Severity.WARNING):
            marks.setdefault(f.config_key, str(f.severity))
    return marks


def _in_section(f: Finding) -> str | None:
    """The section a finding is listed in; None for those the key table and the changes view
    show already (published sets, the changes check's own summary)."""
    if f.check == "sweep-plan" and f.severity is Severity.INFO:
        return "sweep"
    if f.check == "consistency" and f.message_id.startswith("consistency-published"):
        return None
    if f.check == "changes" and f.severity is Severity.INFO:
        return None
    return str(f.severity)


def _sections(report: Report, keys: list[str]) -> dict[str, list[Any]]:
    """The entries by section: findings in the report's order, the first KEY_ROWS `keys` and the
    keys of the changes view."""
    sections: dict[str, list[Any]] = {name: [] for name in SHOWN}
    sections["keys"] = keys[:KEY_ROWS]
    sections["changes"] = [key for key in keys if key in report.changes]
    for f in report.findings:
        name = _in_section(f)
        if name is not None:
            sections[name].append(f)
    return sections


def section_counts(report: Report) -> dict[str, int]:
    """How many findings each section of the comment lists (`blocking`, `warning`, `verified`,
    `info`, `unverified`): the counts the terminal's summary line gives, so the two agree."""
    sections = _sections(report, [])
    return {name: len(sections[name]) for name in ("blocking", "warning", "verified", "unverified", "info")}


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

    def __init__(
        self, report: Report, langs: tuple[str, ...], base: str, head: str, notes: Sequence[Msg] = ()
    ) -> None:
        self.report = report
        self.langs = langs
        self.marks = _marks(report)
        order = {"blocking": 0, "warning": 1, "": 2}
        keys = sorted(report.published_sets, key=lambda k: order[self.marks.get(k, "")])
        self.sections = _sections(report, keys)
        self.rest = Counter(a for key in keys[KEY_ROWS:] for a in _aspects(report.changed_keys.get(key)))
        self.more_keys = max(0, len(keys) - KEY_ROWS)
        self.detailed = len(self.sections["changes"]) <= DETAILED_KEYS
        self.footer = {"version": __version__, "base": base, "head": head}
        self.screen = screen.first_screen(
            findings=report.findings,
            shown={name: len(self.sections[name]) for name in ("blocking", "warning", "unverified")},
            unchecked_checks=[f.check for f in self.sections["unverified"]],
            reviewed=report.reviewed,
            published_sets=report.published_sets,
            changes=report.changes,
            keys=keys,
            drafted=any(f.message_id in changelog_draft.DRAFT_FOR for f in self.sections["blocking"]),
            notes=notes,
        )
        self._entries: dict[tuple[str, int, str, int | None], tuple[str, bool]] = {}
        self._entry_text: str | None = None
        self._texts: dict[tuple[str, int, str], str] = {}
        self._short: dict[str, Report] = {}

    @property
    def findings(self) -> int:
        return sum(len(entries) for name, entries in self.sections.items() if name not in ("keys", "changes"))

    def folded(self, name: str) -> bool:
        return name in FOLDABLE and len(self.sections[name]) > FOLD_AT

    def entry(self, name: str, index: int, lang: str, limit: int | None = None) -> tuple[str, bool]:
        """One entry (a finding as a list item, a key's row or its changes), and whether it was
        shortened to `limit` characters (a suggestion longer than that is left out)."""
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
        if name in ("keys", "changes"):
            return False
        return any(
            len(text or "") > limit
            for text in (
                self._text(name, index, lang),
                self._suggestion(name, index),
                self._drafted(name, index),
            )
        )

    def _data(self, report: Report, name: str, key: str, lang: str) -> str:
        """A key's row in the table (`keys`) or its changes view (`changes`), from `report`."""
        if name == "keys":
            return layout().key_row(_key_row(lang, key, report, self.marks.get(key, "")))
        view = _key_view(lang, key, report.changes.get(key), self.detailed)
        return layout().key_changes(lang, view, self.detailed)

    def _shortened(self, lang: str) -> Report:
        """The report's tables with every long integer shortened (`bot.output.numbers`)."""
        if lang not in self._short:
            report = self.report

            def short(data: Any) -> Any:
                return numbers.shown(data, lambda value: messages.long_number(value, lang))

            tables = (short(report.published_sets), short(report.sweep_plan), report.changed_keys)
            self._short[lang] = Report(list(report.findings), *tables, short(report.changes))
        return self._short[lang]

    def _entry(self, name: str, index: int, lang: str, limit: int | None) -> tuple[str, bool]:
        entry = self.sections[name][index]
        if name in ("keys", "changes"):
            try:
                return self._data(self.report, name, entry, lang), False
            except (ValueError, OverflowError, numbers.LongNumber):  # an integer too long to show
                return self._data(self._shortened(lang), name, entry, lang), False
        text = self._text(name, index, lang)
        suggestion = self._suggestion(name, index)
        shortened = False
        if limit is not None and len(text) > limit:
            text, shortened = textsafe.cut_markdown(text, limit, _t(lang, "ui-shortened")), True
        if limit is not None and suggestion is not None and len(suggestion) > limit:
            suggestion, shortened = None, True
        check = "" if name == "sweep" else entry.check
        drafted = (
            self._drafted(name, index)
            if limit is None or len(self._drafted(name, index) or "") <= limit
            else None
        )
        shortened = shortened or (self._drafted(name, index) is not None and drafted is None)
        entry_view = {"file": self._changelog_file(entry), "text": drafted} if drafted else None
        return layout().finding(
            lang, check, self._where(name, entry), text, suggestion, entry_view
        ), shortened

    def _drafted(self, name: str, index: int) -> str | None:
        """The changelog entry drafted for the changed keys no new entry covers, shown with the
        first finding that asks for one (`prbot fix` appends the same entry)."""
        if name != "blocking":
            return None
        asking = [i for i, f in enumerate(self.sections[name]) if f.message_id in changelog_draft.DRAFT_FOR]
        if not asking or index != asking[0]:
            return None
        if self._entry_text is None:
            keys = changelog_draft.drafted_keys(self.sections[name])
            changes = changes_view.as_json(self.report.changes, keys)
            drafted = changelog_draft.entry_text(keys, changes, "XXX", self.report.changelog_langs)
            self._entry_text = textsafe.redact(drafted) if drafted else ""
        return self._entry_text or None

    def _changelog_file(self, asking: Finding) -> str:
        """The changelog the drafted entry is appended to: the one `changelog-missing` names, else
        the one whose last line the review read (a key's own finding, `changelog-key-not-covered`
        and the like, points at the key in its master config)."""
        missing = [f.file for f in self.report.findings if f.message_id == "changelog-missing" and f.file]
        if missing:
            return missing[0]
        end = self.report.changelog_end
        return end.path if end is not None else asking.file or ""

    @staticmethod
    def _where(name: str, f: Finding) -> str:
        if not f.file or name in ("verified", "unverified", "sweep"):
            return ""
        return _loc(f) if f.line or name != "info" else ""

    def _section(
        self, lang: str, name: str, shown: list[int], entry: Callable[[str, int, str], str]
    ) -> list[str]:
        """One section: its heading (or fold), the `shown` entries, and how many are left out."""
        macros, entries = layout(), self.sections[name]
        hidden = len(entries) - len(shown)
        if name == "keys":
            aspects = [_t(lang, f"ui-aspect-{aspect}", count=n) for aspect, n in sorted(self.rest.items())]
            rest = {"count": self.more_keys, "aspects": Safe(messages.separator(lang).join(aspects))}
            return [
                macros.keys_open(lang, bool(entries)),
                *(entry(name, i, lang) for i in shown),
                macros.keys_close(lang, hidden, rest),
            ]
        if not entries:
            return []  # an empty section is left out
        folded = self.folded(name)
        parts = [macros.section_open(lang, HEADINGS[name], len(entries), folded)]
        parts += [entry(name, index, lang) for index in shown]
        if hidden:
            parts.append(macros.more(lang, hidden))
        return [*parts, macros.section_close(folded)]

    def compose(
        self,
        chosen: dict[str, list[int]],
        note: dict[str, Any] | None,
        entry: Callable[[str, int, str], str],
    ) -> str:
        """The comment showing the `chosen` entries of each section (`entry` renders one) and
        counting the others; with the note saying that it was cut when `note` has its params."""
        macros = layout()
        parts = [MARKER, "\n"]
        parts += [macros.first_screen(lang, self.first_screen(lang)) for lang in self.langs]
        parts.append(macros.rule())
        for lang in self.langs:
            folded = lang == "zh" and len(self.langs) > 1
            parts.append(macros.opening(folded))
            for name in SHOWN:
                parts += self._section(lang, name, chosen[name], entry)
            parts.append(macros.foot(lang, **self.footer))
            if note is not None:
                parts.append(macros.cut(lang, note))
            parts.append(macros.closing(folded))
        return "".join(parts)

    def first_screen(self, lang: str) -> dict[str, Any]:
        """The first screen in `lang`, rendered: title, notes, change lines, next step."""
        shown = self.screen
        then = "；" if lang == "zh" else "; "
        lines = []
        for line in shown.lines:
            facts = []
            for fact, keys in line.facts:
                text = messages.text(fact.msg(keys), lang, markdown=True)
                wrap = keys > 1 and fact.message_id not in screen.SAYS_KEYS
                facts.append(_t(lang, "screen-on-keys", fact=Safe(text), keys=keys) if wrap else text)
            if line.more:
                facts.append(_t(lang, "screen-more-facts", more=line.more))
            joined = Safe(then.join(facts))
            if line.key is not None:
                lines.append(_t(lang, "screen-line-key", key=line.key, facts=joined))
            else:
                lines.append(_t(lang, "screen-line-keys", keys=line.keys, facts=joined))
        return {
            "title": messages.text(shown.title(), lang, markdown=True),
            "notes": [messages.text(note, lang, markdown=True) for note in shown.notes],
            "lines": lines or [_t(lang, "screen-no-keys")],
            "next": messages.text(shown.next_step, lang, markdown=True),
        }

    def everything(self) -> str:
        """The review uncut."""
        every = {name: list(range(len(entries))) for name, entries in self.sections.items()}
        return self.compose(every, None, lambda *at: self.entry(*at)[0])


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
    notes: Sequence[Msg] = (),
) -> Rendered:
    """The review for `target` (None: uncut). When cut, its note says where the rest is: `rest` is
    "summary" when the job summary of the same run holds the whole review, else "report" (the
    JSON report, which always has every finding)."""
    review = _Review(report, messages.LANG_CHOICES[lang], base, head, notes)
    if target is None:
        return Rendered(review.everything(), cut=False)
    whole = _whole(review, target)
    if whole is not None:
        return Rendered(whole, cut=False)
    item_limit = target.limit // ITEM_SHARE
    worst = {"target": target.name, "rest": rest, "hidden": review.findings, "shortened": review.findings}
    chosen = _fill(review, target, item_limit, worst)
    shown = [(name, index) for name in chosen if name not in ("keys", "changes") for index in chosen[name]]
    shortened = [at for at in shown if any(review.entry(*at, lang, item_limit)[1] for lang in review.langs)]
    note = {**worst, "hidden": review.findings - len(shown), "shortened": len(shortened)}
    text = review.compose(chosen, note, lambda *at: review.entry(*at, item_limit)[0])
    return Rendered(text, cut=True)


def _whole(review: _Review, target: Target) -> str | None:
    """The uncut review, or None when it does not fit `target`: rendering stops as soon as its
    entries alone are known to be too long."""
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
    frame = review.compose(chosen, worst, _blank)
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
