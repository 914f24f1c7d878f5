"""`pip install .` gives a working `prbot` with its templates and example inside the package."""

from __future__ import annotations

import shutil
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD_LEFTOVERS = (".git", "build", "dist", "*.egg-info", ".venv*", "__pycache__", ".*_cache", ".hypothesis")


def _dependency_folders() -> list[str]:
    """The site-packages folders of the environment the tests run in (never the source tree).

    The wheel's venv borrows its dependencies from there instead of from the base interpreter
    (`--system-site-packages` would give the base's packages, which a fresh machine lacks) or from
    the network. Its own site-packages comes first on its path, so `bot` is the wheel's."""
    folders = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()}
    if site.ENABLE_USER_SITE:
        folders.add(site.getusersitepackages())
    return sorted(f for f in folders if Path(f).is_dir() and Path(f).resolve() != ROOT)


def test_wheel_installs_a_working_prbot(tmp_path: Path) -> None:
    # Build from a copy without the leftovers of earlier builds: an `*.egg-info/SOURCES.txt` from
    # `pip install .` would put a template back into the wheel after pyproject.toml dropped it.
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*BUILD_LEFTOVERS))
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(source)],
        check=True,
        timeout=600,
    )
    wheel = next(dist.glob("prbot-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "bot/templates/comment.md.j2" in names
    assert "bot/templates/messages/ui.yaml" in names
    assert "bot/example/base/.github/CODEOWNERS" in names
    # What the example's runs execute, so that the installed demo checks them too.
    assert "bot/example/base/runners/launch_mi355x-amds.sh" in names
    assert "bot/example/base/benchmarks/single_node/agentic/kimik3_fp4_mi355x_atom_mtp.sh" in names
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    own_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The venv has no pip of its own: the test environment's pip installs into it. Only then does
    # it get the dependencies (pip would otherwise see the test environment's prbot as installed).
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)],
        check=True,
        timeout=300,
    )
    assert (venv / "bin" / "prbot").is_file(), "the wheel did not install its `prbot` command"
    Path(own_site, "prbot-test-dependencies.pth").write_text("\n".join(_dependency_folders()) + "\n")
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
    assert (
        "| `kimik3-fp4-mi355x-atom-agentic-mtp` | unchanged (7 concurrencies) | 7 | 56 | ✅ |" in done.stdout
    )
    assert "· 5 not checked (digest, codeowners, scripts)" in done.stdout  # launch checked
    location = subprocess.run(
        [str(python), "-c", "import bot; print(bot.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout
    assert str(venv) in location
