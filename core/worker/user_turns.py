"""The user's side of an ADK run in a worker: the session a run starts from (an agents-cli
continuation's history), each user turn (the job's messages, or what ADK's user simulator says
next), and the app's agents as ADK's `app-info` lists them (for agents-cli traces).

google-adk is imported here only inside functions."""

from __future__ import annotations

from typing import Any, AsyncGenerator

from .jobs import Job, RunOutput

def _content(data: dict[str, Any]) -> Any:
    from google.genai import types

    return types.Content.model_validate({"role": "user", **data})


async def seed_history(sessions: Any, session: Any, history: list[dict[str, Any]], root_agent: str) -> int:
    """Append a continuation's earlier events to the new session, as ADK's API server does when a
    session is created with events; how many there are (they are not the run's)."""
    if not history:
        return 0
    from google.adk.events.event import Event
    from google.adk.events.event_actions import EventActions

    for seeded in history:
        author = root_agent if seeded.get("author") == "model" else (seeded.get("author") or "user")
        content = seeded.get("content")
        event = Event(author=author, invocation_id=Event.new_id(),
                      content=_written_content(content) if content else None,
                      actions=EventActions(state_delta=dict(seeded.get("state_delta") or {})))
        await sessions.append_event(session=session, event=event)
    return len(history)


def _written_content(data: dict[str, Any]) -> Any:
    from google.genai import types

    return types.Content.model_validate(data)


_LISTED: dict[int, tuple[Any, dict[str, Any]]] = {}


async def app_agents(agent: Any) -> dict[str, Any]:
    """name → {description, instruction, tools, sub_agents}: ADK's own listing (`get_agents_dict`,
    what `app-info` answers, once per agent for the jobs of a batch, which share it), or {} where
    this ADK has none or cannot list this agent."""
    known = _LISTED.get(id(agent))
    if known is not None and known[0] is agent:
        return known[1]
    try:
        from google.adk.utils.agent_info import get_agents_dict
    except ImportError:
        return {}
    try:
        listed = {name: info.model_dump(mode="json", exclude_none=True) for name, info in (await get_agents_dict(agent)).items()}
    except Exception:  # noqa: BLE001 - app-info fails for it too; agents-cli then writes no agents
        listed = {}
    _LISTED[id(agent)] = (agent, listed)
    return listed


async def user_turns(job: Job, seen: list[Any], out: RunOutput) -> AsyncGenerator[tuple[int, Any, Any], None]:
    """Each user turn: the job's messages, or, for a `conversation_scenario` case, what ADK's user
    simulator says next (given the conversation so far, as ADK's evaluation generator gives it) until
    it stops; its messages are kept in `out.user_messages`."""
    if job.scenario is None:
        for index, message in enumerate(job.messages):
            yield index, _content(message.content), message.state_delta
        return
    import copy

    from google.adk.evaluation.eval_case import EvalCase
    from google.adk.evaluation.eval_config import EvalConfig
    from google.adk.evaluation.simulation.user_simulator import Status
    from google.adk.evaluation.simulation.user_simulator_provider import UserSimulatorProvider

    config = EvalConfig.model_validate({"user_simulator_config": job.scenario.get("user_simulator_config")})
    simulator = UserSimulatorProvider(user_simulator_config=config.user_simulator_config).provide(
        EvalCase.model_validate(job.scenario["eval_case"]))
    index = 0
    while True:
        turn = await simulator.get_next_user_message(copy.deepcopy(seen))
        if turn.status != Status.SUCCESS or turn.user_message is None:
            out.simulation_end = getattr(turn.status, "value", str(turn.status))
            return
        out.user_messages.append(turn.user_message.model_dump(mode="json", exclude_none=True))
        yield index, turn.user_message, None
        index += 1


def note(seen: list[Any], event: Any, content: Any) -> None:
    """Keep `event` for the simulator, after the user's own event for its invocation."""
    from google.adk.events.event import Event

    if not seen or seen[-1].invocation_id != event.invocation_id:
        seen.append(Event(content=content, author="user", invocation_id=event.invocation_id))
    seen.append(event)
