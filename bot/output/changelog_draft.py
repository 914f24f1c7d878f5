"""A perf-changelog entry drafted from the review's `changes` view (the JSON report's `changes`:
key → common settings and runs), in the house style of InferenceX's own entries: what changed at
every concurrency first, then per concurrency (`At C1: set ATOM_MONO_ENABLE=1; change max-num-seqs
from 8 to 2.`), then the runs added and removed, English bullets then the same in Chinese; and the
entry's `scenario-type`, the scenarios of the runs that changed. A setting of the runner's record in
runners.yaml is named as such (`change the runner's available-cpu-dram-mib from 3095781 to 2500000`),
and keys that all changed the same way (one cluster's record) are described once.

`prbot fix` appends it; the review comment shows it where a changed key has no entry, and the
inline review offers it as a suggestion on the changelog's last line when the PR's diff adds that
line. All three name the keys `drafted_keys` collects."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bot.catalog import Msg, msg
from bot.checks import runlabels
from bot.findings import Finding
from bot.model import runs
from bot.output import messages, numbers
from bot.yamlsafe import frozen

#: The findings that a changelog entry answers (`changelog-missing` names all its keys at once).
DRAFT_FOR = (
    "changelog-missing",
    "changelog-key-not-covered",
    "changelog-recipe-key-not-covered",
    "changelog-hardware-key-not-covered",
)

#: Keys described one by one; the others are counted in one bullet.
DRAFT_KEYS = 3
#: Groups of runs described per key; the others are counted.
DRAFT_GROUPS = 8
#: A value longer than this is not written out (`change NAME`).
VALUE_CHARS = 100
#: List items and settings named in one sentence; the others are counted.
ITEMS_SHOWN = 8
SCENARIOS = ("fixed-seq-len", "agentic-coding")
#: How a setting of the runner's record in runners.yaml begins.
HARDWARE = runs.HARDWARE + "."


def drafted_keys(findings: Iterable[Finding]) -> list[str]:
    """The changed keys that no new entry names, as the `DRAFT_FOR` findings among `findings` name
    them, in order of first mention: the keys of the drafted entry."""
    keys: list[str] = []
    for f in findings:
        if f.message_id in DRAFT_FOR:
            found = f.params.get("keys") if f.message_id == "changelog-missing" else [f.params.get("key")]
            keys += [k for k in found or [] if isinstance(k, str)]
    return list(dict.fromkeys(keys))


def _value(value: Any) -> str:
    """A value as the description writes it: a string as it is, anything else as compact JSON (a
    date as its text)."""
    return (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    )


def _ends(value: int) -> str:
    """An integer too long to write whole, by its first and last digits, the same in both languages
    (`0xffffffffff…ffffffffff`)."""
    negative, first, last, _count, as_hex = numbers.digits(value)
    return f"{'-' if negative else ''}{'0x' if as_hex else ''}{first}…{last}"


def runner_field(path: str) -> str | None:
    """Where a run's setting that comes from its runner's record in runners.yaml stands in that
    record (`slurm.partition`), else None. The comment and the draft name such a setting by it: the
    last part of its path alone (`path`) would not say which."""
    return path[len(HARDWARE) :] if path.startswith(HARDWARE) and len(path) > len(HARDWARE) else None


def _name(setting: Mapping[str, Any]) -> str | Msg:
    """A setting's name: the last part of its path; for the runner's record, its path in the record
    (`the runner's slurm.partition`)."""
    path = str(setting.get("path", ""))
    field = runner_field(path)
    return msg("draft-runner-setting", name=field) if field is not None else path.rsplit(".", 1)[-1]


def _image(base: str, head: str) -> tuple[str, str]:
    """`head` without the repository it shares with `base` (`nightly_A` → `nightly_B`)."""
    repo = base.rpartition(":")[0]
    return (base, head.rpartition(":")[2]) if repo and head.rpartition(":")[0] == repo else (base, head)


def _some(values: Sequence[Any]) -> list[Any]:
    """The first ITEMS_SHOWN values, then how many more there are (`and 12 more`)."""
    shown = [_value(v) if not isinstance(v, Msg) else v for v in values[:ITEMS_SHOWN]]
    more = len(values) - ITEMS_SHOWN
    return [*shown, msg("draft-more", count=more)] if more > 0 else shown


def _parts(settings: Sequence[Any]) -> list[Msg]:
    """What changed in some settings, in the order a reader wants it: the image, the settings
    that appear, those that change, list items added and removed, the settings that go."""
    images, env, new, changed, lists, gone = [], [], [], [], [], []
    for setting in settings if isinstance(settings, list) else []:
        if not isinstance(setting, Mapping):
            continue
        name, base, head = _name(setting), setting.get("base"), setting.get("head")
        added, removed = setting.get("added"), setting.get("removed")
        if name == "image" and isinstance(base, str) and isinstance(head, str):
            old, new_image = _image(base, head)
            images.append(msg("draft-image", base=old, head=new_image))
        elif isinstance(added, list) and isinstance(removed, list) and _long(base, head):
            lists += [msg("draft-list-add", name=name, items=_some(added))] if added else []
            lists += [msg("draft-list-remove", name=name, items=_some(removed))] if removed else []
        elif base is None and head is not None:
            if isinstance(name, str) and ".env." in str(setting.get("path", "")):
                env.append(f"{name}={_value(head)}")
            else:
                new.append(msg("draft-set", name=name, head=_value(head)))
        elif head is None and base is not None:
            gone.append(msg("draft-remove", name=name, base=_value(base)))
        elif _long(base, head):
            changed.append(msg("draft-name", name=name))
        else:
            changed.append(msg("draft-from", name=name, base=_value(base), head=_value(head)))
    sets = [msg("draft-set-env", settings=_some(env))] if env else []
    changes = [msg("draft-change", changes=_some(changed))] if changed else []
    return [*images, *sets, *_some(new), *changes, *_some(lists), *_some(gone)]


def _long(base: Any, head: Any) -> bool:
    """Whether a value is too long to write out (a list then names its items added and removed)."""
    return base is not None and head is not None and max(len(_value(base)), len(_value(head))) > VALUE_CHARS


def _label(lang: str, run: Mapping[str, Any], shared: bool) -> str:
    topology = run.get("topology") if isinstance(run.get("topology"), Mapping) else {}
    config = runlabels.describe(topology) if shared else ""
    return messages.text(msg("run-label", concurrency=run.get("concurrency"), config=config), lang)


def _runs(lang: str, runs: Sequence[Mapping[str, Any]], shared: bool) -> str:
    labels = list(dict.fromkeys(_label(lang, run, shared) for run in runs))
    return messages.separator(lang).join(labels)


def _lengths(run: Mapping[str, Any]) -> str | None:
    topology = run.get("topology") if isinstance(run.get("topology"), Mapping) else {}
    return runlabels.lengths(topology.get("isl"), topology.get("osl"))


def _key_sentences(lang: str, view: Mapping[str, Any]) -> list[str]:
    """One key's changes as sentences: every concurrency, then each group of runs."""
    runs = [run for run in view.get("runs") or [] if isinstance(run, Mapping)]
    concurrencies = [str(run.get("concurrency")) for run in runs]
    shared = len(set(concurrencies)) < len(concurrencies)
    sentences = []
    common = _parts(view.get("common") or [])
    if common:
        sentences.append(messages.text(msg("draft-every", parts=common), lang))
    groups: dict[Any, list[Mapping[str, Any]]] = {}
    for run in runs:
        if run.get("status") == "changed":
            groups.setdefault(frozen(run.get("settings")), []).append(run)
    for group in list(groups.values())[:DRAFT_GROUPS]:
        parts = _parts(group[0].get("settings") or [])
        if parts:
            sentences.append(
                messages.text(msg("draft-at", runs=_runs(lang, group, shared), parts=parts), lang)
            )
    left = {_lengths(run) for run in runs if run.get("status") != "removed"}
    gone: dict[str, int] = {}
    removed = []
    for run in runs:
        lengths = _lengths(run)
        if run.get("status") == "removed" and lengths is not None and lengths not in left:
            gone[lengths] = gone.get(lengths, 0) + 1
        elif run.get("status") == "removed":
            removed.append(run)
    for lengths, count in gone.items():
        sentences.append(messages.text(msg("draft-lengths-removed", lengths=lengths, count=count), lang))
    added = [run for run in runs if run.get("status") == "added"]
    if added:
        sentences.append(
            messages.text(msg("draft-runs-added", runs=_runs(lang, added, shared), count=len(added)), lang)
        )
    if removed:
        sentences.append(messages.text(msg("draft-runs-removed", runs=_runs(lang, removed, shared)), lang))
    return sentences


