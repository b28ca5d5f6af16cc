"""The traces family: a traced conversation not yet a case (`cases.TracedCaseRef`) is pending. Its run
is what its trace did, read with no agent call; nothing is expected of it, so nothing diverges and its
verdict is new until it is accepted, which adds it to its target EvalSet file (`writes.TracedAccepts`)
as a case expecting what it did; from then on that case is run and diffed, and this one is gone."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.baselines.documents import REGISTRATION_FILE, RecordError
from agentdiff.core.diff.case import diff_case
from agentdiff.core.diff.model import DiffCriteria
from agentdiff.core.diff.source_index import SourceIndex
from agentdiff.core.formats.eval_config import MatchType
from agentdiff.core.formats.source_file import resolved
from agentdiff.core.project.family import AcceptBatch, CaseFamily
from agentdiff.core.run.case_run import CaseRun, case_result
from agentdiff.core.run.expected import Baseline
from agentdiff.core.run.scored import score_output
from agentdiff.core.run.usage import case_usage
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.traces.from_run import trace_from_output
from agentdiff.core.traces.model import Trace, Turn
from agentdiff.core.traces.otlp_cases import as_run_output
from agentdiff.core.worker.jobs import AgentRef, Message

from .cases import TracedCaseRef
from .writes import TracedAccepts

MODE = "traced"
CRITERIA = DiffCriteria(match_type=MatchType.EXACT)


def pending(ref: TracedCaseRef) -> str:
    return (f"new: traced, not a case yet — accept it (`a` in the TUI, `agentdiff accept ID`, or `agentdiff import`) to add it to "
            f"{ref.target_display or ref.target} as a case expecting what it did")


class TracesFamily(CaseFamily):
    name = "traces"
    listed_after = 2  # after every case written down
    accepted_whole = "a traced conversation becomes a case whole"
    agent_named_in = "the trace (its agent's name, found from the trace's folder up)"

    def unit(self, ref: TracedCaseRef) -> Path:
        return ref.path

    def stands_in_for(self, ref: TracedCaseRef) -> Optional[str]:
        return ref.name

    def placed_agent(self, ref: TracedCaseRef) -> Any:
        if ref.agent_dir is not None:
            return AgentRef(agents_dir=str(ref.agent_dir.parent), name=ref.agent_dir.name)
        # no agent package found: named as traced, beside its trace (it never runs: nothing is asked of it)
        return AgentRef(agents_dir=str(Path(ref.path).absolute().parent), name=ref.conversation.agent or "traced")

    def watched(self, ref: TracedCaseRef, unit: Path) -> tuple[frozenset[Path], Optional[Path]]:
        return frozenset({unit, resolved(ref.target)}), None  # its target too: once accepted there, it is no longer pending

    def owned(self, ref: TracedCaseRef, unit: Path, resolve: Any) -> list[Path]:
        return [unit]

    def content(self, ref: TracedCaseRef) -> tuple[object, object]:
        return ref.digest, None

    def editor_place(self, ref: TracedCaseRef) -> tuple[Path, Optional[int], Optional[int]]:
        return ref.path, ref.line or 1, 1

    def listed(self, ref: TracedCaseRef) -> str:
        turns = len(ref.conversation.trace.turns)
        return f"traced; {turns} turn{'s' if turns != 1 else ''}; agent {ref.category}; new until accepted into {ref.target.name}"

    def described(self, ref: TracedCaseRef) -> dict[str, Any]:
        c = ref.conversation
        return {"kind": self.name, "trace_file": ref.source, "line": ref.line, "session_id": c.id, "agent": c.agent,
                "turns": len(c.trace.turns), "schema": c.schema, "adk_version": c.adk_version, "accepted_into": ref.target_display or str(ref.target)}

    def names(self, ref: TracedCaseRef) -> tuple[Optional[str], str, Optional[str]]:
        first = ref.conversation.trace.turns[0].user_text if ref.conversation.trace.turns else ""
        return None, ref.name, first[:120] or None

    def registration(self, ref: TracedCaseRef) -> tuple[Path, str]:
        target = ref.target
        return target.with_name(target.name.split(".")[0] + "." + REGISTRATION_FILE), ref.name

    def baseline_digest(self, ref: TracedCaseRef) -> str:
        return ref.digest

    def default_mode(self, ref: TracedCaseRef) -> str:
        return MODE

    def free(self, ref: TracedCaseRef, mode: Optional[str]) -> bool:
        return True  # read from its trace: never a model call

    def messages(self, ref: TracedCaseRef) -> list:
        return [Message(content={"role": "user", "parts": [{"text": turn.user_text}]}) for turn in ref.conversation.trace.turns]

    def baseline(self, ref: TracedCaseRef, mode: Optional[str] = None) -> Baseline:
        said = Trace(turns=tuple(Turn(index=t.index, user_text=t.user_text) for t in ref.conversation.trace.turns))
        return Baseline(ref.id, said, CRITERIA, SourceIndex())

    async def run(self, ref: TracedCaseRef, agent: Any, pool: Any, options: Any, mode: str) -> CaseRun:
        return traced_run(self, ref, agent)

    def rescore(self, ref: TracedCaseRef, previous: Any, judged: Any, options: Any) -> CaseRun:
        return traced_run(self, ref, previous.agent)

    def failed_hint(self, run: Any) -> str:
        return " in its trace: `agentdiff import` makes it a case all the same, expecting what it did"

    def accepts(self, root: Path) -> AcceptBatch:
        return TracedAccepts()

    async def record(self, ref: TracedCaseRef, agent: Any, pool: Any, options: Any, root: Path) -> tuple[Any, Any]:
        raise RecordError("a traced conversation is not recorded: accept it (it becomes an EvalSet case), then record that case")

    def baseline_change(self, ref: TracedCaseRef, root: Path, since: str, changed: set[Path], scratch: Path) -> Any:
        return None  # nothing is accepted of it: once it is, its EvalSet case is reviewed


def traced_run(family: TracesFamily, ref: TracedCaseRef, agent: Optional[AgentRef]) -> CaseRun:
    """What the trace did, as a run: shown against the case's user messages alone, with nothing in it diverging."""
    out = as_run_output(ref.conversation)
    messages = family.messages(ref)
    record = score_output(out, messages, None, [])
    record = dataclasses.replace(record, status=CaseStatus.NEW, error=None)
    trace = trace_from_output(out, messages)
    baseline = family.baseline(ref)
    diff = diff_case(baseline.trace, trace, baseline.criteria, ref.id, baseline.sources)
    layers = tuple(dataclasses.replace(layer, summary="new: nothing accepted yet") if layer.status == "changed" else layer
                   for layer in diff.layers)
    turns = tuple(dataclasses.replace(turn, trajectory_matches=None) for turn in diff.turns)
    said = pending(ref) + (f" (its trace says the agent failed: {out.error})" if out.error else "")
    diff = dataclasses.replace(diff, divergences=(), layers=layers, turns=turns, notes=(*diff.notes, said))
    result = case_result(ref, agent, MODE, CaseStatus.NEW, error=said, runs=(record,), usage=case_usage([out]))
    return CaseRun(ref, result, agent, diff, baseline, trace, (out,), 0)
