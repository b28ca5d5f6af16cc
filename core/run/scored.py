"""Scoring a case's outputs evaluation-style (EvalSet cases, and conformance cases in live mode):
each repeat scored, the repeats aggregated into a verdict, and the shown repeat diffed."""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence

from agentdiff.core.diff.case import diff_case
from agentdiff.core.diff.explain import explain_scored
from agentdiff.core.diff.model import DiffCriteria
from agentdiff.core.formats.adk_rules import RULES_NEWEST, AdkRules
from agentdiff.core.formats.eval_config import EvalMetric
from agentdiff.core.formats.eval_set import Invocation
from agentdiff.core.project.discovery import CaseRef
from agentdiff.core.run.case_run import (
    CaseRun,
    case_result,
    layer_summaries,
    shown_index,
)
from agentdiff.core.run.expected import Baseline
from agentdiff.core.run.judging import Judged, rules_of  # noqa: F401 - rules_of: the scoring's word too
from agentdiff.core.run.usage import case_usage
from agentdiff.core.scoring.results import CaseStatus, RunRecord
from agentdiff.core.scoring.verdicts import (
    aggregate,
    case_verdict,
    failed_run,
    score_run,
)
from agentdiff.core.traces.from_run import invocations_from_output, trace_from_output
from agentdiff.core.worker.jobs import AgentRef, Message, RunOutput


SIMULATED = "a simulated conversation (conversation_scenario): the user turns are ADK's user simulator's, nothing was expected"


def score_output(
    out: RunOutput, messages: Sequence[Message], expected: Optional[Sequence[Invocation]], metrics: Sequence[EvalMetric],
    rules: AdkRules = RULES_NEWEST, judged: Judged = None,
) -> RunRecord:
    """One repeat scored as `rules`' ADK version scores; its actual invocations are built here, once,
    and kept on the record. `judged`: its judged metrics, scored in a worker."""
    actual = invocations_from_output(out, messages, rules)
    if out.error is not None:
        return failed_run(actual, expected, out.error)
    return score_run(metrics, actual, expected, rules, judged)


def scored_case_run(
    ref: CaseRef,
    agent: Optional[AgentRef],
    baseline: Baseline,
    outputs: Sequence[RunOutput],
    messages: Sequence[Sequence[Message]],
    expected: Optional[Sequence[Invocation]],
    metrics: Sequence[EvalMetric],
    criteria: DiffCriteria,
    judged: Sequence[Judged] = (),
) -> CaseRun:
    """`messages`: each output's user messages (the case's, or a simulated user's); `expected`: None
    for a `conversation_scenario` case."""
    rules = rules_of(outputs)
    runs = tuple(score_output(out, messages[i], expected, metrics, rules, judged[i] if i < len(judged) else None)
                 for i, out in enumerate(outputs))
    results = aggregate(runs)
    status, reason = case_verdict(runs, results)
    shown = shown_index(runs)

    def view(index: int):
        """Repeat `index`'s actual trace and its diff with the baseline."""
        trace = trace_from_output(outputs[index], messages[index])
        # An errored case keeps its diff: the expected side, the turns that did complete, the one that broke.
        diff = diff_case(baseline.trace, trace, criteria, ref.id, baseline.sources)
        if expected is None:  # a simulated conversation: nothing was expected, so nothing in it diverges
            diff = dataclasses.replace(diff, divergences=(), notes=(*diff.notes, SIMULATED))
        elif status is not CaseStatus.ERROR:
            diff = explain_scored(diff, results, runs[index])
        return trace, diff

    trace, diff = view(shown)
    layers = () if expected is None or status is CaseStatus.ERROR else layer_summaries(diff)  # an error says it all
    result = case_result(ref, agent, "live", status, metrics=results, error=reason, runs=runs, layers=layers,
                         scored_as=None if status is CaseStatus.ERROR else rules.label,  # an error was not scored
                         usage=case_usage(outputs, judged))
    return CaseRun(ref, result, agent, diff, baseline, trace, tuple(outputs), shown, restage=view if len(outputs) > 1 else None)
