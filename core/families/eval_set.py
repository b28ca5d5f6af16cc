"""ADK's EvalSet files (`*.test.json`, `*.evalset.json`), scored with their `test_config.json`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.baselines.documents import REGISTRATION_FILE, RecordError
from agentdiff.core.baselines.eval_set_accept import EvalSetAccepts
from agentdiff.core.baselines import record as recording  # (its writers, looked up when called)
from agentdiff.core.diff.source_index import Origin, SourceIndex
from agentdiff.core.formats.checks_file import checks_digest
from agentdiff.core.formats.eval_set_files import CONFIG_FILE_NAME, FALLBACK_CONFIG_NAME
from agentdiff.core.project.case_refs import EvalCaseRef
from agentdiff.core.project.family import AcceptBatch, CaseFamily
from agentdiff.core.reports.eval_set_review import eval_set_change
from agentdiff.core.run.eval_case import run_eval_case, score_eval_case
from agentdiff.core.run.expected import Baseline, eval_set_baseline
from agentdiff.core.run.jobs import eval_case_job, eval_messages, simulated_messages
from agentdiff.core.run.judging import judge_outputs, judged_criteria


class EvalSetFamily(CaseFamily):
    name = "eval_set"

    def unit(self, ref: EvalCaseRef) -> Path:
        return ref.eval_set.source.path

    def eval_key(self, ref: EvalCaseRef) -> Optional[str]:
        return ref.eval_id

    def watched(self, ref: EvalCaseRef, unit: Path) -> tuple[frozenset[Path], Optional[Path]]:
        return frozenset({unit}), ref.config.path or unit.parent / CONFIG_FILE_NAME

    def owned(self, ref: EvalCaseRef, unit: Path, resolve) -> list[Path]:
        return [unit, unit.parent / CONFIG_FILE_NAME, *[p / FALLBACK_CONFIG_NAME for p in unit.parents]]

    def content(self, ref: EvalCaseRef) -> tuple[object, object]:
        case = ref.case
        given = (
            tuple(inv.user_content.model_dump_json() for inv in case.conversation or ()),
            case.session_input.model_dump_json() if case.session_input else None,
            case.conversation_scenario.model_dump_json() if case.conversation_scenario else None,
        )
        return given, (case.model_dump_json(), ref.config.config.model_dump_json(), checks_digest(ref.checks))

    def suite_pass_rule(self, ref: EvalCaseRef) -> tuple[Optional[float], Optional[float]]:
        config = ref.config.config  # `min_pass_rate` and `confidence` in its `test_config.json`
        return config.min_pass_rate, config.confidence

    def id_key(self, ref: EvalCaseRef) -> str:
        """The key its id is written under in its file (where an editor opens it)."""
        return "eval_id"

    def editor_place(self, ref: EvalCaseRef) -> tuple[Path, Optional[int], Optional[int]]:
        path = ("eval_cases", ref.position, self.id_key(ref)) if isinstance(ref.eval_set.raw, dict) else (0,)  # a legacy file: its first row
        found = SourceIndex.of_eval_set(ref.eval_set).locate(Origin(file=ref.eval_set.source.display, path=path))
        return ref.eval_set.source.path, found.line, found.column

    def listed(self, ref: EvalCaseRef) -> str:
        turns = ref.turns
        kind = f"{turns} turn{'s' if turns != 1 else ''}" if turns is not None else "scenario"
        return f"{kind}; config {ref.config.file or 'ADK default'}"

    def described(self, ref: EvalCaseRef) -> dict[str, Any]:
        return {"kind": self.name, "eval_set_id": ref.eval_set.eval_set_id, "eval_id": ref.eval_id,
                "turns": ref.turns or 0, "config": ref.config.file}

    def names(self, ref: EvalCaseRef) -> tuple[Optional[str], str, Optional[str]]:
        return ref.eval_set.eval_set_id, ref.eval_id, None

    def registration(self, ref: EvalCaseRef) -> tuple[Path, str]:
        path = ref.eval_set.source.path
        return path.with_name(path.name.split(".")[0] + "." + REGISTRATION_FILE), ref.eval_id

    def baseline_digest(self, ref: EvalCaseRef) -> str:
        content = json.dumps([inv.model_dump(mode="json", exclude={"user_content", "invocation_id", "creation_timestamp"})
                              for inv in ref.case.conversation or []], sort_keys=True)
        return hashlib.sha256(content.encode()).hexdigest()[:16]

    def messages(self, ref: EvalCaseRef) -> list:
        return eval_messages(ref)

    def messages_of(self, ref: EvalCaseRef, out: Any) -> list:
        return simulated_messages(ref, out)

    def baseline(self, ref: EvalCaseRef, mode: Optional[str] = None) -> Baseline:
        return eval_set_baseline(ref)

    async def run(self, ref: EvalCaseRef, agent: Any, pool: Any, options: Any, mode: str) -> Any:
        return await run_eval_case(ref, agent, pool, options)

    def rescore(self, ref: EvalCaseRef, previous: Any, judged: Any, options: Any) -> Any:
        return score_eval_case(ref, previous.agent, previous.outputs, judged)

    async def judge_again(self, ref: EvalCaseRef, previous: Any, pool: Any, options: Any) -> list:
        if not previous.has_outputs:
            return []
        if not judged_criteria(ref) or previous.agent is None:  # nothing to judge: its run is not read (it may be on disk)
            return [None] * len(previous.result.runs)
        return await judge_outputs(ref, previous.agent, previous.outputs, pool, options)

    def sources(self, ref: EvalCaseRef) -> Any:
        return SourceIndex.of_eval_set(ref.eval_set)

    def spillable(self, run: Any) -> bool:
        return len(run.outputs) == 1 and run.restage is None  # a run of repeats keeps how to show each of them

    def accepts(self, root: Path) -> AcceptBatch:
        return EvalSetAccepts(root)

    async def record(self, ref: EvalCaseRef, agent: Any, pool: Any, options: Any, root: Path) -> tuple[Any, Any]:
        if ref.case.conversation is None:
            raise RecordError("conversation_scenario cases have no expected turns to record")
        out = recording.kept_output(await pool.run(eval_case_job(ref, agent, "record"), options.timeout), root, agent)
        return out, recording.record_eval_case(ref, out, eval_messages(ref), root, agent.label)

    def stored_actual(self, ref: EvalCaseRef, root: Path) -> Any:
        from agentdiff.core.run.adk_history import latest_actual

        return latest_actual(ref, root)

    def baseline_change(self, ref: EvalCaseRef, root: Path, since: str, changed: set[Path], scratch: Path) -> Any:
        return eval_set_change(ref, root, since, changed, scratch)
