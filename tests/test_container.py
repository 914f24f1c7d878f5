"""The action's image, built with podman and run as GitHub's runner runs it (tests/container/smoke.py).

It builds an image (1.5 to 2 minutes here with the base at hand, 3 to 4 more to build a stand-in
base), so it runs only with PRBOT_CONTAINER_TESTS=1, as root, with podman; otherwise it skips
saying which of these is missing. `.ci/run` leaves it out: a fresh CI machine has no podman and no
cached layers (docs/action.md, "The container smoke test").
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "tests" / "container" / "smoke.py"
STANDIN = "localhost/prbot-base-standin:bookworm"


def _podman(*args: str, timeout: float = 120) -> bool:
    try:
        done = subprocess.run(["podman", *args], capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def _base() -> list[str]:
    """The smoke test's `--base`: none when the Dockerfile's pinned base is here or can be pulled,
    else the stand-in (built with debootstrap when podman does not hold it yet)."""
    pinned = re.search(r"^FROM (\S+@sha256:[0-9a-f]{64})", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    assert pinned, "the Dockerfile names no base pinned by digest"
    if _podman("image", "exists", pinned.group(1)) or _podman("pull", "-q", pinned.group(1)):
        return []
    if not _podman("image", "exists", STANDIN):
        if not shutil.which("debootstrap"):
            pytest.skip(
                f"{pinned.group(1)} cannot be pulled and debootstrap (apt-get install debootstrap) "
                "is not here to build the stand-in base"
            )
        script = ROOT / "tests" / "container" / "standin-base.sh"
        subprocess.run(["sh", str(script)], check=True, capture_output=True, timeout=900)
    return ["--base", STANDIN]


def test_image_reviews_as_the_runner_runs_it() -> None:
    """Every run of the smoke test passes: reviews as user 1001, other owners, a RUNNER_TEMP the
    container lacks, SIGTERM, `prbot demo`, a real PR that changes a benchmark script (read by
    tree-sitter-bash in the image, the same review as outside), and no log shows the token."""
    if os.environ.get("PRBOT_CONTAINER_TESTS") != "1":
        pytest.skip("builds the action's image (minutes): run it with PRBOT_CONTAINER_TESTS=1")
    if not shutil.which("podman"):
        pytest.skip("podman is not installed (Debian: apt-get install podman)")
    if os.geteuid() != 0:
        pytest.skip("needs root: rootful podman, and runner folders owned by other users")
    base = _base()
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, str(SMOKE), *base],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
