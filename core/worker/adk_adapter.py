"""Running an ADK agent inside a worker: loaded the way ADK loads it, run through ADK's runner, and
traced at the model and at the tools.

Every LlmAgent of the tree (sub-agents, workflow graph nodes, agent tools' agents; one created as
the run goes at its first model call) gets its model wrapped by `HarnessLlm`, which sees the request
exactly as the model would (after every callback: what ADK's replay compares) and, in replay,
answers from the recording instead of calling the model; in replay, any other model call through
google-genai fails the run (`replay_guard`). Plugins (`trace_plugins`) record each tool call and, in
replay, return the recorded response in place of the real one; the real tool still runs, as in ADK,
so what tools write to state and tools that now raise are seen.

google-adk is imported here only inside functions: this module is imported by the worker, never by
the parent process.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import importlib
import inspect
import sys
import time
from pathlib import Path
from contextvars import ContextVar
from typing import Any, AsyncGenerator, Optional

from .agent_tree import llm_agents, transfer_parents
from .harness import Harness, RanPastRecording
from .hints import how_to_fix, project_origin, said
from .jobs import AgentRef, Job, RunOutput
from .model_calls import call_with_retries
from .replay_guard import guard_model_calls
from .request_json import dumped_request
from .trace_plugins import trace_plugins
from .user_turns import app_agents, note, seed_history, user_turns



def load_module(ref: AgentRef) -> Any:
    """`agents_dir/name` imported as ADK imports it: the package, then its `agent` attribute.

    Only code inside the agents dir is imported: a name that would resolve to anything else on
    `sys.path` (the standard library, an installed package) is refused."""
    import os

    folder = os.path.realpath(os.path.join(ref.agents_dir, ref.name))
    if not os.path.isdir(folder) or os.path.dirname(folder) != os.path.realpath(ref.agents_dir):
        raise ImportError(f"{ref.name!r} is not an agent folder in {ref.agents_dir}")
    load_dotenv(ref)
    name, on_path = ref.name, ref.agents_dir
    if ref.import_from:  # a dotted module, imported as AgentEvaluator imports it
        on_path = ref.import_from
        relative = os.path.relpath(folder, os.path.realpath(on_path))
        if relative.startswith(os.pardir) or os.path.isabs(relative):
            raise ImportError(f"{ref.name!r} is not inside {on_path}")
        name = relative.replace(os.sep, ".")
    if on_path not in sys.path:
        sys.path.insert(0, on_path)
    package = importlib.import_module(name)
    origin = os.path.realpath(getattr(package, "__file__", None) or next(iter(getattr(package, "__path__", [])), ""))
    if not origin.startswith(folder):
        raise ImportError(f"{name!r} imported from {origin}, not from the agents dir {ref.agents_dir}")
    if ref.entry:  # a module of the package that defines the agent (ADK takes its `agent`)
        name = f"{name}.{ref.entry}"
        package = importlib.import_module(name)
    module = getattr(package, "agent", None)
    if module is None and hasattr(package, "__path__"):
        try:
            module = importlib.import_module(f"{name}.agent")
        except ModuleNotFoundError as exc:
            if exc.name != f"{name}.agent":
                raise
    return module if module is not None else package


def load_dotenv(ref: AgentRef) -> None:
    """The `.env` nearest the agent's folder (walking up), loaded as `adk eval` loads it, by ADK's own
    function where this ADK has it (`ADK_DISABLE_LOAD_DOTENV` honoured)."""
    try:
        from google.adk.cli.utils.envs import load_dotenv_for_agent
    except ImportError:
        return
    try:
        load_dotenv_for_agent(ref.name, ref.agents_dir)
    except (ValueError, OSError, UnicodeError) as exc:  # a NUL, bad UTF-8, an unreadable file: name it
        found = _nearest_dotenv(Path(ref.agents_dir) / ref.name)
        where = str(found) if found else ".env"
        raise ValueError(f"{where} does not load: {type(exc).__name__}: {exc}") from None


def _nearest_dotenv(folder: Path) -> Optional[Path]:
    for parent in (folder, *folder.parents):
        if (parent / ".env").is_file():
            return parent / ".env"
    return None


async def load_adk_agent(ref: AgentRef) -> tuple[Any, Any]:
    """(root agent, App or None) as ADK resolves them: `app`, `root_agent`, `get_agent_async()`
    (an ADK without `App`, before 1.14, has no `app`)."""
    try:
        from google.adk.apps.app import App
    except ImportError:
        App = ()  # noqa: N806 - isinstance(x, ()) is always False

    module = load_module(ref)
    app = getattr(module, "app", None)
    if isinstance(app, App):
        agent = app.root_agent
    elif getattr(module, "root_agent", None) is not None:
        agent, app = module.root_agent, None
    elif callable(getattr(module, "get_agent_async", None)):
        loaded = await module.get_agent_async()
        agent, app = (loaded[0] if isinstance(loaded, tuple) else loaded), None
    else:
        raise LookupError(f"{ref.label}: no `app`, `root_agent` or `get_agent_async()` in {module.__name__}")
    if ref.sub_agent:
        found = agent.find_agent(ref.sub_agent)
        if found is None:
            raise LookupError(f"Sub-Agent {ref.sub_agent!r} not found in {ref.module}")
        agent, app = found, None
    return agent, app


def model_names(module: Any) -> list[str]:
    """The model of each LlmAgent of an agent module (`root_agent` or `app`): a name, or the model
    class and its name for a model object (`Gemini:gemini-2.5-flash`)."""
    agent = getattr(module, "root_agent", None) or getattr(getattr(module, "app", None), "root_agent", None)
    if agent is None:
        return []
    names = []
    for node in llm_agents(agent):
        model = node.model or getattr(node.canonical_model, "model", "")
        names.append(model if isinstance(model, str) else f"{type(model).__name__}:{getattr(model, 'model', '')}")
    return names


def _source_hash(obj: Any) -> Optional[str]:
    target = getattr(obj, "func", obj)
    try:
        return hashlib.sha256(inspect.getsource(target).encode()).hexdigest()[:16]
    except (OSError, TypeError):
        return None


def _harness_llm_class() -> type:
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from pydantic import PrivateAttr

    class HarnessLlm(BaseLlm):
        """Stands in for an agent's model: records each call; in replay, answers from the recording."""

        _inner: Any = PrivateAttr(default=None)
        _agent: str = PrivateAttr(default="")

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[Any, None]:
            harness: Harness = CURRENT_HARNESS.get()
            labels = (llm_request.config.labels or {}) if llm_request.config else {}
            agent = labels.get("adk_agent_name") or self._agent
            request = dumped_request(llm_request)
            exchange = harness.start_exchange(agent, request)
            try:
                if harness.replay:
                    for response in harness.recorded_responses(exchange):
                        exchange.responses.append(response)
                        exchange.end = harness.elapsed()
                        yield LlmResponse.model_validate(_known_fields(LlmResponse, response))
                    return
                inner = self._inner
                if inner is None:
                    from google.adk.models.registry import LLMRegistry

                    inner = LLMRegistry.new_llm(self.model)
                what = f"model call {exchange.index + 1} of turn {harness.turn + 1} ({agent}, {self.model})"
                calls = call_with_retries(lambda: inner.generate_content_async(llm_request, stream=stream), self.model, what, exchange)
                async for response in calls:
                    exchange.responses.append(response.model_dump(mode="json", exclude_none=True, exclude_defaults=True))
                    exchange.end = harness.elapsed()  # its end so far: ADK runs the tools it asks for before it asks for more
                    yield response
            except Exception:
                exchange.end = harness.elapsed()  # the call failed: its end is the failure's
                raise
            finally:
                if exchange.end is None:
                    exchange.end = harness.elapsed()

    return HarnessLlm


