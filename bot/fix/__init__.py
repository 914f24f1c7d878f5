"""`prbot fix`: review `base...head` as `prbot review` does, then make the fixes known for its
findings in the working tree. `arguments` holds the command line, `command` runs it, `plan` decides
the fixes (pure), `yamledit` edits YAML text in place (pure) and `apply` writes the files."""
