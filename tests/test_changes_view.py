"""The `changes` view is typed records (DESIGN.md §4): a field renamed on one side fails loudly
where the other side reads it, instead of the comment rendering nothing there; the JSON report's
`changes` keeps DESIGN.md §3's contract."""

from __future__ import annotations

import dataclasses
import json
from collections import namedtuple
from typing import Any

import jinja2
import pytest

from bot.checks.changes_view import KeyChanges, NewEntry, RunChange, Setting, Topology
from bot.example import build_example
from bot.local import run_local
from bot.output import render, report_json
from bot.output.render import KeyRow, KeyShown, RunsRow, render_comment
from bot.report import Report

KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"
RECORDS = (KeyChanges, RunChange, Setting, Topology, NewEntry)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """The bundled example PR's review; its key also given a new key's entry, so that every field
    of every record is there to be read."""
    report = run_local(build_example(tmp_path_factory.mktemp("demo") / "example").request())[0]
    entry = NewEntry("amd/Kimi-K3-MXFP4", "fp4", "mi355x", "atom", "rocm/atom-dev:nightly")
    report.changes[KEY] = dataclasses.replace(report.changes[KEY], entry=entry)
    return report


def _renamed(cls: type, field: str | None) -> type:
    """A copy of the record class `cls` with `field` renamed (None: the same fields)."""
    fields = [
        (
            f"{f.name}_renamed" if f.name == field else f.name,
            f.type,
            dataclasses.field(default=f.default)
            if f.default is not dataclasses.MISSING
            else dataclasses.field(),
        )
        for f in dataclasses.fields(cls)
    ]
    methods = {
        name: value for name, value in vars(cls).items() if callable(value) and not name.startswith("__")
    }
    return dataclasses.make_dataclass(cls.__name__, fields, namespace=methods, frozen=True)


def _rebuilt(value: Any, cls: type, copy: type) -> Any:
    """`value` with every record of class `cls` in it made again as one of class `copy`."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = copy if type(value) is cls else type(value)
        return kind(*(_rebuilt(getattr(value, f.name), cls, copy) for f in dataclasses.fields(value)))
    if isinstance(value, tuple):
        return tuple(_rebuilt(item, cls, copy) for item in value)
    return value


def _outputs(report: Report, changes: dict[str, Any]) -> tuple[str, bytes]:
    """The comment (both languages) and the JSON report of `report` with these `changes`."""
    with_changes = Report(
        list(report.findings), report.published_sets, report.sweep_plan, report.changed_keys, changes
    )
    return render_comment(with_changes, target=None), report_json.json_bytes(with_changes)


@pytest.mark.parametrize("cls", RECORDS, ids=lambda cls: cls.__name__)
def test_the_records_copied_field_for_field_render_the_same(demo: Report, cls: type) -> None:
    """The control of the next test: a copy of a record class with the same fields changes nothing,
    so a failure there is the renamed field's."""
    same = {key: _rebuilt(view, cls, _renamed(cls, None)) for key, view in demo.changes.items()}
    assert _outputs(demo, same) == _outputs(demo, demo.changes)


@pytest.mark.parametrize(
    ("cls", "field"),
    [(cls, f.name) for cls in RECORDS for f in dataclasses.fields(cls)],
    ids=lambda value: value if isinstance(value, str) else value.__name__,
)
def test_a_renamed_field_of_the_changes_records_fails_instead_of_rendering_nothing(
    demo: Report, cls: type, field: str
) -> None:
    """Every field of every record is read by the comment, the first screen or the JSON report:
    renaming it on one side raises where it is read."""
    renamed = {key: _rebuilt(view, cls, _renamed(cls, field)) for key, view in demo.changes.items()}
    with pytest.raises((AttributeError, jinja2.UndefinedError)):
        _outputs(demo, renamed)


def _macro_fails(call: Any) -> bool:
    try:
        call()
    except jinja2.UndefinedError:
        return True
    return False


@pytest.mark.parametrize("field", KeyShown._fields + RunsRow._fields)
def test_the_template_fails_on_a_field_of_the_changes_view_it_does_not_find(field: str) -> None:
    """The comment's template runs with StrictUndefined: a field of the rendered view renamed in
    Python (or misspelled in the template) is an error, not an empty cell."""
    row = RunsRow("C1", "`override_tp8_c1`", "`max-num-seqs` `8` → `2`")
    view = KeyShown("`k`", "`image` a → b", (row,), 1, "7 as before")
    if field in RunsRow._fields:
        row = namedtuple("RunsRow", [f"{f}_renamed" if f == field else f for f in RunsRow._fields])(*row)
        view = view._replace(rows=(row,))
    else:
        view = namedtuple("KeyShown", [f"{f}_renamed" if f == field else f for f in KeyShown._fields])(*view)
    assert any(
        _macro_fails(lambda d=detailed: render.layout().key_changes("en", view, d))
        for detailed in (True, False)
    )


@pytest.mark.parametrize("field", KeyRow._fields)
def test_the_template_fails_on_a_field_of_a_key_row_it_does_not_find(field: str) -> None:
    row = namedtuple("KeyRow", [f"{f}_renamed" if f == field else f for f in KeyRow._fields])(
        "`k`", "+C2", "7", "56", "✅"
    )
    with pytest.raises(jinja2.UndefinedError):
        render.layout().key_row(row)


def test_the_json_report_keeps_the_changes_contract(demo: Report) -> None:
    """DESIGN.md §3: a key's `common` and `runs`; a run's concurrency, topology, variants, status
    and settings; a setting's path, base and head (and `added`/`removed` for two lists)."""
    changes = json.loads(report_json.json_bytes(demo))["changes"][KEY]
    assert set(changes) == {"common", "runs", "entry"}
    assert changes["entry"] == {
        "model": "amd/Kimi-K3-MXFP4",
        "precision": "fp4",
        "runner": "mi355x",
        "framework": "atom",
        "image": "rocm/atom-dev:nightly",
    }
    for run in changes["runs"]:
        assert set(run) == {"concurrency", "topology", "variant_base", "variant_head", "status", "settings"}
        assert set(run["topology"]) == {
            "scenario", "isl", "osl", "tp", "ep", "pp", "dcp", "pcp",
            "dp_attn", "spec_decoding", "kv_offloading",
        }  # fmt: skip
        for setting in run["settings"]:
            lists = isinstance(setting["base"], list) and isinstance(setting["head"], list)
            assert set(setting) == {"path", "base", "head"} | ({"added", "removed"} if lists else set())
    [layers] = [s for r in changes["runs"] for s in r["settings"] if s["path"].endswith("exclude_layer")]
    assert layers["added"] == ["model.layers.0.*", "*mlp.shared_experts*", "*self_attn.kv_a_proj*"]
    assert {run["status"] for run in changes["runs"]} == {"changed"}
