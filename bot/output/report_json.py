"""The JSON report of DESIGN.md §3, which other tools read: the review's findings in both
languages, the published sets, the `changes` view and the sweep plan."""

from __future__ import annotations

import contextlib
from typing import Any

from bot.catalog import Msg
from bot.checks import changes_view
from bot.findings import Finding
from bot.output import messages, numbers
from bot.report import Report

INT64 = 2**63  # orjson writes integers from -2**63 to 2**64 - 1


def finding_json(item: Finding) -> dict[str, Any]:
    """One finding as DESIGN.md §3 shapes it."""
    return {
        "check": item.check,
        "severity": str(item.severity),
        "config_key": item.config_key,
        "file": item.file,
        "line": item.line,
        "message_en": messages.en(item),
        "message_zh": messages.zh(item),
        "suggestion": item.suggestion,
        "id": item.message_id,
    }


def to_json(report: Report) -> dict[str, Any]:
    return {
        "verdict": report.verdict,
        "findings": [finding_json(f) for f in report.findings],
        "published_sets": report.published_sets,
        "changes": changes_view.as_json(report.changes),
        "sweep_plan": report.sweep_plan,
    }


def json_bytes(report: Report) -> bytes:
    """The report as compact UTF-8 JSON (pipe it through `jq` to read it)."""
    return _dumps(to_json(report))


def failed_json(reason: Msg, report: Report | None = None) -> bytes:
    """The report of a review that has no verdict: `verdict` is "error" and `error` says why in
    both languages; the findings and tables of `report` (the checks ran, but something after them
    failed) when they can be written, else none."""
    error = {"message_en": messages.text(reason, "en"), "message_zh": messages.text(reason, "zh")}
    empty: dict[str, Any] = {"findings": [], "published_sets": {}, "changes": {}, "sweep_plan": {}}
    if report is not None:
        with contextlib.suppress(Exception):  # what failed may be this very report: then without it
            return _dumps({**to_json(report), "verdict": "error", "error": error})
    return _dumps({"verdict": "error", "error": error, **empty})


def _dumps(data: dict[str, Any]) -> bytes:
    import orjson  # about twenty times faster than json on a large review's megabyte

    try:
        return orjson.dumps(data, default=str)
    except TypeError:  # what orjson refuses: an integer over 64 bits, a non-str key, a lone surrogate
        import json

        data = _writable(data)
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
        return text.encode("utf-8", "backslashreplace")  # a lone surrogate becomes its JSON escape


def _writable(data: Any) -> Any:
    """`data` as JSON can hold it: an integer beyond 64 bits (which orjson refuses and most JSON
    readers round) as a string, its exact digits up to 40 of them, else shortened
    (`"1234567890…0987654321 (4,335 digits)"`); a mapping key that is not a string as the text
    JSON would give it."""
    if type(data) is int and not -INT64 <= data < 2 * INT64:
        return messages.long_number(data, "en") if numbers.is_long(data) else str(data)
    if isinstance(data, dict):
        return {_key(k): _writable(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_writable(item) for item in data]
    return data


def _key(key: Any) -> Any:
    if isinstance(key, str) or key is None or isinstance(key, bool | float):
        return key  # json writes these itself (`null`, `true`, `1.5`)
    written = _writable(key)
    return written if isinstance(written, str | int) else str(written)


def dumps(report: Report) -> str:
    return json_bytes(report).decode("utf-8")
