"""Everything a reader sees: messages rendered from `templates/`, the comment, the job summary,
the failure comment and the JSON report, in English and Chinese, with PR text made inert."""
