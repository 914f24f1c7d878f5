"""The host-DRAM budget formula of DESIGN.md §2 `dram`, in exact decimal arithmetic."""

from __future__ import annotations

from decimal import ROUND_FLOOR, Decimal, localcontext
from typing import Any, NamedTuple

from bot.model.master import Point
from bot.model.runners import number

CAP_MIB = 2_861_022
MIB = 1_048_576
GB = 10**9


class Budget(NamedTuple):
    """The calculation, kept whole so that a finding can show its work."""

    available_mib: int
    capped_mib: int
    utilization: Decimal
    gpus: int
    gpus_per_node: int
    total_gb: int

    def per_rank(self, tp: int) -> int:
        return self.total_gb // tp

    @property
    def host_total_gb(self) -> int:
        """The node total this block implies (total ÷ utilization × node share), rounded down."""
        with localcontext() as ctx:
            ctx.prec = 60
            value = Decimal(self.total_gb) / self.utilization * self.gpus_per_node / self.gpus
        return int(value.to_integral_value(ROUND_FLOOR))


def budget(available_mib: int, utilization: Decimal, gpus: int, gpus_per_node: int) -> Budget:
    """total_gb = floor(min(available_mib, cap) × 1 MiB × utilization × gpus / gpus_per_node / 1e9)."""
    capped = min(available_mib, CAP_MIB)
    with localcontext() as ctx:
        ctx.prec = 60
        value = Decimal(capped) * MIB * utilization * gpus / gpus_per_node / GB
    return Budget(
        available_mib, capped, utilization, gpus, gpus_per_node, int(value.to_integral_value(ROUND_FLOOR))
    )


BUDGET_SETTING = "total-cpu-dram-gb"  # the generator's name for the budget it hands on
BUDGET_FIELDS = ("available-cpu-dram-mib", "gpus-per-node")  # the record fields it is made of


def reads(point: Point, record: Any) -> dict[str, Any]:
    """What a run of `point` reads through the DRAM rule from its runner's runners.yaml record:
    the budget InferenceX's generator computes for an agentic point that offloads KV to DRAM and
    hands on as `total-cpu-dram-gb` (`TOTAL_CPU_DRAM_GB`), else nothing (no other run reads
    `available-cpu-dram-mib` or `gpus-per-node`). When the budget cannot be computed, the fields it
    would be made of, as written, so that a change of them is still a change of the run."""
    if point.scenario != "agentic-coding" or point.kv_offloading != "dram":
        return {}
    fields = record if isinstance(record, dict) else {}
    available, per_node = (number(fields.get(name)) for name in BUDGET_FIELDS)
    gpus = min(point.gpus_per_worker, per_node) if point.multinode and per_node else point.gpus_per_worker
    if available is None or per_node is None or point.utilization is None or gpus > per_node:
        return {f"hardware.{name}": fields.get(name) for name in BUDGET_FIELDS}
    return {BUDGET_SETTING: budget(available, point.utilization, gpus, per_node).total_gb}
