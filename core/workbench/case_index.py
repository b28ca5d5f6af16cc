"""What each case depends on, kept up to date as cases load and run, so that a changed path is
mapped to its cases by lookups rather than by a pass over every case."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from agentdiff.core.formats.source_file import resolved
from agentdiff.core.project.case_refs import CaseRef
from agentdiff.core.project.family import family_of
from agentdiff.core.worker.jobs import AgentRef



@dataclass(frozen=True)
class CaseFiles:
    """What a case depends on, as absolute paths."""

    case_id: str
    sources: frozenset[Path]  # its eval set file, or its spec / recordings / session files
    config: Optional[Path] = None  # the test_config.json (or eval_config.json) it is scored with
    agent_dir: Optional[Path] = None  # its agent's package folder
    files_read: frozenset[Path] = frozenset()  # what its agent read during its last run
    agent_label: Optional[str] = None  # its agent as a run names it (`AgentRef.label`), found before it runs


def unit_of(ref: CaseRef) -> Path:
    """The file or folder a case loads from: its eval set file, or its conformance case folder."""
    return resolved(family_of(ref).unit(ref))


def units_of(refs: Iterable[CaseRef]) -> dict[str, Path]:
    """Each case's unit, resolved once per file (a resolve is a few system calls; 5,000 add up)."""
    resolved: dict[str, Path] = {}
    units = {}
    for ref in refs:
        raw = str(family_of(ref).unit(ref))
        if raw not in resolved:
            resolved[raw] = unit_of(ref)
        units[ref.id] = resolved[raw]
    return units


def listed_order(ref: CaseRef, unit: Path) -> tuple:
    """The order discovery lists cases in: by family (eval sets first, conformance cases after), then by file or folder."""
    return (family_of(ref).listed_after, ref.category, unit.parts)


def case_files(ref: CaseRef, unit: Path, agent: Optional[AgentRef], files_read: Iterable[str] = ()) -> CaseFiles:
    sources, config = family_of(ref).watched(ref, unit)
    agent_dir = _agent_dir(agent.agents_dir, agent.name) if agent and agent.agents_dir else None
    return CaseFiles(ref.id, _shared(sources), _shared(config), _shared(agent_dir), _read_paths(frozenset(files_read)),
                     agent.label if agent else None)


#: One object for each equal path and set of paths the cases' files hold (the cases of a big suite share
#: a file, a folder and the few files their agent reads, and each kept copies of its own: ~1 KB a case);
#: emptied when full, so it only ever saves.
_SHARED: dict = {}
_READ: dict[frozenset[str], frozenset[Path]] = {}
_MOST = 65_536


_AGENT_DIRS: dict[tuple[str, str], Path] = {}


def _agent_dir(agents_dir: str, name: str) -> Path:
    """The agent's folder, resolved once per load (`forget_resolved`), not once per case: each resolve
    is a system call per folder on the way, and a verdict's index lands on the app's loop."""
    if not os.path.isabs(agents_dir):
        return (Path(agents_dir) / name).resolve()  # from the working directory: not kept
    key = (agents_dir, name)
    found = _AGENT_DIRS.get(key)
    if found is None:
        if len(_AGENT_DIRS) >= _MOST:
            _AGENT_DIRS.clear()
        found = _AGENT_DIRS[key] = (Path(agents_dir) / name).resolve()
    return found


def forget_resolved() -> None:
    """Resolve agents' folders anew (a load: a link on the way may have changed)."""
    _AGENT_DIRS.clear()


def _shared(value):
    if value is None:
        return None
    if len(_SHARED) >= _MOST:
        _SHARED.clear()
    return _SHARED.setdefault(value, value)


def _read_paths(read: frozenset[str]) -> frozenset[Path]:
    found = _READ.get(read)
    if found is None:
        if len(_READ) >= _MOST:
            _READ.clear()
        found = _READ[read] = frozenset(_shared(Path(p)) for p in read)
    return found


class CaseIndex:
    def __init__(self) -> None:
        self._files: dict[str, CaseFiles] = {}
        self._by_source: dict[Path, set[str]] = {}
        self._by_read: dict[Path, set[str]] = {}
        self._by_agent_dir: dict[Path, set[str]] = {}
        self._folders: Optional[frozenset[Path]] = None  # every folder above a source or an agent: built when asked
        self._unrecorded: set[str] = set()  # cases with no record of what their agent read (never run, say)

    def __len__(self) -> int:
        return len(self._files)

    def get(self, case_id: str) -> Optional[CaseFiles]:
        return self._files.get(case_id)

    def put(self, files: CaseFiles) -> None:
        self.remove(files.case_id)
        self._folders = None
        self._files[files.case_id] = files
        for source in files.sources:
            self._by_source.setdefault(source, set()).add(files.case_id)
        for path in files.files_read:
            self._by_read.setdefault(path, set()).add(files.case_id)
        if not files.files_read:
            self._unrecorded.add(files.case_id)
        if files.agent_dir is not None:
            self._by_agent_dir.setdefault(files.agent_dir, set()).add(files.case_id)

    def remove(self, case_id: str) -> None:
        old = self._files.pop(case_id, None)
        if old is None:
            return
        self._folders = None
        self._unrecorded.discard(case_id)
        for table, keys in ((self._by_source, old.sources), (self._by_read, old.files_read), (self._by_agent_dir, [old.agent_dir] if old.agent_dir else [])):
            for key in keys:
                ids = table.get(key)
                if ids is not None:
                    ids.discard(case_id)
                    if not ids:
                        del table[key]

    def paths(self) -> list[Path]:
        """Every file some case depends on: its sources, and what its agent read in its last run."""
        return [*self._by_source, *self._by_read]

    def is_source(self, path: Path) -> bool:
        return path in self._by_source

    def defined_by(self, path: Path) -> set[str]:
        """The cases one of whose defining files (`CaseFamily.watched`) `path` is."""
        return set(self._by_source.get(path, ()))

    def known(self, path: Path) -> bool:
        """A case's source, or a file an agent read: a path that is gone still means something."""
        return path in self._by_source or path in self._by_read

    def holds(self, folder: Path) -> bool:
        """Whether a case's source or agent lies under `folder` (a folder renamed or moved away)."""
        if self._folders is None:  # a set, so a thousand deleted paths cost a thousand lookups
            self._folders = frozenset(parent for path in (*self._by_source, *self._by_agent_dir) for parent in path.parents)
        return folder in self._folders

    def is_agent_dir(self, folder: Path) -> bool:
        return folder in self._by_agent_dir

    def read_by_agent(self, path: Path) -> bool:
        """Whether an agent read (or imported) `path` in its last run."""
        return path in self._by_read

    def affected_by(self, path: Path) -> set[str]:
        """The cases whose agent read `path` or whose agent's folder holds it."""
        return self.recorded_by(path) | self.in_agent_folder(path)

    def recorded_by(self, path: Path) -> set[str]:
        """The cases whose agent read or imported `path` in its last run."""
        return set(self._by_read.get(path, ()))

    def in_agent_folder(self, path: Path) -> set[str]:
        """The cases whose agent's folder holds `path`."""
        found: set[str] = set()
        for folder in path.parents:
            found |= self._by_agent_dir.get(folder, set())
        return found

    def agent_dirs(self) -> dict[Path, set[str]]:
        """Each agent's folder, with its cases."""
        return self._by_agent_dir

    def unrecorded(self) -> set[str]:
        """The cases with no record of what their agent read (not run yet, or run by no agent)."""
        return self._unrecorded
