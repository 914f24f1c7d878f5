"""The fuzz target runs clean for a bounded time (atheris when installed, else hypothesis)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FUZZ = Path(__file__).resolve().parents[1] / "fuzz" / "fuzz_yaml.py"


def test_fuzz_yaml_for_ten_seconds(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(FUZZ),
            "-max_total_time=10",
            f"-artifact_prefix={tmp_path}/",
            str(tmp_path / "corpus"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    crashes = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("crash-", "timeout-", "oom-")))
    assert result.returncode == 0 and not crashes, (crashes, result.stderr[-3000:])
