"""`python -m bot` runs the command line."""

from bot.cli import run

run()
