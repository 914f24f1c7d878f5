"""Where the packaged templates live, installed or in a source checkout."""

from __future__ import annotations

from pathlib import Path


def template_dir() -> Path:
    """The `templates/` folder: inside the installed package, or at the top of a source checkout."""
    installed = Path(__file__).with_name("templates")
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parent.parent / "templates"
