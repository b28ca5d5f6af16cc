"""`agentdiff score` on OpenTelemetry traces (OTLP files, or folders of them): each traced conversation
scored against the EvalSet case it maps to, with no agent call (`core.run.traced_otlp`)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence, TextIO

def split_traces(paths: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """(the trace files given or under the folders given, the other paths)."""
    from agentdiff.core.formats.adk_results import RESULT_SUFFIX
    from agentdiff.core.formats.otlp.names import is_trace_file

    from .errors import exists
    from .import_traces import trace_files

    traces, rest = [], []
    for path in paths:
        if not exists(path):
            rest.append(path)
        elif path.is_dir():
            found = trace_files([path])  # (the trace files under it only)
            traces += found
            if not found or next(path.rglob(f"*{RESULT_SUFFIX}"), None) is not None:  # its ADK results too
                rest.append(path)
        elif is_trace_file(path):
            traces.append(path)
        else:
            rest.append(path)
    return traces, rest


def score_traces(files: Sequence[Path], args, root: Path, err: TextIO) -> tuple[list, list]:
    """The traced conversations' results, and what could not be read or scored (as load errors: exit 2)."""
    import asyncio

    from agentdiff.core.project.config import load_project_config
    from agentdiff.core.project.discovery import discover
    from agentdiff.core.reports.traced_runs import score_trace_files
    from agentdiff.core.run.options import RunOptions
    from agentdiff.core.worker.pool import WorkerPool

    from .options import agents_python

    config, _ = load_project_config(root)
    refs = discover(list(config.paths) or [Path(".")], root, stand_ins=False).cases  # traced conversations not cases yet: none to score against
    pool = WorkerPool(timeout=config.timeout or 120.0, python=agents_python(args, config).path)
    options = RunOptions(agents_dirs=config.agents, mapping=config.agent_for, judge_cache=root / ".agentdiff" / "judge-cache")
    try:
        scored = asyncio.run(score_trace_files(list(files), refs, pool, options, root, config.keep_runs))
    finally:
        pool.close()
    if scored.kept is not None:
        print(f"kept as run {scored.kept.name} (B in the workbench sets it beside your cases; compare and gate take it)", file=err)
    return [run.result for run in scored.runs], scored.errors
