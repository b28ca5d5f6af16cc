"""A case as the worker's jobs: the user messages, the session it starts from, the recordings."""

from __future__ import annotations

from agentdiff.core.formats.conformance import StreamingMode
from agentdiff.core.project.case_refs import CaseRef, ConformanceCaseRef, EvalCaseRef
from agentdiff.core.project.family import family_of
from agentdiff.core.run.options import RunOptions
from agentdiff.core.worker.jobs import AgentRef, Job, Message, RunOutput


def messages_of(ref: CaseRef, out: RunOutput) -> list[Message]:
    """The user messages of one run: the case's, or those ADK's user simulator wrote in it."""
    return family_of(ref).messages_of(ref, out)


def messages_for(ref: CaseRef) -> list[Message]:
    """The user messages of a case, in order."""
    return family_of(ref).messages(ref)


def eval_messages(ref: EvalCaseRef) -> list[Message]:
    """An EvalSet case's user messages, turn by turn."""
    return [Message(content=inv.user_content.model_dump(mode="json", exclude_none=True)) for inv in ref.case.conversation or []]


def simulated_messages(ref: EvalCaseRef, out: RunOutput) -> list[Message]:
    """The user messages of one run: the case's, or those ADK's user simulator wrote in it."""
    if ref.case.conversation is None:
        return [Message(content=content) for content in out.user_messages]
    return eval_messages(ref)


def conformance_messages(ref: ConformanceCaseRef) -> list[Message]:
    """A conformance case's user messages, with their state deltas."""
    messages = []
    for message in ref.case.spec.user_messages:
        if message.content is not None:
            content = message.content.model_dump(mode="json", exclude_none=True)
        else:
            content = {"role": "user", "parts": [{"text": message.text or ""}]}
        messages.append(Message(content=content, state_delta=message.state_delta))
    return messages


def eval_case_job(ref: EvalCaseRef, agent: AgentRef, mode: str) -> Job:
    """The job of an EvalSet case: its session_input as ADK's evaluation generator uses it; a
    `conversation_scenario` case carries the case and its user simulator config instead of messages."""
    session = ref.case.session_input
    scenario = None
    if ref.case.conversation is None:
        scenario = {"eval_case": ref.case.model_dump(mode="json", exclude_none=True),
                    "user_simulator_config": ref.config.config.user_simulator_config}
    return Job(
        scenario=scenario,
        case_id=ref.id, agent=agent, mode=mode,  # type: ignore[arg-type]
        app_name=(session.app_name if session and session.app_name else agent.name),
        user_id=(session.user_id if session and session.user_id else "test_user_id"),
        initial_state=dict(session.state) if session and session.state else {},
        messages=eval_messages(ref),
    )


def conformance_job(ref: ConformanceCaseRef, agent: AgentRef, mode: str, streaming: StreamingMode, options: RunOptions) -> Job:
    spec = ref.case.spec
    baseline = ref.case.baselines.get(streaming)
    recordings = [r.model_dump(mode="json", exclude_none=True) for r in baseline.recordings.recordings] if baseline else []
    session = baseline.session if baseline else None
    return Job(
        case_id=ref.id, agent=agent, mode=mode,  # type: ignore[arg-type]
        app_name=(session.app_name if session and session.app_name else spec.agent),
        user_id=(session.user_id if session and session.user_id else "adk_conformance_test_user"),
        initial_state=dict(spec.initial_state),
        messages=conformance_messages(ref),
        recordings=recordings if mode == "replay" else [],
        streaming=streaming,
        run_tools=options.run_tools,
    )