def _alike(lang: str, keys: Sequence[str], changes: Mapping[str, Any]) -> list[str] | None:
    """The sentences every one of several keys is described by, when they are the same for all
    (a runners.yaml record they all run on changed, and nothing else): None otherwise."""
    first = _key_sentences(lang, changes[keys[0]]) if len(keys) > 1 else []
    if first and all(_key_sentences(lang, changes[key]) == first for key in keys[1:]):
        return first
    return None


def description(keys: Sequence[str], changes: Mapping[str, Any]) -> list[str]:
    """The description's bullets, English then Chinese; empty when the `changes` view says
    nothing about these keys (then the author must write it). Several keys described by the same
    sentences are described once, without their names: the entry's `config-keys` names them. A
    value holding an integer too long for Python to write (a hostile `0x…` of thousands of digits)
    is written by its ends (`_ends`) instead of ending the review's comment."""
    try:
        return _description(keys, changes)
    except (ValueError, OverflowError):
        return _description(keys, numbers.shown(changes, _ends))


def _description(keys: Sequence[str], changes: Mapping[str, Any]) -> list[str]:
    described = [key for key in keys if isinstance(changes.get(key), Mapping)]
    lines: list[str] = []
    for lang in messages.LANGS:
        alike = _alike(lang, described, changes)
        if alike is not None:
            lines += alike
            continue
        for key in described[:DRAFT_KEYS]:
            sentences = _key_sentences(lang, changes[key])
            if len(keys) > 1:
                sentences = [messages.text(msg("draft-key", key=key, text=s), lang) for s in sentences]
            lines += sentences
        if len(described) > DRAFT_KEYS and lines:
            lines.append(messages.text(msg("draft-more-keys", count=len(described) - DRAFT_KEYS), lang))
    return lines


