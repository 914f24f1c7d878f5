"""A perf-changelog entry drafted from the review's `changes` view (the JSON report's `changes`:
key → common settings and runs), in the changelog's own language (`Report.changelog_langs`:
English, or English then Chinese when most of the base changelog's newest entries are bilingual,
`bot.model.changelog.languages`), one fact a line: the image bump, a new
key by model, precision, hardware, framework and image with a line per parallelism config, what
changed at every concurrency, at each group of runs, then the runs added and removed; and the
entry's `scenario-type`, the scenarios of the runs that changed. A setting of the runner's record
in runners.yaml is named as such (`change the runner's available-cpu-dram-mib from 3095781 to
2500000`); a fact every key shares is said once. No line is cut: `entry_text` folds a long one at a
space (Chinese text also between two characters) so that the YAML block the comment shows never
scrolls.

`prbot fix` appends it; the review comment shows it where a changed key has no entry, and the
inline review offers it as a suggestion on the changelog's last line when the PR's diff adds that
line. All three name the keys `drafted_keys` collects."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from unicodedata import east_asian_width

from bot.catalog import Msg, msg
from bot.checks import runlabels
from bot.findings import Finding
from bot.model import dram, runs
from bot.output import messages, numbers
from bot.yamlsafe import frozen

#: The findings that a changelog entry answers (`changelog-missing` names all its keys at once).
DRAFT_FOR = (
    "changelog-missing",
    "changelog-key-not-covered",
    "changelog-recipe-key-not-covered",
    "changelog-hardware-key-not-covered",
)

#: A point's fields that hold a mapping: a setting under one is named by its whole path.
POINT_FIELDS = ("kv-offload-backend", "prefill", "decode")
#: Keys described one by one; the others are counted in one line.
DRAFT_KEYS = 3
#: Concurrencies a line lists one by one; more are given as their range.
RUN_LIST = 10
#: Setting changes one line names at most (a longer sentence goes on in the next line), and one
#: group of runs at most (the others are counted).
PARTS_PER_LINE = 3
PARTS_PER_GROUP = 6
#: Parallelism configs added (or removed) that get a line each; more are one line naming the first
#: CONFIG_NAMES of them.
CONFIG_LINES = 4
CONFIG_NAMES = 4
#: Columns of a description line in the YAML the comment shows (`entry_text`, a Chinese character
#: two); a longer one is folded over the next lines, so that the block never scrolls sideways.
LINE_CHARS = 92
#: Groups of runs described per key; the others are counted.
DRAFT_GROUPS = 8
#: A value longer than this is not written out (`change NAME`).
VALUE_CHARS = 40
#: List items and settings named in one sentence; the others are counted.
ITEMS_SHOWN = 8
SCENARIOS = ("fixed-seq-len", "agentic-coding")
#: How a setting of the runner's record in runners.yaml begins.
HARDWARE = runs.HARDWARE + "."
#: A recipe's name for the DRAM budget the generator hands on as `total-cpu-dram-gb`.
BUDGET_ENV = "TOTAL_CPU_DRAM_GB"


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
    """A value as the description writes it: a string as it is (a digest pin by its first 12 hex
    digits, as git abbreviates a commit), anything else as compact JSON (a date as its text)."""
    if isinstance(value, str):
        return _DIGEST.sub(lambda m: m.group(1) + m.group(2)[:12], value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


#: A digest (`sha256:<64 hex>`), shortened to 12 hex digits wherever it stands.
_DIGEST = re.compile(r"(sha256:)([0-9a-f]{64})")


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


def _names(paths: Sequence[str]) -> dict[str, str]:
    """Each setting's name: a point's field by its path (`kv-offload-backend.name`), a recipe's by
    the last part of its path, or as many parts as tell it from the others changed with it
    (`prefill.kv-cache-dtype`, `decode.kv-cache-dtype`)."""
    names = {}
    for path in paths:
        parts = path.removeprefix("recipe:").split(".")
        for size in range(len(parts) if parts[0] in POINT_FIELDS else 1, len(parts) + 1):
            name = ".".join(parts[-size:])
            others = [
                p
                for p in paths
                if p != path and ".".join(p.removeprefix("recipe:").split(".")[-size:]) == name
            ]
            if not others:
                break
        names[path] = name
    return names


def _name(setting: Mapping[str, Any], names: Mapping[str, str]) -> str | Msg:
    """A setting's name (`_names`); for the runner's record, its path in the record (`the runner's
    slurm.partition`)."""
    path = str(setting.get("path", ""))
    field = runner_field(path)
    return msg("draft-runner-setting", name=field) if field is not None else names.get(path, path)


def _image(base: str, head: str) -> tuple[str, str, bool]:
    """Two images as the description names them: `head` without the repository it shares with
    `base`, a digest pin left out of both (`True` when there was one: the entry says it is pinned)."""
    pinned = "@" in head
    base, head = base.split("@", 1)[0], head.split("@", 1)[0]
    repo = base.rpartition(":")[0]
    if repo and head.rpartition(":")[0] == repo:
        head = head.rpartition(":")[2]
    return base, head, pinned


def _some(values: Sequence[Any]) -> list[Any]:
    """The first ITEMS_SHOWN values, then how many more there are (`and 12 more`)."""
    shown = [_value(v) if not isinstance(v, Msg) else v for v in values[:ITEMS_SHOWN]]
    more = len(values) - ITEMS_SHOWN
    return [*shown, msg("draft-more", count=more)] if more > 0 else shown


def _parts(settings: Sequence[Any]) -> tuple[list[Msg], list[Msg]]:
    """What changed in some settings: the image and the benchmark scripts (sentences of their own),
    then the settings that
    appear, those that change, list items added and removed, the settings that go; each setting
    once (the same change under two paths, a point's `tp` and its recipe's, is one)."""
    listed = [s for s in (settings if isinstance(settings, list) else []) if isinstance(s, Mapping)]
    listed = _one_budget(listed)
    names = _names([str(s.get("path", "")) for s in listed])
    sentences, env, new, changed, lists, gone = [], [], [], [], [], []
    for setting in listed:
        name, base, head = _name(setting, names), setting.get("base"), setting.get("head")
        added, removed = setting.get("added"), setting.get("removed")
        if name == "image" and isinstance(base, str) and isinstance(head, str):
            old, new_image, pinned = _image(base, head)
            sentences.append(msg("draft-image", base=old, head=new_image, pinned=pinned))
        elif setting.get("path") == runs.SCRIPT:
            sentences += _scripts(base, head)
        elif isinstance(added, list) and isinstance(removed, list) and _long(base, head):
            lists += [msg("draft-list-add", name=name, items=_some(added))] if added else []
            lists += [msg("draft-list-remove", name=name, items=_some(removed))] if removed else []
        elif base is None and head is not None:
            if isinstance(name, str) and ".env." in str(setting.get("path", "")) and not _long(None, head):
                env.append(f"{name}={_value(head)}")
            else:
                new.append(
                    msg("draft-set", name=name, head=_value(head))
                    if not _long(None, head)
                    else msg("draft-name-set", name=name)
                )
        elif head is None and base is not None:
            gone.append(msg("draft-remove", name=name))
        elif _long(base, head):
            changed.append(msg("draft-name", name=name))
        else:
            changed.append(msg("draft-from", name=name, base=_value(base), head=_value(head)))
    sets = [msg("draft-set-env", settings=_some(list(dict.fromkeys(env))))] if env else []
    changes = [msg("draft-change", changes=[change]) for change in _once(changed)]
    return _once(sentences), [*sets, *_once(new), *changes, *_once(lists), *_once(gone)]


def _scripts(base: Any, head: Any) -> list[Msg]:
    """A change of the benchmark scripts a run starts (`"<path>@<code id>"` items): the scripts
    edited (the same path at both refs), then those started instead of others."""

    def paths(value: Any) -> dict[str, str]:
        """Each script's path → its code id ("" when none is written)."""
        found = {}
        for item in value if isinstance(value, list) else []:
            text = str(item)
            path, _, code = text.rpartition("@") if "@" in text else (text, "", "")
            found[path] = code
        return found

    old, new = paths(base), paths(head)
    edited = [path for path in new if path in old and new[path] != old[path]]
    found = [msg("draft-script-edited", scripts=_some(edited))] if edited else []
    started, stopped = [p for p in new if p not in old], [p for p in old if p not in new]
    if started or stopped:
        found.append(msg("draft-script-switched", started=_some(started), stopped=_some(stopped)))
    return found


