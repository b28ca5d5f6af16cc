"""What to do about the usual reasons an agent cannot run: a package missing from the agents'
Python, or no model credentials. A clause added to the run's one-line error."""

from __future__ import annotations

import sys

_CREDENTIAL_MESSAGES = ("No API key was provided", "Missing key inputs argument", "default credentials were not found",
                        "Could not automatically determine credentials", "GOOGLE_CLOUD_PROJECT")


_NETWORK_ERRORS = {"ClientConnectorError", "ClientConnectorDNSError", "ConnectError", "ConnectTimeout", "ServerDisconnectedError"}


def how_to_fix(exc: BaseException) -> str:
    """What to do about the usual reasons an agent cannot run here, as a clause to add to its error."""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        if _is_projects_own(exc.name.rpartition(".")[0]):
            return f" (the project's own module {exc.name} is not there: a file missing from the checkout?)"
        missing = "google-adk is" if exc.name in ("google", "google.adk") else "it is"
        return (f" ({missing} not installed for {sys.executable}: install the project's dependencies into that Python, "
                "or choose the project's own with --python)")
    if isinstance(exc, ImportError) and "(unknown location)" in str(exc):
        return f" ({exc.name or 'that package'} has no __init__.py and no such module in its folder: a file missing from the checkout?)"
    text = str(exc)
    if "Cannot connect to host" in text or type(exc).__name__ in _NETWORK_ERRORS:
        return " (the model's API could not be reached from here: check the network connection, a proxy, or the API host)"
    if any(message in text for message in _CREDENTIAL_MESSAGES) or type(exc).__name__ == "DefaultCredentialsError":
        return (" (no model credentials: set GOOGLE_API_KEY, or GOOGLE_GENAI_USE_VERTEXAI=TRUE with "
                "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, in the environment or in a .env beside the agent; "
                "`agentdiff doctor` shows which are set)")
    return ""


def _is_projects_own(package: str) -> bool:
    """Whether the top package of `package` is the project's (found outside the interpreter's own and
    installed packages); looked up, never imported."""
    import importlib.util

    if not package:
        return False
    try:
        spec = importlib.util.find_spec(package.split(".")[0])
    except (ImportError, ValueError):
        return False
    where = (spec.origin if spec and spec.origin not in (None, "namespace") else next(iter(spec.submodule_search_locations or []), "")) if spec else ""
    return bool(where) and not any(part in where for part in ("site-packages", "dist-packages", sys.base_prefix + "/lib"))
