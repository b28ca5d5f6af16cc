"""A coding agent's way into the workbench: `agentdiff mcp`'s tools (`session`), its server (`server`),
and what an open TUI is told of an assistant's work (`activity`)."""
