"""`agentdiff score` on agents-cli's files: a grade results file (`results_<ts>.json`, its stored
scores as they are) or a trace file (`traces_<ts>.json`: each traced case graded by the eval config's
local metrics and diffed against its dataset case's baseline, with no agent call)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.formats.load_error import LoadError


def agents_cli_kind(path: Path) -> Optional[str]:
    """`grades` or `traces` for an agents-cli file given to `score`, else None (an ADK results file)."""
    if path.suffix != ".json" or path.name.endswith(".evalset_result.json") or not path.is_file():
        return None
    try:
        if path.stat().st_size > 64_000_000:
            return None
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and "eval_case_results" in data:
        return "grades"
    if isinstance(data, dict) and ("eval_cases" in data or "evalCases" in data) and "eval_set_id" not in data:
        return "traces"
    return None


def score_agents_cli(files: Sequence[tuple[str, Path]], args, root: Path) -> tuple[list, list[LoadError]]:
    """The cases of each agents-cli file, and the files' load errors."""
    import asyncio

    from agentdiff.core.formats.agents_cli.dataset import load_dataset
    from agentdiff.core.formats.agents_cli.grade_results import load_grade_results
    from agentdiff.core.formats.source_file import display_path
    from agentdiff.core.reports.agents_cli_runs import report_from_grade_results
    from agentdiff.core.reports.merge import case_from_dict

    cases, errors, traces = [], [], []
    for kind, path in files:
        shown = display_path(path, root)
        if kind == "grades":
            loaded, problems = load_grade_results(path, shown)
            errors += problems
            if loaded is not None:
                cases += [case_from_dict(case) for case in report_from_grade_results(loaded)["cases"]]
        else:
            trace, problems = load_dataset(path, shown, trace=True)
            errors += problems
            if trace is not None:
                traces.append(trace)
    if traces:
        cases += asyncio.run(_score_traces(traces, args, root))
    return cases, errors


async def _score_traces(traces, args, root: Path) -> list:
    from agentdiff.core.project.config import load_project_config
    from agentdiff.core.project.dataset_cases import DatasetCaseRef
    from agentdiff.core.project.discovery import discover
    from agentdiff.core.run.options import RunOptions
    from agentdiff.core.run.traced_runs import score_trace
    from agentdiff.core.worker.pool import WorkerPool

    from .options import agents_python

    config, _ = load_project_config(root)
    refs = [ref for ref in discover(list(config.paths) or [Path(".")], root).cases if isinstance(ref, DatasetCaseRef)]
    pool = WorkerPool(timeout=config.timeout or 120.0, python=agents_python(args, config).path)
    options = RunOptions(agents_dirs=config.agents, mapping=config.agent_for, judge_cache=root / ".agentdiff" / "judge-cache")
    try:
        runs = [run for trace in traces for run in await score_trace(trace, refs, pool, options, root)]
    finally:
        pool.close()
    return [run.result for run in runs]
