"""The bookkeeping every adapter shares: what the agent sent and got, per turn, in time order, and
the recordings a replay answers from.

Replay pairs LLM calls by (agent, turn, index) and tool calls by (agent, turn, index), as ADK's
replay does. Unlike ADK, a replay does not stop at the first difference: the recording answers as
long as it can, and only a call it has no answer for ends the turn ("ran past the recording").
"""

from __future__ import annotations

import json
import time
from typing import Any, Optional

from .jobs import ExchangeOut, Job, RunOutput, ToolOut


class RanPastRecording(Exception):
    """The agent asked for a model response the recording does not hold."""


class Harness:
    def __init__(self, job: Job) -> None:
        self.job = job
        self.output = RunOutput()
        self.turn = 0
        self.escaped: list[str] = []  # in replay: the model calls refused (`replay_guard`)
        self._began = time.perf_counter()
        RUNNING[id(job)] = self
        self._seq: dict[int, int] = {}
        self._llm_index: dict[tuple[str, int], int] = {}
        self._tool_index: dict[tuple[str, int], int] = {}
        self._llm_recorded: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self._tool_recorded: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for recording in job.recordings:
            key = (recording.get("agent_name", ""), int(recording.get("user_message_index", 0)))
            if recording.get("llm_recording"):
                self._llm_recorded.setdefault(key, []).append(recording["llm_recording"])
            elif recording.get("tool_recording"):
                self._tool_recorded.setdefault(key, []).append(recording["tool_recording"])

    @property
    def replay(self) -> bool:
        return self.job.mode == "replay"

    def elapsed(self) -> float:
        """Seconds since the run began (the timeline's clock)."""
        return round(time.perf_counter() - self._began, 4)

    def next_seq(self) -> int:
        seq = self._seq.get(self.turn, 0)
        self._seq[self.turn] = seq + 1
        return seq

    # --- model calls ------------------------------------------------------------------------------

    def start_exchange(self, agent: str, request: dict[str, Any]) -> ExchangeOut:
        key = (agent, self.turn)
        index = self._llm_index.get(key, 0)
        self._llm_index[key] = index + 1
        exchange = ExchangeOut(agent=agent, turn=self.turn, index=index, seq=self.next_seq(), request=request, start=self.elapsed())
        self.output.exchanges.append(exchange)
        return exchange

    def recorded_responses(self, exchange: ExchangeOut) -> list[dict[str, Any]]:
        """The recorded responses for this call; raises RanPastRecording when there are none."""
        recorded = self._llm_recorded.get((exchange.agent, exchange.turn), [])
        if exchange.index >= len(recorded):
            message = (
                f"ran past the recording: agent {exchange.agent!r} made model call {exchange.index + 1} in turn "
                f"{exchange.turn + 1}, the recording has {len(recorded)}"
            )
            exchange.error = message
            raise RanPastRecording(message)
        return list(recorded[exchange.index].get("llm_responses") or [])

    # --- tool calls -------------------------------------------------------------------------------

    def start_tool(self, agent: str, name: str, args: Optional[dict[str, Any]], call_id: Optional[str]) -> ToolOut:
        tool = ToolOut(agent=agent, turn=self.turn, seq=self.next_seq(), name=name, args=_jsonable(args), id=call_id, start=self.elapsed())
        self.output.tools.append(tool)
        return tool

    def recorded_tool_response(self, tool: ToolOut) -> Optional[dict[str, Any]]:
        """In replay, the recorded response of the agent's next tool call in this turn, if any."""
        key = (tool.agent, tool.turn)
        index = self._tool_index.get(key, 0)
        self._tool_index[key] = index + 1
        recorded = self._tool_recorded.get(key, [])
        if index >= len(recorded):
            return None
        response = recorded[index].get("tool_response") or {}
        return response.get("response") if isinstance(response, dict) else None

    def finish_tool(self, tool: ToolOut, result: Any) -> None:
        tool.response = _jsonable(result if isinstance(result, dict) else {"result": result})
        tool.has_response = True
        tool.end = self.elapsed()

    def waiting_on(self) -> str:
        """What the run is waiting for now: its model call or tool call in flight ("" when neither)."""
        for exchange in reversed(self.output.exchanges):
            if not exchange.responses and exchange.error is None:
                attempt = f", attempt {exchange.attempts}" if exchange.attempts > 1 else ""
                model = exchange.request.get("model") or "?"
                failed = f"; the attempts before failed: {exchange.last_failure}" if exchange.last_failure and exchange.attempts > 1 else ""
                return f"waiting for model call {exchange.index + 1} of turn {exchange.turn + 1} ({exchange.agent}, {model}{attempt}){failed}"
        for tool in reversed(self.output.tools):
            if not tool.has_response and tool.error is None:
                return f"waiting for tool {tool.name} in turn {tool.turn + 1} ({tool.agent})"
        return ""


#: The harness of each run in this worker, by `id(job)`: what a run that timed out was waiting for.
RUNNING: dict[int, Harness] = {}


def _jsonable(value: Any) -> Any:
    """A JSON-safe copy (tool args and results can hold anything)."""
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return {"result": repr(value)}
