"""`agentdiff baselines` for EvalSet cases: a case whose expected turns (final responses, tool calls)
changed since a git ref while what it gives the agent (user messages, session input) did not."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from agentdiff.core.formats.eval_set_files import load_eval_set
from agentdiff.core.formats.source_file import read_text_regular, resolved
from agentdiff.core.project.case_refs import EvalCaseRef
from agentdiff.core.project.family import family_of
from agentdiff.core.reports.baseline_change import BaselineChange, git_show, layers_between, records, renamed_from, what_changed
from agentdiff.core.traces.from_files import trace_from_invocations


def eval_set_change(ref: EvalCaseRef, root: Path, since: str, changed: set[Path], scratch: Path) -> Optional[BaselineChange]:
    path = resolved(ref.eval_set.source.path)
    if path not in changed:
        return None
    text = git_show(root, since, path)
    if text is None:  # renamed since (git's rename detection): its cases are compared with the old file's
        old_path = renamed_from(root, since, path)
        text = git_show(root, since, old_path) if old_path is not None else None
    if text is None:
        return None  # a new eval set: new cases, reviewed as cases
    old_file = scratch / f"{abs(hash(ref.id))}.evalset.json"
    old_file.write_text(text, encoding="utf-8")
    old_set, _ = load_eval_set(old_file, ref.eval_set.source.display)
    given = lambda case: ([inv.user_content.model_dump_json() for inv in case.conversation or []],  # noqa: E731
                          case.session_input.model_dump_json() if case.session_input else None)
    try:
        old = old_set.cases[old_set.index_of(ref.eval_id)] if old_set else None
    except KeyError:
        old = None
    if old is None:  # its eval_id renamed: the old case asked the same (one such case only)
        same = [c for c in (old_set.cases if old_set else ()) if given(c) == given(ref.case)]
        old = same[0] if len(same) == 1 else None
    if old is None:
        return None  # a new case: its definition is new too
    if given(old) != given(ref.case) or old.model_dump_json() == ref.case.model_dump_json():
        return None  # its definition changed (a new question), or nothing did
    if layers_between(trace_from_invocations(old.conversation or []), trace_from_invocations(ref.case.conversation or [])) == []:
        return None  # ids or timestamps only
    reg = family_of(ref).registration(ref)[0]
    old_records = records(git_show(root, since, reg) if reg.exists() else None)
    new_records = records(read_text_regular(reg) if reg.is_file() else None)
    change = BaselineChange(ref.id, [ref.eval_set.source.display], new_records.get(ref.eval_id))
    change.what_changed = what_changed(old_records.get(ref.eval_id), change.registration) if change.registration else \
        ["no registration: edited by hand, or recorded by another tool"]
    change.layers = layers_between(trace_from_invocations(old.conversation or []), trace_from_invocations(ref.case.conversation or []))
    return change
