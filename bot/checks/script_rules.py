"""InferenceX's reviewer rules on one shell script the PR adds or changes, decided on the script as
`bot.model.shell` reads it (a real bash grammar). Each rule names its source in docs/checks.md.

Only what the PR touched is judged: a rule about a command speaks when the PR added or changed a
line of that command (or a line a flag of it comes from); the rules about a whole script
(`*_mtp.sh`, a launcher's `enroot import`) speak on a script the PR added or changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from bot.findings import Finding, Severity, finding
from bot.model.shell import Command, Gate, Script, Word

CHECK = "scripts"
ENGINES = {"vllm": "vLLM", "sglang": "SGLang", "atom": "ATOM", "trtllm": "TensorRT-LLM"}
EP_FLAG = "--enable-expert-parallel"
CHAT_FLAGS = {"--use-chat-template", "--dsv4"}  # benchmark_lib.sh: `--dsv4` implies the chat template
# The options of benchmark_lib.sh's `run_benchmark_serving` that take no value; every other takes one.
CLIENT_SWITCHES = {"--use-chat-template", "--dsv4", "--trust-remote-code"}
# `--hf-overrides` keys that make the model skip work it natively does: `index_topk_freq` reuses
# the sparse-attention indexer's top-k for N layers instead of running it in every layer
# (verifier Check 8's own example), `use_index_cache` turns that reuse on.
SKIPPING_KEYS = {"index_topk_freq", "use_index_cache"}
OVERRIDE_FLAGS = ("--hf-overrides", "--json-model-override-args")
ENGINE_PATHS = ("site-packages", "dist-packages", "/sgl-workspace")


@dataclass(frozen=True)
class Source:
    """A script as the rules see it: its path, its head text's lines, the lines the PR touched
    (None: the whole script is new) and its reading."""

    path: str
    lines: list[str]
    touched: set[int] | None
    script: Script

    def touches(self, lines: Iterable[int]) -> bool:
        return self.touched is None or any(line in self.touched for line in lines)

    def command_touched(self, command: Command, words: Iterable[Word] = ()) -> bool:
        span = range(command.line, command.end_line + 1)
        words = list(words)
        return self.touches([*span, *(w.line for w in words), *(g.line for w in words for g in w.gates)])

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


def _at(source: Source, severity: Severity, message_id: str, line: int | None, **params: object) -> Finding:
    return finding(CHECK, severity, message_id, file=source.path, line=line, script=source.path, **params)


def chat_template(source: Source) -> list[Finding]:
    """AGENTS.md: every `*_mtp.sh` passes `--use-chat-template` to `run_benchmark_serving`
    (`--dsv4` implies it: benchmark_lib.sh turns it on). Blocking."""
    if not source.name.endswith("_mtp.sh"):
        return []
    out = []
    for client in source.script.runs("client"):
        args = client.arguments()
        if {w.text for w in args} & CHAT_FLAGS:
            continue
        unknown = [w.text for i, w in enumerate(args) if _may_be_flags(w, args[i - 1] if i else None)]
        if unknown:
            out.append(
                _at(source, Severity.UNVERIFIED, "scripts-chat-template-unknown", client.line, values=unknown)
            )
            continue
        last = client.end_line
        out.append(
            _at(
                source,
                Severity.BLOCKING,
                "scripts-chat-template",
                last,
                call=client.line,
                suggestion=_append_flag(source.lines, last, "--use-chat-template"),
            )
        )
    return out


def _may_be_flags(word: Word, previous: Word | None) -> bool:
    """Whether a word the script cannot spell out may hold client flags: a command substitution
    (`$( … && echo "--use-chat-template")`), or a variable the script never sets that is not the
    value of the option before it."""
    if "`" in word.text or "$(" in word.text.replace("$((", ""):
        return True
    after_value_option = (
        previous is not None and previous.text.startswith("-") and previous.text not in CLIENT_SWITCHES
    )
    return word.unresolved and not after_value_option


def _append_flag(lines: list[str], line: int, flag: str) -> str | None:
    """The command's last line, continued with one more flag on a line of its own."""
    if not 0 < line <= len(lines):
        return None
    text = lines[line - 1].rstrip()
    if text.endswith("\\") or "#" in text or ">" in text or "&" in text:
        return None  # a comment, a redirect or a background: the end is not plain
    indent = text[: len(text) - len(text.lstrip())] or "    "
    if line > 1 and lines[line - 2].rstrip().endswith("\\") and lines[line - 1].startswith(" "):
        return f"{text} \\\n{indent}{flag}"
    return f"{text} \\\n    {flag}"


