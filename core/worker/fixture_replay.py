"""An `adk test` fixture run in the worker, as ADK's `agent_test_runner` runs one (ADK 2.11 and later).

Replay (`job.fixture["live"]` false): the agent is loaded as `adk test` loads it (ADK's `AgentLoader`,
the agent folder's parent on `sys.path`), its workflows made sequential, every `BaseLlm` and `Gemini`
answering with the fixture's model responses in order, `random` seeded with 42 or answering the
fixture's `mocks`; the first user message is sent, then each later user event of the fixture (a
function response renamed to the id the agent's new call got). The run's events are those ADK's runner
yielded, with the later user events as ADK builds them.

Live (a re-record, as `adk test --rebuild` does): the agent's own model, every user message of the
fixture sent in turn, event, invocation and function call ids made deterministic as `--rebuild` makes
them, the user's events kept.

The events come back as ADK writes a fixture (`RunOutput.events`: camelCase, no nulls, without
the volatile fields `--rebuild` leaves out); the parent renumbers and compares them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import sys
import time
from contextvars import ContextVar
from typing import Any, AsyncGenerator, Callable, Optional

from .hints import how_to_fix, project_origin, said
from .jobs import Job, RunOutput

#: What `adk test --rebuild` leaves out of the events it writes.
REBUILD_EXCLUDED = {"timestamp", "usage_metadata", "model_version", "avg_logprobs", "cache_metadata", "logprobs_result",
                    "citation_metadata", "interaction_id", "turn_complete"}
TEST_APP, TEST_USER = "test_app", "test_user"


class PastTheFixture(Exception):
    """The agent called its model more often than the fixture recorded."""


def _dumped(event: Any) -> dict[str, Any]:
    return event.model_dump(mode="json", by_alias=True, exclude_none=True, exclude=REBUILD_EXCLUDED)


def _sequential(node: Any, seen: set[int]) -> None:
    """Workflows and parallel workers made to run one node at a time, as `adk test` runs them."""
    if id(node) in seen:
        return
    seen.add(id(node))
    try:
        from google.adk.workflow._parallel_worker import _ParallelWorker
        from google.adk.workflow._workflow import Workflow
    except ImportError:  # an ADK without workflows
        return
    if isinstance(node, Workflow):
        node.max_concurrency = 1
        for child in (node.graph.nodes if node.graph and node.graph.nodes else ()):
            _sequential(child, seen)
    elif isinstance(node, _ParallelWorker):
        node.max_parallel_workers = 1
        if hasattr(node, "_node"):
            _sequential(node._node, seen)


_PARALLEL = re.compile(r"^(.+)__(\d+)$")


def in_order(picked: list[dict[str, Any]], readable: Callable[[dict[str, Any]], Any]) -> list[Any]:
    """The responses the mock model serves, in ADK's order: each content ADK can read (`readable`: the
    content made, or None), those of parallel authors (`name__N`) grouped and in `N`'s order."""
    ordered: list[Any] = []
    group: list[tuple[int, Any]] = []
    base: Optional[str] = None
    for item in picked:
        content = readable(item["content"])
        if content is None:  # ADK drops it before it groups parallel authors
            continue
        match = _PARALLEL.match(item["author"])
        if base is not None and (not match or match.group(1) != base):
            ordered += [c for _, c in sorted(group, key=lambda pair: pair[0])]
            group, base = [], None
        if match:
            base = match.group(1)
            group.append((int(match.group(2)), content))
        else:
            ordered.append(content)
    return ordered + [c for _, c in sorted(group, key=lambda pair: pair[0])]


def _readable(content: dict[str, Any]) -> Any:
    from google.genai import types

    try:
        return types.Content.model_validate(content)
    except Exception:
        return None


class _Answers:
    """The fixture's model responses, served in order to one run."""

    def __init__(self, picked: list[dict[str, Any]]) -> None:
        from google.adk.models.llm_response import LlmResponse

        self.responses = [LlmResponse(content=content) for content in in_order(picked, _readable)]
        self.served = 0

    def next(self) -> Any:
        if self.served >= len(self.responses):
            raise PastTheFixture(f"the agent called its model more often than the fixture recorded ({len(self.responses)} responses)")
        self.served += 1
        return self.responses[self.served - 1]


