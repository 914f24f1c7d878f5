"""One module per check id; each check is a pure function of the review diff."""
