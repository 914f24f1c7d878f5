"""The bundled example PR (`prbot demo`): the git repository it builds and the facts it encodes.

Everything here is computed independently of the bot's own model code: the recipe bundle is
resolved by a small deep-merge written below, and DRAM sizes use decimal arithmetic.
"""

from __future__ import annotations

import copy
import json
import math
import re
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from bot.example import CONFIG_KEY, ExampleRepo, build_example, example_files

KEY = "kimik3-fp4-mi355x-atom-agentic-mtp"
RECIPE = "benchmarks/single_node/srt-slurm-recipes/kimik3/atom/mi355x-fp4-mtp/agentic.yaml"
PUBLISHED = [1, 4, 14, 16, 48, 56, 72]
CHANGED = {"configs/amd-master.yaml", "perf-changelog.yaml", RECIPE}
HEAD_PIN = "rocm/atom-dev@sha256:96a9614276518c2619e88800dec5f276bc76a95691331b4abb2210184e1431af"
PIN_RE = re.compile(r"^[a-z0-9][a-z0-9._/-]*@sha256:[0-9a-f]{64}$")
CAP_MIB = 2_861_022

# The SHAs the fixed names, dates and data produce. If you change a data file on purpose,
# update these (and anything that quotes them).
EXPECTED_BASE = "7074c0228fd61cb589937eabcd0558f252ba96ba"
EXPECTED_HEAD = "c2543079f7dc00ac07d69e57dd7e4cad2c0b9b24"


# --------------------------------------------------------------------------- helpers


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return done.stdout


def show_bytes(repo: Path, rev: str, path: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(repo), "show", f"{rev}:{path}"], capture_output=True, check=True
    ).stdout


def load(repo: Path, rev: str, path: str):
    return yaml.safe_load(show_bytes(repo, rev, path).decode("utf-8"))


def deep_merge(base, override):
    if not isinstance(base, dict) or not isinstance(override, dict):
        return override
    out = dict(base)
    for key, value in override.items():
        if value is None:
            out.pop(key, None)
        elif key in out:
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def variants(bundle: dict) -> dict[str, dict]:
    assert "base" in bundle
    names = [k for k in bundle if k != "base"]
    assert all(n.startswith("override_") for n in names), names
    return {n: deep_merge(bundle["base"], bundle[n]) for n in names}


def points(entry: dict):
    """(utilization, point, concurrency) for every agentic point of a master-config entry."""
    for group in entry["scenarios"]["agentic-coding"]:
        for point in group["search-space"]:
            for conc in point["conc-list"]:
                yield group["dram-utilization"], point, conc


def expand(point: dict) -> list[int]:
    if "conc-list" in point:
        return list(point["conc-list"])
    out, c = [], point["conc-start"]
    while c < point["conc-end"]:
        out.append(c)
        c *= 2
    return [*out, point["conc-end"]]


def published(entry: dict) -> list[int]:
    groups = [g for gs in entry["scenarios"].values() for g in gs]
    return sorted({c for g in groups for p in g["search-space"] for c in expand(p)})


def total_gb(available_mib: int, utilization, gpus: int, gpus_per_node: int) -> int:
    value = (
        Decimal(min(available_mib, CAP_MIB))
        * Decimal(1_048_576)
        * Decimal(str(utilization))
        * Decimal(gpus)
        / Decimal(gpus_per_node)
        / Decimal(10**9)
    )
    return math.floor(value)


def cluster_of(runners: dict, runner: str) -> dict:
    assert runner.startswith("cluster:"), runner
    assert runner in runners["labels"]
    return runners["clusters"][runner.removeprefix("cluster:")]


def env_of(variant: dict) -> dict:
    return variant["benchmark"]["env"]


def role(variant: dict) -> dict:
    return variant["roles"]["agg"]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("example") / "repo")


@pytest.fixture(scope="module")
def master(repo):
    return {rev: load(repo.path, getattr(repo, rev), "configs/amd-master.yaml") for rev in ("base", "head")}


@pytest.fixture(scope="module")
def recipe(repo):
    return {rev: load(repo.path, getattr(repo, rev), RECIPE) for rev in ("base", "head")}


@pytest.fixture(scope="module")
def runners(repo):
    return load(repo.path, repo.head, "configs/runners.yaml")


# --------------------------------------------------------------------------- the git repository


