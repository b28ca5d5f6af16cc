"""`run --report otlp=FILE`: the run's traces as OpenTelemetry, for teams that keep evals beside their
production telemetry. One OTLP/JSON line (an `ExportTraceServiceRequest`, the specification's form: hex
ids, integer enums) per case: a trace per turn, in the GenAI conventions ADK 2.13 emits (`invoke_agent`,
`generate_content` with its messages, `execute_tool` with its arguments and result), and on the case's
first turn a `gen_ai.evaluation.result` event per metric (its name, score, label and explanation).
`agentdiff score FILE` reads it back."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Optional, Sequence

from agentdiff.core.scoring.results import CaseResult
from agentdiff.core.traces.model import Trace

SCOPE = {"name": "agentdiff", "version": ""}


def _id(*parts: Any, size: int = 16) -> str:
    return hashlib.sha256("\x00".join(map(str, parts)).encode()).hexdigest()[: size * 2]


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [_value(v) for v in value]}}
    return {"stringValue": value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}


def _attrs(**values: Any) -> list[dict[str, Any]]:
    return [{"key": key.replace("__", "."), "value": _value(value)} for key, value in values.items() if value is not None]


def _messages(contents: Any) -> Optional[str]:
    """google-genai contents as GenAI-convention messages (JSON, as ADK writes them)."""
    if not isinstance(contents, list):
        return None
    out = []
    for content in contents:
        parts = []
        for part in (content or {}).get("parts") or []:
            if "text" in part:
                parts.append({"type": "text", "content": part["text"]})
            elif "function_call" in part:
                call = part["function_call"]
                parts.append({"type": "tool_call", "name": call.get("name"), "arguments": call.get("args") or {}})
            elif "function_response" in part:
                parts.append({"type": "tool_call_response", "response": part["function_response"].get("response") or {}})
        out.append({"role": "assistant" if content.get("role") == "model" else content.get("role") or "user", "parts": parts})
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def _span(trace_id: str, span_id: str, parent: str, name: str, start: float, end: float, attributes: list, base_ns: int,
          error: Optional[str] = None, events: Sequence[dict] = ()) -> dict[str, Any]:
    return {"traceId": trace_id, "spanId": span_id, "parentSpanId": parent, "name": name, "kind": 1,
            "startTimeUnixNano": str(base_ns + int(start * 1e9)), "endTimeUnixNano": str(base_ns + int(max(end, start) * 1e9)),
            "attributes": attributes, **({"events": list(events)} if events else {}),
            "status": {"code": 2, "message": error} if error else {}}


def case_export(result: CaseResult, trace: Trace, agent: str, base_ns: int) -> dict[str, Any]:
    """One case's run as one `ExportTraceServiceRequest` (a dict in OTLP/JSON's form)."""
    conversation = f"{result.id}@{base_ns}"  # this run's: two exports of one suite stay two conversations
    spans = []
    for turn in trace.turns:
        trace_id = _id(base_ns, conversation, turn.index)  # a run's own ids: two exports of one suite never merge
        root = _id(base_ns, conversation, turn.index, "root", size=8)
        times = [t for x in (*turn.llm, *turn.tool_calls) for t in (x.start, x.end) if t is not None]
        start, end = (min(times), max(times)) if times else (0.0, 0.0)
        events = []
        if turn.index == 0:
            for metric in result.metrics:
                if metric.score is None and metric.status.value in ("informational",):
                    continue
                events.append({"name": "gen_ai.evaluation.result", "timeUnixNano": str(base_ns + int(end * 1e9)),
                               "attributes": _attrs(gen_ai__evaluation__name=metric.name, gen_ai__evaluation__score__value=metric.score,
                                                    gen_ai__evaluation__score__label=metric.status.value,
                                                    gen_ai__evaluation__explanation=metric.reason)})
        spans.append(_span(trace_id, root, "", f"invoke_agent {agent}", start, end, _attrs(
            gen_ai__operation__name="invoke_agent", gen_ai__agent__name=agent, gen_ai__conversation__id=conversation,
            agentdiff__case__id=result.id), base_ns,
            turn.error, events))
        for n, exchange in enumerate(turn.llm):
            request, response = exchange.request or {}, (exchange.responses[-1] if exchange.responses else {})
            usage = response.get("usage_metadata") or {}
            output = _messages([response["content"]]) if response.get("content") else None
            spans.append(_span(trace_id, _id(base_ns, conversation, turn.index, "llm", n, size=8), root, f"generate_content {request.get('model', '')}",
                               exchange.start or start, exchange.end or start, _attrs(
                                   gen_ai__operation__name="generate_content", gen_ai__request__model=request.get("model"),
                                   gen_ai__agent__name=exchange.agent, gen_ai__conversation__id=conversation,
                                   gen_ai__usage__input_tokens=usage.get("prompt_token_count"),
                                   gen_ai__usage__output_tokens=usage.get("candidates_token_count"),
                                   gen_ai__input__messages=_messages(request.get("contents")), gen_ai__output__messages=output),
                               base_ns, exchange.error))
        for n, call in enumerate(turn.tool_calls):
            spans.append(_span(trace_id, _id(base_ns, conversation, turn.index, "tool", n, size=8), root, f"execute_tool {call.name}",
                               call.start or start, call.end or start, _attrs(
                                   gen_ai__operation__name="execute_tool", gen_ai__tool__name=call.name, gen_ai__agent__name=call.agent,
                                   gen_ai__tool__call__id=call.id,
                                   gen_ai__tool__call__arguments=json.dumps(call.args) if call.args is not None else None,
                                   gen_ai__tool__call__result=json.dumps(call.response) if call.has_response else None),
                               base_ns, call.error))
    return {"resourceSpans": [{"resource": {"attributes": _attrs(service__name="agentdiff")},
                               "scopeSpans": [{"scope": SCOPE, "spans": spans}]}]}


def write_otlp(entries: Sequence[tuple[CaseResult, Trace, str]], path: Path, base_ns: int) -> None:
    """Every case's export as one line of `path` (replaced whole: a temporary file renamed over it)."""
    import os
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for result, trace, agent in entries:
                handle.write(json.dumps(case_export(result, trace, agent, base_ns), ensure_ascii=False, separators=(",", ":")) + "\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
