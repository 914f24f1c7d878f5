"""`python -m bot` runs the command line."""

from bot.cli import main

raise SystemExit(main())
