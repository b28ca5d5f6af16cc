"""ADK's conformance cases: a folder with `spec.yaml` and the `generated-*` recordings and session of
each streaming mode, replayed as ADK's ReplayPlugin replays them (or run live)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.baselines.conformance_accept import ConformanceAccepts
from agentdiff.core.baselines.documents import REGISTRATION_FILE
from agentdiff.core.baselines import record as recording  # (its writers, looked up when called)
from agentdiff.core.formats.checks_file import checks_digest
from agentdiff.core.formats.conformance import SPEC_FILE, recordings_file, session_file
from agentdiff.core.project.case_refs import ConformanceCaseRef
from agentdiff.core.project.family import AcceptBatch, CaseFamily
from agentdiff.core.reports.conformance_review import conformance_change
from agentdiff.core.run.case_run import unrun
from agentdiff.core.run.conformance import judge_replay, live_conformance, replay_conformance, score_live_conformance
from agentdiff.core.run.expected import Baseline, conformance_baseline
from agentdiff.core.run.jobs import conformance_job, conformance_messages
from agentdiff.core.scoring.results import CaseStatus

#: The files that define a conformance case, in its folder.
CONFORMANCE_FILES = (SPEC_FILE, *(f(m) for m in ("none", "sse") for f in (recordings_file, session_file)))


class ConformanceFamily(CaseFamily):
    name = "conformance"
    listed_after = 1
    replays = True
    accepted_whole = "a conformance recording is accepted whole"
    agent_named_in = "spec.yaml"

    def unit(self, ref: ConformanceCaseRef) -> Path:
        return ref.case.dir

    def group(self, ref: ConformanceCaseRef) -> str:
        return ref.id  # a case is its folder

    def tree_group(self, ref: ConformanceCaseRef) -> str:
        return ref.case.category

    def named_agent(self, ref: ConformanceCaseRef) -> Optional[str]:
        return ref.case.spec.agent

    def watched(self, ref: ConformanceCaseRef, unit: Path) -> tuple[frozenset[Path], Optional[Path]]:
        return frozenset(unit / name for name in CONFORMANCE_FILES), None

    def owned(self, ref: ConformanceCaseRef, unit: Path, resolve) -> list[Path]:
        return []  # any file in its folder

    def content(self, ref: ConformanceCaseRef) -> tuple[object, object]:
        baselines = tuple(sorted((m, b.recordings_source.sha256, b.session_source.sha256) for m, b in ref.case.baselines.items()))
        return (ref.case.spec_source.sha256, baselines), checks_digest(ref.checks)  # a replay is answered from its recordings

    def editor_place(self, ref: ConformanceCaseRef) -> tuple[Path, Optional[int], Optional[int]]:
        return ref.case.dir / SPEC_FILE, 1, 1

    def listed(self, ref: ConformanceCaseRef) -> str:
        modes = ", ".join(sorted(ref.case.baselines)) or "not recorded"
        return f"agent {ref.case.spec.agent}; {modes}"

    def described(self, ref: ConformanceCaseRef) -> dict[str, Any]:
        return {"kind": self.name, "agent": ref.case.spec.agent, "recorded": sorted(ref.case.baselines)}

    def names(self, ref: ConformanceCaseRef) -> tuple[Optional[str], str, Optional[str]]:
        return ref.case.category, ref.case.name, ref.case.spec.description

    def registration(self, ref: ConformanceCaseRef) -> tuple[Path, str]:
        return ref.case.dir / REGISTRATION_FILE, next(iter(sorted(ref.case.baselines)), "none")

    def baseline_digest(self, ref: ConformanceCaseRef) -> str:
        content = "".join(sorted(f"{m}:{b.recordings_source.sha256}:{b.session_source.sha256}" for m, b in ref.case.baselines.items()))
        return hashlib.sha256(content.encode()).hexdigest()[:16]

    def free(self, ref: ConformanceCaseRef, mode: Optional[str]) -> bool:
        return mode != "live" and ref.case.recorded

    def messages(self, ref: ConformanceCaseRef) -> list:
        return conformance_messages(ref)

    def baseline(self, ref: ConformanceCaseRef, mode: Optional[str] = None) -> Baseline:
        return conformance_baseline(ref, mode)  # type: ignore[arg-type]

    async def run(self, ref: ConformanceCaseRef, agent: Any, pool: Any, options: Any, mode: str) -> Any:
        if mode == "replay":
            return await replay_conformance(ref, agent, pool, options)
        return await live_conformance(ref, agent, pool, options)

    def rescore(self, ref: ConformanceCaseRef, previous: Any, judged: Any, options: Any) -> Any:
        agent, outputs = previous.agent, previous.outputs
        if previous.result.mode == "live":
            streaming = previous.baseline.mode if previous.baseline and previous.baseline.mode else "none"
            return score_live_conformance(ref, agent, streaming, outputs, options)
        replayed = [(mode, out) for mode, out in zip(previous.modes, outputs) if mode in ref.case.baselines]
        if not replayed:
            return unrun(ref, agent, "replay", CaseStatus.NOT_EVALUATED, f"no longer recorded: record it with `agentdiff record {ref.id}`")
        return judge_replay(ref, agent, [mode for mode, _ in replayed], [out for _, out in replayed])

    def failed_hint(self, run: Any) -> str:
        if run.result.mode == "replay":  # the recording cannot answer what now runs
            return f": re-record it live (`agentdiff record {run.ref.id}`, ctrl+r in the TUI)"
        return ""

    def accepts(self, root: Path) -> AcceptBatch:
        return ConformanceAccepts(root)

    async def record(self, ref: ConformanceCaseRef, agent: Any, pool: Any, options: Any, root: Path) -> tuple[Any, Any]:
        mode = options.streaming or "none"
        out = recording.kept_output(await pool.run(conformance_job(ref, agent, "record", mode, options), options.timeout), root, agent)
        return out, recording.record_conformance(ref, out, mode, root)

    def baseline_change(self, ref: ConformanceCaseRef, root: Path, since: str, changed: set[Path], scratch: Path) -> Any:
        return conformance_change(ref, root, since, changed, scratch)
