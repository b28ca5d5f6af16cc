"""In a replay, no model is called: every model call of the agents is answered from the recording
(`adk_adapter.HarnessLlm`), and any other request google-genai would send — a tool or a function
node calling a model itself, a model the instrumentation did not reach — fails the run, naming it,
instead of reaching the network.

google-genai is imported here only inside functions: this module runs in workers.
"""

from __future__ import annotations

from typing import Any, Callable

ESCAPED = ("a model call escaped replay: google-genai was asked to {method} {path}, outside the agents' "
           "models agentdiff replays (a tool or a node calling a model itself?); replay makes no model call")

_GUARDED: list[bool] = []


class ModelCallEscaped(RuntimeError):
    """A model call a replay would have made for real."""


def guard_model_calls(escaped: Callable[[str], None]) -> None:
    """From now on in this process, every request google-genai would send raises ModelCallEscaped
    (`escaped(message)` is told first, so the run fails even if the agent catches the error)."""
    if _GUARDED:
        return
    _GUARDED.append(True)
    try:
        from google.genai import _api_client
    except ImportError:  # no google-genai: nothing to send through it
        return
    client = _api_client.BaseApiClient

    def refused(method_name: str) -> Any:
        def send(self: Any, http_method: str, path: str, *args: Any, **kwargs: Any) -> Any:
            message = ESCAPED.format(method=http_method.upper(), path=path.split("?")[0])
            escaped(message)
            raise ModelCallEscaped(message)

        async def send_async(self: Any, http_method: str, path: str, *args: Any, **kwargs: Any) -> Any:
            return send(self, http_method, path)

        original = getattr(client, method_name)
        return send_async if _is_async(original) else send

    for name in ("request", "request_streamed", "async_request", "async_request_streamed"):
        if hasattr(client, name):
            setattr(client, name, refused(name))


def _is_async(function: Any) -> bool:
    import inspect

    return inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function)
