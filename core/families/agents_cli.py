"""agents-cli's datasets (`tests/eval/datasets/*.json`), graded with their eval config's metrics and
diffed against a baseline trace file beside them (`project.dataset_cases`).

A dataset case is an EvalSet case in what it sends (`DatasetCaseRef` is an `EvalCaseRef`), so this
family is the EvalSet family's with its own baseline, grading, accept and record."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.baselines.dataset_accept import DatasetAccepts
from agentdiff.core.baselines import record as recording  # (its writers, looked up when called)
from agentdiff.core.families.eval_set import EvalSetFamily
from agentdiff.core.formats.checks_file import checks_digest
from agentdiff.core.formats.source_file import resolved
from agentdiff.core.project.agents import manifest_agent
from agentdiff.core.project.dataset_cases import DatasetCaseRef, dataset_shape, history, sent_message
from agentdiff.core.project.family import AcceptBatch
from agentdiff.core.reports.dataset_review import dataset_baseline_change
from agentdiff.core.run.dataset_case import dataset_job, grade_outputs, run_dataset_case, score_dataset_case, traced
from agentdiff.core.run.expected import Baseline, dataset_baseline


class AgentsCliFamily(EvalSetFamily):
    name = "agents_cli"
    accepted_whole = "an agents-cli baseline holds the whole run"
    scores_without_threshold = True

    def suite_pass_rule(self, ref: DatasetCaseRef) -> tuple[Optional[float], Optional[float]]:
        return None, None  # `eval_config.yaml` is agents-cli's: `[tool.agentdiff]` sets a dataset's rule

    def project_agent(self, ref: DatasetCaseRef, root: Path, tried: list[str]) -> Any:
        return manifest_agent(ref, root, tried)

    def watched(self, ref: DatasetCaseRef, unit: Path) -> tuple[frozenset[Path], Optional[Path]]:
        sources = frozenset({unit, *((resolved(ref.baseline_path),) if ref.baseline_path else ())})
        return sources, ref.metrics.path if ref.metrics and ref.metrics.path else None

    def owned(self, ref: DatasetCaseRef, unit: Path, resolve) -> list[Path]:
        own = [unit, *(resolve(p) for p in (ref.baseline_path, ref.metrics.path if ref.metrics else None) if p is not None)]
        if ref.metrics and ref.metrics.path:  # its metric functions' files
            own += [resolve(ref.metrics.path.parent / m.source_file) for m in ref.metrics.local if m.source_file]
        return own

    def content(self, ref: DatasetCaseRef) -> tuple[object, object]:
        written = ref.written  # what it sends, and what it is graded and diffed against
        scenario = written.user_scenario.model_dump_json() if written.user_scenario is not None else None
        given = (json.dumps(sent_message(written), sort_keys=True), json.dumps(history(written, "model"), sort_keys=True, default=str), scenario)
        metrics = tuple((m.name, m.where, m.source, m.threshold) for m in ref.metrics.metrics) if ref.metrics else None
        baseline = ref.baseline.model_dump_json() if ref.baseline is not None else None
        return given, (written.model_dump_json(), baseline, metrics, checks_digest(ref.checks))

    def id_key(self, ref: DatasetCaseRef) -> str:
        return "eval_case_id"

    def listed(self, ref: DatasetCaseRef) -> str:
        config = ref.metrics.display if ref.metrics else "no eval config"
        accepted = "baseline accepted" if ref.baseline is not None else "new"
        return f"agents-cli {dataset_shape(ref)}; {config}; {accepted}"

    def described(self, ref: DatasetCaseRef) -> dict[str, Any]:
        return {"kind": self.name, "dataset": ref.source, "eval_case_id": ref.written.eval_case_id,
                "shape": dataset_shape(ref), "config": ref.metrics.display if ref.metrics else None,
                "metrics": {m.name: m.where for m in ref.metrics.metrics} if ref.metrics else {},
                "baseline": ref.baseline_display if ref.baseline is not None else None}

    def baseline_digest(self, ref: DatasetCaseRef) -> str:
        content = ref.baseline.model_dump_json() if ref.baseline is not None else ""
        return hashlib.sha256(content.encode()).hexdigest()[:16]

    def baseline(self, ref: DatasetCaseRef, mode: Optional[str] = None) -> Baseline:
        return dataset_baseline(ref)

    async def run(self, ref: DatasetCaseRef, agent: Any, pool: Any, options: Any, mode: str) -> Any:
        return await run_dataset_case(ref, agent, pool, options)

    def rescore(self, ref: DatasetCaseRef, previous: Any, judged: Any, options: Any) -> Any:
        return score_dataset_case(ref, previous.agent, previous.outputs, judged, previous.result.mode)

    async def judge_again(self, ref: DatasetCaseRef, previous: Any, pool: Any, options: Any) -> list:
        if previous.outputs and previous.agent is not None:  # its eval config's local metrics
            return await grade_outputs(ref, previous.agent, previous.outputs, pool, options, again=True)
        return []

    def spillable(self, run: Any) -> bool:
        return False

    def accepts(self, root: Path) -> AcceptBatch:
        return DatasetAccepts()

    async def record(self, ref: DatasetCaseRef, agent: Any, pool: Any, options: Any, root: Path) -> tuple[Any, Any]:
        out = recording.kept_output(await pool.run(dataset_job(ref, agent), options.timeout), root, agent)
        return out, recording.record_dataset_case(ref, out, root)

    def baseline_change(self, ref: DatasetCaseRef, root: Path, since: str, changed: set[Path], scratch: Path) -> Any:
        return dataset_baseline_change(ref, root, since, changed)

    def stored_actual(self, ref: DatasetCaseRef, root: Path) -> Any:
        return None  # agents-cli keeps its runs as grade results (`versus`), not as ADK's history

    def results_root(self, ref: DatasetCaseRef) -> Optional[Path]:
        return ref.manifest.root if ref.manifest else None

    def results_key(self, ref: DatasetCaseRef) -> Optional[str]:
        return ref.eval_id

    def kept_traces(self, run: Any) -> list[tuple[str, Any]]:
        out = run.shown_output
        if out is None or out.error is not None:
            return []
        return [(run.ref.id, traced(run.ref, out))]
