"""ADK's `adk test` fixtures: `<agent>/tests/<name>.json`, a recorded session's events that ADK replays
with a mock model and compares, normalised, with what the agent does now (`fixture`, `normalize`,
`replay_plan`)."""
