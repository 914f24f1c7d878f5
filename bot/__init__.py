"""prbot: deterministic, bilingual review of benchmark-configuration pull requests."""

__version__ = "0.1.0"
