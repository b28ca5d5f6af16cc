"""What a change means: which cases to reload, run, re-score or drop, each with its reason.

Pure steps, as design.md orders them, over a save's paths resolved once (`resolve_changes`:
absolute, real, there or not, a folder or not):

* `plan_changes(changed, index, refs, root)` → `ChangePlan`: the `python` journey checks' files set
  apart, and the files the import graph is to be asked about; `decide(plan, index, root, static)`
  → the selections and the notes to show. The steps below are theirs.
* `classify(changed, index, root)`: an eval set, a `test_config.json` or a conformance case's spec
  or recordings changed → `reload` those files; agent code, or any file an agent read during its
  last run (prompts, YAML, data), changed → `run` that agent's cases; anything else new that looks
  like a case → `reload`, which finds it.
* `checks_code_changed(changed, refs)`: the file of a case's `python` journey check changed →
  `rescore` that case (checks cost no agent call).
* `after_reload(before, after, reason)`: once the changed files are loaded again, compare each
  case's content: a new case → `run`; a case gone → `drop`; what the agent is given changed (user
  messages, session input and state, a conformance case's spec or recordings) → `run`; only the
  expectations or criteria changed → `rescore` its cached run, with no agent call.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Literal, Mapping, Optional, Sequence

from agentdiff.core.formats.source_file import display_path, resolved
from agentdiff.core.project.agent_hints import may_name_agents
from agentdiff.core.project.discovery import CaseRef, is_eval_set_file
from agentdiff.core.project.family import family_of
from agentdiff.core.project.named_eval_files import is_case_file
from agentdiff.core.workbench.case_index import CaseIndex
from agentdiff.core.workbench.watcher import interesting

Action = Literal["reload", "run", "rescore", "drop"]
AGENT_MARKERS = ("__init__.py", "agent.py")  # a folder becomes (or stops being) an agent


@dataclass
class Selection:
    action: Action
    case_ids: list[str] = field(default_factory=list)
    paths: list[Path] = field(default_factory=list)  # for reload: the files to load again
    reason: str = ""





@dataclass(frozen=True)
class ChangedPath:
    """One changed path as every step of the change policy needs it, resolved once per save."""

    given: Path  # as the watcher (or the caller) named it
    path: Path  # absolute, as the case index keys files
    real: Path  # with symlinks followed
    present: bool  # it is there (a link counts, even a dangling one)
    exists: bool  # it is there, links followed
    is_dir: bool
    watched: bool  # not an editor's or a tool's litter (`watcher.interesting`)

    @classmethod
    def of(cls, given: Path | str) -> "ChangedPath":
        path = Path(os.path.abspath(given))
        return cls._looked_at(Path(given), path, resolved(path))

    @classmethod
    def _looked_at(cls, given: Path, path: Path, real: Path) -> "ChangedPath":
        present = os.path.lexists(path)
        exists = present and os.path.exists(path)
        return cls(given, path, real, present, exists, exists and path.is_dir(), interesting(str(path)))

    def now(self) -> "ChangedPath":
        """The same path looked at again (is it there, a folder?), not resolved again: a change that
        waited for the one before it is decided on the files as they are then."""
        return self._looked_at(self.given, self.path, self.real)


def resolve_changes(changed: Iterable[Path | str | ChangedPath]) -> list[ChangedPath]:
    """Each changed path resolved, once (a path already resolved is kept as it is)."""
    return [c if isinstance(c, ChangedPath) else ChangedPath.of(c) for c in changed]


@dataclass
class ChangePlan:
    """What a save means, decided from its paths resolved once (`plan_changes`), before the import
    graph is asked about the files in `asked` (`static_dependents`, a walk: the caller's to run off
    the loop) and the selections follow (`decide`)."""

    changes: list[ChangedPath]
    checks: Optional[Selection]  # the cases whose `python` journey checks changed: re-scored
    code: list[ChangedPath]  # the rest: cases' files, agents' code and data
    asked: list[Path]  # the changed files the import graph has a say on


def plan_changes(changed: Iterable[Path | str | ChangedPath], index: CaseIndex, refs: Mapping[str, CaseRef], root: Path) -> ChangePlan:
    changes = resolve_changes(changed)
    checks = checks_code_changed(changes, refs, root)
    code = agent_changes(changes, checks, index)
    return ChangePlan(changes, checks, code, static_candidates(code, index))


def decide(plan: ChangePlan, index: CaseIndex, root: Path, static: Mapping[Path, Mapping[Path, str]]) -> tuple[list[Selection], list[str]]:
    """The selections of a planned change (reload, run: each with its reason) and the notes to show."""
    selections = classify(plan.code, index, root, static)
    return selections, unattached(plan.asked, static, selections, index, root)


def classify(changed: Iterable[Path | ChangedPath], index: CaseIndex, root: Path,
             static: Optional[Mapping[Path, Mapping[Path, str]]] = None) -> list[Selection]:
    """What each changed file means. `static` (from `static_dependents`): for a changed file, the agents'
    folders whose code imports it ("static") or names it ("named"), from the project's import graph; it
    is what ties a file to a case whose agent has not run yet, or a module no run has imported yet."""
    changes = [c for c in resolve_changes(changed) if c.watched]
    # a path that is gone and was never read is an editor's or a tool's temporary file
    changes = [c for c in changes if c.present or index.known(c.path) or c.path.suffix == ".py" or index.holds(c.path)
               or is_eval_set_file(c.path.name)]  # a deleted eval file may have held no case, only a load error
    changes.sort(key=lambda c: not c.present)  # reasons name a file that is there
    reload_paths: list[Path] = []
    rerun: dict[str, str] = {}  # case id → why
    unrecorded = index.unrecorded()
    for change in changes:
        path = change.path
        if index.is_source(path) or is_case_file(path) or change.is_dir or (not change.present and index.holds(path)):
            reload_paths.append(path)
            continue
        shown = display_path(path, root)
        for case_id in sorted(index.in_agent_folder(path)):
            rerun.setdefault(case_id, f"re-run: {shown} changed")
        recorded = index.recorded_by(path)
        how = "imported" if path.suffix == ".py" else "read"
        for case_id in sorted(recorded):
            rerun.setdefault(case_id, f"re-run: {shown} changed ({how} by its agent)")
        for agent_dir, kind in sorted((static or {}).get(path, {}).items()):
            said = "its agent's imports reach it" if kind == "static" else "its agent's code names it"
            for case_id in sorted(index.agent_dirs().get(agent_dir, ())):
                # a case that ran has an exact record; a module no run imported may still be reached
                if case_id in unrecorded or (path.suffix == ".py" and not recorded):
                    rerun.setdefault(case_id, f"re-run: {shown} changed ({said})")
    selections: list[Selection] = []
    if reload_paths:
        names = ", ".join(sorted({display_path(p, root) for p in reload_paths})[:3])
        selections.append(Selection("reload", paths=sorted(set(reload_paths)), reason=f"{names} changed"))
    groups: dict[str, list[str]] = {}
    for case_id, reason in rerun.items():
        groups.setdefault(reason, []).append(case_id)
    for reason, ids in groups.items():
        selections.append(Selection("run", ids, reason=reason))
    return selections


def static_candidates(changed: Iterable[Path | ChangedPath], index: CaseIndex) -> list[Path]:
    """The changed files the import graph has a say on: a module no run recorded (a new module, or one
    only an unrun agent imports), or any file while some case has no record yet."""
    some_unrecorded = bool(index.unrecorded())
    found = []
    for change in resolve_changes(changed):
        path = change.path
        if not change.watched or index.is_source(path) or is_case_file(path) or change.is_dir:
            continue
        if some_unrecorded or (path.suffix == ".py" and not index.recorded_by(path)):
            found.append(path)
    return found


def static_dependents(paths: Iterable[Path], agents: Sequence[Path], root: Path, extra_roots: Sequence[Path] = ()) -> dict[Path, dict[Path, str]]:
    """For each of `paths`, which of the `agents`' folders hold code that imports it or names it (blocking:
    a walk of the agents' code, each file parsed once per version). A data file inside an agent's folder
    is that agent's alone."""
    from agentdiff.core.project.import_graph import ImportGraph

    paths = list(paths)
    if not paths:
        return {}
    graph = ImportGraph(root, extra_roots)
    found: dict[Path, dict[Path, str]] = {}
    for path in paths:
        if path.suffix != ".py" and any(a == path or a in path.parents for a in agents):
            continue
        hits = {agent: how for agent in agents if (how := graph.depends(agent, path)) is not None}
        if hits:
            found[path] = hits
    return found