def scenarios(keys: Sequence[str], changes: Mapping[str, Any]) -> list[str]:
    """The `scenario-type` of an entry for `keys`: the scenarios of their runs that changed, were
    added or removed (empty when unknown: then the entry names none, and every scenario runs). A
    run "as before" changed too when its key has common changes (the runner's record, the image):
    it is as before but for those."""
    found = {
        run["topology"].get("scenario")
        for key in keys
        if isinstance(changes.get(key), Mapping)
        for run in changes[key].get("runs") or []
        if isinstance(run, Mapping)
        and (run.get("status") != "as-before" or bool(changes[key].get("common")))
        and isinstance(run.get("topology"), Mapping)
    }
    return [scenario for scenario in SCENARIOS if scenario in found]


def _scalar(text: str) -> str:
    """A key as a YAML scalar: plain as InferenceX writes them, quoted when YAML would misread it."""
    return text if re.fullmatch(r"[A-Za-z0-9][\w.*-]*", text) else json.dumps(text, ensure_ascii=False)


def entry_text(keys: Sequence[str], changes: Mapping[str, Any], link: str) -> str | None:
    """The whole entry as YAML text, ending in a newline (what the review comment shows and the
    inline review suggests), or None when there is no description to draft."""
    lines = description(keys, changes)
    if not lines:
        return None
    text = ["- config-keys:", *(f"    - {_scalar(key)}" for key in keys)]
    kinds = scenarios(keys, changes)
    if kinds:
        text += ["  scenario-type:", *(f"    - {kind}" for kind in kinds)]
    text += ["  description:", *(f"    - {json.dumps(line, ensure_ascii=False)}" for line in lines)]
    return "\n".join([*text, f"  pr-link: {link}"]) + "\n"
