"""Properties of the parsers, the concurrency expansion, the recipe merge, the escapes and the renderer.

Hypothesis generates the inputs; settings are bounded so that the file runs in well under 30 s.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.findings import Finding, Severity
from bot.model.changelog import compare
from bot.model.layout import Layout
from bot.model.master import MAX_CONCURRENCIES, MasterFile, build_entry, expand_concurrency
from bot.model.recipe import merge, parse_recipe
from bot.model.runners import lookup
from bot.model.selection import select
from bot.output import report_json, textsafe
from bot.output.render import COMMENT_LIMIT, render_comment
from bot.report import Report
from bot.yamlsafe import YamlProblem, load, load_bytes
from tests.mdcheck import is_closed_span, leaks, outside_code, parse_html

FAST = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- strategies ------------------------------------------------------------------------------

YAML_BITS = [
    "-", "- ", ":", ": ", " ", "  ", "\n", "\t", "[", "]", "{", "}", ",", "&a ", "*a", "&b ", "*b", "<<: ",
    "? ", "!!str ", "!!int ", "!!python/object:os.system ", "!foo ", "!!map ", "!!seq ", "!!set ",
    "'", '"', "#", "|", ">", "%YAML 1.1\n",
    "---\n", "...\n", "a", "b", "key", "1", "0x1F", "1_000", "1e9", ".nan", "~", "null", "true", "no",
    "2026-01-01", "\\", "\\u0000", "é", "中", "\u202e", "\r", "@",
]  # fmt: skip
yaml_like = st.lists(st.sampled_from(YAML_BITS), max_size=60).map("".join)
hostile_text = st.text(
    alphabet=st.sampled_from(list("`@<>/&|*_[]()#!~\\\n\r\t \"'-:aZ9é中\u200b\u202e\x00\x1b")), max_size=80
) | st.text(max_size=40)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["8", "dram", "none", "mtp", "CONC", "1_000", "0.6", ""])
)
keys = st.text(max_size=10) | st.sampled_from(
    ["tp", "ep", "pp", "dp-attn", "dcp-size", "pcp-size", "conc-list", "conc-start", "conc-end",
     "kv-offloading", "spec-decoding", "srt-recipe", "scenarios", "search-space", "dram-utilization",
     "agentic-coding", "fixed-seq-len", "isl", "osl", "image", "runner", "multinode", "prefill", "decode",
     "worker", "num-worker", "additional-settings", "base", "benchmark", "env", "roles", "agg", "args",
     "gpus", "CONC", "TP", "config-keys", "description", "pr-link", "append-only", "clusters", "hardware"]
)  # fmt: skip
data = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=25,
)


def _dump(value: Any) -> bytes:
    return yaml.safe_dump(value, allow_unicode=True, sort_keys=False).encode("utf-8")


def _maybe(strategy: st.SearchStrategy) -> st.SearchStrategy:
    return strategy | data


point = st.fixed_dictionaries(
    {},
    optional={
        "tp": _maybe(st.integers(-2, 16)),
        "ep": _maybe(st.integers(0, 16)),
        "dcp-size": _maybe(st.integers(0, 8)),
        "dp-attn": _maybe(st.booleans()),
        "conc-list": _maybe(st.lists(st.integers(-1, 10**9), max_size=5)),
        "conc-start": _maybe(st.integers(-1, 2**40)),
        "conc-end": _maybe(st.integers(-1, 2**80)),
        "kv-offloading": _maybe(st.sampled_from(["dram", "none"])),
        "spec-decoding": _maybe(st.sampled_from(["mtp", "none"])),
        "srt-recipe": _maybe(st.sampled_from(["r.yaml", "r.yaml:override_a", "r.yaml:", ":x", "../x"])),
        "prefill": data,
        "worker": data,
    },
)
entry = st.fixed_dictionaries(
    {},
    optional={
        "image": _maybe(st.text(max_size=10)),
        "runner": _maybe(st.sampled_from(["cluster:a", "b"])),
        "multinode": _maybe(st.booleans()),
        "srt-recipe-dir": data,
        "scenarios": _maybe(
            st.dictionaries(
                st.sampled_from(["agentic-coding", "fixed-seq-len", "other"]),
                _maybe(
                    st.lists(
                        _maybe(
                            st.fixed_dictionaries(
                                {"search-space": _maybe(st.lists(_maybe(point), max_size=3))},
                                optional={
                                    "dram-utilization": _maybe(st.sampled_from([0.6, 0, -1, 2, "0.5", "x"])),
                                    "isl": data,
                                },
                            )
                        ),
                        max_size=3,
                    )
                ),
                max_size=2,
            )
        ),
    },
)
layer = st.fixed_dictionaries(
    {},
    optional={
        "benchmark": _maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "env": _maybe(
                        st.dictionaries(
                            st.sampled_from(["CONC", "TP", "KV_OFFLOADING", "SPEC_DECODING"]), data
                        )
                    )
                },
            )
        ),
        "roles": _maybe(
            st.dictionaries(
                st.sampled_from(["agg", "prefill"]),
                _maybe(st.fixed_dictionaries({}, optional={"gpus": data, "args": data, "env": data})),
            )
        ),
    },
)
recipe_doc = st.dictionaries(
    st.sampled_from(["base", "override_a", "override_b", "zip_override_z", "other"]),
    _maybe(layer),
    max_size=4,
)
changelog_entry = _maybe(
    st.fixed_dictionaries(
        {},
        optional={
            "config-keys": _maybe(st.lists(st.text(max_size=8), max_size=3)),
            "description": _maybe(st.lists(st.text(max_size=8), max_size=2)),
            "pr-link": _maybe(st.text(max_size=20)),
            "append-only": data,
            "scenario-type": data,
        },
    )
)


# --- the YAML loader ---------------------------------------------------------------------------


@FAST
@given(text=yaml_like | st.text(max_size=200))
def test_load_raises_only_yaml_problem(text: str) -> None:
    with contextlib.suppress(YamlProblem):
        load(text)


@FAST
@given(raw=st.binary(max_size=200) | yaml_like.map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_load_bytes_raises_only_yaml_problem(raw: bytes) -> None:
    with contextlib.suppress(YamlProblem):
        load_bytes(raw)


@SLOW
@given(value=data)
def test_load_reads_back_what_yaml_wrote(value: Any) -> None:
    text = yaml.safe_dump(value, allow_unicode=True)
    try:
        loaded = load(text).data
    except YamlProblem as exc:
        assert exc.kind in ("too-deep", "syntax"), exc  # pyyaml may write what it cannot read back
        return
    assert loaded == yaml.safe_load(text) or value != value  # NaN is not equal to itself


_FAILED = object()


def _pyyaml(text: str) -> Any:
    """What `yaml.load` with the C loader makes of `text`, or `_FAILED`."""
    try:
        return yaml.load(text, Loader=yaml.CSafeLoader)
    except Exception:  # pyyaml lets IndexError, ValueError and more out of bad scalars
        return _FAILED


def _same_lines(node: yaml.Node, built: Any) -> None:
    """`built` records, for every key and item, the line pyyaml's own node tree gives it."""
    if isinstance(node, yaml.MappingNode):
        assert list(built.lines.values()) == [k.start_mark.line + 1 for k, _ in node.value]
        for (_, value_node), value in zip(node.value, built.values(), strict=True):
            _same_lines(value_node, value)
    elif isinstance(node, yaml.SequenceNode):
        assert built.lines == [item.start_mark.line + 1 for item in node.value]
        for item_node, item in zip(node.value, built, strict=True):
            _same_lines(item_node, item)