def test_two_commits_linear_on_main(repo):
    assert re.fullmatch(r"[0-9a-f]{40}", repo.base) and re.fullmatch(r"[0-9a-f]{40}", repo.head)
    assert git(repo.path, "rev-list", "main").split() == [repo.head, repo.base]
    assert git(repo.path, "rev-parse", f"{repo.head}^").strip() == repo.base
    assert git(repo.path, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert git(repo.path, "status", "--porcelain") == ""


def test_commit_identity_and_dates_are_fixed(repo):
    fmt = "%an|%ae|%aI|%cn|%ce|%cI|%s"
    head = git(repo.path, "log", "-1", f"--format={fmt}", repo.head).strip().split("|")
    base = git(repo.path, "log", "-1", f"--format={fmt}", repo.base).strip().split("|")
    assert head[:6] == [
        "Example Contributor", "contributor@example.org", "2026-10-29T09:30:00+00:00",
        "Example Contributor", "contributor@example.org", "2026-10-29T09:30:00+00:00",
    ]  # fmt: skip
    assert base[1] == base[4] == "maintainer@example.org"
    assert base[2] == base[5] == "2026-10-20T12:00:00+00:00"
    assert "|".join(head[6:]) == repo.title
    assert git(repo.path, "cat-file", "-p", repo.head).count("gpgsig") == 0


def test_shas_are_deterministic(repo, tmp_path, monkeypatch):
    # A hostile user config must not leak in.
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Somebody Else")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2001-01-01T00:00:00+00:00")
    (tmp_path / "gitconfig").write_text("[user]\n\tname = X\n\temail = x@y\n[commit]\n\tgpgsign = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    again = build_example(tmp_path / "again")
    assert (again.base, again.head) == (repo.base, repo.head)
    assert (repo.base, repo.head) == (EXPECTED_BASE, EXPECTED_HEAD)


def test_refuses_non_empty_destination(tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    with pytest.raises(FileExistsError):
        build_example(tmp_path / "busy")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert build_example(empty).path == empty.resolve()


def test_expected_files_and_changed_set(repo):
    tree = set(git(repo.path, "ls-tree", "-r", "--name-only", repo.base).split())
    assert {
        ".github/CODEOWNERS",
        "configs/runners.yaml",
        "configs/amd-master.yaml",
        "configs/nvidia-master.yaml",
        "perf-changelog.yaml",
        RECIPE,
    } <= tree
    assert set(git(repo.path, "ls-tree", "-r", "--name-only", repo.head).split()) == tree
    assert set(git(repo.path, "diff", "--name-only", repo.base, repo.head).split()) == CHANGED
    assert set(example_files("head")) == CHANGED
    assert set(example_files("base")) == tree


def test_file_hygiene_and_size(repo):
    total = 0
    for rev in (repo.base, repo.head):
        for path in git(repo.path, "ls-tree", "-r", "--name-only", rev).split():
            data = show_bytes(repo.path, rev, path)
            total += len(data)
            text = data.decode("utf-8")
            assert "\t" not in text and "\r" not in text, path
            assert text.endswith("\n") and not text.endswith("\n\n"), path
            if path.endswith(".yaml"):
                assert yaml.safe_load(text) is not None, path
    assert total > 0
    # The bundled data (base tree, changed head files, PR metadata) stays compact: about 33 kB of
    # configs and recipes, 8.5 kB of launchers and benchmark scripts.
    data = sum(map(len, example_files("base").values())) + sum(map(len, example_files("head").values()))
    data += len(repo.title.encode()) + len(repo.body.encode())
    assert data < 45_000


def test_modes_are_plain_files(repo):
    for line in git(repo.path, "ls-tree", "-r", repo.head).splitlines():
        assert line.startswith("100644 blob "), line


# --------------------------------------------------------------------------- PR metadata


def test_pr_metadata(repo):
    assert CONFIG_KEY == KEY
    assert repo.labels == ("full-sweep-fail-fast",)
    assert repo.title and "\n" not in repo.title
    assert "nightly_202610281457" in repo.title
    assert repo.body.strip()
    assert "@" not in repo.title + repo.body  # nobody gets pinged by the demo


def test_title_and_body_name_only_published_concurrencies(repo):
    pattern = re.compile(r"(?i)\b(?:c|conc(?:urrency)?\s*)(\d+)\b")
    for text in (repo.title, repo.body):
        named = {int(m) for m in pattern.findall(text)}
        assert named <= set(PUBLISHED), (text, named - set(PUBLISHED))
    title_named = {int(m) for m in pattern.findall(repo.title)}
    assert 1 in title_named and title_named <= set(PUBLISHED)


# --------------------------------------------------------------------------- configs


def test_runners_current_layout(runners):
    amds = runners["clusters"]["mi355x-amds"]
    assert amds["gpus-per-node"] == 8
    assert amds["available-cpu-dram-mib"] == 3_095_781
    assert len(runners["clusters"]) >= 3
    assert "cluster:mi355x-amds" in runners["labels"]
    for label, machines in runners["labels"].items():
        assert isinstance(machines, list) and machines, label
        if label.startswith("cluster:"):
            assert label.removeprefix("cluster:") in runners["clusters"], label
    for name, cluster in runners["clusters"].items():
        assert isinstance(cluster["gpus-per-node"], int), name
        assert isinstance(cluster["available-cpu-dram-mib"], int), name


def test_runners_file_uses_digit_separators(repo):
    text = show_bytes(repo.path, repo.head, "configs/runners.yaml").decode()
    assert "available-cpu-dram-mib: 3_095_781" in text


def test_master_configs_shape(repo, master):
    nvidia = {
        rev: load(repo.path, getattr(repo, rev), "configs/nvidia-master.yaml") for rev in ("base", "head")
    }
    assert nvidia["base"] == nvidia["head"] and 2 <= len(nvidia["head"]) <= 3
    for rev in ("base", "head"):
        others = [k for k in master[rev] if k != KEY]
        assert 3 <= len(others) <= 5
        kinds = {s for k in master[rev] for s in master[rev][k]["scenarios"]}
        assert kinds == {"fixed-seq-len", "agentic-coding"}
        for key in others:
            assert master["base"][key] == master["head"][key], key
    for cfg in (master["head"], nvidia["head"]):
        for key, entry in cfg.items():
            for field in ("image", "model", "model-prefix", "runner", "precision", "framework"):
                assert isinstance(entry[field], str), (key, field)
            assert entry["multinode"] is False


def test_every_single_node_point_names_a_recipe_that_exists(repo):
    tree = set(git(repo.path, "ls-tree", "-r", "--name-only", repo.head).split())
    for cfg in ("configs/amd-master.yaml", "configs/nvidia-master.yaml"):
        for key, entry in load(repo.path, repo.head, cfg).items():
            for groups in entry["scenarios"].values():
                for group in groups:
                    for point in group["search-space"]:
                        assert point["srt-recipe"] in tree, (key, point["srt-recipe"])


def test_kimik3_entry_base_and_head(master):
    base, head = master["base"][KEY], master["head"][KEY]
    common = {
        "model": "moonshotai/Kimi-K3",
        "model-prefix": "kimik3",
        "runner": "cluster:mi355x-amds",
        "precision": "fp4",
        "framework": "atom",
        "multinode": False,
    }
    for entry in (base, head):
        assert {k: entry[k] for k in common} == common
        assert list(entry["scenarios"]) == ["agentic-coding"]
        assert published(entry) == PUBLISHED
        for _, point, _ in points(entry):
            assert point["tp"] == 8 and point["spec-decoding"] == "mtp" and point["srt-recipe"] == RECIPE
            if point["kv-offloading"] == "dram":
                assert point["dcp-size"] == 8
                assert point["kv-offload-backend"] == {"name": "lmcache", "version": "0.4.5"}
            else:
                assert point["kv-offloading"] == "none" and "dcp-size" not in point
    assert base["image"] == "rocm/atom-dev:nightly_202610131505"
    assert head["image"] == "rocm/atom-dev:nightly_202610281457"

    def layout(entry):
        return [
            (g["dram-utilization"], [(p["kv-offloading"], p["conc-list"]) for p in g["search-space"]])
            for g in entry["scenarios"]["agentic-coding"]
        ]

    assert layout(base) == [
        (0.343, [("none", [1, 4]), ("dram", [14, 16, 48])]),
        (0.513, [("dram", [56, 72])]),
    ]
    assert layout(head) == [
        (0.343, [("none", [1, 4]), ("dram", [14, 16])]),
        (0.6, [("dram", [48, 56, 72])]),
    ]


def test_master_points_use_flow_mappings(repo):
    text = show_bytes(repo.path, repo.head, "configs/amd-master.yaml").decode()
    assert (
        "- { tp: 8, dcp-size: 8, kv-offloading: dram, "
        'kv-offload-backend: { name: lmcache, version: "0.4.5" }, '
        f"conc-list: [48, 56, 72], spec-decoding: mtp, srt-recipe: {RECIPE} }}"
    ) in text


# --------------------------------------------------------------------------- the recipe


def test_recipe_bundle_structure(repo, recipe):
    names = [
        "override_tp8_c1",
        "override_tp8_c4",
        *(f"override_tp8_dcp8_c{c}_lmcache" for c in (14, 16, 48, 56, 72)),
    ]
    for rev in ("base", "head"):
        bundle = recipe[rev]
        assert list(bundle) == ["base", *names]
        assert role(bundle["base"])["gpus"] == 8
        assert role(bundle["base"])["args"]["decode-context-parallel-size"] == 1
        text = show_bytes(repo.path, getattr(repo, rev), RECIPE).decode()
        assert "<<: &lmcache_env" in text and text.count("<<: *lmcache_env") == 4
        assert "&lmcache_connectors" in text and text.count("*lmcache_connectors") == 4
        assert re.search(r"^\s+[\w.-]+: null$", text, re.M), "at least one explicit null"
    # The explicit null really removes the base key in the DRAM variants.
    resolved = variants(recipe["head"])
    assert "state-checkpoint-interval-tokens" in role(resolved["override_tp8_c4"])["args"]
    assert "state-checkpoint-interval-tokens" not in role(resolved["override_tp8_dcp8_c14_lmcache"])["args"]


def test_frontend_pins(recipe):
    base_pin = recipe["base"]["base"]["frontend"]["container_image"]
    head_pin = recipe["head"]["base"]["frontend"]["container_image"]
    assert PIN_RE.match(base_pin) and base_pin.startswith("rocm/atom-dev@sha256:")
    assert head_pin == HEAD_PIN
    assert base_pin != head_pin


@pytest.mark.parametrize("rev", ["base", "head"])
def test_each_concurrency_selects_exactly_one_variant(rev, master, recipe):
    resolved = variants(recipe[rev])
    used = set()
    for _, point, conc in points(master[rev][KEY]):
        matches = []
        for name, variant in resolved.items():
            env = env_of(variant)
            agg = role(variant)
            if env.get("CONC", str(conc)) != str(conc):
                continue
            if "KV_OFFLOADING" in env and env["KV_OFFLOADING"] != point["kv-offloading"]:
                continue
            if "SPEC_DECODING" in env and env["SPEC_DECODING"] != point.get("spec-decoding", "none"):
                continue
            if "TP" in env and env["TP"] != str(point["tp"]):
                continue
            if agg["gpus"] != point["tp"]:
                continue
            if agg["args"].get("decode-context-parallel-size", 1) != point.get("dcp-size", 1):
                continue
            matches.append(name)
        assert len(matches) == 1, (conc, matches)
        (name,) = matches
        variant = resolved[name]
        assert env_of(variant)["CONC"] == str(conc)
        assert f"_c{conc}" in name
        if point["kv-offloading"] == "dram":
            assert env_of(variant)["KV_OFFLOADING"] == "dram"
        else:
            assert "KV_OFFLOADING" not in env_of(variant)
        used.add(name)
    assert used == set(resolved), "no left-over variants"
    for variant in resolved.values():
        assert isinstance(env_of(variant)["CONC"], str)


@pytest.mark.parametrize("rev", ["base", "head"])
def test_dram_numbers_match_the_formula(rev, master, recipe, runners):
    entry = master[rev][KEY]
    cluster = cluster_of(runners, entry["runner"])
    resolved = variants(recipe[rev])
    seen = {}
    for util, point, conc in points(entry):
        if point["kv-offloading"] != "dram":
            continue
        gpus = point["tp"] * point.get("pp", 1) * point.get("pcp-size", 1)
        total = total_gb(cluster["available-cpu-dram-mib"], util, gpus, cluster["gpus-per-node"])
        per_rank = total // point["tp"]
        (variant,) = [v for v in resolved.values() if env_of(v)["CONC"] == str(conc)]
        assert env_of(variant)["TOTAL_CPU_DRAM_GB"] == str(total), conc
        pool = int(role(variant)["env"]["LMCACHE_MAX_LOCAL_CPU_SIZE"])
        assert pool == per_rank and pool * point["tp"] <= total, conc
        state = role(variant)["env"].get("OFFLOAD_STATE_CPU_SIZE")
        if state is not None:
            assert int(state) <= pool
        seen[conc] = (total, per_rank, state)
    if rev == "base":
        assert seen == {
            14: (1028, 128, None), 16: (1028, 128, None), 48: (1028, 128, None),
            56: (1538, 192, None), 72: (1538, 192, None),
        }  # fmt: skip
    else:
        assert seen == {
            14: (1028, 128, None), 16: (1028, 128, None),
            48: (1799, 224, "128"), 56: (1799, 224, "128"), 72: (1799, 224, "128"),
        }  # fmt: skip


def test_worked_example_from_the_design():
    for util, total in (("0.343", 1028), ("0.513", 1538), ("0.6", 1799)):
        assert total_gb(3_095_781, util, 8, 8) == total
        assert total // 8 == {1028: 128, 1538: 192, 1799: 224}[total]


EXPLICIT_OFF = ("override_tp8_c4", "override_tp8_dcp8_c14_lmcache", "override_tp8_dcp8_c16_lmcache")


def test_head_recipe_retune(recipe):
    base_v, head_v = variants(recipe["base"]), variants(recipe["head"])
    c1 = role(head_v["override_tp8_c1"])
    assert c1["env"]["ATOM_MONO_ENABLE"] == "1"
    assert c1["env"]["ATOM_PREFILL_DECODE_INTERVAL"] == "1000000"
    assert c1["args"]["max-num-seqs"] == 2
    assert c1["args"]["cudagraph-capture-sizes"] == "[1,2]"
    old_q = json.loads(role(base_v["override_tp8_c1"])["args"]["online_quant_config"])
    new_q = json.loads(c1["args"]["online_quant_config"])
    assert new_q["global_quant_config"] == old_q["global_quant_config"]
    assert set(old_q["exclude_layer"]) < set(new_q["exclude_layer"])
    # Only C1 gets the extra excludes and mono decode; C4, C14 and C16 turn it off explicitly.
    for name, variant in head_v.items():
        if name != "override_tp8_c1":
            assert json.loads(role(variant)["args"]["online_quant_config"]) == old_q, name
            mono = "0" if name in EXPLICIT_OFF else None
            assert role(variant)["env"].get("ATOM_MONO_ENABLE") == mono, name
    # FlyDSL herd for every variant, via base.
    assert recipe["head"]["base"]["roles"]["agg"]["env"]["AITER_FLYDSL_USE_HERD"] == "1"
    assert recipe["head"]["base"]["roles"]["agg"]["env"]["AITER_FLYDSL_HERD_MIN_M"] == "64"
    for name, variant in head_v.items():
        assert role(variant)["env"]["AITER_FLYDSL_USE_HERD"] == "1", name
        assert role(variant)["env"]["AITER_FLYDSL_HERD_MIN_M"] == "64", name
    for variant in base_v.values():
        assert "AITER_FLYDSL_USE_HERD" not in role(variant)["env"]
    # Throughput band: state offload and on-demand checkpoints.
    for conc in (48, 56, 72):
        env = role(head_v[f"override_tp8_dcp8_c{conc}_lmcache"])["env"]
        assert env["OFFLOAD_STATE_CPU_SIZE"] == "128"
        assert env["ATOM_STATE_CHECKPOINT_DEMAND"] == "1"
        assert env["LMCACHE_MAX_LOCAL_CPU_SIZE"] == "224"
    # C4, C14 and C16 are untouched apart from what base adds and `ATOM_MONO_ENABLE: '0'`.
    for name in EXPLICIT_OFF:
        head = copy.deepcopy(recipe["head"][name])
        env = head["roles"]["agg"]["env"]
        assert env.pop("ATOM_MONO_ENABLE") == "0", name
        if not env:
            del head["roles"]["agg"]["env"]
        assert recipe["base"][name] == head, name
    for conc in (14, 16):
        env = role(head_v[f"override_tp8_dcp8_c{conc}_lmcache"])["env"]
        assert env["ATOM_STATE_CHECKPOINT_DEMAND"] == "0" and "OFFLOAD_STATE_CPU_SIZE" not in env


def test_lmcache_env_block_is_shared(recipe):
    resolved = variants(recipe["head"])
    dram = [v for v in resolved.values() if env_of(v).get("KV_OFFLOADING") == "dram"]
    assert len(dram) == 5
    shared = ("PYTHONHASHSEED", "LMCACHE_LOCAL_CPU", "LMCACHE_CHUNK_SIZE", "OFFLOAD_KV_FOR_HYBRID")
    for key in shared:
        assert len({role(v)["env"][key] for v in dram}) == 1, key
    assert all(role(v)["args"]["kv-connectors"] == role(dram[0])["args"]["kv-connectors"] for v in dram)


def test_other_agentic_keys_are_self_consistent(repo, runners):
    """The rest of the example is consistent too, so the demo only flags the PR itself."""
    cfg = load(repo.path, repo.head, "configs/amd-master.yaml")
    for key, entry in cfg.items():
        for group in entry["scenarios"].get("agentic-coding", []):
            cluster = cluster_of(runners, entry["runner"])
            for point in group["search-space"]:
                if point["kv-offloading"] != "dram":
                    continue
                bundle = load(repo.path, repo.head, point["srt-recipe"])
                total = total_gb(cluster["available-cpu-dram-mib"], group["dram-utilization"], point["tp"], 8)
                for conc in expand(point):
                    found = []
                    for name, body in bundle.items():
                        if name.startswith("zip_override_"):
                            env = body["benchmark"]["env"]
                            for i, c in enumerate(env["CONC"]):
                                if c == str(conc):
                                    found.append(env["TOTAL_CPU_DRAM_GB"][i])
                        elif name.startswith("override_"):
                            env = deep_merge(bundle["base"], body)["benchmark"]["env"]
                            if env["CONC"] == str(conc):
                                found.append(env["TOTAL_CPU_DRAM_GB"])
                    assert found == [str(total)], (key, conc, found)


# --------------------------------------------------------------------------- changelog


def test_changelog_is_append_only_with_one_new_entry(repo):
    base = show_bytes(repo.path, repo.base, "perf-changelog.yaml")
    head = show_bytes(repo.path, repo.head, "perf-changelog.yaml")
    assert head.startswith(base) and len(head) > len(base)
    added = head[len(base) :].decode("utf-8")
    assert added.startswith("\n- config-keys:\n") and added.count("\n- ") == 1
    for data in (base, head):
        text = data.decode("utf-8")
        assert text.endswith("\n") and not text.endswith("\n\n")
        assert "\n\n\n" not in text
        for chunk in text.split("\n\n"):
            assert chunk.startswith("- config-keys:"), chunk[:40]
            assert chunk.count("\n- ") == 0, "entries are separated by exactly one blank line"
    base_entries = yaml.safe_load(base)
    head_entries = yaml.safe_load(head)
    assert 6 <= len(base_entries) <= 10
    assert head_entries[:-1] == base_entries
    assert any("scenario-type" in e for e in base_entries)
    assert any("scenario-type" not in e for e in base_entries)
    for entry in head_entries:
        assert entry["config-keys"] and entry["description"] and entry["pr-link"]
        assert all(isinstance(d, str) and d for d in entry["description"])
    new = head_entries[-1]
    assert new["config-keys"] == [KEY]
    assert new["scenario-type"] == ["agentic-coding"]
    assert new["pr-link"] == "XXX"
    assert len(new["description"]) == 2
    english, chinese = new["description"]
    assert english.isascii()
    assert re.search(r"[\u4e00-\u9fff]", chinese)
    for entry in base_entries:
        assert re.fullmatch(r"https://github\.com/SemiAnalysisAI/InferenceX/pull/\d+", entry["pr-link"])


def test_changelog_keys_exist(repo, master):
    nvidia = load(repo.path, repo.head, "configs/nvidia-master.yaml")
    keys = set(master["head"]) | set(nvidia)
    for entry in load(repo.path, repo.head, "perf-changelog.yaml"):
        assert set(entry["config-keys"]) <= keys, entry["config-keys"]


# --------------------------------------------------------------------------- owners


def test_codeowners(repo):
    text = show_bytes(repo.path, repo.head, ".github/CODEOWNERS").decode()
    rules = [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    patterns = {rule[0]: rule[1:] for rule in rules}
    assert rules[0][0] == "*" and rules[0][1].startswith("@")
    assert "configs/amd-master.yaml" in patterns and "configs/nvidia-master.yaml" in patterns
    assert "benchmarks/**/mi3*" in patterns
    amd = set(patterns["configs/amd-master.yaml"])
    assert set(patterns["benchmarks/**/mi3*"]) <= amd
    assert not amd & set(patterns["configs/nvidia-master.yaml"])
    for owners in patterns.values():
        assert owners and all(o.startswith("@") for o in owners)
