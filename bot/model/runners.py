"""Runner hardware from `configs/runners.yaml` (current `clusters:` layout and older `hardware:`)."""

from __future__ import annotations

from typing import Any, NamedTuple

from bot.model import schema


class Hardware(NamedTuple):
    """What the DRAM check needs to know about the machines a runner label schedules on."""

    name: str
    gpus_per_node: int | None
    available_mib: int | None
    line: int | None


def number(value: Any) -> int | None:
    """A positive whole number as pydantic 2 reads one (`schema.POSITIVE`: `_` digit separators
    allowed, no other script's digits), else None."""
    found = schema.POSITIVE.accepts(value)
    return found if type(found) is int else None


def shape_problem(runners: Any, runner: str) -> tuple[str, int | None] | None:
    """(field, line) when runners.yaml is not shaped as a lookup of `runner` needs, else None."""
    if not isinstance(runners, dict):
        return "runners.yaml", 1
    name = "clusters" if runner.startswith("cluster:") and "clusters" in runners else "hardware"
    table = runners.get(name)
    if table is not None and not isinstance(table, dict):
        return name, getattr(runners, "lines", {}).get(name)
    return None


def _find(runners: Any, runner: str) -> tuple[str, Any, Any] | None:
    """(name, record, the table holding it) of a master-config runner label, or None when
    runners.yaml has no record of it. `cluster:<name>` refers to `clusters.<name>`; the older
    layout keys `hardware:` by the label."""
    if not isinstance(runners, dict):
        return None
    clusters = runners.get("clusters")
    if runner.startswith("cluster:") and isinstance(clusters, dict):
        name = runner.removeprefix("cluster:")
        if clusters.get(name) is not None:
            return name, clusters[name], clusters
    hardware = runners.get("hardware")
    if isinstance(hardware, dict) and hardware.get(runner) is not None:
        return runner, hardware[runner], hardware
    return None


def record(runners: Any, runner: str | None) -> Any:
    """Everything runners.yaml says about a runner label's machines, as parsed (None: nothing):
    what a run starts on, compared base against head."""
    found = _find(runners, runner) if isinstance(runner, str) else None
    return found[1] if found else None


def lookup(runners: Any, runner: str) -> Hardware | None:
    """Hardware of a master-config runner label, or None when runners.yaml has no record of it."""
    found = _find(runners, runner)
    if found is None:
        return None
    name, data, table = found
    if not isinstance(data, dict):  # named, but not a mapping of hardware fields
        data = {}
    lines = getattr(table, "lines", {})
    return Hardware(
        name=name,
        gpus_per_node=number(data.get("gpus-per-node")),
        available_mib=number(data.get("available-cpu-dram-mib")),
        line=lines.get(name) if isinstance(lines, dict) else None,
    )


def labels(runners: Any) -> dict[str, Any] | None:
    """The runner labels the sweep's jobs can be scheduled on, each with the machines that carry
    it: `labels:`, or the older file's top level (label → machines). None when runners.yaml has
    no such table (nothing to tell)."""
    if not isinstance(runners, dict):
        return None
    table = runners.get("labels")
    if isinstance(table, dict):
        return table
    if "labels" in runners or "hardware" in runners or "clusters" in runners or not runners:
        return None
    return runners if all(isinstance(v, list) for v in runners.values()) else None
