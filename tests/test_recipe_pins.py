"""Digest pins are found wherever a recipe writes them, however the YAML spells the string."""

from __future__ import annotations

from bot.model.recipe import parse_recipe

DIGEST = "sha256:" + "96a96142" * 8


def test_pins_anywhere_in_the_recipe() -> None:
    recipe = parse_recipe(
        "r.yaml",
        f"base:\n  frontend:\n    container_image: rocm/atom-dev@{DIGEST}\n"
        f"override_x:\n  sidecar: [ 'lmsysorg/sglang@{DIGEST}' ]\n".encode(),
    )
    assert [(p.repository, p.yaml_path, p.line) for p in recipe.pins] == [
        ("rocm/atom-dev", "base.frontend.container_image", 3),
        ("lmsysorg/sglang", "override_x.sidecar[0]", 5),
    ]


def test_a_pin_hidden_behind_an_escape_is_still_found() -> None:
    recipe = parse_recipe(
        "r.yaml", f'base:\n  frontend:\n    container_image: "rocm/atom-dev\\x40{DIGEST}"\n'.encode()
    )
    assert [p.digest for p in recipe.pins] == [DIGEST]


def test_no_pin_no_walk_result() -> None:
    assert (
        parse_recipe("r.yaml", b"base:\n  frontend:\n    container_image: rocm/atom-dev:nightly\n").pins == []
    )