def unattached(candidates: Iterable[Path], static: Mapping[Path, object], selections: Iterable[Selection], index: CaseIndex,
               root: Path) -> list[str]:
    """What to say of the changed modules that tie to no case (no run imported them, no agent's code
    reaches them), so that a save that re-runs nothing is never silent."""
    chosen = {i for s in selections if s.action == "run" for i in s.case_ids}
    return [f"{display_path(p, root)} changed: no case's agent imports it, so nothing re-runs" for p in candidates
            if p.suffix == ".py" and p not in static and not index.affected_by(p) and os.path.exists(p) and not chosen & index.in_agent_folder(p)]


def checks_code_changed(changed: Iterable[Path | ChangedPath], refs: Mapping[str, CaseRef], root: Path) -> Optional[Selection]:
    """The cases whose `python` journey checks are defined in a changed file: re-scored, not re-run
    (its `paths`: those of `changed` that are such files, as given)."""
    forms: dict[Path, Path] = {}  # a changed path's absolute and resolved forms (a symlink, or its target) → it
    for change in resolve_changes(changed):
        for form in (change.path, change.real):
            forms.setdefault(form, change.given)
    hit: dict[str, Path] = {}
    matched: set[Path] = set()
    for case_id, ref in refs.items():
        for spec in ref.checks:
            module = spec.module
            if module is None:
                continue
            found = forms.get(Path(os.path.abspath(module))) or forms.get(resolved(module))
            if found is not None:
                hit.setdefault(case_id, Path(os.path.abspath(module)))
                matched.add(found)
    if not hit:
        return None
    names = ", ".join(sorted({display_path(p, root) for p in hit.values()}))
    return Selection("rescore", sorted(hit), paths=sorted(matched), reason=f"re-score: {names} changed")


