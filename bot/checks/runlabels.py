"""How a run is named in a message: `C1` alone, or `C1 (8k1k TP4 EP4)` when other parallelism
configs of the same key also run at that concurrency (`C1 · C1 · C1` tells a reader nothing).

The label is notation, the same in every language: the sequence lengths of a fixed-seq-len
point, then `TP`, `EP`, `PP`, `DCP`, `PCP` (the last four only above 1), `DP-attn`, the spec
decoding and a KV offload other than none (`dram-offload`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bot.model.master import Point
from bot.model.schema import text


def lengths(isl: Any, osl: Any) -> str | None:
    """`8k1k` for isl 8192 / osl 1024; `1000/200` for lengths that are not whole kibi-tokens."""
    if type(isl) is not int or type(osl) is not int:
        return None
    if isl % 1024 == 0 and osl % 1024 == 0:
        return f"{text(isl // 1024)}k{text(osl // 1024)}k"
    return f"{text(isl)}/{text(osl)}"


def describe(fields: Mapping[str, Any]) -> str:
    """A parallelism config from its fields (a point's, or a run's `topology` in the JSON report:
    `tp`, `ep`, `pp`, `dcp`, `pcp`, `dp_attn`, `spec_decoding`, `kv_offloading`, and `isl`/`osl`
    where known), e.g. `8k1k TP4 EP4 DP-attn`; a number too long to write by `schema.text`'s quote."""

    def size(name: str) -> Any:
        value = fields.get(name)
        return value if type(value) is int and value > 1 else None

    spec, offload = fields.get("spec_decoding"), fields.get("kv_offloading")
    parts = [lengths(fields.get("isl"), fields.get("osl")), f"TP{text(fields.get('tp'))}"]
    parts += [f"{name.upper()}{text(size(name))}" for name in ("ep", "pp", "dcp", "pcp") if size(name)]
    parts.append("DP-attn" if fields.get("dp_attn") is True else None)
    parts.append(str(spec).upper() if spec not in (None, "none") else None)
    parts.append(f"{offload}-offload" if offload not in (None, "none") else None)
    return " ".join(p for p in parts if p)


def topology(point: Point) -> str:
    """The parallelism config of a point, e.g. `8k1k TP4 EP4 DP-attn`."""
    fields = {name: getattr(point, name) for name in ("isl", "osl", "tp", "ep", "pp", "dcp", "pcp")}
    fields.update(dp_attn=point.dp_attn, spec_decoding=point.spec_decoding, kv_offloading=point.kv_offloading)
    return describe(fields)


def shared(point: Point, concurrency: int, others: Iterable[tuple[Point, int]]) -> bool:
    """Whether another parallelism config among `others` (point, concurrency) runs at this
    concurrency, so that `C<concurrency>` alone would not say which run is meant."""
    return any(conc == concurrency and p.topology != point.topology for p, conc in others)


def label(point: Point, concurrency: int, others: Iterable[tuple[Point, int]]) -> str | None:
    """The topology to show beside `C<concurrency>`, or None when the concurrency says enough."""
    return topology(point) if shared(point, concurrency, others) else None