#: The run this task belongs to, if it is a fixture's: its answers, its `random` and its id counters. A
#: worker runs other jobs beside it, whose models, `random` and ids stay their own.
_ANSWERS: ContextVar[Optional[_Answers]] = ContextVar("fixture_answers", default=None)
_RANDOM: ContextVar[Optional[dict[str, list]]] = ContextVar("fixture_random", default=None)
_IDS: ContextVar[Optional[dict[str, Any]]] = ContextVar("fixture_ids", default=None)
_INSTALLED: list[bool] = []
_ALONE: list[asyncio.Lock] = []


def _install() -> None:
    """Once a process: every `BaseLlm` and `Gemini`, `random`, and ADK's id makers ask the current
    fixture run first (ADK's test runner patches them for the whole process; a worker runs more)."""
    if _INSTALLED:
        return
    _INSTALLED.append(True)
    from google.adk import runners
    from google.adk.events.event import Event
    from google.adk.flows.llm_flows import functions
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.google_llm import Gemini

    def answering(original: Any) -> Any:
        async def generate_content_async(self: Any, llm_request: Any, stream: bool = False) -> AsyncGenerator[Any, None]:
            answers = _ANSWERS.get()
            if answers is None:
                async for response in original(self, llm_request, stream):
                    yield response
                return
            yield answers.next()
        return generate_content_async

    for cls in (BaseLlm, Gemini):
        setattr(cls, "generate_content_async", answering(cls.__dict__["generate_content_async"]))
    real_random, real_randint = random.random, random.randint

    def random_value() -> float:
        mocks = _RANDOM.get()
        if mocks is None or mocks.get("random.random") is None:
            return real_random()
        return mocks["random.random"].pop(0) if mocks["random.random"] else 0.8

    def randint_value(a: int, b: int) -> int:
        mocks = _RANDOM.get()
        if mocks is None or mocks.get("random.randint") is None:
            return real_randint(a, b)
        return mocks["random.randint"].pop(0) if mocks["random.randint"] else b

    random.random, random.randint = random_value, randint_value  # type: ignore[assignment]

    def counted(kind: str, original: Any) -> Any:
        def make(*args: Any, **kwargs: Any) -> str:
            ids = _IDS.get()
            return original(*args, **kwargs) if ids is None else ids["next"](kind)
        return make

    runners.new_invocation_context_id = counted("inv", runners.new_invocation_context_id)
    Event.new_id = staticmethod(counted("event", Event.new_id))  # type: ignore[method-assign]
    functions.generate_client_function_call_id = counted("call", functions.generate_client_function_call_id)


def _rebuild_ids(old_calls: list[Any], old_responses: list[Any], renamed: dict[Any, Any]) -> dict[str, Any]:
    """Invocation, event and function call ids counted as `--rebuild` counts them (`i-N`, `e-N`, `fc-N`);
    `renamed`: each recorded call's (and response's) id → the id its new call got."""
    counters = {"inv": 0, "event": 0, "call": 0}
    prefix = {"inv": "i", "event": "e", "call": "fc"}

    def next_id(kind: str) -> str:
        counters[kind] += 1
        new = f"{prefix[kind]}-{counters[kind]}"
        if kind == "call":
            if counters["call"] <= len(old_calls):
                renamed[old_calls[counters["call"] - 1]] = new
            if counters["call"] <= len(old_responses):
                renamed[old_responses[counters["call"] - 1]] = new
        return new

    return {"next": next_id, "counters": counters}


def _renamed_responses(content: Any, renamed: dict[Any, Any]) -> None:
    for part in content.parts or ():
        if part.function_response and part.function_response.id in renamed:
            part.function_response.id = renamed[part.function_response.id]


def one_at_a_time() -> asyncio.Lock:
    """The lock fixture runs of a process take in turn (`child._one` holds it around a run's timed part):
    `random` is seeded for each, as ADK seeds it, and its agent loaded afresh."""
    if not _ALONE:
        _ALONE.append(asyncio.Lock())
    return _ALONE[0]


async def run_fixture(job: Job) -> RunOutput:
    _install()
    return await _run_fixture(job)


