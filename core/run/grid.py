"""The variants grid of a case's run (`diff.variants`), built from each of its live runs' outputs."""

from __future__ import annotations

from typing import Any, Optional

from agentdiff.core.diff.variants import Grid, grid
from agentdiff.core.project.family import family_of
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.traces.from_run import trace_from_output


def run_grid(run: Any) -> Optional[Grid]:
    """The grid of a case's run (a `CaseRun`, or one kept on disk) when it ran live more than once; None otherwise."""
    run = run.full()
    if len(run.outputs) < 2 or run.result.mode != "live":
        return None
    family = family_of(run.ref)
    traces = [run.trace if index == run.shown and run.trace is not None else trace_from_output(out, family.messages_of(run.ref, out))
              for index, out in enumerate(run.outputs)]
    return grid(traces, run.baseline.trace if run.baseline is not None else None)


def majority_to_accept(run: Any) -> Optional[Grid]:
    """The grid of a case whose runs disagree, when its majority run is one to accept (it did not pass: a
    passing majority already says what the baseline says); None otherwise."""
    if not run.result.disagreeing:
        return None
    made = run_grid(run)
    if made is None or made.majority >= len(run.result.runs) or run.result.runs[made.majority].status is CaseStatus.PASSED:
        return None
    return made