@FAST
@given(text=yaml_like.filter(lambda t: "<<" not in t))
def test_load_means_what_pyyaml_means(text: str) -> None:
    """Whatever pyyaml reads, `load` reads the same (key order included, so compared by repr) with
    the same line numbers; it refuses only what pyyaml refuses too, or what breaks its limits
    (`&a [*a]`, which pyyaml turns into a self-containing list, and `!!set {…}`, which it builds
    into a set). It is laxer in one place only: `a: =` is the string "=". Merges are tested apart,
    as pyyaml 6.0.4 orders `<<: [*a, *b]` against the YAML spec (yaml/pyyaml#953)."""
    expected = _pyyaml(text)
    try:
        loaded = load(text)
    except YamlProblem as exc:
        assert expected is _FAILED or exc.kind in ("alias-bomb", "too-deep", "collection-tag"), exc
        return
    if expected is _FAILED:
        assert "=" in text, text  # `=` as a value
        return
    assert repr(loaded.data) == repr(expected)
    if not loaded.duplicates:
        _same_lines(yaml.compose(text, Loader=yaml.CSafeLoader), loaded.data)


# --- the models ------------------------------------------------------------------------------------


@SLOW
@given(
    document=st.dictionaries(
        st.text(max_size=8) | st.sampled_from(["k", "a b", "x:y"]), _maybe(entry), max_size=3
    )
)
def test_master_parsing_never_raises(document: dict) -> None:
    master = MasterFile("configs/amd-master.yaml", _dump(document), Layout(""))
    for key in list(master.keys()):
        parsed = master.entry(key)
        if parsed is not None:
            assert all(c > 0 for p in parsed.points for c in p.concurrencies)
            parsed.published  # noqa: B018
            for p in parsed.points:
                p.topology  # noqa: B018


