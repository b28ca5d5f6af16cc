"""agentdiff's headless core: ADK formats, discovery, scoring and reports.

Nothing here imports Textual, Rich or the TUI, and nothing here prints.
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("agentdiff")
except _metadata.PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"
