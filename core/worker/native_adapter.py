"""The native protocol: plain-Python agents whose model and tool calls go through agentdiff.

An agent is a package (or module) in an agents dir with

    async def run_turn(ctx) -> str | None

and, optionally, `NAME` (defaults to the package name). `ctx` gives the agent

* `ctx.message` (the user's text) and `ctx.content` (the whole user Content, as a dict);
* `ctx.state`, the session state (a dict the agent may change; it persists across turns);
* `ctx.history`, the conversation so far as genai Content dicts, this turn's user message included;
  the model's answers and tool results are appended as they happen;
* `await ctx.llm(request, model)`: one model call. `request` is a genai-shaped dict (`model`,
  `contents`, `config` with `system_instruction` and `tools`); `model` is the agent's own model
  client, a function (sync or async) from that dict to a response dict (`{"content": {...}}`).
  In replay the recording answers and `model` is not called;
* `await ctx.tool(name, args, fn)`: one tool call; `fn(**args)` runs (in replay too, as in ADK) and
  its result is returned, or in replay the recorded result.

The return value is the turn's final answer (when the last model response did not already say it).
Because every model and tool call passes through `ctx`, a native agent is recorded, replayed and
diffed exactly like an ADK agent.
"""

from __future__ import annotations

import inspect
import asyncio
import json
import time
from typing import Any, Callable, Optional

from .adk_adapter import load_module
from .harness import Harness, RanPastRecording
from .hints import project_origin
from .jobs import Job, RunOutput


class TurnContext:
    def __init__(self, harness: Harness, agent: str, content: dict[str, Any], state: dict[str, Any], history: list[dict[str, Any]], events: list[dict[str, Any]]) -> None:
        self._harness = harness
        self.agent = agent
        self.content = content
        self.message = "\n".join(p["text"] for p in content.get("parts") or [] if isinstance(p, dict) and p.get("text"))
        self.state = state
        self.history = history
        self._events = events
        self._announced: list[tuple[str, str]] = []  # function calls the model asked for, not yet made

    def _event(self, content: dict[str, Any]) -> None:
        self._events.append({"author": self.agent, "content": json.loads(json.dumps(content, default=str))})

    async def llm(self, request: dict[str, Any], model: Optional[Callable[[dict[str, Any]], Any]] = None) -> dict[str, Any]:
        harness = self._harness
        exchange = harness.start_exchange(self.agent, json.loads(json.dumps(request, default=str)))
        if harness.replay:
            responses = harness.recorded_responses(exchange)
        else:
            if model is None:
                raise ValueError("ctx.llm needs the agent's model outside replay")
            result = model(request)
            if inspect.isawaitable(result):
                result = await result
            responses = [json.loads(json.dumps(result, default=str))]
        exchange.responses.extend(responses)
        exchange.end = harness.elapsed()
        final = responses[-1] if responses else {}
        content = final.get("content")
        if content:
            self.history.append(content)
            self._event(content)
            for part in content.get("parts") or []:
                call = part.get("function_call") if isinstance(part, dict) else None
                if isinstance(call, dict) and call.get("name"):
                    self._announced.append(_call_key(call.get("name"), call.get("args") or {}))
        return final

    async def tool(self, name: str, args: dict[str, Any], fn: Callable[..., Any]) -> Any:
        harness = self._harness
        key = _call_key(name, args)
        if key in self._announced:
            self._announced.remove(key)
        else:  # a call no model response asked for is still a call: the trace says so, as ADK's events would
            announced = {"role": "model", "parts": [{"function_call": {"name": name, "args": json.loads(json.dumps(args, default=str))}}]}
            self.history.append(announced)
            self._event(announced)
        call = harness.start_tool(self.agent, name, args, None)
        try:
            result = fn(**args)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            call.error, call.end = f"{type(exc).__name__}: {exc}", harness.elapsed()
            raise
        recorded = harness.recorded_tool_response(call) if harness.replay else None
        if recorded is not None:
            harness.finish_tool(call, result if harness.job.run_tools else recorded)
            result = recorded.get("result", recorded) if set(recorded) == {"result"} else recorded
        else:
            harness.finish_tool(call, result)
        response = call.response if recorded is None else recorded  # what the agent was given
        content = {"role": "user", "parts": [{"function_response": {"name": name, "response": response}}]}
        self.history.append(content)
        self._event(content)
        return result


def _call_key(name: Any, args: Any) -> tuple[str, str]:
    return str(name), json.dumps(args, sort_keys=True, default=str)


async def run_native(job: Job) -> RunOutput:
    harness = Harness(job)
    out = harness.output
    if job.scenario is not None:
        out.error = "a conversation_scenario case needs an ADK agent: ADK's user simulator talks to it through ADK's runner"
        return out
    module = load_module(job.agent)
    run_turn = getattr(module, "run_turn", None)
    if not callable(run_turn):
        raise LookupError(f"{job.agent.name}: no `run_turn(ctx)` in {module.__name__}")
    agent = str(getattr(module, "NAME", job.agent.name))
    state = dict(job.initial_state)
    history: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    out.agent_info = {"models": {agent: str(getattr(module, "MODEL", ""))}, "instructions": {}, "tools": {}}
    for index, message in enumerate(job.messages):
        harness.turn = index
        content = {"role": "user", **message.content}
        if message.state_delta:
            state.update(message.state_delta)
        history.append(content)
        events.append({"author": "user", "content": content})
        ctx = TurnContext(harness, agent, content, state, history, events)
        started = time.monotonic()
        try:
            answer = await run_turn(ctx)
        except RanPastRecording as exc:
            out.turn_errors[index] = out.error = str(exc)
            break
        except asyncio.CancelledError:  # the run's time is up: the caller says "timed out"
            raise
        except BaseException as exc:  # the agent's own failure, SystemExit included
            out.turn_errors[index] = f"{type(exc).__name__}: {exc}"
            out.error = f"turn {index + 1}: {type(exc).__name__}: {exc}"
            out.error_file, out.error_line, out.error_trace = project_origin(exc, job.agent.agents_dir)
            break
        last = events[-1] if events else {}
        said = last.get("author") == agent and any(
            isinstance(p, dict) and p.get("text") for p in (last.get("content") or {}).get("parts") or []
        )
        if answer and not said:
            reply = {"role": "model", "parts": [{"text": str(answer)}]}
            history.append(reply)
            events.append({"author": agent, "content": reply})
        out.turn_seconds[index] = round(time.monotonic() - started, 3)
    out.app_name, out.user_id = job.app_name, job.user_id
    out.state = json.loads(json.dumps(state, default=str))
    out.events = events
    return out
