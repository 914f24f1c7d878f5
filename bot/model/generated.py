"""The fields InferenceX's generator hands on for a config key and a search-space point, with the
defaults it fills in (its `utils/matrix_logic/generate_sweep_configs.py`, read at 843c6254f, and
the input models of `validation.py`): a field written out with its default is the same run as the
field left out, so that `pp: 1`, `ep: 1`, `dp-attn: false`, `spec-decoding: none` or
`disagg: false` written out change no run.

A default counts only when written with the very value and type the generator fills in (`ep: 1`,
never `ep: 1.0` or `ep: "1"`: the generator hands those on as written), or as null where the
generator reads the field with a fallback (`ep`, `dp-attn` of a single-node point) or hands it on
only when set (`kv-offload-backend`, a key's `router` and `kv-p2p-transfer`).
"""

from __future__ import annotations

from typing import Any

CONCURRENCY_FIELDS = ("conc-list", "conc-start", "conc-end")
SCENARIO_FIELDS = ("scenarios", "seq-len-configs")  # an entry's matrix, not a setting of its own
# A single-node point (fixed-seq-len and agentic alike): `bmk.get(field, default)`, and `ep` and
# `dp-attn` read with `.get` and set to 1 / false when None.
SINGLE_NODE = {"pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 1, "dp-attn": False, "spec-decoding": "none"}
SINGLE_NODE_NULL = ("ep", "dp-attn")
# A multinode point; its agentic rows also default `kv-offloading` (single-node agentic points must
# write it, and fixed-seq-len rows carry none).
MULTINODE = {"spec-decoding": "none"}
MULTINODE_AGENTIC = {**MULTINODE, "kv-offloading": "none"}
# Each worker (`prefill`, `decode`) of a multinode point: `with_worker_parallelism_defaults`.
WORKER = {"pp": 1, "dcp-size": 1, "pcp-size": 1}
WORKERS = ("prefill", "decode")
# A config key's own fields: `val.get("disagg", False)`.
ENTRY = {"disagg": False}
# Handed on only when set (`if value is not None`): null is the field left out.
POINT_NULL_ABSENT = ("kv-offload-backend",)
ENTRY_NULL_ABSENT = ("router", "kv-p2p-transfer")


def _filled(fields: dict[Any, Any], defaults: dict[str, Any], null: tuple[str, ...] = ()) -> dict[Any, Any]:
    """`fields` with each default set where the field is absent (or null, for the fields in
    `null`), and kept as written otherwise: written with its default, it is the same as left out."""
    out = dict(fields)
    for name, default in defaults.items():
        if name not in out or (out[name] is None and name in null):
            out[name] = default
    return out


def point_fields(raw: Any, scenario: str, multinode: bool) -> Any:
    """A point's fields as the generator's row holds them: everything but its concurrencies, with
    the defaults filled in (the point as parsed when it is not a mapping)."""
    if not isinstance(raw, dict):
        return raw
    fields = {k: v for k, v in raw.items() if k not in CONCURRENCY_FIELDS}
    for name in POINT_NULL_ABSENT:
        if name in fields and fields[name] is None:
            del fields[name]
    if not multinode:
        return _filled(fields, SINGLE_NODE, SINGLE_NODE_NULL)
    fields = _filled(fields, MULTINODE_AGENTIC if scenario == "agentic-coding" else MULTINODE)
    for role in WORKERS:
        worker = fields.get(role)
        if isinstance(worker, dict):
            fields[role] = _filled(worker, WORKER)
    return fields


def entry_fields(raw: Any) -> Any:
    """A config key's own fields (all but its matrix) as the generator reads them, with its
    defaults filled in (the entry as parsed when it is not a mapping)."""
    if not isinstance(raw, dict):
        return raw
    fields = {k: v for k, v in raw.items() if k not in SCENARIO_FIELDS}
    for name in ENTRY_NULL_ABSENT:
        if name in fields and fields[name] is None:
            del fields[name]
    return _filled(fields, ENTRY)