@SLOW
@given(raw=_maybe(entry))
def test_build_entry_never_raises(raw: Any) -> None:
    built = build_entry("k", raw, "configs/amd-master.yaml", 1, Layout(""))
    assert all(len(p.concurrencies) <= MAX_CONCURRENCIES + 1 for p in built.points)


@SLOW
@given(document=_maybe(recipe_doc), raw_point=point, conc=st.integers(1, 100))
def test_recipe_parsing_and_selection_never_raise(document: Any, raw_point: dict, conc: int) -> None:
    recipe = parse_recipe("r.yaml", _dump(document))
    built = build_entry(
        "k", {"scenarios": {"agentic-coding": [{"search-space": [raw_point]}]}}, "m", 1, Layout("")
    )
    for variant in recipe.variants.values():
        variant.env  # noqa: B018
        for name in ("TOTAL_CPU_DRAM_GB", "CONC"):
            _, path = variant.setting(name)
            if path:
                variant.line_of(path)
    for p in built.points:
        select(recipe, p, conc)


@SLOW
@given(
    base=st.lists(changelog_entry, max_size=3),
    head=st.lists(changelog_entry, max_size=3),
    junk=yaml_like,
)
def test_changelog_compare_never_raises(base: list, head: list, junk: str) -> None:
    old = _dump(base) if base else b""
    compare("perf-changelog.yaml", old, old + b"\n" + _dump(head))  # appended
    compare("perf-changelog.yaml", old, _dump(head + base))  # inserted or rewritten
    compare("perf-changelog.yaml", old, old + junk.encode("utf-8", "surrogatepass"))


@SLOW
@given(runners=data, runner=st.text(max_size=10) | st.sampled_from(["cluster:a", "a"]))
def test_runner_lookup_never_raises(runners: Any, runner: str) -> None:
    hardware = lookup(runners, runner)
    if hardware is not None:
        assert hardware.gpus_per_node is None or hardware.gpus_per_node > 0
        assert hardware.available_mib is None or hardware.available_mib > 0


# --- expand_concurrency and merge ----------------------------------------------------------------------


@FAST
@given(start=st.integers(1, 2**40), extra=st.integers(0, 2**70))
def test_expand_concurrency(start: int, extra: int) -> None:
    end = start + extra
    values = expand_concurrency(start, end)
    assert values[0] == start and values[-1] == end
    assert all(a < b for a, b in itertools.pairwise(values))
    assert len(values) <= MAX_CONCURRENCIES + 1
    assert all(v == start * 2**i for i, v in enumerate(values[:-1]))
    if len(values) <= MAX_CONCURRENCIES:  # not clamped by the length limit: doubling reached the end
        assert values[-2] * 2 >= end if len(values) > 1 else start == end


def _values(node: Any) -> list[Any]:
    if not isinstance(node, dict):
        return [node]
    return [leaf for value in node.values() for leaf in _values(value)] if node else [{}]


@FAST
@given(base=data, override=data)
def test_merge(base: Any, override: Any) -> None:
    before = (copy.deepcopy(base), copy.deepcopy(override))
    merged = merge(base, override)
    assert (base, override) == before or base != base  # inputs untouched (NaN aside)
    if not isinstance(base, dict) or not isinstance(override, dict):
        assert merged is override
        return
    deleted = {k for k, v in override.items() if v is None}
    assert set(merged) == (set(base) | set(override)) - deleted
    for key, value in override.items():
        if value is not None and not isinstance(value, dict):
            assert merged[key] is value
        if isinstance(value, dict) and not isinstance(base.get(key), dict):
            assert None not in _values(merged[key])  # nulls delete even where the base has nothing
    assert merge(merged, override) == merged or merged != merged
    assert merge(base, {}) == base or base != base


