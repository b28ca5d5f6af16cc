"""Loading an agents-cli EvaluationDataset file: a dataset (`tests/eval/datasets/*.json`) or a trace
file `agents-cli eval generate` wrote (`artifacts/traces/traces_<ts>.json`), which is a dataset whose
cases carry `responses` and the run's `agent_data`.

The file is validated as the SDK validates it (`models`), and each case is checked the way `eval
generate` checks it before it runs one (`case_problem`): a prompt, or a continuation whose last event
is the user's; never both; or a scenario alone (`user_scenario`, which `eval dataset synthesize`
plays with ADK's user simulator). A case that fails is a located error of its own; the others still load.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from pydantic import ValidationError

from agentdiff.core.formats.agents_cli.models import DatasetCase, EvaluationDataset
from agentdiff.core.formats.load_error import LoadError, format_path, locate, validation_errors
from agentdiff.core.formats.source_file import SourceFileError, SourceText, parse_source, read_source

INDEX_PREFIX = "case_"


@dataclass(frozen=True)
class LoadedDataset:
    source: SourceText
    dataset: EvaluationDataset
    raw: Any  # the parsed JSON as read: writers patch it, so what they do not change stays as it was
    keys: tuple[str, ...]  # each case's key in its id: its eval_case_id, else `case_<n>` (its position)

    @property
    def cases(self) -> list[DatasetCase]:
        return list(self.dataset.eval_cases or [])


def load_dataset(path: Path, display: Optional[str] = None, trace: bool = False) -> tuple[Optional[LoadedDataset], list[LoadError]]:
    """Read one EvaluationDataset file: cases to run, or with `trace` a trace file (its cases ran: a
    prompt case carries the run's turn too, so the checks before a run do not apply). Never raises
    for bad input."""
    try:
        source = read_source(path, display)
        data = parse_source(source, "json")
    except SourceFileError as exc:
        return None, [exc.error]
    return dataset_from_data(source, data, trace)


def dataset_from_data(source: SourceText, data: Any, trace: bool = False) -> tuple[Optional[LoadedDataset], list[LoadError]]:
    if not isinstance(data, dict):
        return None, [LoadError(file=source.display, line=1, column=1, message="an EvaluationDataset file must hold a JSON object ({\"eval_cases\": [...]})")]
    try:
        dataset = EvaluationDataset.model_validate(data)
    except ValidationError as exc:
        return None, validation_errors(source.display, source.text, data, exc, "json")
    errors: list[LoadError] = []
    if not trace and not dataset.eval_cases:  # as `eval generate`: nothing to run is an error, not no cases
        return None, [LoadError(file=source.display, line=1, column=1, message="a dataset must hold a non-empty `eval_cases` list")]
    for index, case in enumerate(dataset.eval_cases or [] if not trace else []):
        problem = case_problem(case)
        if problem is not None:
            errors.append(_at(source, [_key(data, "eval_cases"), index], problem))
    keys = case_keys(dataset)
    seen: dict[str, int] = {}
    for index, key in enumerate(keys):
        if key in seen:
            errors.append(_at(source, [_key(data, "eval_cases"), index], f"duplicate eval_case_id {key!r} (case {seen[key] + 1} has it too)"))
        seen.setdefault(key, index)
    if errors:
        return None, errors
    return LoadedDataset(source=source, dataset=dataset, raw=data, keys=tuple(keys)), []


def case_problem(case: DatasetCase) -> Optional[str]:
    """Why `agents-cli eval generate` would not run this case, or None."""
    turns = case.turns
    if case.prompt is not None and turns:
        return "the case has both a `prompt` and `agent_data.turns`: give one (a prompt, or a continuation)"
    if case.prompt is None and not turns:
        scenario = case.user_scenario
        if scenario is not None:  # played by ADK's user simulator, as `agents-cli eval dataset synthesize` plays it
            if not (scenario.starting_prompt or "").strip() or not (scenario.conversation_plan or "").strip():
                return "a scenario (`user_scenario`) needs a `starting_prompt` and a `conversation_plan`"
            return None
        return "the case has neither a `prompt` nor `agent_data.turns`"
    if case.prompt is None:
        events = case.events()
        if not events or events[-1].author != "user":
            return "a continuation's last event must be the user's message (`author: user`), the one the agent answers"
        if events[-1].content is None:
            return "a continuation's last user event has no `content`"
    return None


def case_keys(dataset: EvaluationDataset) -> list[str]:
    """Each case's key: its eval_case_id, else `case_<n>` (1-based position), as ids stay readable."""
    return [case.eval_case_id if good_key(case.eval_case_id) else f"{INDEX_PREFIX}{n}"
            for n, case in enumerate(dataset.eval_cases or [], start=1)]


def good_key(key: Optional[str]) -> bool:
    return bool(key) and key == key.strip() and "::" not in key and "/" not in key and "\\" not in key \
        and not any(ord(ch) < 32 or 0x7f <= ord(ch) <= 0x9f for ch in key)


def _key(data: dict, name: str) -> str:
    """The spelling the file uses for a field (snake_case, or its camelCase alias)."""
    camel = name.split("_")[0] + "".join(part.title() for part in name.split("_")[1:])
    return camel if camel in data else name


def _at(source: SourceText, path: list, message: str) -> LoadError:
    position = locate(source.text, path, "json")
    return LoadError(file=source.display, message=message, path=format_path(path),
                     line=position[0] if position else None, column=position[1] if position else None)
