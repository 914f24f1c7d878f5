"""The sign-off verifier's rules that need another file's data, read at the BASE (a PR does not
choose the rules it is judged by): the golden acceptance lengths (`golden_al_distribution/`,
Check 11), the scenarios `MODELS.md` deprecates for all models (Check 7), and upstream engine
images on established hardware (Check 6 (a)).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation

from bot import yamlsafe
from bot.checks.script_rules import CHECK, Source
from bot.diff import ReviewDiff
from bot.findings import Finding, Severity, finding
from bot.model.prfiles import GOLDEN, MODELS, PrFiles
from bot.model.shell import Word

# Variables whose value is the simulated acceptance length (the knobs of vLLM, SGLang and ATOM that
# golden_al_distribution/README.md names, and the variables real scripts feed them from), and
# TensorRT-LLM's, which counts accepted draft tokens only (AL − 1).
AL_VARIABLES = ("SGLANG_SIMULATE_ACC_LEN", "SYNTHETIC_ACCEPT_LEN", "SIMULATE_ACC_LEN", "SPEC_DECODE_AL")
TRT_VARIABLE = "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"
JSON_KEY = '"synthetic_acceptance_length"'
ATOM_FLAG = "--spec-decode-acceptance-length"
KNOBS = (*AL_VARIABLES, TRT_VARIABLE, "synthetic_acceptance_length", ATOM_FLAG)
# Hardware the verifier calls established (Check 6): vLLM / SGLang keys on it use upstream images.
ESTABLISHED = ("h100", "h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x", "mi355x")
UPSTREAM = {"vllm": ("vllm/",), "sglang": ("lmsysorg/",)}


def _number(text: str) -> Decimal | None:
    try:
        value = Decimal(text.strip().strip("'\""))
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _pins(source: Source) -> Iterator[tuple[Decimal, int, str]]:
    """Each acceptance length the script pins: (AL, line, how it is written)."""
    script = source.script
    numbers: dict[str, list[tuple[Decimal, int]]] = {}
    for a in script.assignments:
        if len(a.words) == 1 and (value := _number(a.words[0].text)) is not None:
            numbers.setdefault(a.name, []).append((value, a.line))
    for name in AL_VARIABLES:
        for value, line in numbers.get(name, []):
            yield value, line, f"{name}={value}"
    for value, line in numbers.get(TRT_VARIABLE, []):
        yield value + 1, line, f"{TRT_VARIABLE}={value}"
    words: list[Word] = [w for a in script.assignments for w in a.words]
    words += [w for c in script.commands for w in c.words]
    for word in words:
        for token in _json_values(word.text):
            value = _number(token)
            if value is not None:
                yield value, word.line, f"synthetic_acceptance_length: {value}"
            elif (name := token.lstrip("$").strip("{}")) in numbers and name not in AL_VARIABLES:
                for value, line in numbers[name]:
                    yield value, line, f"{name}={value}"
    for command in script.commands:
        args = command.words
        for i, word in enumerate(args[:-1]):
            if word.text == ATOM_FLAG and (value := _number(args[i + 1].text)) is not None:
                yield value, args[i + 1].line, f"{ATOM_FLAG} {value}"


def _json_values(text: str) -> Iterator[str]:
    """The values written after `"synthetic_acceptance_length":` in a JSON text."""
    start = text.find(JSON_KEY)
    while start != -1:
        rest = text[start + len(JSON_KEY) :].lstrip()
        if rest.startswith(":"):
            yield re.split(r"[,}\s]", rest[1:].lstrip(), maxsplit=1)[0]
        start = text.find(JSON_KEY, start + 1)


def _mentions_knob(source: Source) -> bool:
    script = source.script
    names = {a.name for a in script.assignments}
    texts = [w.text for a in script.assignments for w in a.words] + [
        w.text for c in script.commands for w in c.words
    ]
    return bool(names & set(KNOBS)) or any(k in t for t in texts for k in KNOBS)


def golden_values(files: PrFiles, prefix: str) -> tuple[list[str], set[Decimal]]:
    """The golden AL files of a model prefix (`dsv4` → `dsv4_mtp.yaml`, `dsv4-pro-0813-dspark.yaml`)
    and every AL they hold."""
    names = sorted(n for n in files.golden_base if n.startswith((prefix + "_", prefix + "-")))
    values: set[Decimal] = set()
    for name in names:
        try:
            data = yamlsafe.load_bytes(files.golden_base[name]).data
        except yamlsafe.YamlProblem:
            continue
        stack = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, int | float) and not isinstance(item, bool):
                values.add(Decimal(repr(item)))
    return names, values


def golden_al(source: Source, files: PrFiles) -> list[Finding]:
    """Verifier Check 11: an agentic spec-decode script simulates acceptance at the model's golden
    AL (TensorRT-LLM: AL − 1); simulation on a fixed-sequence-length script is a benchmark hack."""
    path, name = source.path, source.name
    pins = list(dict.fromkeys(p for p in _pins(source) if source.touches([p[1]])))
    if "/fixed_seq_len/" in path:
        return [
            _at(source, Severity.BLOCKING, "scripts-al-not-agentic", line, how=how) for _, line, how in pins
        ]
    if "/agentic/" not in path or not name.endswith("_mtp.sh"):
        return []
    if not _mentions_knob(source):
        if source.touched is None:
            return [_at(source, Severity.BLOCKING, "scripts-al-missing", None)]
        return []
    if not pins:
        return []
    prefix = name.split("_", 1)[0]
    golden, values = golden_values(files, prefix)
    if not golden:
        return [
            _at(source, Severity.UNVERIFIED, "scripts-al-no-golden", pins[0][1], prefix=prefix, folder=GOLDEN)
        ]
    out = []
    for value, line, how in pins:
        if value not in values:
            out.append(
                _at(
                    source,
                    Severity.BLOCKING,
                    "scripts-al-mismatch",
                    line,
                    how=how,
                    al=str(value),
                    golden=golden,
                )
            )
    return out


def _at(source: Source, severity: Severity, message_id: str, line: int | None, **params: object) -> Finding:
    return finding(CHECK, severity, message_id, file=source.path, line=line, **params)


_DEPRECATED_ROW = re.compile(
    r"^\|\s*Single-turn (\d+)k(\d+)k\s*\|\s*(\d+)\s*/\s*(\d+)\s*\|\s*\*\*Deprecated for all models\*\*"
)


def deprecated_scenarios(text: str) -> dict[tuple[int, int], str]:
    """The fixed-sequence-length scenarios `MODELS.md`'s scenario table deprecates for all models:
    (isl, osl) → the row's name."""
    found = {}
    for line in text.splitlines():
        match = _DEPRECATED_ROW.match(line.strip())
        if match:
            found[(int(match[3]), int(match[4]))] = f"Single-turn {match[1]}k{match[2]}k"
    return found


