"""agents-cli's trace files (`docs/agents-cli-formats.md` §4.4–4.6): a case as the SDK dumps it, and
a trace file's text. What a run adds to a case is built in `worker.agents_cli_trace` (a worker builds
it too); a played scenario in `traces.agents_cli`.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from agentdiff.core.formats.agents_cli.models import DatasetCase

#: The order `EvalCase` dumps its declared fields in; extra fields follow, as written.
CASE_FIELDS = ("prompt", "responses", "reference", "system_instruction", "conversation_history", "rubric_groups",
               "eval_case_id", "intermediate_events", "agent_info", "agent_data", "user_scenario", "interactions_data_source")
_CAMEL = {"".join([name.split("_")[0], *(p.title() for p in name.split("_")[1:])]): name for name in CASE_FIELDS}


def snake_case(case: dict[str, Any]) -> dict[str, Any]:
    """A case as written (either key spelling) with its declared fields snake_case, in dump order."""
    renamed = {_CAMEL.get(key, key): value for key, value in case.items()}
    declared = {name: renamed[name] for name in CASE_FIELDS if renamed.get(name) is not None}
    return {**declared, **{key: value for key, value in renamed.items() if key not in CASE_FIELDS}}


def normalized(case: dict[str, Any]) -> dict[str, Any]:
    """A case as the SDK dumps it: snake_case, fields in their declared order, no nulls, times in ISO
    8601 (`Z` for UTC), extra fields as written."""
    return DatasetCase.model_validate(case).model_dump(mode="json", exclude_none=True)


def dump_traces(cases: Sequence[dict[str, Any]]) -> str:
    """A trace file's text, as `eval generate` writes it: indent 2, non-ASCII as is, no final newline."""
    return json.dumps({"eval_cases": list(cases)}, indent=2, ensure_ascii=False)
