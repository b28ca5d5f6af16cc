"""A fixture run in a worker and judged as `adk test` judges it: the run's events, renumbered, against
the fixture's after its first, each side normalised and sorted, equal or not. Beside that verdict, both
sides become traces by the one conversion every run goes through, so the diff shows which turn and
layer diverged (tool calls and their responses, state, node path, answer) with the rest still shown.

A fixture named `*_xfail` is expected to fail: it passes when it fails (as pytest's `xfail`), and a
run that matches it says so. A fixture ADK would skip (no events, no user text first) is not evaluated.
"""

from __future__ import annotations

import json
from typing import Any, Optional, Sequence

from agentdiff.core.diff.case import diff_case
from agentdiff.core.diff.model import DiffCriteria
from agentdiff.core.diff.source_index import SourceIndex
from agentdiff.core.formats.adk_test.events import final_state, session_events, tool_calls
from agentdiff.core.formats.adk_test.normalize import compared, normalized, renumbered
from agentdiff.core.formats.adk_test.replay_plan import replay_plan, user_messages
from agentdiff.core.formats.eval_config import MatchType
from agentdiff.core.run.case_run import CaseRun, case_result, layer_summaries, unrun
from agentdiff.core.run.expected import Baseline
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.traces.from_run import trace_from_output
from agentdiff.core.worker.jobs import AgentRef, Job, Message, RunOutput, ToolOut

from .cases import FixtureCaseRef

#: Tool calls compared one by one, by name and arguments, as every replay compares them.
FIXTURE_CRITERIA = DiffCriteria(match_type=MatchType.EXACT)


def messages_of(ref: FixtureCaseRef) -> list[Message]:
    """The user's messages of the fixture, turn by turn."""
    return [Message(content=content) for content in user_messages(ref.fixture.events)]


def traced(ref: FixtureCaseRef, events: Sequence[dict[str, Any]], error: Optional[str] = None) -> Any:
    """A side of the diff: the events as `adk test` compares them (its volatile fields left out), in their
    order, as a trace."""
    session = session_events(normalized(events))
    tools = [ToolOut(**call) for call in tool_calls(session)]
    out = RunOutput(events=session, tools=tools, state=final_state(session), app_name="test_app", user_id="test_user", error=error)
    return trace_from_output(out, messages_of(ref))


def fixture_baseline(ref: FixtureCaseRef) -> Baseline:
    return Baseline(ref.id, traced(ref, ref.fixture.events), FIXTURE_CRITERIA, SourceIndex([ref.fixture.source]))


def fixture_job(ref: FixtureCaseRef, agent: AgentRef, mode: str) -> Optional[Job]:
    """The worker's job: a replay, or (`mode` "live" or "record") a re-record as `--rebuild` runs it;
    None when ADK would skip the fixture."""
    fixture = ref.fixture
    plan = replay_plan(fixture.events, fixture.mocks)
    if plan is None or fixture.skipped:
        return None
    if mode == "replay":
        spec: dict[str, Any] = {"user_message": plan.user_message, "responses": plan.responses, "later": plan.later,
                                "call_ids": plan.call_ids, "mocks": plan.mocks,
                                "test_id": f"{ref.agent_dir.name}/{fixture.source.path.name}"}
    else:
        spec = {"live": True, "messages": user_messages(fixture.events), "call_ids": plan.call_ids, "response_ids": plan.response_ids}
    return Job(case_id=ref.id, agent=agent, mode="replay" if mode == "replay" else "live", app_name="test_app", user_id="test_user",
               messages=messages_of(ref), fixture=spec)


async def run_fixture_case(ref: FixtureCaseRef, agent: AgentRef, pool: Any, options: Any, mode: str) -> CaseRun:
    job = fixture_job(ref, agent, mode)
    if job is None:
        return unrun(ref, agent, mode, CaseStatus.NOT_EVALUATED, f"`adk test` skips it: {ref.fixture.skipped or 'no user text first'}")
    out = await pool.run(job, options.timeout)
    return judge_fixture(ref, agent, mode, out)


