"""`agentdiff baselines` for agents-cli dataset cases: a case whose baseline (its entry in the
baseline file) changed since a git ref while what it sends (its prompt, history or scenario) did not
is a re-recorded baseline to review, with the layers that changed between the two accepted runs."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Callable, Optional

from agentdiff.core.diff.case import diff_case
from agentdiff.core.formats.agents_cli.models import DatasetCase
from agentdiff.core.formats.source_file import resolved
from agentdiff.core.formats.agents_cli.dataset import good_key
from agentdiff.core.project.dataset_cases import KEY_EXTRA, DatasetCaseRef, history, sent_message
from agentdiff.core.run.expected import dataset_baseline
from agentdiff.core.reports.baseline_change import BaselineChange, git_show


def dataset_change(ref: DatasetCaseRef, since_text: Callable[[Path], Optional[str]], changed: set[Path]) -> Optional[tuple[bool, list[tuple[str, str]]]]:
    """(new, layers) when the case's baseline was re-recorded since the ref (`since_text(path)`: a
    file as it was then), else None."""
    if ref.baseline is None or ref.baseline_path is None or resolved(ref.baseline_path) not in changed:
        return None
    assert ref.dataset is not None
    old_written = _case(since_text(ref.dataset.source.path), ref.name)
    if old_written is not None and _asks(old_written) != _asks(ref.written):
        return None  # its definition changed: a new question, reviewed as one
    old = _case(since_text(ref.baseline_path), ref.name)
    if old is None:
        return True, []
    before = dataset_baseline(dataclasses.replace(ref, baseline=old)).trace
    after = dataset_baseline(ref).trace
    layers = [(status.layer, status.summary or "changed") for status in diff_case(before, after).layers if status.status == "changed"]
    return (False, layers) if layers else None  # ids or times only: nothing to review


def _asks(case: DatasetCase) -> tuple:
    """What a case sends: its message, the history before it, its scenario."""
    return sent_message(case), history(case, "model"), case.user_scenario


def _case(text: Optional[str], key: str) -> Optional[DatasetCase]:
    """The case of `key` in a dataset or baseline file's text, if it loads and holds one."""
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    cases = data.get("eval_cases", data.get("evalCases")) if isinstance(data, dict) else None
    for index, case in enumerate(cases or []):
        if not isinstance(case, dict):
            continue
        own = case.get("eval_case_id") or case.get("evalCaseId")
        name = case.get(KEY_EXTRA) or (own if isinstance(own, str) and good_key(own) else f"case_{index + 1}")
        if name == key:
            try:
                return DatasetCase.model_validate(case)
            except ValueError:
                return None
    return None


def dataset_baseline_change(ref: DatasetCaseRef, root: Path, since: str, changed: set[Path]) -> Optional[BaselineChange]:
    found = dataset_change(ref, lambda path: git_show(root, since, path), changed)
    if found is None:
        return None
    change = BaselineChange(ref.id, [ref.baseline_display], None, ["an agents-cli baseline: the baseline file is its record"])
    change.new, change.layers = found
    return change
