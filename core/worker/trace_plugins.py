"""The plugins a run is traced by (ADK's own mechanism for recording, as its RecordingsPlugin).

* `agentdiff_trace_head` runs before the app's plugins: it instruments a model that was not found
  before the run (an LLM node a workflow creates as it goes) at its first call, and starts the record
  of every tool call, so one that another plugin answers (the Environment Simulator) or an agent's
  `before_tool_callback` short-circuits is traced too, marked *simulated* (its tool never ran).
* `agentdiff_trace` runs after them: it finishes each tool call with its response and, in replay,
  hands the agent the recorded response in place of the real one.

google-adk is imported here only inside functions: this module runs in workers.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional

from .harness import Harness

_MARKED = "_agentdiff_runs_marked"
RAN: set[str] = set()  # the function call ids whose tool really ran, in this worker


def trace_plugins(harness: Harness, instrument: Callable[[Any, dict[str, Any]], None]) -> tuple[Any, Any]:
    """(the head plugin, the tail plugin) of one run."""
    from google.adk.plugins.base_plugin import BasePlugin

    open_calls: dict[str, Any] = {}  # function call id → its record, from the head's start to the tail's finish

    def key(tool_context: Any, call: Any = None) -> str:
        return tool_context.function_call_id or (str(id(call)) if call is not None else "")

    class TraceHead(BasePlugin):
        def __init__(self) -> None:
            super().__init__(name="agentdiff_trace_head")

        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> Optional[Any]:
            agent = getattr(getattr(callback_context, "_invocation_context", None), "agent", None)
            if agent is not None and hasattr(agent, "canonical_model"):
                instrument(agent, harness.output.agent_info)
            return None

        async def before_tool_callback(self, *, tool: Any, tool_args: dict, tool_context: Any) -> Optional[dict]:
            _mark_runs(tool)
            call = harness.start_tool(tool_context.agent_name, tool.name, tool_args, tool_context.function_call_id)
            open_calls[key(tool_context, call)] = call
            return None

    class TraceTail(BasePlugin):
        def __init__(self) -> None:
            super().__init__(name="agentdiff_trace")

        async def after_tool_callback(self, *, tool: Any, tool_args: dict, tool_context: Any, result: Any) -> Optional[dict]:
            call = open_calls.pop(key(tool_context), None)
            if call is None:
                return None
            call.simulated = bool(tool_context.function_call_id) and getattr(tool, _MARKED, False) and tool_context.function_call_id not in RAN
            recorded = harness.recorded_tool_response(call) if harness.replay else None
            if recorded is not None and not harness.job.run_tools:
                harness.finish_tool(call, recorded)
            else:
                harness.finish_tool(call, result)
            return recorded  # replay answers with the recording; None keeps the real result

        async def on_tool_error_callback(self, *, tool: Any, tool_args: dict, tool_context: Any, error: Exception) -> Optional[dict]:
            call = open_calls.pop(key(tool_context), None)
            if call is not None:
                call.error = f"{type(error).__name__}: {error}"
                call.end = harness.elapsed()
            return None

    return TraceHead(), TraceTail()


def _mark_runs(tool: Any) -> None:
    """Have `tool` note each call it really runs, by its function call id (unique to the call: ADK
    gives every call one), in `RAN`; once per tool object."""
    if getattr(tool, _MARKED, False):
        return
    original = tool.run_async

    @functools.wraps(original)
    async def run_async(*args: Any, **kwargs: Any) -> Any:
        context = kwargs.get("tool_context")
        if context is not None and context.function_call_id:
            RAN.add(context.function_call_id)
        return await original(*args, **kwargs)

    try:
        object.__setattr__(tool, "run_async", run_async)
        object.__setattr__(tool, _MARKED, True)
    except (AttributeError, TypeError):  # a tool that takes no attributes: its calls read as run
        pass