def _known_fields(model: Any, data: dict[str, Any]) -> dict[str, Any]:
    """`data` without the keys `model` has no field for: a recording made with a newer ADK (say,
    `model_version`) replays on an older one that forbids unknown fields."""
    fields = getattr(model, "model_fields", None)
    if not fields:
        return data
    names = set(fields) | {f.alias for f in fields.values() if getattr(f, "alias", None)}
    return {key: value for key, value in data.items() if key in names}


#: The harness of the run in progress. Runs in one worker share the agent objects (as in ADK's
#: evaluator), so each run's asyncio task carries its own harness in this context variable.
CURRENT_HARNESS: ContextVar[Harness] = ContextVar("agentdiff_harness")
_HARNESS_LLM: list[type] = []


_INFO: dict[int, dict[str, Any]] = {}


def install_harness(agent: Any) -> dict[str, Any]:
    """Wrap the model of every LlmAgent in the tree (once per agent object); returns what
    registration records."""
    if id(agent) in _INFO:  # the other runs of a batch share the agent: it is already wrapped
        return _INFO[id(agent)]
    if not _HARNESS_LLM:
        _HARNESS_LLM.append(_harness_llm_class())
    harness_llm = _HARNESS_LLM[0]
    from google.adk.models.base_llm import BaseLlm

    info: dict[str, Any] = {"models": {}, "instructions": {}, "tools": {}}
    resolved = [(node, *_model_of(node, harness_llm, BaseLlm)) for node in llm_agents(agent)]  # before any is wrapped
    for node, name, model in resolved:
        _wrap(node, name, model, harness_llm, info)
    _INFO[id(agent)] = info
    return info


def instrument(node: Any, info: dict[str, Any]) -> None:
    """Wrap one LlmAgent's model now (a node created while the run goes, met at its first model
    call), and add it to what registration records."""
    from google.adk.models.base_llm import BaseLlm

    harness_llm = _HARNESS_LLM[0]
    if not isinstance(getattr(node, "model", None), harness_llm):
        _wrap(node, *_model_of(node, harness_llm, BaseLlm), harness_llm, info)


def _model_of(node: Any, harness_llm: type, base_llm: type) -> tuple[str, Any]:
    """The name of a node's model and the model object to call (None: the registry makes it)."""
    if isinstance(node.model, harness_llm):
        return node.model.model, None
    model = node.model if isinstance(node.model, base_llm) else None
    name = model.model if model is not None else (node.model or node.canonical_model.model)
    if model is None and not node.model:
        model = node.canonical_model  # inherited from an ancestor: keep the ancestor's object
    return name, model


