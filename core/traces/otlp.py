"""ADK's spans as conversations: each trace is one turn (ADK starts a trace per invocation), the turns of a
conversation share its `gen_ai.conversation.id` (the session id), and each turn becomes the `Turn` a run
becomes: its user message, its model calls (request, responses, tokens, times), its tool calls (arguments,
results, errors), its final response and the agent that made each.

Both of ADK's telemetry schemas are read:
- schema 1 (`ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1`): `invocation` → `invoke_agent` → `call_llm` (the whole
  request and response as JSON) and `execute_tool` (arguments and result as JSON);
- schema 2 (ADK 2.13's default, the GenAI conventions): `invoke_workflow` → `invoke_agent` →
  `generate_content` (messages only when content capture is on) and `execute_tool`.
The `execute_tool (merged)` span ADK adds when one model turn asks for several tools is not a call.
Content the exporter left out is said to be missing (`Conversation.missing`), never made up.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from agentdiff.core.traces.model import LlmExchange, ToolCall, Trace, Turn

from agentdiff.core.formats.otlp.spans import Span

MERGED = "(merged tools)"
SCHEMA_2_CONTENT = ("schema 2 traces hold no message content unless ADK runs with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="
                    "SPAN_ONLY (or SPAN_AND_EVENT)")
SCHEMA_1_CONTENT = "schema 1 traces hold no message content when ADK runs with ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false"


@dataclass
class Conversation:
    id: str  # the session id (else the first trace's id)
    schema: int
    trace: Trace
    invocation_ids: list[Optional[str]]
    where: str  # the file:line of its first span
    agent: str = ""
    missing: list[str] = field(default_factory=list)  # what the exporter left out, and how to keep it
    adk_version: Optional[str] = None  # the ADK that emitted it (its instrumentation scope's version)
    case: Optional[str] = None  # the case it is a run of, when agentdiff exported it (`agentdiff.case.id`)


def content_left_out(spans: Iterable[Span]) -> Optional[str]:
    """How to keep message content, when the model calls among these spans (an export, say) hold none."""
    calls = [s for s in spans if s.name == "call_llm" or _op(s) == "generate_content"]
    first = [s for s in calls if s.name == "call_llm"] or calls  # schema 1's content is on call_llm, not its generate_content
    if not first:
        return None
    schema_1 = first[0].name == "call_llm"
    held = [s for s in first if _json(s.attributes.get("gcp.vertex.agent.llm_request" if schema_1 else "gen_ai.input.messages"))]
    return None if held else SCHEMA_1_CONTENT if schema_1 else SCHEMA_2_CONTENT


def _json(value: Any) -> Any:
    if not isinstance(value, str) or value in ("", "{}", "N/A", "<not specified>"):
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def _agent_span(span: Span) -> bool:
    return span.name in ("invocation", "call_llm") or _op(span) in ("invoke_agent", "invoke_workflow", "generate_content", "execute_tool")


def _op(span: Span) -> str:
    op = span.attributes.get("gen_ai.operation.name")
    return op if isinstance(op, str) else span.name.split(" ", 1)[0]


def _semconv_parts(parts: Iterable[Any], names: dict[str, str], pending: list[str]) -> list[dict[str, Any]]:
    """GenAI-convention message parts as google-genai's (`text`, `function_call`, `function_response`). A
    response names its call by id where the call gave one, else it answers the oldest call unanswered."""
    out = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            out.append({"text": part.get("content", "")})
        elif kind == "tool_call":
            if part.get("id") is not None:
                names[str(part["id"])] = str(part.get("name"))
            pending.append(str(part.get("name")))
            out.append({"function_call": {"name": part.get("name"), "args": part.get("arguments") or {}}})
        elif kind == "tool_call_response":
            name = names.pop(str(part.get("id")), None) if part.get("id") is not None else None
            if name is not None and name in pending:
                pending.remove(name)
            elif pending:
                name = pending.pop(0)
            out.append({"function_response": {"name": name or "", "response": part.get("response") or {}}})
    return out


def _contents(messages: Any) -> list[dict[str, Any]]:
    names: dict[str, str] = {}
    pending: list[str] = []
    return [{"role": "model" if m.get("role") == "assistant" else m.get("role") or "user", "parts": _semconv_parts(m.get("parts") or (), names, pending)}
            for m in messages or () if isinstance(m, dict)]


def _exchange(span: Span, schema: int, index: int, seq: int, base: int, agent: str) -> tuple[LlmExchange, bool]:
    """A model call, and whether it held its content."""
    attrs = span.attributes
    model = str(attrs.get("gen_ai.request.model") or span.name.partition(" ")[2] or "model")
    usage = {k: int(v) for k, v in (("prompt_token_count", attrs.get("gen_ai.usage.input_tokens")),
                                    ("candidates_token_count", attrs.get("gen_ai.usage.output_tokens"))) if v not in (None, "")}
    if schema == 1:
        request, response = _json(attrs.get("gcp.vertex.agent.llm_request")), _json(attrs.get("gcp.vertex.agent.llm_response"))
        held = isinstance(request, dict) and bool(request.get("contents"))
        request = request if isinstance(request, dict) else {"model": model}
        response = response if isinstance(response, dict) else {}
        if usage and "usage_metadata" not in response:
            response["usage_metadata"] = usage
    else:
        messages = _json(attrs.get("gen_ai.input.messages"))
        held = isinstance(messages, list)
        request = {"model": model, **({"contents": _contents(messages)} if held else {})}
        config: dict[str, Any] = {}
        system = _json(attrs.get("gen_ai.system_instructions"))
        if isinstance(system, list):
            config["system_instruction"] = "\n".join(str(p.get("content", "")) for p in system if isinstance(p, dict))
        tools = _json(attrs.get("gen_ai.tool.definitions"))
        if isinstance(tools, list):
            config["tools"] = [{"function_declarations": [{k: t.get(k) for k in ("name", "description", "parameters") if t.get(k) is not None}
                                                          for t in tools if isinstance(t, dict)]}]
        if config:
            request["config"] = config
        output = _json(attrs.get("gen_ai.output.messages"))
        if isinstance(output, list) and len(output) > 1:  # a streamed call: each chunk (the last with its finish reason), then the whole answer
            output = output[-1:]
        contents = _contents(output) if isinstance(output, list) else []
        parts = [p for c in contents for p in c["parts"]]
        response = {**({"content": {"role": "model", "parts": parts}} if contents else {}), **({"usage_metadata": usage} if usage else {})}
        reasons = attrs.get("gen_ai.response.finish_reasons")
        if isinstance(reasons, list) and reasons:
            response["finish_reason"] = str(reasons[-1]).upper()
    return LlmExchange(agent=agent, index=index, seq=seq, request=request, responses=(response,), error=span.error,
                       start=(span.start_ns - base) / 1e9, end=(span.end_ns - base) / 1e9), held


def _tool(span: Span, schema: int, seq: int, base: int) -> tuple[ToolCall, bool]:
    attrs = span.attributes
    if schema == 1:
        args, result = _json(attrs.get("gcp.vertex.agent.tool_call_args")), _json(attrs.get("gcp.vertex.agent.tool_response"))
    else:
        args, result = _json(attrs.get("gen_ai.tool.call.arguments")), _json(attrs.get("gen_ai.tool.call.result"))
    call_id = attrs.get("gen_ai.tool.call.id")
    response = result if isinstance(result, dict) else ({"result": result} if result is not None else None)
    return ToolCall(name=str(attrs.get("gen_ai.tool.name") or span.name.partition(" ")[2]), args=args if isinstance(args, dict) else None,
                    id=call_id if isinstance(call_id, str) and call_id != "<not specified>" else None,
                    agent=str(attrs.get("gen_ai.agent.name") or "") or None, seq=seq, response=None if span.error else response,
                    has_response=response is not None and span.error is None, error=span.error,
                    start=(span.start_ns - base) / 1e9, end=(span.end_ns - base) / 1e9), args is not None


def _user_text(llm: list[LlmExchange]) -> str:
    """The turn's user message, as its first model call was sent it: the last user text of its history."""
    contents = (llm[0].request or {}).get("contents") if llm else None
    for content in reversed(contents or []):
        if isinstance(content, dict) and content.get("role") == "user":
            texts = [p["text"] for p in content.get("parts") or () if isinstance(p, dict) and isinstance(p.get("text"), str)]
            if texts:
                return "".join(texts)
            return ""  # the last user content is a tool's answer: no new message in this call
    return ""


