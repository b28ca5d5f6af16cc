"""Google agents-cli's formats (google-agents-cli 1.11, its SDK `agentplatform.types`), as models and
loaders of their own beside ADK's: an EvaluationDataset (`tests/eval/datasets/*.json`; a trace file
that `agents-cli eval generate` writes is the same type, its cases carrying `responses` and
`agent_data`), `eval_config.yaml`, `agents-cli-manifest.yaml` (or `[tool.agents-cli]`), and the grade
results `agents-cli eval grade` writes. What they hold and how agents-cli reads them:
`docs/agents-cli-formats.md`.

Read as the SDK reads them: snake_case and camelCase keys alike, unknown keys refused except on an
eval case (kept, as the SDK keeps them), every field optional. Bad files are located `LoadError`s.
"""