def deprecated(diff: ReviewDiff, files: PrFiles) -> list[Finding]:
    """Verifier Check 7: nothing added or changed for a scenario `MODELS.md` (at the base)
    deprecates for all models."""
    if files.models_base is None or not diff.keys:
        return []
    scenarios = deprecated_scenarios(files.models_base.decode("utf-8", "replace"))
    out = []
    for change in diff.keys.values():
        hit = {
            (run.point.isl, run.point.osl)
            for run in (*change.added, *change.changed)
            if run.point.scenario == "fixed-seq-len" and (run.point.isl, run.point.osl) in scenarios
        }
        for isl, osl in sorted(hit):
            out.append(
                finding(
                    CHECK,
                    Severity.BLOCKING,
                    "scripts-deprecated-scenario",
                    config_key=change.key,
                    file=change.file,
                    line=change.line,
                    scenario=scenarios[(isl, osl)],
                    models=MODELS,
                )
            )
    return out


def _sku(runner: str | None) -> str | None:
    name = (runner or "").removeprefix("cluster:").split("-", 1)[0]
    return name if name in ESTABLISHED else None


def _repository(image: str) -> str:
    name = image.replace("#", "/")
    for registry in ("docker.io/", "registry-1.docker.io/", "index.docker.io/"):
        name = name.removeprefix(registry)
    return name


def upstream_images(diff: ReviewDiff) -> list[Finding]:
    """Verifier Check 6 (a): a vLLM / SGLang key the PR adds, or whose image it changes, on an
    established SKU runs the upstream project's image (`vllm/…`, `lmsysorg/…`)."""
    out = []
    for change in diff.keys.values():
        head, base = change.head, change.base
        if head is None or head.framework not in UPSTREAM or not head.image or _sku(head.runner) is None:
            continue
        if base is not None and base.image == head.image:
            continue
        if not _repository(head.image).startswith(UPSTREAM[head.framework]):
            out.append(
                finding(
                    CHECK,
                    Severity.BLOCKING,
                    "scripts-upstream-image",
                    config_key=change.key,
                    file=head.file,
                    line=head.line,
                    image=head.image,
                    framework=head.framework,
                    sku=_sku(head.runner),
                    orgs=list(UPSTREAM[head.framework]),
                )
            )
    return out


def check(diff: ReviewDiff, files: PrFiles, sources: list[Source]) -> list[Finding]:
    out = [f for s in sources for f in golden_al(s, files)]
    return out + deprecated(diff, files) + upstream_images(diff)