def _final(llm: list[LlmExchange]) -> Optional[str]:
    for exchange in reversed(llm):
        content = (exchange.responses[-1] if exchange.responses else {}).get("content") or {}
        parts = content.get("parts") or []
        if any(isinstance(p, dict) and p.get("function_call") for p in parts):
            return None  # it asked for a tool and nothing answered after: no final response
        texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
        if texts:
            return "".join(texts)
    return None


def _turn(index: int, spans: list[Span], schema: int) -> tuple[Turn, Optional[str], bool, str]:
    """One trace's turn, its invocation id, whether it held content, and its agent."""
    base = min(s.start_ns for s in spans)
    ordered = sorted(spans, key=lambda s: (s.start_ns, s.end_ns))
    llm, tools, counts, held, invocation = [], [], {}, True, None
    by_id = {s.span_id: s for s in spans}

    def above(span: Span) -> Iterable[Span]:
        """Its parent, then theirs, to the root (a span its own ancestor, ids that collide, ends the walk)."""
        seen = {span.span_id}
        at = by_id.get(span.parent_id)
        while at is not None and at.span_id not in seen:
            seen.add(at.span_id)
            yield at
            at = by_id.get(at.parent_id)

    def agent_of(span: Span) -> str:
        """The agent a span names, else the one its nearest `invoke_agent` span names (schema 1's `call_llm` names none)."""
        named = (s for s in (span, *above(span)) if s.attributes.get("gen_ai.agent.name") and (s is span or _op(s) == "invoke_agent"))
        return str(next(named, span).attributes.get("gen_ai.agent.name") or "")

    def in_a_tool(span: Span) -> bool:
        """Whether it ran inside a tool's call (an AgentTool's agent): its session is the tool's own, not the conversation's."""
        return any(_op(s) == "execute_tool" for s in above(span))

    for seq, span in enumerate(ordered):
        if in_a_tool(span):
            continue
        op = _op(span)  # schema 1's call_llm has none: its name (its generate_content child repeats its tokens)
        if (schema == 1 and op == "call_llm") or (schema == 2 and op == "generate_content"):
            agent = agent_of(span)
            exchange, had = _exchange(span, schema, counts.get(agent, 0), seq, base, agent)
            counts[agent] = counts.get(agent, 0) + 1
            llm.append(exchange)
            held = held and had
            invocation = invocation or span.attributes.get("gcp.vertex.agent.invocation_id")
        elif op == "execute_tool" and span.attributes.get("gen_ai.tool.name") != MERGED:
            call, had = _tool(span, schema, seq, base)
            tools.append(call)
            held = held and (had or span.error is not None)
    error = next((s.error for s in ordered if s.error and _op(s) in ("invocation", "invoke_workflow", "invoke_agent") and not in_a_tool(s)), None)
    root_agent = next((str(s.attributes.get("gen_ai.agent.name")) for s in ordered if _op(s) == "invoke_agent" and not in_a_tool(s)), "")
    turn = Turn(index=index, user_text=_user_text(llm), llm=tuple(llm), tool_calls=tuple(tools), final_response=_final(llm), error=error)
    return turn, invocation if isinstance(invocation, str) else None, held and bool(llm), root_agent