# --- escapes ---------------------------------------------------------------------------------------------


@FAST
@given(value=hostile_text)
def test_code_span_is_closed_and_holds_everything(value: str) -> None:
    span = textsafe.md_code(value)
    assert is_closed_span(span), span
    assert outside_code(f"x {span} y") == "x   y"
    assert "\n" not in span and "\r" not in span


@FAST
@given(value=hostile_text)
def test_text_is_inert(value: str) -> None:
    text = textsafe.md_text(value)
    assert "<" not in text and ">" not in text and "\n" not in text
    assert not re.search(r"@\w", text)
    assert not leaks(f"- {text}")
    assert not re.search(r"(?<!\\)[`*_\[\]|~#]", text)  # every markdown character is escaped


# --- the renderer ----------------------------------------------------------------------------------------


def _skeletons(folder: Path) -> list[Finding]:
    """Real findings (real param shapes) from the example and a few broken variants of it."""
    from bot.example import build_example
    from bot.local import LocalRequest, run_local
    from tests.conftest import CHANGELOG, MASTER, RECIPE, commit, replace

    example = build_example(folder / "example")
    found: dict[str, Finding] = {}
    edits = [
        {},
        {RECIPE: replace("TOTAL_CPU_DRAM_GB: '1799'", "TOTAL_CPU_DRAM_GB: '1800'")},
        {MASTER: replace("tp: 8, kv-offloading: none", "tp: '8', kv-offloading: none")},
        {MASTER: replace("conc-list: [1, 4]", "conc-list: [1, 2, 4]"), CHANGELOG: lambda t: t + "\n- x\n"},
        {RECIPE: lambda t: t + "\noverride_z:\n  benchmark:\n    env:\n      CONC: [1]\n"},
    ]
    for edit in edits:
        head = commit(example.path, edit) if edit else example.head
        report, _, _ = run_local(
            LocalRequest(repo=str(example.path), base=example.base, head=head, title="C1/C2", offline=True)
        )
        for f in report.findings:
            found.setdefault(f.message_id, f)
    return list(found.values())


@pytest.fixture(scope="module")
def skeletons(tmp_path_factory: pytest.TempPathFactory) -> list[Finding]:
    return _skeletons(tmp_path_factory.mktemp("skeletons"))


def _fill(value: Any, draw: st.DrawFn) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return draw(hostile_text)
    if isinstance(value, int):
        return draw(st.integers(-(10**12), 10**12))
    if isinstance(value, Decimal | float):
        return value
    if isinstance(value, tuple):
        return tuple(_fill(v, draw) for v in value)
    if isinstance(value, list):
        extra = [_fill(value[0], draw) for _ in range(draw(st.integers(0, 2)))] if value else []
        return [_fill(v, draw) for v in value] + extra
    if isinstance(value, dict):
        return {k: _fill(v, draw) for k, v in value.items()}
    return value


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_render_comment_never_raises_and_fits(skeletons: list[Finding], data: st.DataObject) -> None:
    chosen = data.draw(st.lists(st.sampled_from(skeletons), min_size=1, max_size=400))
    findings = [
        Finding(
            f.check,
            data.draw(st.sampled_from(list(Severity))),
            f.message_id,
            _fill(f.params, data.draw),
            data.draw(st.none() | hostile_text),
            data.draw(st.none() | hostile_text),
            data.draw(st.none() | st.integers(-5, 10**9)),
            data.draw(st.none() | hostile_text),
        )
        for f in chosen
    ]
    keys = data.draw(st.dictionaries(hostile_text, st.lists(st.sampled_from(["image", "points", "added"]))))
    published = {k: {"base": [1, 2], "head": [3]} for k in keys}
    report = Report(findings, published, {}, keys)
    for lang in ("both", "en", "zh"):
        base = data.draw(hostile_text)
        comment = render_comment(report, lang=lang, base=base, head="abc")
        assert len(comment) <= COMMENT_LIMIT
        assert not leaks(comment), leaks(comment)
        # However it was cut, it is whole: every <details> closed, one footer per language.
        html = parse_html(comment)
        assert html.tags["details"] == html.tags["/details"]
        assert html.tags["sub"] == (2 if lang == "both" else 1)
    report_json.dumps(report)
