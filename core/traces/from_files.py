"""Building traces from what is on disk: EvalSet invocations (any shape, legacy included), ADK
results files, and conformance recordings with their session files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from agentdiff.core.formats.conformance import (
    ConformanceCase,
    ModeBaseline,
    StreamingMode,
)
from agentdiff.core.formats.eval_set import (
    IntermediateData,
    Invocation,
    InvocationEvents,
)
from agentdiff.core.formats.eval_set_files import LoadedEvalSet
from agentdiff.core.formats.genai_types import (
    Content,
    FunctionCall,
    FunctionResponse,
    content_text,
)
from agentdiff.core.formats.usage import token_usage
from agentdiff.core.traces.model import (
    LlmExchange,
    Origin,
    SessionSnapshot,
    TextResponse,
    ToolCall,
    Trace,
    Turn,
)
from agentdiff.core.traces.nodes import events_by_turn, node_steps, workflow_output

#: `seq` of a turn's final response: after everything else the turn did.
FINAL_SEQ = 1_000_000_000

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class InvocationPaths:
    """Where the parts of a case's invocations live in its file, for each of ADK's shapes."""

    file: str
    case: Path  # the case's conversation list (or the legacy row list)
    legacy: bool = False

    def turn(self, index: int) -> Path:
        return self.case + (index,)

    def tool_use(self, turn: int, index: int) -> Path:
        key = "expected_tool_use" if self.legacy else ("intermediate_data", "tool_uses")
        return self.turn(turn) + ((key,) if isinstance(key, str) else key) + (index,)

    def args(self, turn: int, index: int) -> Path:
        return self.tool_use(turn, index) + ("tool_input" if self.legacy else "args",)

    def tool_response(self, turn: int, index: int) -> Optional[Path]:
        return None if self.legacy else self.turn(turn) + ("intermediate_data", "tool_responses", index)

    def final_response(self, turn: int) -> Path:
        return self.turn(turn) + (("reference",) if self.legacy else ("final_response",))

    def intermediate(self, turn: int, index: int) -> Path:
        if self.legacy:
            return self.turn(turn) + ("expected_intermediate_agent_responses", index)
        return self.turn(turn) + ("intermediate_data", "intermediate_responses", index)

    def event_part(self, turn: int, event: int, part: int) -> Path:
        return self.turn(turn) + ("intermediate_data", "invocation_events", event, "content", "parts", part)

    def origin(self, path: Optional[Path]) -> Optional[Origin]:
        return None if path is None else Origin(file=self.file, path=path)


def eval_case_paths(loaded: LoadedEvalSet, case_index: int) -> InvocationPaths:
    if loaded.legacy == "rows":
        return InvocationPaths(loaded.source.display, (), legacy=True)
    if loaded.legacy == "named":
        return InvocationPaths(loaded.source.display, (case_index, "data"), legacy=True)
    return InvocationPaths(loaded.source.display, ("eval_cases", case_index, "conversation"))


def trace_from_invocations(invocations: Sequence[Invocation], paths: Optional[InvocationPaths] = None) -> Trace:
    """The trace of an EvalSet conversation or of the actual invocations of an ADK run."""
    return Trace(turns=tuple(_invocation_turn(index, inv, paths) for index, inv in enumerate(invocations)))


def _origin(paths: Optional[InvocationPaths], path: Optional[Path]) -> Optional[Origin]:
    return paths.origin(path) if paths is not None else None


def _invocation_turn(index: int, inv: Invocation, paths: Optional[InvocationPaths]) -> Turn:
    calls: list[ToolCall] = []
    intermediate: list[TextResponse] = []
    data = inv.intermediate_data
    if isinstance(data, IntermediateData):
        responses = _pair_responses(data.tool_uses, data.tool_responses)
        for j, call in enumerate(data.tool_uses):
            response_index = responses.get(j)
            response = data.tool_responses[response_index] if response_index is not None else None
            calls.append(
                _tool_call(
                    call,
                    response,
                    seq=2 * j + 1,
                    origin=_origin(paths, paths.tool_use(index, j) if paths else None),
                    args_origin=_origin(paths, paths.args(index, j) if paths else None),
                    response_origin=_origin(
                        paths, paths.tool_response(index, response_index) if paths and response_index is not None else None
                    ),
                )
            )
        for k, (author, parts) in enumerate(data.intermediate_responses):
            text = content_text(Content(parts=parts))
            intermediate.append(TextResponse(author=author, text=text, origin=_origin(paths, paths.intermediate(index, k) if paths else None)))
    elif isinstance(data, InvocationEvents):
        found: list[tuple[FunctionCall, int, Path]] = []
        answers: list[tuple[FunctionResponse, Path]] = []
        for e, event in enumerate(data.invocation_events):
            for p, part in enumerate((event.content.parts or []) if event.content else []):
                where = paths.event_part(index, e, p) if paths else ()
                if part.function_call:
                    found.append((part.function_call, 2 * (e * 1000 + p) + 1, where))
                elif part.function_response:
                    answers.append((part.function_response, where))
                elif part.text and not part.thought:
                    intermediate.append(
                        TextResponse(author=event.author, text=part.text, origin=_origin(paths, where + ("text",) if paths else None))
                    )
        responses = _pair_responses([c for c, _, _ in found], [r for r, _ in answers])
        for j, (call, seq, where) in enumerate(found):
            k = responses.get(j)
            calls.append(
                _tool_call(
                    call,
                    answers[k][0] if k is not None else None,
                    seq=seq,
                    origin=_origin(paths, where + ("function_call",) if paths else None),
                    args_origin=_origin(paths, where + ("function_call", "args") if paths else None),
                    response_origin=_origin(paths, answers[k][1] + ("function_response",) if paths and k is not None else None),
                )
            )
    final = content_text(inv.final_response) if inv.final_response is not None else None
    usage = {key: value for key, value in token_usage(inv).items() if value is not None}
    return Turn(
        index=index,
        user_text=content_text(inv.user_content),
        tool_calls=tuple(calls),
        final_response=final,
        final_origin=_origin(paths, paths.final_response(index) if paths else None),
        intermediate_responses=tuple(intermediate),
        usage=usage or None,
        duration=inv.duration,
    )


def _pair_responses(calls: Sequence[FunctionCall], responses: Sequence[FunctionResponse]) -> dict[int, int]:
    """Call index → response index: by id where both have one, else the n-th response of a name
    answers the n-th call of that name."""
    pairs: dict[int, int] = {}
    used: set[int] = set()
    by_id = {r.id: k for k, r in enumerate(responses) if r.id}
    for j, call in enumerate(calls):
        if call.id and call.id in by_id:
            pairs[j] = by_id[call.id]
            used.add(by_id[call.id])
    for j, call in enumerate(calls):
        if j in pairs:
            continue
        for k, response in enumerate(responses):
            if k not in used and response.name == call.name:
                pairs[j] = k
                used.add(k)
                break
    return pairs


def _tool_call(
    call: FunctionCall,
    response: Optional[FunctionResponse],
    *,
    seq: int,
    agent: Optional[str] = None,
    origin: Optional[Origin] = None,
    args_origin: Optional[Origin] = None,
    response_origin: Optional[Origin] = None,
) -> ToolCall:
    return ToolCall(
        name=call.name or "",
        args=call.args,
        id=call.id,
        agent=agent,
        seq=seq,
        response=response.response if response is not None else None,
        has_response=response is not None,
        origin=origin,
        args_origin=args_origin,
        response_origin=response_origin,
    )


# --- conformance ----------------------------------------------------------------------------------


def trace_from_recordings(case: ConformanceCase, mode: StreamingMode) -> Trace:
    """The expected trace of a recorded conformance case: its recordings and its session."""
    baseline: ModeBaseline = case.baselines[mode]
    rec_file = baseline.recordings_source.display
    turns_llm: dict[int, list[LlmExchange]] = {}
    turns_tools: dict[int, list[ToolCall]] = {}
    seqs: dict[int, int] = {}
    agent_index: dict[tuple[int, str], int] = {}
    for r, recording in enumerate(baseline.recordings.recordings):
        turn = recording.user_message_index
        seq = seqs.get(turn, 0)
        seqs[turn] = seq + 1
        base = Origin(file=rec_file, path=("recordings", r))
        if recording.llm_recording is not None:
            key = (turn, recording.agent_name)
            index = agent_index.get(key, 0)
            agent_index[key] = index + 1
            turns_llm.setdefault(turn, []).append(
                LlmExchange(
                    agent=recording.agent_name,
                    index=index,
                    seq=seq,
                    request=recording.llm_recording.llm_request,
                    responses=tuple(recording.llm_recording.llm_responses or ()),
                    origin=base.child("llm_recording", "llm_request"),
                )
            )
        elif recording.tool_recording is not None and recording.tool_recording.tool_call is not None:
            tool = recording.tool_recording
            call_origin = base.child("tool_recording", "tool_call")
            turns_tools.setdefault(turn, []).append(
                _tool_call(
                    tool.tool_call,  # type: ignore[arg-type]
                    tool.tool_response,
                    seq=seq,
                    agent=recording.agent_name,
                    origin=call_origin,
                    args_origin=call_origin.child("args"),
                    response_origin=base.child("tool_recording", "tool_response", "response"),
                )
            )
    session = baseline.session
    session_origin = Origin(file=baseline.session_source.display)
    texts = session_texts(session.events, session_origin)
    by_turn = events_by_turn(session.events)
    count = max([len(case.spec.user_messages), *(t + 1 for t in turns_llm), *(t + 1 for t in turns_tools), len(texts)])
    turns = []
    for t in range(count):
        final, intermediate = texts[t] if t < len(texts) else (None, [])
        message = case.spec.user_messages[t] if t < len(case.spec.user_messages) else None
        user_text = (content_text(message.content) if message.content else message.text or "") if message else ""
        events = by_turn[t] if t < len(by_turn) else []
        has_output, output = workflow_output(events)
        turns.append(
            Turn(
                index=t,
                user_text=user_text,
                llm=tuple(turns_llm.get(t, ())),
                tool_calls=tuple(turns_tools.get(t, ())),
                final_response=final.text if final else None,
                final_origin=final.origin if final else None,
                intermediate_responses=tuple(intermediate),
                nodes=node_steps(events),
                workflow_output=output,
                has_workflow_output=has_output,
            )
        )
    return Trace(
        turns=tuple(turns),
        session=SessionSnapshot(
            app_name=session.app_name,
            user_id=session.user_id,
            state=session.state,
            events=tuple(session.events),
            origin=session_origin,
        ),
    )


def session_texts(events: Sequence[dict[str, Any]], origin: Optional[Origin] = None) -> list[tuple[Optional[TextResponse], list[TextResponse]]]:
    """Per turn (a user-authored event starts one): the final response and the intermediate texts.

    The final response is the last text reply of an agent that carries no function call, as ADK's
    `is_final_response()` picks it; the other agent texts of the turn are intermediate.
    """
    turns: list[list[TextResponse]] = []
    finals: list[Optional[int]] = []
    seen_user = False
    for e, event in enumerate(events):
        author = event.get("author")
        if author == "user":
            if seen_user or not turns:  # events before the first message belong to the first turn
                turns.append([])
                finals.append(None)
            seen_user = True
            continue
        if not turns:
            turns.append([])
            finals.append(None)
        content = event.get("content") or {}
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        text = "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str) and p["text"])
        if not text or event.get("partial"):
            continue
        has_call = any(p.get("function_call") or p.get("functionCall") for p in parts)
        turns[-1].append(
            TextResponse(author=str(author or ""), text=text, origin=origin.child("events", e, "content") if origin else None)
        )
        if not has_call:
            finals[-1] = len(turns[-1]) - 1
    out: list[tuple[Optional[TextResponse], list[TextResponse]]] = []
    for texts, final in zip(turns, finals, strict=True):
        out.append((texts[final] if final is not None else None, [t for i, t in enumerate(texts) if i != final]))
    return out