async def _run_fixture(job: Job) -> RunOutput:
    from google.adk.apps.app import App
    from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
    from google.adk.cli.utils.agent_loader import AgentLoader
    from google.adk.memory.in_memory_memory_service import InMemoryMemoryService
    from google.adk.runners import Runner
    from google.adk.sessions.in_memory_session_service import InMemorySessionService

    from .adk_adapter import adk_version

    spec = job.fixture or {}
    # what pytest names the running test under `adk test` (`--rebuild` sets "rebuild"); agents may read it
    os.environ["PYTEST_CURRENT_TEST"] = "rebuild" if spec.get("live") else f"agent_test_runner.py::test_agent_replay[{spec.get('test_id', '')}] (call)"
    out = RunOutput(adk_version=adk_version())
    started = time.monotonic()
    sys.path.insert(0, job.agent.agents_dir)
    events: list[Any] = []
    try:
        random.seed(42)
        loader = AgentLoader(job.agent.agents_dir)
        loader.remove_agent_from_cache(job.agent.name)
        loaded = loader.load_agent(job.agent.name)
        _sequential(loaded.root_agent if isinstance(loaded, App) else loaded, set())
        services = {"artifact_service": InMemoryArtifactService(), "session_service": InMemorySessionService(),
                    "memory_service": InMemoryMemoryService()}
        runner = Runner(app=loaded, **services) if isinstance(loaded, App) else Runner(app_name=TEST_APP, agent=loaded, **services)
        app_name = loaded.name if isinstance(loaded, App) else TEST_APP
        session = await services["session_service"].create_session(app_name=app_name, user_id=TEST_USER)

        async def turn(content: Any, into: list[Any]) -> list[Any]:
            """One turn's events, each kept in `into` as it comes (a turn that fails keeps what it did)."""
            ran: list[Any] = []
            async for event in runner.run_async(user_id=TEST_USER, session_id=session.id, new_message=content):
                ran.append(event)
                into.append(event)
            return ran

        try:
            if spec.get("live"):
                await _rebuild(spec, turn, events)
            else:
                await _replay(spec, turn, events)
        finally:
            await runner.close()
    except Exception as exc:  # the agent's own failure, or one past the fixture
        out.error = str(exc) if isinstance(exc, PastTheFixture) else f"{said(exc)}{how_to_fix(exc)}"
        out.error_file, out.error_line, out.error_trace = project_origin(exc, job.agent.agents_dir)
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(job.agent.agents_dir)
    out.events = [_dumped(event) for event in events]  # partial ones too: the parent drops them as ADK does
    out.seconds = round(time.monotonic() - started, 3)
    return out


async def _replay(spec: dict[str, Any], turn: Any, events: list[Any]) -> None:
    """The fixture's first user message, then each later user event, the model answering from the fixture."""
    from google.adk.events.event import Event
    from google.genai import types

    answers = _Answers(list(spec.get("responses") or []))
    if answers.responses:  # no responses recorded: the agent's own model answers, as under ADK
        _ANSWERS.set(answers)
    mocks = dict(spec.get("mocks") or {})
    _RANDOM.set({key: list(values) for key, values in mocks.items()})
    if not mocks:
        random.seed(42)
    old_calls = list(spec.get("call_ids") or [])
    renamed: dict[Any, Any] = {}
    mapped = [0]

    def note_calls(ran: list[Any]) -> None:  # each recorded call's id → the id the agent's call got now, in order
        for event in ran:
            for call in event.get_function_calls():
                if mapped[0] < len(old_calls):
                    renamed[old_calls[mapped[0]]] = call.id
                    mapped[0] += 1

    ran = await turn(types.Content(role="user", parts=[types.Part.from_text(text=spec.get("user_message", ""))]), events)
    note_calls(ran)
    for later in spec.get("later") or []:
        content = types.Content.model_validate(later["content"])
        orphan = any(part.function_response and part.function_response.id and part.function_response.id not in renamed
                     for part in content.parts or ())
        _renamed_responses(content, renamed)
        events.append(Event(author="user", content=content, branch=later.get("branch")))
        if orphan:  # a response to a call the agent did not make again: not sent (ADK does not send it)
            continue
        ran = await turn(content, events)
        note_calls(ran)


async def _rebuild(spec: dict[str, Any], turn: Any, events: list[Any]) -> None:
    """Every user message of the fixture sent to the agent and its own model, ids counted as `--rebuild` counts them."""
    from google.adk.events.event import Event
    from google.genai import types

    old_calls = list(spec.get("call_ids") or [])
    renamed: dict[Any, Any] = {}
    ids = _rebuild_ids(old_calls, list(spec.get("response_ids") or []), renamed)
    counters = ids["counters"]
    _IDS.set(ids)
    random.seed(42)
    for message in spec.get("messages") or []:
        content = types.Content.model_validate(message)
        _renamed_responses(content, renamed)
        user = Event(author="user", content=content)
        events.append(user)
        ran = await turn(content, events)
        for event in ran:
            for call in event.get_function_calls():
                if counters["call"] < len(old_calls):
                    renamed[old_calls[counters["call"]]] = call.id
                    counters["call"] += 1
        if ran:
            user.invocation_id = ran[0].invocation_id
