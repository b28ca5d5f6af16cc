"""What `agentdiff doctor` asks of an agent's LiteLLM models, in the agent's own Python after its `.env`
is loaded (so the model strings, keys and base URLs are the ones a run would have): for each
`LiteLlm` model, the provider LiteLLM picks for it (or its error: "LLM Provider NOT provided"), the
base URL it would call, and the key variables its provider needs that are not set. Never calls a model.
"""

from __future__ import annotations

import io
import os
from contextlib import redirect_stdout
from typing import Any

#: The base URL a provider calls when none is given (LiteLLM's defaults), and the variable that sets it.
DEFAULT_BASES = {"ollama": ("OLLAMA_API_BASE", "http://localhost:11434"), "ollama_chat": ("OLLAMA_API_BASE", "http://localhost:11434")}
BASE_VARIABLES = {"openai": "OPENAI_API_BASE", "hosted_vllm": "HOSTED_VLLM_API_BASE", "lm_studio": "LM_STUDIO_API_BASE"}


def litellm_models(agents: list[Any]) -> list[dict[str, Any]]:
    """One entry per distinct LiteLLM model of `agents` (ADK's LlmAgents)."""
    out: dict[str, dict[str, Any]] = {}
    for agent in agents:
        model = getattr(agent, "model", None)
        if type(model).__name__ != "LiteLlm":
            continue
        name = str(getattr(model, "model", ""))
        extra = dict(getattr(model, "_additional_args", None) or {})
        base = extra.get("api_base") or extra.get("base_url")
        entry = {"agent": getattr(agent, "name", ""), "model": name, "provider": None, "error": None, "api_base": base, "missing_keys": []}
        try:
            import litellm

            litellm.suppress_debug_info = True
            with redirect_stdout(io.StringIO()):  # LiteLLM prints its provider list on this error
                _, provider, _, _ = litellm.get_llm_provider(model=name, api_base=base)
            entry["provider"] = provider
            if not base:
                variable, default = DEFAULT_BASES.get(provider, (BASE_VARIABLES.get(provider, ""), None))
                entry["api_base"] = (os.environ.get(variable) if variable else None) or default
                entry["base_from"] = variable if variable and os.environ.get(variable) else ("LiteLLM's default" if default else None)
            else:
                entry["base_from"] = "the agent's code"
            if not extra.get("api_key"):
                with redirect_stdout(io.StringIO()):
                    missing = litellm.validate_environment(model=name).get("missing_keys") or []
                entry["missing_keys"] = [k for k in missing if not k.endswith("_API_BASE")]  # a base has a default, checked by address
        except Exception as exc:  # noqa: BLE001 - LiteLLM's own errors, any kind: said as they are
            entry["error"] = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        out.setdefault(name, entry)
    return list(out.values())