def expert_parallel(source: Source) -> list[Finding]:
    """PR reviewer "Expert Parallelism Validation": vLLM and ATOM enable expert parallelism only
    under an `EP_SIZE` condition, never hard-coded; SGLang takes `--expert-parallel-size N`, vLLM
    does not. Warnings."""
    out = []
    for command in source.script.commands:
        program = command.program()
        if program is None or program[0] not in ENGINES:
            continue
        engine = program[0]
        for word in command.arguments():
            gates = (*command.gates, *word.gates)
            if not source.command_touched(command, [word]):
                continue
            if word.text == EP_FLAG and engine in ("vllm", "atom") and not any(map(_about_ep, gates)):
                out.append(
                    _at(source, Severity.WARNING, "scripts-ep-hardcoded", word.line, engine=ENGINES[engine])
                )
            elif word.text == EP_FLAG and engine == "sglang":
                out.append(_at(source, Severity.WARNING, "scripts-ep-sglang", word.line))
            elif word.text.split("=", 1)[0] == "--expert-parallel-size" and engine == "vllm":
                out.append(_at(source, Severity.WARNING, "scripts-ep-vllm-size", word.line))
    return out


def _about_ep(gate: Gate) -> bool:
    """A branch on expert parallelism: its condition reads `EP_SIZE` or another variable named for
    EP (`ROLE_ENABLE_EP`, `EP`)."""
    return any("EP" in name.split("_") for name in gate.reads)


def one_per_line(source: Source) -> list[Finding]:
    """PR reviewer "Server Launch Command Formatting": the arguments of `sglang.launch_server` and
    `vllm serve` one per line. A line of the command (or of the array it is kept in) that holds
    more than one option is a warning, once per command."""
    out = []
    for command in source.script.commands:
        program = command.program()
        if program is None or program[0] not in ("vllm", "sglang"):
            continue
        holder = command.words[0].via  # a command kept in an array: that array's lines
        by_line: dict[int, list[str]] = {}
        for word in command.words:
            if word.via == holder and word.text.startswith("-") and len(word.text) > 1:
                by_line.setdefault(word.line, []).append(word.text)
        crowded = [(line, flags) for line, flags in sorted(by_line.items()) if len(flags) > 1]
        crowded = [(line, flags) for line, flags in crowded if source.touches([line])]
        if crowded:
            line, flags = crowded[0]
            out.append(
                _at(
                    source,
                    Severity.WARNING,
                    "scripts-one-per-line",
                    line,
                    engine=ENGINES[program[0]],
                    flags=flags[:6],
                    lines=len(crowded),
                )
            )
    return out


def enroot_import(source: Source) -> list[Finding]:
    """PR reviewer "Enroot Import Validation": a `runners/launch_*.sh` that runs a Slurm container
    (`--container-image`) imports a public image with `enroot import … docker://…`, or the PR says
    why not. Warning on a launcher the PR adds or changes."""
    if not (source.name.startswith("launch_") and "runners/" in source.path):
        return []
    words = [w for c in source.script.commands for w in c.words]
    uses = next((w for w in words if w.text.split("=", 1)[0] == "--container-image"), None)
    if uses is None:
        return []
    imports = any(
        c.texts[:2] == ["enroot", "import"] and any(t.startswith("docker://") for t in c.texts)
        for c in source.script.commands
    )
    if imports:
        return []
    return [_at(source, Severity.WARNING, "scripts-enroot-missing", uses.line)]


