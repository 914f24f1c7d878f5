"""The arguments of `prbot fix` (argparse only: `prbot --help` stays quick to start)."""

from __future__ import annotations

import argparse
from typing import Any


def arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--repo", default=".", help="path of the git repository (default: .)")
    parser.add_argument("--base", required=True, help="base ref (the branch the PR targets)")
    parser.add_argument(
        "--head", default="HEAD", help="head ref, checked out in the working tree (default: HEAD)"
    )
    parser.add_argument("--pr-number", type=int, help="PR number (a new pr-link becomes this PR's URL)")
    parser.add_argument("--pr-url", help="PR URL, when --pr-number cannot derive it from the origin remote")
    parser.add_argument("--dry-run", action="store_true", help="print the fixes as a diff and change nothing")
    parser.add_argument("--offline", action="store_true", help="do not contact container registries")
    parser.add_argument("--lang", choices=("both", "en", "zh"), default="both")
    return parser


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `fix` to the `prbot` command's subcommands."""
    return arguments(subparsers.add_parser("fix", help="review two refs and fix what has a known fix"))
