"""The sign-off verifier's Check 6 (b), engine-first ordering: a key the PR adds for a framework
other than vLLM / SGLang (TensorRT-LLM, ATOM, Dynamo with TensorRT-LLM, TileRT, …) needs a vLLM or
SGLang key for the same model (`model-prefix`) and SKU (`runner`) in the master configs already.
Decided on the master configs at both refs; the exception the verifier allows (documented in the
sign-off: new hardware, or an architecture upstream vLLM / SGLang cannot serve yet) is named in
the message, never judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from bot.checks.script_configs import ESTABLISHED
from bot.checks.script_rules import CHECK
from bot.diff import ReviewDiff
from bot.findings import Finding, Severity, finding

# A framework runs vLLM or SGLang when one of its `-`/`_` separated words is one of these: `vllm`,
# `sglang`, and their Dynamo, llm-d and disaggregated forms (`dynamo-sglang`, `llmd-vllm`,
# `sglang-disagg`), which run the upstream engine under an orchestrator.
ENGINES = frozenset({"vllm", "sglang"})


def upstream_engine(framework: object) -> bool:
    """Whether a framework runs the vLLM or SGLang engine."""
    return isinstance(framework, str) and bool(ENGINES & set(re.split(r"[-_]", framework.lower())))


def sku(runner: object) -> str | None:
    """The hardware of a runner label: its name up to the first `-`, `cluster:` left out
    (`cluster:gb300-nv` → `gb300`, `b200-dsv4` → `b200`)."""
    if not isinstance(runner, str):
        return None
    name = runner.removeprefix("cluster:").split("-", 1)[0].lower()
    return name or None


def _fields(raw: Any) -> tuple[str, str, str] | None:
    """(model prefix, SKU, framework) of an entry, when all three are strings."""
    if not isinstance(raw, dict):
        return None
    prefix, hardware, framework = raw.get("model-prefix"), sku(raw.get("runner")), raw.get("framework")
    if isinstance(prefix, str) and hardware and isinstance(framework, str):
        return prefix, hardware, framework
    return None


def _index(entries: Iterable[tuple[str, Any]]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(model prefix, SKU) → the keys there with their frameworks."""
    index: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for key, raw in entries:
        fields = _fields(raw)
        if fields is not None:
            index.setdefault(fields[:2], []).append((key, fields[2]))
    return index


def check(diff: ReviewDiff) -> list[Finding]:
    """A key added for another framework where neither ref has a vLLM / SGLang key of that model and
    SKU: blocking on established hardware, not checked on other hardware (whether it is the new
    hardware the exception allows is the sign-off's to say). A framework the base already runs
    there has landed before this PR: its further keys are not judged again."""
    added = [c for c in diff.keys.values() if c.base is None and c.head is not None]
    masters = list(diff.masters_base.values())
    if not masters or any(m.unreadable for m in masters):
        return []  # without the base's master configs every key looks added: nothing to order by
    if all(upstream_engine(c.head.framework) for c in added if c.head):
        return []
    base = _index((key, raw) for master in masters for key, raw in master.raw.items())
    head_added = _index((c.key, c.head.raw) for c in added if c.head)
    out = []
    for change in added:
        head = change.head
        fields = _fields(head.raw) if head else None
        if head is None or fields is None or upstream_engine(fields[2]):
            continue
        prefix, hardware, framework = fields
        there = base.get((prefix, hardware), [])
        if any(upstream_engine(f) for _, f in there) or any(f == framework for _, f in there):
            continue
        if any(upstream_engine(f) for _, f in head_added.get((prefix, hardware), [])):
            continue  # landing together with a vLLM / SGLang key of this PR
        established = hardware in ESTABLISHED
        out.append(
            finding(
                CHECK,
                Severity.BLOCKING if established else Severity.UNVERIFIED,
                "verifier-engine-first" if established else "verifier-engine-first-new-hardware",
                config_key=change.key,
                file=head.file,
                line=head.line,
                framework=framework,
                prefix=prefix,
                sku=hardware,
                others=sorted({f for _, f in there}),
            )
        )
    return out
