"""Where file contents come from: local git refs or the GitHub API; and the OCI registry."""
