"""How a run is named in a message: `C1` alone, or `C1 (8k1k TP4 EP4)` when other parallelism
configs of the same key also run at that concurrency (`C1 · C1 · C1` tells a reader nothing).

The label is notation, the same in every language: the sequence lengths of a fixed-seq-len
point, then `TP`, `EP`, `PP`, `DCP`, `PCP` (the last four only above 1), `DP-attn`, the spec
decoding and a KV offload other than none (`dram-offload`)."""

from __future__ import annotations

from collections.abc import Iterable

from bot.model.master import Point


def _lengths(point: Point) -> str | None:
    """`8k1k` for isl 8192 / osl 1024; `1000/200` for lengths that are not whole kibi-tokens."""
    isl, osl = point.isl, point.osl
    if isl is None or osl is None:
        return None
    if isl % 1024 == 0 and osl % 1024 == 0:
        return f"{isl // 1024}k{osl // 1024}k"
    return f"{isl}/{osl}"


def topology(point: Point) -> str:
    """The parallelism config of a point, e.g. `8k1k TP4 EP4 DP-attn`."""
    parts = [_lengths(point), f"TP{point.tp}"]
    parts += [f"{name}{size}" for name, size in (("EP", point.ep), ("PP", point.pp)) if size > 1]
    parts += [f"{name}{size}" for name, size in (("DCP", point.dcp), ("PCP", point.pcp)) if size > 1]
    parts.append("DP-attn" if point.dp_attn else None)
    parts.append(point.spec_decoding.upper() if point.spec_decoding != "none" else None)
    parts.append(f"{point.kv_offloading}-offload" if point.kv_offloading != "none" else None)
    return " ".join(p for p in parts if p)


def shared(point: Point, concurrency: int, others: Iterable[tuple[Point, int]]) -> bool:
    """Whether another parallelism config among `others` (point, concurrency) runs at this
    concurrency, so that `C<concurrency>` alone would not say which run is meant."""
    return any(conc == concurrency and p.topology != point.topology for p, conc in others)


def label(point: Point, concurrency: int, others: Iterable[tuple[Point, int]]) -> str | None:
    """The topology to show beside `C<concurrency>`, or None when the concurrency says enough."""
    return topology(point) if shared(point, concurrency, others) else None
