"""One trace model for both sides of every comparison.

Whatever its source (the expected and actual invocations of an EvalSet, an ADK results file,
conformance recordings and sessions, an agent run), a trace is, per turn (one user message): the
LLM exchanges (request and responses), the tool calls with their responses, the final response and
the intermediate ones, token usage, timings and errors; per case: the final session state and
events.

Every element knows its chronological position in its turn (`seq`), so the first divergence of a
case is the earliest one, and, where it comes from a file, its `origin`: the file and the path
inside it, from which the TUI's `e` key finds the line.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Origin(_Value):
    """Where a value lives: a file (as displayed) and the path inside it."""

    file: str
    path: tuple[str | int, ...] = ()

    def child(self, *parts: str | int) -> "Origin":
        return Origin(file=self.file, path=self.path + parts)


class LlmExchange(_Value):
    """One model call: the request sent and the responses received (streamed parts included)."""

    agent: str
    index: int  # per agent, within the turn: the replay index ADK uses
    seq: int
    request: Optional[dict[str, Any]] = None
    responses: tuple[dict[str, Any], ...] = ()
    origin: Optional[Origin] = None  # of the request
    error: Optional[str] = None
    start: Optional[float] = None  # seconds into the run (the timeline; not compared)
    end: Optional[float] = None


class ToolCall(_Value):
    name: str
    args: Optional[dict[str, Any]] = None
    id: Optional[str] = None
    agent: Optional[str] = None
    seq: int = 0
    response: Optional[dict[str, Any]] = None  # the FunctionResponse's `response`
    has_response: bool = False
    error: Optional[str] = None
    simulated: bool = False  # answered without the tool running (ADK's Environment Simulator, a callback)
    start: Optional[float] = None  # seconds into the run (the timeline; not compared)
    end: Optional[float] = None
    origin: Optional[Origin] = None  # of the call
    args_origin: Optional[Origin] = None
    response_origin: Optional[Origin] = None


class NodeStep(_Value):
    """One run of an ADK 2 workflow node in a turn (`traces.nodes`)."""

    path: str  # node names from the root's child down, without run numbers: `inner/writer`
    run: str = ""  # the node's own segment with its run number: `writer@1`
    route: Any = None  # the route it took (a value or a list of them)
    output: Any = None
    has_output: bool = False
    message_output: bool = False  # its output is its message (an LLM node's answer: the response layer's)
    branch: Optional[str] = None  # its parallel branch, when it ran in one
    author: str = ""
    seq: int = 0  # position of its first event in the turn

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


class TextResponse(_Value):
    author: str
    text: str
    origin: Optional[Origin] = None


class Turn(_Value):
    index: int  # 0-based: the invocation / user_message_index
    user_text: str = ""
    llm: tuple[LlmExchange, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    final_response: Optional[str] = None  # ADK's final-response text (thought parts included)
    final_origin: Optional[Origin] = None
    intermediate_responses: tuple[TextResponse, ...] = ()
    nodes: tuple[NodeStep, ...] = ()  # what ran, in a workflow
    workflow_output: Any = None  # the workflow's own output (`has_workflow_output` says whether it has one)
    has_workflow_output: bool = False
    usage: Optional[dict[str, Any]] = None
    duration: Optional[float] = None
    error: Optional[str] = None


class SessionSnapshot(_Value):
    """The final session of a run (conformance cases and agent runs)."""

    app_name: str = ""
    user_id: str = ""
    state: dict[str, Any] = {}
    events: tuple[dict[str, Any], ...] = ()
    origin: Optional[Origin] = None  # of the session document


class Trace(_Value):
    turns: tuple[Turn, ...] = ()
    session: Optional[SessionSnapshot] = None
    error: Optional[str] = None  # a run that crashed or timed out
    transfer_parents: tuple[str, ...] = ()  # a run's agents whose sub-agents' node paths are not workflow nodes (`nodes.without_transfers`)

    @property
    def has_requests(self) -> bool:
        return any(turn.llm for turn in self.turns)