def _wrap(node: Any, name: str, model: Any, harness_llm: type, info: dict[str, Any]) -> None:
    if not isinstance(node.model, harness_llm):
        wrapped = harness_llm(model=name)
        wrapped._inner, wrapped._agent = model, node.name
        object.__setattr__(node, "model", wrapped)
    info["models"][node.name] = name
    instruction = node.instruction if isinstance(node.instruction, str) else _source_hash(node.instruction)
    info["instructions"][node.name] = hashlib.sha256(str(instruction).encode()).hexdigest()[:16]
    for tool in node.tools or []:
        tool_name = getattr(tool, "name", None) or getattr(tool, "__name__", repr(tool))
        info["tools"][tool_name] = _source_hash(tool)


async def run_adk(job: Job) -> RunOutput:
    from google.adk.agents.run_config import RunConfig, StreamingMode
    from google.adk.runners import InMemoryRunner

    harness = Harness(job)
    CURRENT_HARNESS.set(harness)
    if harness.replay:
        guard_model_calls(_escaped)
    out = harness.output
    out.adk_version = adk_version()
    agent, app = await load_adk_agent(job.agent)
    out.agent_info = install_harness(agent)
    out.transfer_parents = transfer_parents(agent)
    head, tail = trace_plugins(harness, instrument)
    if app is not None:
        runner = InMemoryRunner(app=app.model_copy(update={"plugins": [head, *app.plugins, tail]}))
        app_name = app.name
    else:
        runner = InMemoryRunner(agent=agent, app_name=job.app_name, plugins=[head, tail])
        app_name = job.app_name
    session = await runner.session_service.create_session(app_name=app_name, user_id=job.user_id, state=dict(job.initial_state))
    collect_busy = _busy_collector()
    run_config = RunConfig(streaming_mode=StreamingMode.SSE if job.streaming == "sse" else StreamingMode.NONE)
    seen: list[Any] = []  # the conversation as ADK's user simulator is shown it
    try:
        history = await seed_history(runner.session_service, session, job.history, agent.name)
        async for index, content, state_delta in user_turns(job, seen, out):
            harness.turn = index
            started = time.monotonic()
            try:
                with collect_busy() as busy:
                    async for event in runner.run_async(
                        user_id=job.user_id,
                        session_id=session.id,
                        new_message=content,
                        state_delta=state_delta,
                        run_config=run_config,
                    ):
                        if job.scenario is not None:
                            note(seen, event, content)
                out.turn_seconds[index] = round(time.monotonic() - started, 3)
                if busy is not None:
                    out.turn_model_seconds[index] = round(busy.model_seconds(), 3)
                    out.turn_tool_seconds[index] = round(busy.tool_seconds(), 3)
            except RanPastRecording as exc:
                out.turn_errors[index] = str(exc)
                out.error = str(exc)
                break
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # the agent's own failure, SystemExit included
                out.turn_errors[index] = f"{type(exc).__name__}: {exc}"
                out.error = f"turn {index + 1}: {said(exc)}{how_to_fix(exc)}"
                out.error_file, out.error_line, out.error_trace = project_origin(exc, job.agent.agents_dir)
                break
        final = await runner.session_service.get_session(app_name=app_name, user_id=job.user_id, session_id=session.id)
        if final is not None:
            out.app_name, out.user_id = final.app_name, final.user_id
            out.state = _plain(final.state)
            out.events = [event.model_dump(mode="json", exclude_none=True, exclude_defaults=True) for event in final.events[history:]]
        if job.app_info:
            out.root_agent, out.app_agents = agent.name, await app_agents(agent)
    finally:
        await runner.close()
    if harness.escaped and out.error is None:  # even where the agent caught the refusal
        out.error = harness.escaped[0]
    return out


def _escaped(message: str) -> None:
    harness = CURRENT_HARNESS.get(None)
    if harness is not None:
        harness.escaped.append(message)


@functools.lru_cache(maxsize=None)
def adk_version() -> Optional[str]:
    """The installed google-adk's version, as its package metadata says. Read once per process (the
    warm server reads it before it forks): reading package metadata costs more than an echo agent's
    whole run, and the ADK a process imported cannot change under it."""
    from importlib import metadata

    try:
        return metadata.version("google-adk")
    except metadata.PackageNotFoundError:
        return None


def _busy_collector() -> Any:
    """ADK's own collector of the model and tool intervals of a turn, which its evaluation uses for an
    invocation's `model_duration` and `tool_duration`, where this ADK version has one; else a context
    that yields None (that ADK reports neither)."""
    try:
        from google.adk.telemetry import _instrumentation
    except ImportError:
        return contextlib.nullcontext
    return getattr(_instrumentation, "collect_busy_intervals", contextlib.nullcontext)


def _plain(state: dict[str, Any]) -> dict[str, Any]:
    import json

    return json.loads(json.dumps(dict(state), default=str))
