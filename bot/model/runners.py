"""Runner hardware from `configs/runners.yaml` (current `clusters:` layout and older `hardware:`)."""

from __future__ import annotations

from typing import Any, NamedTuple


class Hardware(NamedTuple):
    """What the DRAM check needs to know about the machines a runner label schedules on."""

    name: str
    gpus_per_node: int | None
    available_mib: int | None
    line: int | None


def _number(value: Any) -> int | None:
    """A positive whole number (`_` digit separators allowed), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str) and value.replace("_", "").isdigit():
        return int(value.replace("_", "")) or None
    return None


def shape_problem(runners: Any, runner: str) -> tuple[str, int | None] | None:
    """(field, line) when runners.yaml is not shaped as a lookup of `runner` needs, else None."""
    if not isinstance(runners, dict):
        return "runners.yaml", 1
    name = "clusters" if runner.startswith("cluster:") and "clusters" in runners else "hardware"
    table = runners.get(name)
    if table is not None and not isinstance(table, dict):
        return name, getattr(runners, "lines", {}).get(name)
    return None


def lookup(runners: Any, runner: str) -> Hardware | None:
    """Hardware of a master-config runner label, or None when runners.yaml has no record of it.

    `cluster:<name>` refers to `clusters.<name>`; the older layout keys `hardware:` by the label.
    """
    if not isinstance(runners, dict):
        return None
    record = None
    name = runner
    clusters = runners.get("clusters")
    if runner.startswith("cluster:") and isinstance(clusters, dict):
        name = runner.removeprefix("cluster:")
        record = clusters.get(name)
        lines = getattr(clusters, "lines", {})
    if record is None and isinstance(runners.get("hardware"), dict):
        record = runners["hardware"].get(runner)
        lines = getattr(runners["hardware"], "lines", {})
        name = runner
    if record is None:
        return None
    if not isinstance(record, dict):  # named, but not a mapping of hardware fields
        record = {}
    return Hardware(
        name=name,
        gpus_per_node=_number(record.get("gpus-per-node")),
        available_mib=_number(record.get("available-cpu-dram-mib")),
        line=lines.get(name) if isinstance(lines, dict) else None,
    )
