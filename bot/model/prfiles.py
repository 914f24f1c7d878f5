"""The files InferenceX's reviewer rules read (the `scripts` check), taken from the two refs once:
the shell scripts the PR adds or changes, at both refs, and the rule files at the BASE (a PR does
not choose the rules it is judged by): `MODELS.md`, the golden acceptance lengths, the waivers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from bot.model.bash import MAX_BYTES
from bot.sources.snapshot import Oversized, Snapshot

SCRIPT_FOLDERS = ("benchmarks/", "runners/")
SWEEP_GENERATOR = "utils/matrix_logic/generate_sweep_configs.py"
MODELS = "MODELS.md"
GOLDEN = "golden_al_distribution/"
WAIVERS = "docs/waiver/"
PATCH_SUFFIXES = (".patch", ".diff")
# Every file this module may read, under either root: the action fetches them with the data paths.
READ_PATHS = (*SCRIPT_FOLDERS, SWEEP_GENERATOR, MODELS, GOLDEN, WAIVERS)


class Changed(NamedTuple):
    """A file the PR touches: its bytes at the base and at the head (None: absent at that ref; an
    `Oversized` when beyond the size limit)."""

    path: str
    base: bytes | None
    head: bytes | None


@dataclass(frozen=True)
class PrFiles:
    scripts: list[Changed] = field(default_factory=list)  # `*.sh` under benchmarks/ and runners/
    patches: list[str] = field(default_factory=list)  # `.patch` / `.diff` files the PR adds or changes
    sweep_generator: Changed | None = None  # when the PR changes it
    models_base: bytes | None = None  # MODELS.md at the base
    golden_base: dict[str, bytes] = field(default_factory=dict)  # golden AL files at the base, by name
    waivers_head: frozenset[str] = frozenset()  # file names under docs/waiver/ at the head
    waivers_base: frozenset[str] = frozenset()
    pr_number: int | None = None


def _read(snapshot: Snapshot, path: str) -> bytes | None:
    data = snapshot.read(path)
    if data is None or isinstance(data, Oversized) or len(data) <= MAX_BYTES:
        return data
    return Oversized(len(data), "")


def _root_path(path: str, root: str) -> str | None:
    """The path below the layout's root ('' or `inferencex-e2e/`), or None when outside it."""
    if root and path.startswith(root):
        return path[len(root) :]
    return None if root else path


def _names(snapshot: Snapshot, folder: str) -> frozenset[str]:
    return frozenset(p[len(folder) :] for p in snapshot.list_files(folder) if "/" not in p[len(folder) :])


def _moves(scripts: list[Changed]) -> list[Changed]:
    """A script the PR moves (deleted here, added there under the same name, e.g. into a
    `deprecated/` folder) is compared with its old place: only what the move changed is new. Of
    several deleted scripts of that name, the one whose folder holds the new place."""
    gone: dict[str, list[Changed]] = {}
    for c in scripts:
        if c.head is None and c.base is not None:
            gone.setdefault(_name(c.path), []).append(c)
    out = []
    for c in scripts:
        candidates = gone.get(_name(c.path), []) if c.base is None else []
        if candidates:
            inside = [g for g in candidates if c.path.startswith(g.path.rsplit("/", 1)[0] + "/")]
            c = c._replace(base=(inside or candidates)[0].base)
        out.append(c)
    return out


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def read(base: Snapshot, head: Snapshot, changed: list[str], root: str, pr_number: int | None) -> PrFiles:
    """What the rules need, read at once (scripts in the order the PR lists them)."""
    scripts, patches = [], []
    generator = None
    for path in changed:
        inner = _root_path(path, root)
        if inner is None and root:
            inner = path  # runners/ and benchmarks/ may also sit at the repository root
        if inner is None:
            continue
        if inner.startswith(SCRIPT_FOLDERS) and inner.endswith(".sh"):
            scripts.append(path)
        elif inner.startswith(SCRIPT_FOLDERS) and inner.endswith(PATCH_SUFFIXES):
            patches.append(path)
        elif inner == SWEEP_GENERATOR:
            generator = path
    base.prefetch(scripts)
    head.prefetch(scripts)
    read_scripts = [Changed(p, _read(base, p), _read(head, p)) for p in scripts]
    agentic = any("agentic" in p for p in changed)
    golden_folder = root + GOLDEN
    return PrFiles(
        scripts=_moves(read_scripts),
        patches=[p for p in patches if head.read(p) is not None],
        sweep_generator=Changed(generator, base.read(generator), head.read(generator)) if generator else None,
        models_base=_read(base, root + MODELS),
        golden_base={
            p[len(golden_folder) :]: data
            for p in (base.list_files(golden_folder) if agentic else [])
            if p.endswith((".yaml", ".yml")) and (data := _read(base, p)) is not None
        },
        waivers_head=_names(head, root + WAIVERS),
        waivers_base=_names(base, root + WAIVERS),
        pr_number=pr_number,
    )
