"""Trace files scored with no agent call and kept as a run (`agentdiff score TRACES`, and the trace
files `B` offers in the workbench): each traced conversation scored against the case it maps to
(`run.traced_otlp`), the scored ones kept as a run of source `traces` that `B`, `compare` and `gate`
take, and what could not be read or scored said as load errors (file, line, why)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.formats.otlp.spans import read_spans
from agentdiff.core.reports.kept_runs import RunKeeper
from agentdiff.core.run.options import RunOptions
from agentdiff.core.run.traced_otlp import score_conversations
from agentdiff.core.traces.otlp import Conversation, conversations


@dataclass
class TracedScore:
    runs: list = field(default_factory=list)  # `CaseRun`s, one a conversation scored
    errors: list[LoadError] = field(default_factory=list)
    kept: Optional[Path] = None  # the kept run's folder


def read_conversations(files: Sequence[Path], root: Path) -> tuple[list[Conversation], list[LoadError]]:
    """The conversations of these trace files, and what of them did not read."""
    spans, errors = [], []
    for file in files:
        found, problems = read_spans(file, root)
        spans += found
        errors += problems
    return conversations(spans), errors


async def score_trace_files(files: Sequence[Path], refs: Sequence[Any], pool: Any, options: RunOptions, root: Path,
                            keep_runs: int) -> TracedScore:
    started = time.time()
    found, errors = await asyncio.to_thread(read_conversations, files, root)  # a big file takes seconds: off the loop
    runs, unscored = await score_conversations(found, refs, pool, options, root)
    for said in unscored:  # `file:line: conversation …: why`
        where, _, why = said.partition(": ")
        file, _, line = where.rpartition(":")
        errors.append(LoadError(file=file or where, line=int(line) if line.isdigit() else None, message=f"not scored: {why}"))
    score = TracedScore(runs, errors)
    if runs and keep_runs > 0:
        keeper = RunKeeper(root, "traces", keep_runs, started)
        keeper.partial = f"traced conversations from {', '.join(str(f) for f in list(files)[:3])}"
        for run in runs:
            keeper.add(run)
        score.kept = keeper.finish([run.result for run in runs])
    return score

