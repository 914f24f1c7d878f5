"""Hostile YAML is refused quickly and clearly; ordinary YAML keeps its line numbers."""

from __future__ import annotations

import resource
import time

import pytest

from bot.yamlsafe import YamlProblem, decode, load


def _bomb(levels: int = 9) -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        prev, name = chr(96 + i), chr(97 + i)
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_refused_fast_with_bounded_memory() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    with pytest.raises(YamlProblem) as caught:
        load(_bomb())
    assert caught.value.kind == "alias-bomb"
    assert time.perf_counter() - started < 1.0
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KiB


@pytest.mark.parametrize("text", ["[" * 10_000 + "]" * 10_000, "".join(" " * i + "a:\n" for i in range(200))])
def test_deep_nesting_refused(text: str) -> None:
    with pytest.raises(YamlProblem) as caught:
        load(text)
    assert caught.value.kind == "too-deep"


def _deep_alias_chain(links: int, levels: int = 60) -> str:
    """Each anchor is `levels` deep and holds the previous one at its bottom: every anchor is under
    the depth limit as written, but the last one expands `links × levels` levels deep."""
    lines = ["l0: &l0 leaf"]
    for i in range(1, links + 1):
        lines.append(f"l{i}: &l{i} " + "[" * levels + f"*l{i - 1}" + "]" * levels)
    return "\n".join(lines) + "\n"


def test_nesting_hidden_in_chained_aliases_is_too_deep() -> None:
    """The attack of #15: 250 links of 60 levels build a 15,000-level value (well under the node
    limit), which made `str(value)` raise RecursionError in a check. It is refused where the alias
    that crosses the limit is used, not expanded."""
    with pytest.raises(YamlProblem) as caught:
        load(_deep_alias_chain(250))
    assert caught.value.kind == "too-deep"
    assert caught.value.line == 3  # l2 is 120 levels deep once l1 is expanded into it


def test_an_alias_within_the_depth_limit_is_accepted() -> None:
    data = load("a: &a [[[x]]]\nb: [[*a]]\nc: {d: *a}\n").data
    assert data["b"] == [[[[["x"]]]]] and data["c"]["d"] is data["a"]


def test_duplicates_and_lines_are_recorded() -> None:
    loaded = load("x: 1\nbase: &b {k: 1}\nv:\n  <<: *b\n  k: 2\n  k: 3\nlist:\n  - 1\n  - 2\n")
    assert loaded.data["v"] == {"k": 3}
    assert loaded.data.lines == {"x": 1, "base": 2, "v": 3, "list": 7}
    assert loaded.data["list"].lines == [8, 9]
    assert [(d.key, d.line, d.first_line) for d in loaded.duplicates] == [("k", 6, 5)]


def test_merge_override_is_not_a_duplicate() -> None:
    assert load("a: &a {x: 1}\nb:\n  <<: *a\n  x: 2\n").duplicates == []


@pytest.mark.parametrize(
    ("data", "kind"),
    [(b"a: \xff\xfe\n", "invalid-utf8"), (b"a: 1\x00\n", "nul-byte"), (b"x" * 5_000_000, "too-large")],
)
def test_bytes_refused_with_reason(data: bytes, kind: str) -> None:
    with pytest.raises(YamlProblem) as caught:
        decode(data)
    assert caught.value.kind == kind


def test_syntax_error_has_a_line() -> None:
    with pytest.raises(YamlProblem) as caught:
        load("a: 1\nb: [1, 2\nc: 3\n", line_offset=100)
    assert caught.value.kind == "syntax" and caught.value.line and caught.value.line > 100


MERGES = """\
shared: &shared {image: lmsysorg/sglang, tp: 8, mem: 0.8}
small: &small {tp: 4, ep: 4}
recipe:
  <<: [*small, *shared]
  mem: 0.9
"""


def test_merge_follows_the_yaml_spec() -> None:
    """The first mapping of a `<<:` list wins over later ones (yaml.org/type/merge.html; pyyaml
    6.0.4 gets this wrong for keys longer than one character, yaml/pyyaml#953), and keys written
    in the mapping win over everything merged. Merged keys keep the line they were written on."""
    recipe = load(MERGES).data["recipe"]
    assert recipe == {"tp": 4, "ep": 4, "image": "lmsysorg/sglang", "mem": 0.9}
    assert recipe.lines == {"tp": 2, "ep": 2, "image": 1, "mem": 5}


def test_a_second_merge_key_is_a_duplicate_key() -> None:
    """#23 item 5: two `<<:` keys in one mapping are a duplicate key like any other (ruamel refuses
    the file; pyyaml keeps one of them or the other by the length of the keys merged). The later
    one still wins, as the merge-key spec has it for keys written later."""
    loaded = load("a: &a {mem: 1}\nb: &b {mem: 2}\nc:\n  <<: *a\n  x: 1\n  <<: *b\n")
    assert loaded.data["c"] == {"mem": 2, "x": 1}
    assert [(d.key, d.line, d.first_line) for d in loaded.duplicates] == [("<<", 6, 4)]
    three = load("a: &a {m: 1}\nc: {<<: *a, <<: *a, <<: *a}\n")
    assert [(d.key, d.line, d.first_line) for d in three.duplicates] == [("<<", 2, 2), ("<<", 2, 2)]


