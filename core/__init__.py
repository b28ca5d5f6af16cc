"""agentdiff's headless core, in subpackages along the data flow (each imports only those below):

    families                each format's stages, as the pipeline asks them (loaded by `project.family`)
    workbench · reports     a session over every case (watch, re-run, accept, undo) · report writers
    baselines               accept and record: atomic, journaled writes of ADK-format baselines
    run                     cases as worker jobs; outputs scored and diffed into a CaseRun
    diff                    the per-layer diff engine, as data
    traces · scoring        what a run did · ADK-exact metrics and verdicts
    project                 discovery, agent resolution, configuration
    formats · worker        ADK's file formats · the worker processes that run agents

Nothing here imports Textual, Rich or the TUI, and nothing here prints; `tests/test_architecture.py`
checks the contracts in pyproject.toml.
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("agentdiff")
except _metadata.PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"
