"""How an eval case is named: `<file>::<key>`, readable and the same in every command.

`<file>` is the eval set file relative to the project root (the current directory, or the
workbench's root). `<key>` is the case's `eval_id`, unless that reads as a path — absolute, holding a
`/` or `\\`, a drive letter, or equal to the file's own name or path (ADK's legacy row files name their
one case after the file) — or would read ambiguously: empty, blank, with space at either end, holding
`::` or a control character. Then it is `case_<n>`, the case's 1-based position in its file.
Should `case_<n>` be some other case's eval_id already, the eval_id is kept, as ids must stay unique.

`agentdiff score` names a stored result with the id the same case has in `run` when its eval set
file is found (`CaseIds`); otherwise it keeps `<eval_set_id>::<eval_id>`.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Iterable, Optional

from agentdiff.core.formats.eval_cases import EvalCases
from agentdiff.core.formats.eval_set_files import LoadedEvalSet

INDEX_PREFIX = "case_"
_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def makes_a_poor_key(eval_id: str, loaded: LoadedEvalSet, names: Optional[set[str]] = None) -> bool:
    """Whether an eval_id would make a poor id: a path, the file's own name, nothing at all, or
    something that reads ambiguously on a command line or in `<file>::<key>`. (`names`: the file's
    names, `_names(loaded)`, when asked for every case of a file.)"""
    if not eval_id or "/" in eval_id or "\\" in eval_id or _DRIVE.match(eval_id):
        return True
    if eval_id != eval_id.strip() or "::" in eval_id or _CONTROL.search(eval_id):
        return True
    return eval_id in (names if names is not None else _names(loaded))


def _names(loaded: LoadedEvalSet) -> set[str]:
    return {loaded.source.display, loaded.source.path.name, loaded.source.path.as_posix()}


def case_keys(loaded: LoadedEvalSet) -> list[str]:
    """The `<key>` of every case of one file, in file order."""
    eval_ids = loaded.cases.eval_ids
    taken = set(eval_ids)
    names = _names(loaded)
    if eval_id_facts(loaded.cases) == (True, False) and "" not in taken and not taken & names:
        return list(eval_ids)  # none makes a poor key
    keys = []
    for number, eval_id in enumerate(eval_ids, start=1):
        key = eval_id
        if makes_a_poor_key(eval_id, loaded, names) and f"{INDEX_PREFIX}{number}" not in taken:
            key = f"{INDEX_PREFIX}{number}"
        keys.append(key)
    return keys


_DRIVE_LINE = re.compile(r"^[A-Za-z]:", re.MULTILINE)


def eval_id_facts(cases: EvalCases) -> tuple[bool, bool]:
    """Whether every eval_id of a file is plain (printable ASCII, single spaces inside, none at the
    ends: seen as written), and whether any holds `::`, a slash or a backslash or starts with a
    drive. Found once per file, in a few passes over its eval_ids joined (a file of many thousand
    cases), and kept with its cases."""
    facts = cases.__dict__.get("_id_facts")
    if facts is None:
        eval_ids = cases.eval_ids
        joined = "\n".join(eval_ids)
        plain = (not eval_ids or joined.count("\n") == len(eval_ids) - 1) and joined.isascii() and joined.replace("\n", "").isprintable() \
            and "  " not in joined and " \n" not in joined and "\n " not in joined and joined[:1] != " " and joined[-1:] != " "
        marked = "::" in joined or "/" in joined or "\\" in joined or (":" in joined and _DRIVE_LINE.search(joined) is not None)
        facts = cases.__dict__["_id_facts"] = (plain, marked)
    return facts


def eval_case_id(display: str, key: str) -> str:
    return f"{display}::{key}"


class CaseIds:
    """The ids of eval cases by (eval_set_id, eval_id), for naming stored results as `run` names them."""

    def __init__(self, eval_sets: Iterable[LoadedEvalSet]):
        self._by_set: dict[str, list[tuple[LoadedEvalSet, dict[str, str]]]] = {}
        for loaded in eval_sets:
            ids = {eval_id: eval_case_id(loaded.source.display, key) for eval_id, key in zip(loaded.cases.eval_ids, case_keys(loaded))}
            self._by_set.setdefault(loaded.eval_set_id, []).append((loaded, ids))

    def find(self, eval_set_id: Optional[str], eval_id: str) -> Optional[str]:
        """The id of the one discovered case this stored result is of; None when none or several are."""
        found = [hit for loaded, ids in self._by_set.get(eval_set_id or "", []) if (hit := _case_in(loaded, ids, eval_id))]
        return found[0] if len(found) == 1 else None


def _case_in(loaded: LoadedEvalSet, ids: dict[str, str], eval_id: str) -> Optional[str]:
    if eval_id in ids:
        return ids[eval_id]
    # A legacy row file's one case is named after the file as ADK was given it (often an absolute path).
    if loaded.legacy == "rows" and len(ids) == 1 and eval_id and PurePosixPath(eval_id.replace("\\", "/")).name == loaded.source.path.name:
        return next(iter(ids.values()))
    return None