@pytest.mark.parametrize(
    ("text", "kind", "line"),
    [
        ("a: &x 1\nb: &x 2\n", "syntax", 2),  # pyyaml refuses a reused anchor name too
        ("a: 1\nb: *nowhere\n", "syntax", 2),
        ("a: 1\nb: &loop {c: *loop}\n", "alias-bomb", 2),
        ("a: <<\n", "syntax", 1),
        ("a: {<<: [1, 2]}\n", "syntax", 1),
        ("a: 1\n? [x]\n: 2\n", "syntax", 2),
        ("a: !!python/object:os.system ls\n", "syntax", 1),
        ("a: 2026-13-45\n", "syntax", 1),
        ("--- 1\n--- 2\n", "syntax", 2),
        ("x:\n" + "".join(" " * i + "- \n" for i in range(1, 70)), "too-deep", 65),
    ],
)
def test_refusals_say_why_and_where(text: str, kind: str, line: int) -> None:
    with pytest.raises(YamlProblem) as caught:
        load(text)
    assert (caught.value.kind, caught.value.line) == (kind, line), caught.value


def test_keys_equal_after_reading_are_duplicates() -> None:
    """`1` and `01` (octal) are the same key once read; the second one silently replaced the first."""
    loaded = load("tp: 8\n1: a\n01: b\n")
    assert loaded.data == {"tp": 8, 1: "b"}
    assert [(d.key, d.line, d.first_line) for d in loaded.duplicates] == [("01", 3, 2)]


def test_an_alias_shares_the_anchored_object() -> None:
    data = load("a: &a {x: [1, 2]}\nb: *a\n").data
    assert data["b"] is data["a"] and data["b"].lines == {"x": 1}


def test_a_long_list_without_aliases_is_not_an_alias_bomb() -> None:
    """Every node is counted, but only aliases can make the expanded tree larger than the file."""
    loaded = load("a: [" + "1," * 5_000 + "1]\n", max_nodes=1_000)
    assert len(loaded.data["a"]) == 5_001 and loaded.data["a"].lines[-1] == 1
    with pytest.raises(YamlProblem) as caught:
        load("x: &x [1, 2]\na: [" + "*x," * 600 + "1]\n", max_nodes=1_000)
    assert caught.value.kind == "alias-bomb" and caught.value.line == 2


def test_two_merge_keys_in_a_recipe_are_reported_in_the_review(review_example) -> None:
    """#23 item 5 as a reviewer sees it: a recipe override that merges two anchors with two `<<:`
    keys gets the blocking duplicate-key finding, in both languages, with both lines."""
    from conftest import RECIPE

    from bot.findings import Severity
    from bot.output.messages import en, zh

    report = review_example(
        {
            RECIPE: lambda text: text.replace(
                "        <<: *lmcache_env\n        LMCACHE_MAX_LOCAL_CPU_SIZE: '128'\n",
                "        <<: *lmcache_env\n        LMCACHE_MAX_LOCAL_CPU_SIZE: '128'\n"
                "        <<: *lmcache_env\n",
                1,
            )
        }
    )
    [duplicate] = [f for f in report.findings if f.message_id == "recipe-duplicate-key"]
    assert duplicate.severity is Severity.BLOCKING and report.verdict == "blocking"
    assert (duplicate.file, duplicate.line) == (RECIPE, 135)
    assert (
        en(duplicate) == "Recipe key << is written twice (first on line 133); YAML keeps only the last one."
    )
    assert zh(duplicate).startswith("配方中的键 << 重复出现（首次在第 133 行）")


def test_a_base_60_integer_is_read_up_to_the_length_python_reads_a_decimal_one() -> None:
    """pyyaml builds `1:59:59:…` in time quadratic in its length (a 480 KB one took 33 s, a 4 MB
    file would take about 40 minutes); past 4,300 characters, the length at which Python refuses
    a decimal integer (and so pyyaml refuses that too), it is refused as not a valid int."""
    import yaml

    longest = "1" + ":59" * 1_433
    assert len(longest) == 4_300
    assert load(f"a: {longest}\n").data == yaml.safe_load(f"a: {longest}\n")
    for text in (f"a: {longest}:59\n", "a: 1" + ":59" * 1_000_000 + "\n", f"a: !!int '{longest}:5'\n"):
        with pytest.raises(YamlProblem) as caught:
            load(text)
        assert (caught.value.kind, caught.value.line) == ("syntax", 1)
        assert "is not a valid int" in caught.value.detail


def test_frozen_values_keep_types_apart_whatever_their_size() -> None:
    """One hashable identity of a loaded value for every comparison of runs and rows: types kept
    apart, mappings in any order, and integers too long for Python's decimal text (over 4,300
    digits: a run's worker field could hold one) compared instead of raising."""
    from bot.yamlsafe import frozen

    huge = 16**3600 - 1
    assert frozen({"tp": 8, "ep": huge}) == frozen({"ep": 16**3600 - 1, "tp": 8})
    assert frozen([huge]) != frozen([huge - 1])
    assert len({frozen(True), frozen(1), frozen(1.0), frozen("1"), frozen(-0.0), frozen(0.0)}) == 6
    assert frozen({1: "a"}) != frozen({"1": "a"})