def agent_changes(changed: Iterable[Path | ChangedPath], checks: Optional[Selection], index: CaseIndex) -> list[ChangedPath]:
    """`changed` without the files of `python` journey checks (`checks`, from `checks_code_changed`)
    that no agent reads: such a file is no agent code even in the agent's package (a re-score, not a
    run); one an agent imports is both."""
    changes = resolve_changes(changed)
    if checks is None:
        return changes
    check_files = set(checks.paths)
    return [c for c in changes if c.given not in check_files or index.read_by_agent(c.path) or index.read_by_agent(c.real)]


def agents_may_have_moved(changed: Iterable[Path | ChangedPath], index: CaseIndex, root: Optional[Path] = None) -> bool:
    """Which folder is which case's agent may have changed: a package marker came or went, or (with
    `root`) the project's `pyproject.toml` or a test file that may name agents (`agent_hints`) changed.
    Saving the `agent.py` of a known agent is an edit, not a move."""
    top = Path(os.path.abspath(root)) if root is not None else None
    for change in resolve_changes(changed):
        path = change.path
        if path.name in AGENT_MARKERS and not (change.exists and index.is_agent_dir(path.parent)):
            return True
        if change.is_dir or (not change.exists and index.holds(path)):  # a folder renamed or moved
            return True
        if top is not None and (path == top / "pyproject.toml" or may_name_agents(path, top)):
            return True
    return False


@dataclass(frozen=True)
class CaseContent:
    """A case's content in two halves: what its agent is given, and what it is judged by."""

    given: object
    judged: object


def case_content(ref: CaseRef) -> CaseContent:
    return CaseContent(*family_of(ref).content(ref))


def after_reload(before: Mapping[str, CaseContent], after: Mapping[str, CaseContent], reason: str) -> list[Selection]:
    new = [case_id for case_id in after if case_id not in before]
    gone = [case_id for case_id in before if case_id not in after]
    given = [i for i in after if i in before and before[i].given != after[i].given]
    judged = [i for i in after if i in before and before[i].given == after[i].given and before[i].judged != after[i].judged]
    selections = [
        Selection("drop", gone, reason=f"removed: {reason}"),
        Selection("run", new, reason=f"new case: {reason}"),
        Selection("run", given, reason=f"re-run: {reason}"),
        Selection("rescore", judged, reason=f"re-score: {reason}"),
    ]
    return [s for s in selections if s.case_ids]
