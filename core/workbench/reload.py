"""Loading changed files again: which files or folders a change touches (`units_for`), and their
cases and load errors loaded anew with each case's content before and after (`load_units`, a pure
function meant for a thread)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from agentdiff.core.formats.checks_file import CHECKS_FILE
from agentdiff.core.formats.conformance import SPEC_FILE
from agentdiff.core.formats.eval_set_files import CONFIG_FILE_NAME, FALLBACK_CONFIG_NAME
from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.formats.source_file import display_path, resolved
from agentdiff.core.project.discovery import (
    CaseRef,
    case_units,
    checks_file_for,
    discover,
    is_eval_set_file,
    stands_in,
)
from agentdiff.core.project.dataset_cases import BASELINES_DIR, CONFIG_NAMES, DATASETS_DIR
from agentdiff.core.project.family import claimed, family_of
from agentdiff.core.workbench.case_index import units_of
from agentdiff.core.workbench.changes import CaseContent, case_content
from agentdiff.core.workbench.events import CaseState


#: The reason shown on a case kept as last loaded while its file has an error.
HELD = "its file has an error: the case is kept as it last loaded, until the file loads again"


@dataclass
class Reload:
    units: frozenset[Path]  # the eval set files and case folders loaded again
    cases: list[CaseRef] = field(default_factory=list)  # what they hold now
    unit: dict[str, Path] = field(default_factory=dict)  # each case's unit
    errors: list[LoadError] = field(default_factory=list)  # their load errors now
    shown: frozenset[str] = frozenset()  # the files whose earlier load errors these replace
    before: dict[str, CaseContent] = field(default_factory=dict)
    after: dict[str, CaseContent] = field(default_factory=dict)
    # cases kept as they were last loaded while their file does not load (a save caught half written, a
    # typo): case id → the error, so nothing is dropped, nothing re-runs, and the fix re-runs only what changed
    held: dict[str, LoadError] = field(default_factory=dict)
    standing: list[Path] = field(default_factory=list)  # the units among them whose cases stand in for others (`Discovery.standing`)

    def mark_held(self, states: Sequence[CaseState]) -> None:
        """Mark the cases kept while their file does not load (stale, with the error); unmark those whose
        file loads again."""
        for state in states:
            error = self.held.get(state.ref.id)
            if error is not None:
                state.stale, state.reason = True, f"{HELD} ({error.file}{f':{error.line}' if error.line else ''}: {error.message})"
            elif state.reason.startswith(HELD):
                state.stale, state.reason = False, "its file loads again; unchanged since its last run"

    def merge_errors(self, errors: Sequence[LoadError]) -> list[LoadError]:
        kept = [e for e in errors if not self._covers(e.file)]
        return sorted([*kept, *self.errors], key=lambda e: (e.file, e.line or 0))

    def _covers(self, file: str) -> bool:
        return file in self.shown or any(file.startswith(f"{shown}/") for shown in self.shown)


def units_for(paths: Sequence[Path], known: set[Path], watched: Sequence[Path]) -> frozenset[Path]:
    """The eval set files and conformance case folders to load again for these changed paths;
    `known` holds the units loaded now."""
    roots = [resolved(p) for p in watched]
    units: set[Path] = set()
    for given in paths:
        # A name the scoring depends on (a test_config.json) counts by its own folder and name, even
        # when it is a symlink (resolving it would name its target, elsewhere); everything else by what it is.
        path = resolved(given.parent) / given.name if given.name == CONFIG_FILE_NAME else resolved(given)
        if path.name == CONFIG_FILE_NAME:  # every eval set beside it is scored with it
            units |= {u for u in known if u.parent == path.parent}
            if path.parent.is_dir():
                units |= {resolved(p) for p in path.parent.iterdir() if is_eval_set_file(p.name)}
        elif path.is_dir() and path.name != "__pycache__":  # a folder renamed or moved in: everything in it
            units |= {resolved(u) for u in case_units(path)}
            units |= {u for u in known if u == path}  # an eval file replaced by a folder of its name
        elif not path.exists() and any(path in u.parents for u in known):  # a folder renamed or moved away
            units |= {u for u in known if path in u.parents}
        elif path.name == FALLBACK_CONFIG_NAME:  # it may score every eval set at or below its folder
            units |= {u for u in known if is_eval_set_file(u.name) and (u.parent == path.parent or path.parent in u.parents)}
        elif path.name == CHECKS_FILE:  # it checks every case at or below its folder
            units |= {u for u in known if u.parent == path.parent or path.parent in u.parents}
        elif claimed(path) is not None:  # a unit of a format with a finder of its own
            units.add(path)
        elif dataset_units(path, known):  # a dataset's baseline file, eval config or metric file
            units |= dataset_units(path, known)
        elif is_eval_set_file(path.name) or path.suffix == ".json" and DATASETS_DIR in path.parts:
            units.add(path)
        elif path.name == SPEC_FILE or path.name.startswith("generated-") or path.parent in known:
            units.add(path.parent)
        elif path in known:
            units.add(path)
    return frozenset(u for u in units if u in known or any(u == r or r in u.parents for r in roots))


def units_to_reload(paths: Sequence[Path], units: Mapping[str, Path], index: Any, standing: set[Path], watched: Sequence[Path]) -> frozenset[Path]:
    """The units a change loads again (`units` each case's now): the changed files' own (`units_for`), those
    of the cases a changed file defines (`CaseFamily.watched`: a traced case's target), and, when any
    loads again, all those whose cases stand in for others (what they stand in for may come or go)."""
    found = set(units_for(paths, set(units.values()), watched))
    found |= {units[i] for path in paths for i in index.defined_by(path) if i in units}
    if found:  # (and they are read together: one conversation's turns may be in two of them)
        found |= {u for u in standing if os.path.lexists(u)}
    return frozenset(found)


def dataset_units(path: Path, known: set[Path]) -> set[Path]:
    """The agents-cli datasets a changed file bears on: `<eval>/baselines/X` is dataset
    `<eval>/datasets/X`'s baseline; the eval config and the metric files beside it grade every
    dataset under `<eval>/datasets/`."""
    if path.suffix == ".json" and BASELINES_DIR in path.parts[:-1]:
        for folder in path.parents:
            if folder.name == BASELINES_DIR:
                twin = folder.parent / DATASETS_DIR / path.relative_to(folder)
                return {twin} if twin in known else set()
    if path.name in CONFIG_NAMES or path.suffix == ".py":
        datasets = path.parent / DATASETS_DIR
        return {u for u in known if datasets in u.parents}
    return set()


def load_units(units: frozenset[Path], before: Mapping[str, CaseRef], root: Path,
               old_units: Mapping[str, Path] = {}, elsewhere: Optional[Iterable[CaseRef]] = None) -> Reload:  # noqa: B006 - read only
    """`elsewhere`: the cases not loaded again, when some stand in for others (one of those may be what a
    case loaded stands in for: a traced conversation imported into an eval set of its own)."""
    found = discover([u for u in sorted(units) if os.path.lexists(u)], root) if units else None
    unit = units_of(found.cases) if found else {}
    cases = [c for c in found.cases if unit[c.id] in units] if found else []
    if elsewhere is not None and any(stands_in(c.family) for c in cases):
        keys = {key for ref in elsewhere if (key := family_of(ref).eval_key(ref)) is not None}
        cases = [c for c in cases if family_of(c).stands_in_for(c) not in keys]
    shown = {display_path(u, root) for u in units}
    shown |= {display_path(u.parent / CONFIG_FILE_NAME, root) for u in units if is_eval_set_file(u.name)}
    shown |= {display_path(found_file, root) for u in units if (found_file := checks_file_for(u, root)) is not None}
    errors = found.errors if found else []
    held: dict[str, LoadError] = {}
    for old_unit in sorted(units):  # a file that loaded before and now loads no case for an error of its own
        shown_as = display_path(old_unit, root)  # the file, or a case folder (its spec.yaml, its recordings)
        failed = next((e for e in errors if e.file == shown_as or e.file.startswith(shown_as + "/")), None)
        if failed is None or any(unit[c.id] == old_unit for c in cases):
            continue
        for case_id, ref in before.items():
            if old_units.get(case_id) == old_unit:
                cases.append(ref)
                unit[case_id] = old_unit
                held[case_id] = failed
    return Reload(
        units=units,
        cases=cases,
        unit=unit,
        errors=errors,
        shown=frozenset(shown),
        before={case_id: case_content(ref) for case_id, ref in before.items()},
        after={ref.id: case_content(ref) for ref in cases},
        held=held,
        standing=found.standing if found else [],
    )