def workspace_dirs(source: Source) -> list[Finding]:
    """AGENTS.md "Non-negotiable benchmark invariants": benchmarks create no new directories under
    `/workspace`. A `mkdir` of such a path in a benchmark script is blocking."""
    if "benchmarks/" not in source.path:
        return []
    out = []
    for command in source.script.commands:
        if not command.texts or command.texts[0] != "mkdir":
            continue
        for word in command.words[1:]:
            path = word.text.rstrip("/")
            if path.startswith("/workspace/") and source.command_touched(command, [word]):
                out.append(_at(source, Severity.BLOCKING, "scripts-workspace-dir", word.line, path=word.text))
    return out


def flop_overrides(source: Source) -> list[Finding]:
    """Verifier Check 8: no override that makes the model skip computation. An `--hf-overrides`
    setting `index_topk_freq` above 1 or `use_index_cache` on (the indexer skipped in most layers)
    is blocking; any other architecture override is not judged (whether it cuts FLOPs needs the
    model's own config)."""
    out = []
    for command in source.script.commands:
        program = command.program()
        if program is None or program[0] not in ENGINES:
            continue
        words = command.arguments()
        for i, word in enumerate(words):
            flag, _, inline = word.text.partition("=")
            if flag not in OVERRIDE_FLAGS:
                continue
            value = words[i + 1] if not inline and i + 1 < len(words) else word
            if not source.command_touched(command, [word, value]):
                continue
            text = inline or value.text
            skipping = _skipping(text)
            if skipping is None:
                out.append(
                    _at(source, Severity.UNVERIFIED, "scripts-override-unjudged", word.line, flag=flag)
                )
            elif skipping:
                out.append(
                    _at(
                        source,
                        Severity.BLOCKING,
                        "scripts-flop-override",
                        value.line,
                        flag=flag,
                        settings=skipping,
                    )
                )
    return out


def _skipping(text: str) -> list[str] | None:
    """The computation-skipping settings of an override's JSON (None: not JSON we can read)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    found: list[str] = []
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key == "index_topk_freq" and isinstance(value, int | float) and value > 1:
                    found.append(f"{key}={value}")
                elif key == "use_index_cache" and value is True:
                    found.append(f"{key}=true")
                elif isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return sorted(found)


def engine_patches(source: Source) -> list[tuple[int, str]]:
    """Verifier Check 10: what in a benchmark script changes the serving engine: `git apply` or
    `patch`, and `sed -i` / `cp` / `mv` / `tee` / `>` into an installed package (`site-packages`,
    `dist-packages`, `/sgl-workspace`). Each as (line, what) on lines the PR touched."""
    if "benchmarks/" not in source.path:
        return []
    found = []
    for command in source.script.commands:
        texts = command.texts
        if not texts or not source.command_touched(command):
            continue
        what = None
        if texts[:2] == ["git", "apply"] or texts[0] == "patch":
            what = " ".join(texts[:2])
        elif texts[0] in ("sed", "cp", "mv", "tee", "install", "ln", "cat", "echo", "printf"):
            writes = (
                texts[1:]
                if texts[0] != "sed" or "-i" in texts or any(t.startswith("-i") for t in texts)
                else []
            )
            targets = [*writes, *command.redirects] if texts[0] != "cat" else list(command.redirects)
            if texts[0] in ("echo", "printf"):
                targets = list(command.redirects)
            if any(p in t for t in targets for p in ENGINE_PATHS):
                what = texts[0]
        if what:
            found.append((command.line, what))
    return found


RULES = (chat_template, expert_parallel, one_per_line, enroot_import, workspace_dirs, flop_overrides)