@dataclass(frozen=True)
class _TraceRead:
    """One trace read as its conversation's turn (`_turn`, at index 0)."""

    conversation: str
    start_ns: int
    first: Span
    schema: int
    built: tuple[Turn, Optional[str], bool, str]
    adk_version: Optional[str]
    case: Optional[str]


#: The traces read by the last call, by trace id and their span objects (held here, so no other object
#: takes an id while it is kept): a trace file read on after an export arrived builds only its new turns.
_TRACES: dict[tuple[str, tuple[int, ...]], tuple[list[Span], Optional[_TraceRead]]] = {}


def _trace(trace_id: str, members: list[Span]) -> Optional[_TraceRead]:
    """A trace's turn and what its conversation takes of it; None when no agent ran in it (a server's own
    request: adk api_server traces its endpoints)."""
    if not any(_agent_span(s) for s in members):
        return None
    ordered = sorted(members, key=lambda s: s.start_ns)
    conversation = next((str(s.attributes[k]) for s in ordered  # the outermost's (an AgentTool's has its own)
                         for k in ("gen_ai.conversation.id", "gcp.vertex.agent.session_id") if s.attributes.get(k)), trace_id)
    schema = 1 if any(s.name in ("invocation", "call_llm") for s in members) else 2  # each trace its own
    return _TraceRead(conversation, ordered[0].start_ns, ordered[0], schema, _turn(0, members, schema),
                      next((s.adk_version for s in members if s.adk_version), None),
                      next((str(s.attributes["agentdiff.case.id"]) for s in members if s.attributes.get("agentdiff.case.id")), None))


def conversations(spans: Iterable[Span]) -> list[Conversation]:
    """The conversations in these spans, in the order they began; each trace one turn."""
    global _TRACES
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    known, kept = _TRACES, {}
    grouped: dict[str, list[_TraceRead]] = {}
    for trace_id, members in traces.items():
        key = (trace_id, tuple(map(id, members)))
        hit = known.get(key)
        if hit is None:
            hit = (members, _trace(trace_id, members))
        kept[key] = hit
        if hit[1] is not None:
            grouped.setdefault(hit[1].conversation, []).append(hit[1])
    _TRACES = kept  # (only what this call read: what a later one may meet again)
    out = []
    for conversation_id, turns in grouped.items():
        turns.sort(key=lambda read: read.start_ns)
        built = [read.built if i == 0 else (read.built[0].model_copy(update={"index": i}), *read.built[1:]) for i, read in enumerate(turns)]
        missing = sorted({SCHEMA_1_CONTENT if read.schema == 1 else SCHEMA_2_CONTENT for read, (_, _, held, _) in zip(turns, built) if not held})
        out.append((turns[0].start_ns, Conversation(conversation_id, turns[0].schema, Trace(turns=tuple(t for t, _, _, _ in built)),
                                                    [i for _, i, _, _ in built], turns[0].first.where, next((a for _, _, _, a in built if a), ""),
                                                    missing, next((r.adk_version for r in turns if r.adk_version), None),
                                                    next((r.case for r in turns if r.case), None))))
    return [conversation for _, conversation in sorted(out, key=lambda pair: pair[0])]
