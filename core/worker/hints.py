"""What to do about the usual reasons an agent cannot run: a package missing from the agents'
Python, or no model credentials. A clause added to the run's one-line error."""

from __future__ import annotations

import sys

_CREDENTIAL_MESSAGES = ("No API key was provided", "Missing key inputs argument", "default credentials were not found",
                        "Could not automatically determine credentials", "GOOGLE_CLOUD_PROJECT")


def how_to_fix(exc: BaseException) -> str:
    """What to do about the usual reasons an agent cannot run here, as a clause to add to its error."""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return (f" (not installed for {sys.executable}: install the project's dependencies there, "
                "or run agentdiff with --python set to the project's interpreter)")
    text = str(exc)
    if any(message in text for message in _CREDENTIAL_MESSAGES) or type(exc).__name__ == "DefaultCredentialsError":
        return (" (no model credentials: set GOOGLE_API_KEY, or GOOGLE_GENAI_USE_VERTEXAI=TRUE with "
                "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, in the environment or in a .env beside the agent; "
                "`agentdiff doctor` shows which are set)")
    return ""
