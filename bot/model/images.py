"""Container images: tags named by master configs and digests pinned by recipes."""

from __future__ import annotations

import re
from typing import NamedTuple

PIN_RE = re.compile(r"^(?P<repo>[^@\s]+)@(?P<digest>sha256:[0-9a-f]{64})$")


class Pin(NamedTuple):
    """A `repo@sha256:…` string found in a recipe."""

    repository: str
    digest: str
    file: str
    line: int | None
    yaml_path: str


class ImageUse(NamedTuple):
    """One changed config key together with one recipe it runs: what the digest check compares."""

    config_key: str
    image_base: str | None
    image_head: str | None
    recipe_path: str
    pins_base: tuple[Pin, ...]
    pins_head: tuple[Pin, ...]
