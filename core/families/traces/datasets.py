"""Traced conversations into an agents-cli project's dataset: when the trace lies in an agents-cli
project and its agent is the project's, a conversation is accepted (and imported) as a dataset case,
with what it did as that case's first baseline, as accepting a run of a dataset case writes one.

- The dataset is `tests/eval/datasets/traced-dataset.json` (beside the project's own, never in it):
  one turn is a `prompt`; more are a continuation, the earlier turns' events given as its history and
  the last turn's user message sent, as `eval generate` runs one. Its `reference` is the final answer.
- Its baseline (`tests/eval/baselines/traced-dataset.json`) is the case as `eval generate` would
  have written it after the traced turn, with the turn's model calls (`agentdiff_llm_requests`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from agentdiff.core.baselines.dataset_accept import DatasetFile
from agentdiff.core.baselines.documents import RecordError
from agentdiff.core.formats.agents_cli.manifest import find_manifest
from agentdiff.core.formats.agents_cli.traces import normalized, snake_case
from agentdiff.core.formats.load_error import child_key
from agentdiff.core.project.dataset_cases import DATASETS_DIR, REQUESTS_KEY, baseline_file
from agentdiff.core.traces.from_run import split_turns
from agentdiff.core.traces.otlp import Conversation
from agentdiff.core.traces.otlp_cases import as_run_output, not_yet
from agentdiff.core.worker.agents_cli_trace import generated_events, trace_case


DATASET_NAME = "traced-dataset.json"


def dataset_target(here: Path, agent_dir: Optional[Path]) -> Optional[Path]:
    """The dataset a conversation of a trace file in `here` goes into, when that lies in an agents-cli
    project whose agent made it (`agent_dir`: the traced agent's package, if found); else None."""
    manifest, _ = find_manifest(here)
    if manifest is None:
        return None
    if agent_dir is not None and agent_dir.resolve() != (manifest.root / manifest.agent_directory).resolve():
        return None  # another agent's trace, kept in the project
    return manifest.root / "tests" / "eval" / DATASETS_DIR / DATASET_NAME


def is_dataset(target: Path) -> bool:
    """Whether a conversation's target is an agents-cli dataset (else an EvalSet file)."""
    return target.parent.name == DATASETS_DIR and not target.name.endswith((".evalset.json", ".test.json"))


def _event(event: dict[str, Any]) -> dict[str, Any]:
    return {"author": event.get("author") or "", "content": event.get("content")}


def dataset_entries(conversation: Conversation, eval_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The dataset's case for a conversation, and its baseline entry."""
    out = as_run_output(conversation)
    turns = split_turns(out.events)
    last = turns[-1] if turns else []
    if len(turns) <= 1:
        row: dict[str, Any] = {"eval_case_id": eval_id, "prompt": (last[0] if last else {}).get("content") or {"role": "user", "parts": []}}
    else:  # a continuation: what was said before is its history, the last message is sent
        history = [{"turn_index": i, "turn_id": f"turn_{i}", "events": [_event(e) for e in events]} for i, events in enumerate(turns[:-1])]
        row = {"eval_case_id": eval_id,
               "agent_data": {"turns": [*history, {"turn_index": len(history), "turn_id": f"turn_{len(history)}", "events": [_event(last[0])]}]}}
    entry = normalized(trace_case(normalized(snake_case(row)), generated_events(last), None, conversation.agent or "root_agent"))
    response = (entry.get("responses") or [None])[-1]
    if response is not None:
        row["reference"] = {"response": response.get("response")}
        entry = normalized({**entry, "reference": row["reference"]})
    final_turn = len(turns) - 1
    entry[REQUESTS_KEY] = [x.model_dump(mode="json", exclude_defaults=True, exclude={"start", "end"})
                           for x in out.exchanges if x.turn == final_turn]
    return row, entry


def into_dataset(dataset: Path, conversations: Sequence[Conversation], files: dict[Path, DatasetFile]) -> tuple[list[str], list[str]]:
    """Each conversation the dataset does not hold yet added to it and to its baselines (`files`: the
    files being planned, path → file); the eval_case_ids added, and those it held already."""
    data = files.get(dataset) or files.setdefault(dataset, DatasetFile.read(dataset, {"eval_cases": []}))
    baselines_path = baseline_file(dataset)
    baselines = files.get(baselines_path) or files.setdefault(baselines_path, DatasetFile.read(baselines_path, {"eval_cases": []}))
    cases = data.data.setdefault(child_key(data.data, "eval_cases") or "eval_cases", [])
    entries = baselines.data.setdefault(child_key(baselines.data, "eval_cases") or "eval_cases", [])
    if not isinstance(cases, list) or not isinstance(entries, list):
        raise RecordError(f"{dataset.name} and its baselines must hold an `eval_cases` list to add cases to them")
    have = {c.get("eval_case_id") or c.get("evalCaseId") for c in cases if isinstance(c, dict)}
    new, already = not_yet(conversations, have)
    for conversation, eval_id in new:
        row, entry = dataset_entries(conversation, eval_id)
        cases.append(row)
        entries.append(entry)
    return [eval_id for _, eval_id in new], already
