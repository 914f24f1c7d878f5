"""The benchmark matrix InferenceX's sweep generates for a config key, and which of its rows get
an eval job, as its `utils/matrix_logic/generate_sweep_configs.py` decides (read there, restated
here; DESIGN.md §2 `sweep-plan`).

A *row* is one job of the sweep. A single-node point gives one row per concurrency; a multinode
fixed-seq-len point gives one row that runs all its concurrencies on one allocation; a multinode
agentic point gives one row per concurrency (upstream allocates one concurrency at a time).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, NamedTuple

from bot.checks.sweep_rules import generated_row
from bot.model.master import ConfigEntry, Point
from bot.yamlsafe import frozen

EVAL_ISL_OSL = (8192, 1024)  # evals run at 8k1k only
MIN_EVAL_CONC = 16  # fixed-seq-len and multinode evals ignore lower concurrencies


class Row(NamedTuple):
    """One job: a point of a key at one concurrency, or at several (multinode fixed-seq-len)."""

    key: str
    entry: ConfigEntry
    point: Point
    concurrencies: tuple[int, ...]

    @property
    def agentic(self) -> bool:
        return self.point.scenario == "agentic-coding"

    @property
    def curve(self) -> tuple[Any, ...]:
        """What identifies a row apart from its concurrency: upstream's whole row without `conc`
        (`generated_row`), so that two points differing in any field it hands on (a KV-offload
        backend, `kv-p2p-transfer`, `router`) are two parallelism configs, as its trimming and
        eval grouping tell them apart."""
        return (self.key, generated_row(self.entry, self.point), self.point.topology)

    def field(self, name: str) -> Any:
        raw = self.entry.raw
        return raw.get(name) if isinstance(raw, dict) else None


def rows(key: str, entry: ConfigEntry, scenarios: tuple[str, ...]) -> list[Row]:
    """The key's whole matrix, restricted to some scenario types, in upstream's order (fixed-seq-len
    groups first, then agentic ones, each point in file order)."""
    out: list[Row] = []
    for scenario in ("fixed-seq-len", "agentic-coding"):
        if scenario not in scenarios:
            continue
        for point in entry.points:
            if point.scenario != scenario or not point.concurrencies:
                continue
            if point.multinode and scenario == "fixed-seq-len":
                out.append(Row(key, entry, point, tuple(point.concurrencies)))
            else:
                out += [Row(key, entry, point, (c,)) for c in point.concurrencies]
    return out


def trim(matrix: list[Row]) -> list[Row]:
    """The trimmed sweep (`sweep-enabled`): each parallelism config at its lowest concurrency.
    Multinode rows keep their lowest concurrency; single-node rows that differ only in
    concurrency keep the one with the lowest."""
    out: list[Row] = []
    lowest: dict[tuple[Any, ...], int] = {}
    for row in matrix:
        if row.point.multinode:
            out.append(row._replace(concurrencies=(min(row.concurrencies),)))
            continue
        curve = row.curve
        position = lowest.get(curve)
        if position is None:
            lowest[curve] = len(out)
            out.append(row)
        elif row.concurrencies[0] < out[position].concurrencies[0]:
            out[position] = row
    return out


def _eligible(row: Row) -> list[int]:
    return sorted(c for c in row.concurrencies if c >= MIN_EVAL_CONC)


def _is_8k1k(row: Row) -> bool:
    return (row.point.isl, row.point.osl) == EVAL_ISL_OSL


def eval_rows(matrix: list[Row], *, all_evals: bool) -> list[tuple[Row, int | None]]:
    """The eval jobs upstream selects from one generation's rows, each with the concurrency it
    evaluates at (None: every concurrency of the row). Agentic rows are included, as in an
    evals-only generation."""
    chosen: dict[int, int | None] = {}
    groups: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    parallel: dict[tuple[Any, ...], list[tuple[int, int]]] = defaultdict(list)
    agentic: dict[tuple[Any, ...], list[tuple[int, int]]] = defaultdict(list)
    for index, row in enumerate(matrix):
        # `frozen`: a PR may write a mapping or a list where the model or precision should be
        model, precision = frozen(row.field("model")), frozen(row.field("precision"))
        family = (model, row.entry.runner, row.entry.framework, precision)
        eligible = _eligible(row)
        if row.agentic:
            if row.point.multinode:
                if eligible:
                    parallel[("agentic", row.curve)].append((index, eligible[-1]))
            else:
                agentic[family].append((index, max(row.concurrencies)))
            continue
        if not _is_8k1k(row) or not eligible:
            continue
        if row.point.multinode:
            parallel[row.curve].append((index, eligible[-1]))
        else:
            point = row.point
            groups[(*family, point.isl, point.osl, point.spec_decoding, point.dp_attn)].append(index)
    for members in groups.values():
        values = sorted({matrix[i].concurrencies[0] for i in members})
        targets = {values[-1], values[len(values) // 2]}
        chosen.update(
            (i, matrix[i].concurrencies[0]) for i in members if matrix[i].concurrencies[0] in targets
        )
    for members in [*parallel.values(), *agentic.values()]:
        index, conc = max(members, key=lambda item: item[1])
        chosen[index] = conc
    if not all_evals:
        return [(matrix[i], conc) for i, conc in sorted(chosen.items())]
    return _all_evals(matrix, chosen)


def _all_evals(matrix: list[Row], chosen: dict[int, int | None]) -> list[tuple[Row, int | None]]:
    """`all-evals`: every 8k1k single-node row and every single-node agentic row; multinode rows of
    one parallelism config merged into one eval job (agentic ones at their highest concurrency)."""
    out: list[tuple[Row, int | None]] = []
    merged: dict[tuple[Any, ...], int] = {}
    for index, row in enumerate(matrix):
        if row.point.multinode and (row.agentic or _is_8k1k(row)):
            group = ("agentic" if row.agentic else "fixed", row.curve)
            if group in merged:
                kept, _ = out[merged[group]]
                concs = tuple(sorted({*kept.concurrencies, *row.concurrencies}))
                out[merged[group]] = (kept._replace(concurrencies=concs), max(concs) if row.agentic else None)
                continue
            merged[group] = len(out)
            out.append((row, max(row.concurrencies) if row.agentic else None))
        elif row.agentic or _is_8k1k(row) or index in chosen:
            out.append((row, row.concurrencies[0]))
    return out


def min_prefill_ep(
    selected: list[tuple[Row, int | None]], minimum: int | None
) -> list[tuple[Row, int | None]]:
    """An entry's `eval-min-prefill-ep`: multinode eval jobs whose prefill EP is lower are dropped."""
    if minimum is None:
        return selected
    return [(row, conc) for row, conc in selected if not row.point.multinode or row.point.ep >= minimum]
