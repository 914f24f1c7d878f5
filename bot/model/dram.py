"""The host-DRAM budget formula of DESIGN.md §2 `dram`, in exact decimal arithmetic."""

from __future__ import annotations

from decimal import ROUND_FLOOR, Decimal, localcontext
from typing import NamedTuple

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
