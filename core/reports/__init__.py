"""Report writers: results and diffs in, text out (JSON, JUnit, Markdown, CSV; a diff as text or
JSON). None of them prints: the CLI decides where the text goes.

May import: `diff`, `traces`, `scoring`, `formats`.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

from agentdiff.core.reports.csv_report import append_csv, render_csv
from agentdiff.core.reports.json_report import render_json, write_json
from agentdiff.core.reports.junit import render_junit
from agentdiff.core.reports.markdown import render_markdown
from agentdiff.core.scoring.results import CaseResult

RENDERERS: dict[str, Callable[[Sequence[CaseResult]], str]] = {
    "json": render_json,
    "junit": render_junit,
    "markdown": render_markdown,
    "csv": render_csv,
}
REPORT_KINDS = (*RENDERERS, "adk", "agents-cli", "otlp")
# adk=DIR: EvalSetResult files in each app's .adk/eval_history under the agents dir DIR;
# agents-cli=DIR: a trace file of the agents-cli cases (`traces_<time>.json`) that `agents-cli eval grade --traces DIR` grades
DIR_KINDS = ("adk", "agents-cli")


def write_report(kind: str, cases: Sequence[CaseResult], path: Path, prices: Optional[Mapping[str, Mapping[str, float]]] = None,
                 load_errors: Sequence = (), shard: Optional[str] = None, traces: Sequence[dict] = (), otlp: Sequence = ()) -> None:
    """Write one report; CSV appends (as AgentEvaluator does), the others replace the file whole (a
    temporary file renamed over it: a reader never sees half a report). `prices` (per million tokens,
    by model) adds estimated costs to the JSON report."""
    if kind not in REPORT_KINDS:
        raise ValueError(f"unknown report kind {kind!r}; choose from {', '.join(REPORT_KINDS)}")
    if kind == "adk":
        from agentdiff.core.reports.adk_results_writer import write_adk_results

        write_adk_results(cases, path)
        return
    if kind == "agents-cli":
        from agentdiff.core.reports.agents_cli_traces import write_traces

        write_traces(traces, path)
        return
    if kind == "otlp":  # (result, trace, agent) of each case: its run as OpenTelemetry, with its metrics as evaluation events
        import time

        from agentdiff.core.reports.otlp_export import write_otlp

        write_otlp(otlp, path, time.time_ns())
        return
    if kind == "csv":
        append_csv(cases, path)
        return
    text = None if kind == "json" else RENDERERS[kind](cases)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            if text is None:  # a case at a time: a report of many thousand cases is never whole in memory
                write_json(handle, cases, prices=prices, load_errors=load_errors, shard=shard)
            else:
                handle.write(text)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


__all__ = ["DIR_KINDS", "REPORT_KINDS", "RENDERERS", "write_report"]
