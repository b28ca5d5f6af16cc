"""Re-recording a case live: the run becomes its baseline, written atomically and journaled.

Each case's family runs it and writes it (`CaseFamily.record`) with the writers here: a conformance
case gets its recordings and session files for one streaming mode (`spec.yaml` is never touched); an
EvalSet case gets its expected invocations replaced, with everything else in the file left as it was;
a dataset case gets its baseline trace. A registration record goes beside each. `undo_last` reverts a
record.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.baselines.case_edits import EvalFileEdit
from agentdiff.core.baselines.documents import (
    REGISTRATION_FILE,
    RecordError,
    conformance_writes,
    record_into,
    registration,
    registration_write,
)
from agentdiff.core.baselines.journal import (
    BaselineConflict,
    BaselineWriteError,
    FileWrite,
    JournalEntry,
    write_baseline,
)
from agentdiff.core.formats.conformance import (
    StreamingMode,
)
from agentdiff.core.formats.adk_rules import rules_for
from agentdiff.core.project.agents import resolve_agent
from agentdiff.core.project.import_graph import project_files
from agentdiff.core.baselines.dataset_accept import DatasetFile, accept_dataset_case, dataset_writes
from agentdiff.core.project.case_refs import CaseRef, ConformanceCaseRef, EvalCaseRef
from agentdiff.core.project.dataset_cases import DatasetCaseRef
from agentdiff.core.project.family import family_of
from agentdiff.core.run.options import RunOptions
from agentdiff.core.traces.from_run import invocations_from_output
from agentdiff.core.worker.jobs import AgentRef, Message, RunOutput


def record_conformance(ref: ConformanceCaseRef, out: RunOutput, mode: StreamingMode, root: Path) -> JournalEntry:
    if out.error:
        raise RecordError(f"the run failed, nothing was recorded: {out.error}")
    writes = conformance_writes(ref.case.dir, mode, out, ref.case.spec.agent, root)
    return write_baseline(writes, root, f"record {ref.id} ({mode})")


def _edited(file: EvalFileEdit) -> str:
    """The eval set file with only the recorded values changed (`json_edit`; in a big file, in its case alone)."""
    loaded = file.loaded
    try:
        return file.text()
    except ValueError as exc:
        raise RecordError(f"{loaded.source.display} cannot be edited in place: {exc}") from None


def record_eval_case(ref: EvalCaseRef, out: RunOutput, messages: Sequence[Message], root: Path, agent: str) -> JournalEntry:
    loaded = ref.eval_set
    if out.error:
        raise RecordError(f"the run failed, nothing was recorded: {out.error}")
    if loaded.legacy:
        raise RecordError(
            f"{loaded.source.display} is in ADK's legacy format; migrate it to an EvalSet "
            "(AgentEvaluator.migrate_eval_data_to_new_schema) before recording into it"
        )
    index = loaded.index_of(ref.eval_id)
    actual = invocations_from_output(out, messages, rules_for(out.adk_version))  # in the form that ADK writes
    file = EvalFileEdit.of(loaded)
    record_into(file.data, index, actual)
    path = loaded.source.path
    registration_path = path.with_name(path.name.split(".")[0] + "." + REGISTRATION_FILE)
    writes = [
        FileWrite(path, _edited(file), loaded.source.sha256),
        registration_write(registration_path, ref.eval_id, registration(out, agent, root)),
    ]
    return write_baseline(writes, root, f"record {ref.id}")


@dataclass(frozen=True)
class RecordOutcome:
    ref: CaseRef
    written: tuple[str, ...] = ()  # files, as shown
    error: Optional[str] = None
    output: Optional[RunOutput] = None


def record_dataset_case(ref: DatasetCaseRef, out: RunOutput, root: Path) -> JournalEntry:
    """A dataset case's live run as its baseline (and its answer as its `reference`)."""
    if out.error is not None:
        raise RecordError(f"the run failed ({out.error}); there is nothing to record")
    files: dict[Path, DatasetFile] = {}
    accept_dataset_case(ref, out, files)
    writes = dataset_writes(files)
    if not writes:
        raise RecordError("nothing to record: the baseline already says what the run did")
    return write_baseline(writes, root, f"record {ref.id}")


def kept_output(out: RunOutput, root: Path, agent: AgentRef) -> RunOutput:
    """The run with its record of files kept to the project's (what the registration hashes)."""
    out.files_read = project_files(out.files_read, root, agent)
    return out


async def record_case(ref: CaseRef, pool, options: RunOptions, root: Path) -> RecordOutcome:
    """Run the case live and make what it did the baseline (journaled; `undo_last` reverts it)."""
    resolution = resolve_agent(ref, root, options.agents_dirs, options.mapping)
    if resolution.agent is None:
        return RecordOutcome(ref, error=resolution.said)
    agent = resolution.agent
    try:
        out, entry = await family_of(ref).record(ref, agent, pool, options, root)
    except (RecordError, BaselineConflict, BaselineWriteError) as exc:
        return RecordOutcome(ref, error=str(exc))
    return RecordOutcome(ref, tuple(file["path"] for file in entry.files), output=out)