def _one_budget(listed: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The settings without the generator's DRAM budget (`total-cpu-dram-gb`) where a recipe's
    `TOTAL_CPU_DRAM_GB` changes the same way: one fact, named as the recipe names it. A recipe that
    pins another value keeps both (two facts; the `dram` check says which is right)."""

    def change(setting: Mapping[str, Any]) -> tuple[str | None, ...]:
        sides = (setting.get("base"), setting.get("head"))
        return tuple(None if value is None else _value(value) for value in sides)

    pinned = {change(s) for s in listed if str(s.get("path", "")).rpartition(".")[2] == BUDGET_ENV}
    return [s for s in listed if s.get("path") != dram.BUDGET_SETTING or change(s) not in pinned]


def _once(items: Sequence[Msg]) -> list[Msg]:
    """Each message once, in order."""
    seen: list[Msg] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def _long(base: Any, head: Any) -> bool:
    """Whether a value is too long to write out (a list then names its items added and removed)."""
    return any(value is not None and len(_value(value)) > VALUE_CHARS for value in (base, head))


def _config(run: Mapping[str, Any], shared: bool) -> str:
    """A run's parallelism config, when others of its key share its concurrency (else empty)."""
    topology = run.get("topology") if isinstance(run.get("topology"), Mapping) else {}
    return runlabels.describe(topology) if shared else ""


def _concurrencies(runs: Sequence[Mapping[str, Any]]) -> Msg:
    """The concurrencies of some runs, sorted, each once (`C1, C2, C4`); more than RUN_LIST as
    their range (`C1 to C4096, 12 concurrencies`)."""
    found = sorted({run.get("concurrency") for run in runs if type(run.get("concurrency")) is int})
    if len(found) > RUN_LIST:
        return msg("draft-run-range", first=found[0], last=found[-1], count=len(found))
    return msg("draft-run-list", runs=[f"C{c}" for c in found])


def _by_config(runs: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Runs by their parallelism config (`8k1k TP8 EP8`), in order."""
    configs: dict[str, list[Mapping[str, Any]]] = {}
    for run in runs:
        topology = run.get("topology") if isinstance(run.get("topology"), Mapping) else {}
        configs.setdefault(runlabels.describe(topology), []).append(run)
    return configs


def _lengths(run: Mapping[str, Any]) -> str | None:
    topology = run.get("topology") if isinstance(run.get("topology"), Mapping) else {}
    return runlabels.lengths(topology.get("isl"), topology.get("osl"))


def _hardware(runner: str) -> str:
    """A runner as the hardware it names (`cluster:mi355x-amds` → `MI355X`)."""
    return re.split(r"[-_]", runner.removeprefix("cluster:"), maxsplit=1)[0].upper()


def _new_key(view: Mapping[str, Any]) -> list[Msg]:
    """A new key: what it runs (model, precision, hardware, framework, image), then its runs by
    parallelism config."""
    entry = view.get("entry") if isinstance(view.get("entry"), Mapping) else {}
    runs = [run for run in view.get("runs") or [] if isinstance(run, Mapping)]
    said = [
        msg(
            "draft-new-key",
            model=str(entry.get("model", "")).rsplit("/", 1)[-1],
            precision=str(entry.get("precision", "")).upper(),
            hardware=_hardware(str(entry.get("runner", ""))),
            framework=str(entry.get("framework", "")),
            image=_value(str(entry.get("image", ""))),
        )
    ]
    said += [
        msg("draft-config", config=config, runs=_concurrencies(group))
        for config, group in _by_config(runs).items()
    ]
    return said


def _key_facts(view: Mapping[str, Any]) -> list[Msg]:
    """One key's changes, a fact a line: the image, what changed at every run, at each group of
    runs, then the runs added and removed by parallelism config."""
    runs = [run for run in view.get("runs") or [] if isinstance(run, Mapping)]
    if "entry" in view and all(run.get("status") == "added" for run in runs):
        return _new_key(view)
    concurrencies = [str(run.get("concurrency")) for run in runs]
    shared = len(set(concurrencies)) < len(concurrencies)
    sentences, common = _parts(view.get("common") or [])
    facts: list[Msg] = list(sentences)
    facts += [msg("draft-every", parts=chunk) for chunk in _chunks(common)]
    groups: dict[Any, list[Mapping[str, Any]]] = {}
    for run in runs:
        if run.get("status") == "changed":
            groups.setdefault(frozen(run.get("settings")), []).append(run)
    for group in list(groups.values())[:DRAFT_GROUPS]:
        own_sentences, parts = _parts(group[0].get("settings") or [])
        labels = [
            msg("run-label", concurrency=run.get("concurrency"), config=_config(run, shared)) for run in group
        ]
        where = _once(labels) if len(labels) <= RUN_LIST else [_concurrencies(group)]
        if len(parts) > PARTS_PER_GROUP:  # the JSON report and the comment have the rest
            more = msg("draft-more-settings", count=len(parts) - PARTS_PER_GROUP + 1)
            parts = [*parts[: PARTS_PER_GROUP - 1], more]
        facts += [msg("draft-at", runs=where, parts=[*own_sentences, *chunk]) for chunk in _chunks(parts)]
    if len(groups) > DRAFT_GROUPS:
        facts.append(msg("draft-more-groups", count=len(groups) - DRAFT_GROUPS))
    left = {_lengths(run) for run in runs if run.get("status") != "removed"}
    gone: dict[str, int] = {}
    removed = []
    for run in runs:
        lengths = _lengths(run)
        if run.get("status") == "removed" and lengths is not None and lengths not in left:
            gone[lengths] = gone.get(lengths, 0) + 1
        elif run.get("status") == "removed":
            removed.append(run)
    facts += [msg("draft-lengths-removed", lengths=lengths, count=count) for lengths, count in gone.items()]
    added = [run for run in runs if run.get("status") == "added"]
    for verb, found in (("draft-runs-added", added), ("draft-runs-removed", removed)):
        configs = _by_config(found)
        if len(configs) == 1 and not shared:
            facts.append(msg(verb, config="", runs=_concurrencies(found)))
        elif len(configs) > CONFIG_LINES:  # a reworked search space: its configs, counted
            names = list(configs)
            more = len(names) - CONFIG_NAMES
            facts.append(msg(f"{verb}-configs", count=len(found), configs=names[:CONFIG_NAMES], more=more))
        else:
            facts += [
                msg(verb, config=config, runs=_concurrencies(group)) for config, group in configs.items()
            ]
    return facts


def _chunks(parts: Sequence[Msg]) -> list[list[Msg]]:
    """Parts of a sentence, PARTS_PER_LINE to a line."""
    return [list(parts[i : i + PARTS_PER_LINE]) for i in range(0, len(parts), PARTS_PER_LINE)]


def description(keys: Sequence[str], changes: Mapping[str, Any], langs: Sequence[str] = ("en",)) -> list[str]:
    """The description's lines, one fact each, in `langs` (English: the changelog's language,
    unless its entries are bilingual); empty when the `changes` view says nothing about these keys
    (then the author must write it). A fact true of every key is said once, without their names
    (the entry's `config-keys` names them); the others once per key, after its name. A value
    holding an integer too long for Python to write (a hostile `0x…` of thousands of digits) is
    written by its ends (`_ends`) instead of ending the review's comment."""
    try:
        return _description(keys, changes, langs)
    except (ValueError, OverflowError):
        return _description(keys, numbers.shown(changes, _ends), langs)


def _description(keys: Sequence[str], changes: Mapping[str, Any], langs: Sequence[str]) -> list[str]:
    described = [key for key in keys if isinstance(changes.get(key), Mapping)]
    facts = {key: _key_facts(changes[key]) for key in described}
    shared = (
        [f for f in facts[described[0]] if all(f in facts[k] for k in described[1:])] if described else []
    )
    lines: list[str] = []
    for lang in langs:
        said = [messages.text(f, lang) for f in shared]
        for key in described[:DRAFT_KEYS]:
            said += [
                messages.text(msg("draft-key", key=key, text=messages.text(f, lang)), lang)
                for f in facts[key]
                if f not in shared
            ]
        if len(described) > DRAFT_KEYS and any(
            f not in shared for k in described[DRAFT_KEYS:] for f in facts[k]
        ):
            said.append(messages.text(msg("draft-more-keys", count=len(described) - DRAFT_KEYS), lang))
        lines += said
    return list(dict.fromkeys(lines))


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


def width(text: str) -> int:
    """The columns a text takes in a monospace font: a wide (Chinese) character takes two."""
    return sum(2 if east_asian_width(c) in "WF" else 1 for c in text)


#: Chinese punctuation a folded line neither starts with (closing) nor ends with (opening).
_CLOSING, _OPENING = "、，。；：）」』》】！？", "（「『《【"


def _folded(line: str, indent: str) -> list[str]:
    """A description line as YAML lines of at most LINE_CHARS columns: a double-quoted scalar
    folded at a space (YAML reads the line break and the next line's indent as one space) or,
    in Chinese text, between two characters with an escaped line break (a line ending in `\\`:
    YAML joins the two lines with nothing between), never inside a word."""
    text = f"{indent}- {json.dumps(line, ensure_ascii=False)}"
    out: list[str] = []
    more = indent + "  "
    while width(text) > LINE_CHARS:
        cut = _cut(text, len(more) + 1)
        if cut is None:
            break
        at, escaped = cut
        out.append(text[:at] + ("\\" if escaped else ""))
        text = more + text[at if escaped else at + 1 :]
    return [*out, text]


def _cut(text: str, start: int) -> tuple[int, bool] | None:
    """Where to fold `text` so that its first line fits: the last space (not after a space or a
    backslash) or place next to a wide character (not before closing or after opening punctuation,
    nor inside an escape) within LINE_CHARS columns and after `start`; `True` for the latter."""
    found, columns = None, 0
    for at in range(1, len(text) - 1):
        columns += 2 if east_asian_width(text[at - 1]) in "WF" else 1
        if columns > LINE_CHARS:
            break
        before, here = text[at - 1], text[at]
        if at <= start or before in " \\":
            continue
        if here == " " and text[at + 1] != " ":
            found = (at, False)
        elif (
            here != " "
            and columns < LINE_CHARS
            and (east_asian_width(before) in "WF" or east_asian_width(here) in "WF")
            and here not in _CLOSING
            and before not in _OPENING
        ):
            found = (at, True)
    return found


def entry_text(
    keys: Sequence[str], changes: Mapping[str, Any], link: str, langs: Sequence[str] = ("en",)
) -> str | None:
    """The whole entry as YAML text, ending in a newline (what the review comment shows and the
    inline review suggests), or None when there is no description to draft. Each line is at most
    LINE_CHARS long."""
    lines = description(keys, changes, langs)
    if not lines:
        return None
    text = ["- config-keys:", *(f"    - {_scalar(key)}" for key in keys)]
    kinds = scenarios(keys, changes)
    if kinds:
        text += ["  scenario-type:", *(f"    - {kind}" for kind in kinds)]
    text += ["  description:", *(folded for line in lines for folded in _folded(line, "    "))]
    return "\n".join([*text, f"  pr-link: {link}"]) + "\n"
