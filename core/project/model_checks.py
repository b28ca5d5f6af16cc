"""`agentdiff doctor`'s look at each agent's LiteLLM models (Ollama, OpenAI-compatible servers, other
providers), from what the agent's own Python said of them (`worker.model_endpoints`):

* a model string LiteLLM finds no provider for (`qwen3:32b`: "LLM Provider NOT provided"), which
  fails every run at its first model call;
* a provider key variable that is not set (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, …);
* a base URL (Ollama's, or one the agent or a variable gives) that does not answer: connected to,
  never called.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Callable, Optional
from urllib.parse import urlsplit

CONNECT_TIMEOUT = 2.0
_NO_PROVIDER = "LLM Provider NOT provided"


def _reachable(url: str) -> Optional[str]:
    """None when something listens at the URL's host and port, else why not."""
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        host = parts.hostname
    except ValueError as exc:
        return f"not a URL ({exc})"
    if not host:
        return "not a URL"
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def model_checks(imported: dict, reach: Callable[[str], Optional[str]] = _reachable) -> list:
    """A line per LiteLLM model of the imported agents: fine, or what will fail and what to do."""
    from agentdiff.core.project.doctor import Check

    checks = []
    seen: set[tuple[str, str]] = set()
    for folder, result in sorted(imported.items()):
        name = Path(folder).name
        for entry in result.litellm:
            model, provider, base = entry.get("model", ""), entry.get("provider"), entry.get("api_base")
            if (name, model) in seen:
                continue
            seen.add((name, model))
            error = entry.get("error")
            if error and _NO_PROVIDER in error:
                bare = model.split("/")[-1]
                checks.append(Check("models", False, f"{name}: the model {model!r} names no LiteLLM provider, so every run fails at its "
                                    "first model call",
                                    f"write it as '<provider>/<model>' (for Ollama 'ollama_chat/{bare}'), or set the variable the "
                                    "agent reads its model from (in a .env beside the agent, say)"))
                continue
            if error:
                checks.append(Check("models", False, f"{name}: LiteLLM refuses the model {model!r}: {error}"))
                continue
            missing = entry.get("missing_keys") or []
            if missing:
                checks.append(Check("models", False, f"{name}: the model {model!r} ({provider}) needs {', '.join(missing)}, which "
                                    f"{'is' if len(missing) == 1 else 'are'} not set",
                                    "set it in the environment or in a .env beside the agent"))
                continue
            if base:
                why = reach(base)
                if why is not None:
                    origin = entry.get("base_from") or "its configuration"
                    variable = origin if origin.isupper() or origin.endswith("_BASE") else ("OLLAMA_API_BASE" if provider in ("ollama", "ollama_chat") else "")
                    start = f"start Ollama (`ollama serve`) and pull the model (`ollama pull {model.split('/', 1)[-1]}`)" if provider in ("ollama", "ollama_chat") else "start the model's server"
                    checks.append(Check("models", False, f"{name}: the model {model!r} is served at {base} ({origin}), which does not "
                                        f"answer: {why}", start + (f", or set {variable} to where it runs" if variable else "")))
                    continue
            checks.append(Check("models", True, f"{name}: the model {model!r} via {provider}" + (f" at {base}" if base else "")))
    return checks
