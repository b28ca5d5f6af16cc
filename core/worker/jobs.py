"""What the parent asks a worker to do, and what the worker sends back: plain JSON-able models."""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

RunMode = Literal["replay", "live", "record"]
AgentKind = Literal["auto", "adk", "native"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AgentRef(_Model):
    """Which agent: a package (or module) `name` importable from `agents_dir`."""

    kind: AgentKind = "auto"  # auto: ADK when the module has `app`/`root_agent`/`get_agent_async`, else native
    agents_dir: str
    name: str
    sub_agent: Optional[str] = None  # ADK's agent_name: run this sub-agent of the root instead
    # A dotted module (`AgentEvaluator`'s `agent_module="shop.eval_agents.billing"`): the folder on
    # `sys.path` it is imported from, as `shop.eval_agents.billing`; the package is still the folder
    # `agents_dir/name`. None: `name` is imported from `agents_dir`, as `adk eval` does.
    import_from: Optional[str] = None
    # A module of the package that holds the agent (`customer_support_agent.test_billing_agent`, a file
    # defining `agent`), imported instead of the package's `agent` module; ADK takes its `agent`.
    entry: Optional[str] = None

    @property
    def module(self) -> str:
        """The module's dotted name as it is imported (`shop.eval_agents.billing`)."""
        dotted = self.name
        if self.import_from:
            from pathlib import PurePath

            try:
                dotted = ".".join((*PurePath(self.agents_dir).relative_to(self.import_from).parts, self.name))
            except ValueError:  # not under it: the package alone
                pass
        return dotted + (f".{self.entry}" if self.entry else "")

    @property
    def label(self) -> str:
        return self.module + (f"/{self.sub_agent}" if self.sub_agent else "")


class Message(_Model):
    content: dict[str, Any]  # a genai Content, role "user"
    state_delta: Optional[dict[str, Any]] = None


class Job(_Model):
    case_id: str
    agent: AgentRef
    mode: RunMode
    app_name: str
    user_id: str = "agentdiff_user"
    initial_state: dict[str, Any] = {}
    messages: list[Message]
    recordings: list[dict[str, Any]] = []  # replay: the case's Recording entries
    streaming: Literal["none", "sse"] = "none"
    run_tools: bool = False  # replay: keep the real tools' results to diff against the recorded ones
    repeat: int = 0  # which of num_runs this is
    # Not a run but scoring one: the case, the judged criteria and the run's actual invocations, for
    # ADK's evaluators (`judge.py`); the answer is `RunOutput.judged`.
    judge: Optional[dict[str, Any]] = None
    # A `conversation_scenario` case: no messages; ADK's user simulator writes them as the run goes
    # (`eval_case`: the case as in its file; `user_simulator_config`: the eval config's, as written).
    scenario: Optional[dict[str, Any]] = None
    # An agents-cli continuation: the events the session starts with, as `eval generate` seeds them
    # (`{author, content, state_delta}`; an author `model` is the root agent's). They are not part of
    # the run's output.
    history: list[dict[str, Any]] = []
    app_info: bool = False  # also list the app's agents as ADK's `app-info` does (`RunOutput.app_agents`)
    # Not a run but grading one with agents-cli's local custom metrics (`custom_metrics.py`):
    # `metrics` [{name, source, file}] and the `instance` each `evaluate` is given; the answer is
    # `RunOutput.judged` (name → {score, explanation, error_message}).
    grade: Optional[dict[str, Any]] = None
    # A run an agents-cli case's metrics grade as soon as it ends, in its own process: `case` (the
    # dataset case as the SDK dumps it), `metrics`, `cloud` and `cache_dir` as for `grade`. The
    # answer is `RunOutput.judged`, left None when the run gave nothing to grade.
    then_grade: Optional[dict[str, Any]] = None
    # An `adk test` fixture run as ADK's test runner runs it (`fixture_replay.py`): replay (`user_message`,
    # `responses` the mock model serves, `later` user events, recorded `call_ids`, `mocks`) or, with
    # `live`, a re-record (`messages`, `call_ids`, `response_ids`). The answer is `RunOutput.events`, dumped as
    # ADK writes a fixture (camelCase).
    fixture: Optional[dict[str, Any]] = None


class ExchangeOut(_Model):
    agent: str
    turn: int
    index: int  # per agent within the turn
    seq: int  # chronological within the turn
    request: dict[str, Any]
    responses: list[dict[str, Any]] = []
    error: Optional[str] = None
    attempts: int = 1  # live: how many times the call was made (rate limits and transient errors are retried)
    last_failure: Optional[str] = Field(default=None, exclude=True)  # live: why the last attempt failed (said while it waits)
    start: Optional[float] = None  # seconds into the run when it was asked, and when its last response came
    end: Optional[float] = None


class ToolOut(_Model):
    agent: str
    turn: int
    seq: int
    name: str
    args: Optional[dict[str, Any]] = None
    id: Optional[str] = None
    response: Optional[dict[str, Any]] = None
    has_response: bool = False
    error: Optional[str] = None
    start: Optional[float] = None  # seconds into the run when it was called, and when it answered or raised
    end: Optional[float] = None
    simulated: bool = False  # answered without the tool running (the Environment Simulator, a callback)


class RunOutput(_Model):
    exchanges: list[ExchangeOut] = []
    tools: list[ToolOut] = []
    events: list[dict[str, Any]] = []  # the session's events, dumped as ADK dumps them (a `fixture` job's: as ADK writes a fixture)
    state: dict[str, Any] = {}
    app_name: str = ""
    user_id: str = ""
    turn_errors: dict[int, str] = {}
    # Wall-clock seconds each turn took, measured as ADK's evaluation generator measures an invocation's
    # `duration` (monotonic, from sending the user message to the turn's last event, rounded to ms).
    turn_seconds: dict[int, float] = {}
    # Of each turn's seconds, those with a model call in flight and those inside a tool but not awaiting
    # a model, collected by ADK's own instrumentation where the ADK version has it (else absent).
    turn_model_seconds: dict[int, float] = {}
    turn_tool_seconds: dict[int, float] = {}
    adk_version: Optional[str] = None  # the google-adk version the agent ran on (None: no ADK)
    error: Optional[str] = None  # the run could not go on (crash, ran past the recording, timeout)
    # where the failure is in the project's own code (`hints.project_origin`): file, line, trimmed traceback
    error_file: Optional[str] = None
    error_line: Optional[int] = None
    error_trace: Optional[str] = None
    files_read: list[str] = []  # files the agent opened while it ran (prompts, data): for watch mode
    agent_info: dict[str, Any] = {}  # models, instruction and tool-source hashes: for registration
    seconds: float = 0.0
    log: str = ""  # the end of what the agent printed
    judged: Optional[dict[str, Any]] = None  # a judge job's answer: each judged metric's result
    user_messages: list[dict[str, Any]] = []  # a simulated conversation: the user's Content of each turn
    simulation_end: Optional[str] = None
    # The app's agents as ADK's `app-info` lists them (name → description, instruction, tools,
    # sub_agents), for an agents-cli trace's `agent_data.agents`; empty where ADK cannot list them.
    app_agents: dict[str, Any] = {}
    # the agents (not workflows) whose sub-agents' node paths are runs of a sub-agent, not a workflow's
    # nodes: their paths below the root ("" for the root itself)
    transfer_parents: list[str] = []
    root_agent: str = ""  # the root agent's name  # why the user simulator stopped (ADK's status, e.g. "stop_signal_detected")
    _size: int = PrivateAttr(default=0)  # the bytes it came in from the worker (0: made here): what scoring it costs
    # A `fixture` job's events as the worker sent them (ADK's fixture form), once its `events` are made the
    # session's snake_case events every other run has (`families.adk_test.judge.presented`).
    _fixture_events: Optional[list[dict[str, Any]]] = PrivateAttr(default=None)
