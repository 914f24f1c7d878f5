"""The GitHub Action entry point: events, the sticky comment, the job summary, outputs and
annotations around the one review pipeline (`bot.pipeline`)."""
