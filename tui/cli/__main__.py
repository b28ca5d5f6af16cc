"""`python -m agentdiff.tui.cli`: the `agentdiff` command (as `serve` starts the app for each browser tab)."""

from . import entry

entry()