def raw_events(out: RunOutput) -> list[dict[str, Any]]:
    """The run's events as the worker sent them, in ADK's fixture form."""
    return out._fixture_events if out._fixture_events is not None else out.events


def presented(ref: FixtureCaseRef, out: RunOutput, mode: str) -> RunOutput:
    """The run as every other run is held: the session's events in snake_case (what journey checks and
    reports read), its tool calls and state from them; the fixture-form events kept beside."""
    if out._fixture_events is not None:
        return out
    raw = list(out.events)
    session = session_events(renumbered([*ref.fixture.events[:1], *raw] if mode == "replay" else raw))
    shown = out.model_copy(update={"events": session, "state": final_state(session), "app_name": "test_app", "user_id": "test_user",
                                   "tools": out.tools or [ToolOut(**call) for call in tool_calls(session)]})
    shown._fixture_events = raw
    return shown


def actual_events(ref: FixtureCaseRef, out: RunOutput, mode: str) -> list[dict[str, Any]]:
    """The run's events, renumbered, as they would stand in the fixture after its first event (a replay's
    run has no first user event; a re-record's has it, as the fixture does)."""
    events = renumbered(raw_events(out))
    return events[1:] if mode != "replay" and events and events[0].get("author") == "user" else events


def first_difference(actual: Sequence[dict[str, Any]], expected: Sequence[dict[str, Any]]) -> str:
    """Where the two sides `adk test` compares first differ, in words: the event (in ADK's sorted order)
    and the innermost value."""
    left, right = compared(actual), compared(expected)
    for index, (a, e) in enumerate(zip(left, right)):
        if a != e:
            path, expected_value, actual_value = _first_path(e, a, ())
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".") or "the event"
            return (f"event {index + 1} of {len(right)} as adk test sorts them (author {e.get('author', '?')}): {where} "
                    f"expected {_shown(expected_value)}, got {_shown(actual_value)}")
    if len(left) != len(right):
        extra = left[len(right):] or right[len(left):]
        return (f"the run has {len(left)} events where the fixture has {len(right)} "
                f"(the first unmatched is by {extra[0].get('author', '?')})")
    return ""


_MISSING = object()


def _first_path(expected: Any, actual: Any, path: tuple) -> tuple[tuple, Any, Any]:
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual), key=str):
            if expected.get(key, _MISSING) != actual.get(key, _MISSING):
                return _first_path(expected.get(key, _MISSING), actual.get(key, _MISSING), (*path, key))
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for i, (e, a) in enumerate(zip(expected, actual)):
            if e != a:
                return _first_path(e, a, (*path, i))
    return path, expected, actual


def _shown(value: Any) -> str:
    if value is _MISSING:
        return "nothing"
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def judge_fixture(ref: FixtureCaseRef, agent: Optional[AgentRef], mode: str, out: RunOutput) -> CaseRun:
    out = presented(ref, out, mode)
    baseline = fixture_baseline(ref)
    actual = actual_events(ref, out, mode)
    first = ref.fixture.events[:1]
    trace = traced(ref, [*first, *actual], out.error)
    diff = diff_case(baseline.trace, trace, FIXTURE_CRITERIA, ref.id, baseline.sources)
    expected = ref.fixture.events[1:]
    if out.error is not None and not actual:
        status, reason = CaseStatus.ERROR, out.error
    elif out.error is not None:
        status, reason = CaseStatus.FAILED, out.error
    else:
        difference = first_difference(actual, expected)
        status, reason = (CaseStatus.FAILED, difference) if difference else (CaseStatus.PASSED, None)
    if ref.fixture.xfail:  # pytest's xfail: a failure or an error is the expected outcome
        reason = (f"expected to fail (its name ends in _xfail), and it does: {reason}" if status is not CaseStatus.PASSED
                  else "expected to fail (its name ends in _xfail), but it passes")
        status = CaseStatus.PASSED
    layers = layer_summaries(diff) if status is not CaseStatus.ERROR else ()
    result = case_result(ref, agent, "replay" if mode == "replay" else "live", status, error=reason, layers=layers)
    return CaseRun(ref, result, agent, diff, baseline, trace, (out,), 0, (mode,))

