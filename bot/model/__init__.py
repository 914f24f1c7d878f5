"""Pure parsing of the repository's files into small typed objects with line numbers."""
