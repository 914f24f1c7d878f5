"""`pip install .` gives a working `prbot` with its templates and example inside the package."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_installs_a_working_prbot(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        check=True,
        timeout=600,
    )
    wheel = next(dist.glob("prbot-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "bot/templates/comment.md.j2" in names
    assert "bot/templates/messages/ui.yaml" in names
    assert "bot/example/base/.github/CODEOWNERS" in names
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True, timeout=300
    )
    # Run from an empty folder so that nothing can come from the source tree.
    done = subprocess.run(
        [str(venv / "bin" / "prbot"), "demo", "--lang", "en"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={"PATH": f"{venv / 'bin'}:/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert "**Published set:** `[1, 4, 14, 16, 48, 56, 72]` → unchanged" in done.stdout
    location = subprocess.run(
        [str(python), "-c", "import bot; print(bot.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout
    assert str(venv) in location
