"""The `changes` view as typed records (DESIGN.md §4), and its form in the JSON report (§3).

`bot.checks.changes` builds one `KeyChanges` per changed config key; the comment, the first
screen and the `consistency` check read its fields by name, so a field renamed here fails where it
is read (and the comment's template, run with `StrictUndefined`, fails on a name it does not find)
instead of rendering nothing. `as_json` writes the JSON report's `changes` exactly as §3 pins it:
`{"common": [setting…], "runs": [{"concurrency", "topology", "variant_base", "variant_head",
"status", "settings"}]}`, a setting `{"path", "base", "head"}` (and `"added"`, `"removed"` for two
lists); `topology_base` where a run's identity setting changed, `entry` for a new key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from bot.yamlsafe import frozen

Status = Literal["added", "removed", "changed", "as-before"]


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting that differs between a run at base and at head: its dotted path and both values
    (None where absent); for two lists, the items only the head has and those only the base has."""

    path: str
    base: Any
    head: Any
    added: list[Any] | None = None
    removed: list[Any] | None = None

    def key(self) -> frozenset[tuple[str, Any]]:
        """Something hashable, equal exactly when two changes are (values by value and type); a
        frozenset, which keeps its hash: a long list's change is hashed once, however often it is
        looked up."""
        return frozenset((("path", self.path), ("base", frozen(self.base)), ("head", frozen(self.head))))

    def as_json(self) -> dict[str, Any]:
        shown = {"path": self.path, "base": self.base, "head": self.head}
        if self.added is not None and self.removed is not None:
            shown.update(added=self.added, removed=self.removed)
        return shown


@dataclass(frozen=True, slots=True)
class Topology:
    """What identifies a run's point apart from its concurrency: its scenario, sequence lengths
    (None for agentic points) and parallelism."""

    scenario: str
    isl: int | None
    osl: int | None
    tp: int
    ep: int
    pp: int
    dcp: int
    pcp: int
    dp_attn: bool
    spec_decoding: str
    kv_offloading: str

    def as_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "isl": self.isl,
            "osl": self.osl,
            "tp": self.tp,
            "ep": self.ep,
            "pp": self.pp,
            "dcp": self.dcp,
            "pcp": self.pcp,
            "dp_attn": self.dp_attn,
            "spec_decoding": self.spec_decoding,
            "kv_offloading": self.kv_offloading,
        }


@dataclass(frozen=True, slots=True)
class RunChange:
    """One run of a changed key: its concurrency and topology, the variant it selects at each ref
    (None where it does not exist or selects none), its state, and the settings that changed at it
    beyond those common to every run of the key. `topology_base` is the base run's topology when
    the run is paired with a base run that differs in one identity setting (`kv-offloading`
    `none` → `dram`)."""

    concurrency: int
    topology: Topology
    variant_base: str | None
    variant_head: str | None
    status: Status
    settings: tuple[Setting, ...]
    topology_base: Topology | None = None


@dataclass(frozen=True, slots=True)
class NewEntry:
    """A new key's entry, by the fields it is named by (those that are text; None otherwise)."""

    model: str | None = None
    precision: str | None = None
    runner: str | None = None
    framework: str | None = None
    image: str | None = None

    def as_json(self) -> dict[str, str]:
        fields = {
            "model": self.model,
            "precision": self.precision,
            "runner": self.runner,
            "framework": self.framework,
            "image": self.image,
        }
        return {name: value for name, value in fields.items() if value is not None}


@dataclass(frozen=True, slots=True)
class KeyChanges:
    """One changed key: the settings that changed the same way at every run, then its runs."""

    common: tuple[Setting, ...]
    runs: tuple[RunChange, ...]
    entry: NewEntry | None = None  # a new key's entry


def as_json(changes: Mapping[str, KeyChanges], keys: Iterable[str] | None = None) -> dict[str, Any]:
    """The JSON report's `changes` (of `keys` only, when given): settings and topologies that runs
    and keys share are written once each and shared in the result."""
    written: dict[int, dict[str, Any]] = {}

    def once(record: Setting | Topology) -> dict[str, Any]:
        found = written.get(id(record))
        if found is None:
            found = written[id(record)] = record.as_json()
        return found

    def run_json(run: RunChange) -> dict[str, Any]:
        shown = {
            "concurrency": run.concurrency,
            "topology": once(run.topology),
            "variant_base": run.variant_base,
            "variant_head": run.variant_head,
            "status": run.status,
            "settings": [once(s) for s in run.settings],
        }
        if run.topology_base is not None:
            shown["topology_base"] = once(run.topology_base)
        return shown

    out: dict[str, Any] = {}
    for key in changes if keys is None else keys:
        view = changes.get(key)
        if view is None:
            continue
        out[key] = {"common": [once(s) for s in view.common], "runs": [run_json(run) for run in view.runs]}
        if view.entry is not None:
            out[key]["entry"] = view.entry.as_json()
    return out
