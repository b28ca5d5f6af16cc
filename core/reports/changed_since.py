"""`run --changed-since REF`: only the cases a change since a git ref can affect, as watch mode
re-runs them, each with why it was chosen. Nothing here needs an earlier run on this machine (a CI job
starts from a fresh clone).

A case is chosen when, among the files changed since REF (committed or not, and new files): its eval
set file or case folder is one; its `test_config.json`, `eval_config.json` or checks file is one; a
file of its agent (the package folder) is one; its agent's code imports one, wherever it lives in the
project (the static import graph, `import_graph`); its agent's code names one (a prompt, YAML or data
file whose name is a string in the code); or its agent read one in the last kept run that ran it (what
a run builds at run time: a path from the environment, `f"{name}.md"`).

A changed file that chooses no case is **unattributed**, unless it is plainly outside the agents' world
(documentation, CI and editor settings, tests that no agent imports): the caller says so, and with
`strict` every case is chosen when any file is unattributed.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.formats.source_file import display_path, resolved
from agentdiff.core.project.agent_memo import AgentMemo
from agentdiff.core.project.discovery import CaseRef, checks_file_for
from agentdiff.core.project.family import family_of
from agentdiff.core.project.import_graph import ImportGraph, outside_project
from agentdiff.core.project.named_eval_files import is_case_file
from agentdiff.core.reports.kept_runs import kept_runs


class GitRefError(Exception):
    """The ref cannot be compared with (not a git tree, an unknown ref): git's own words."""


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitRefError(f"git could not run: {exc}") from None
    if done.returncode != 0:
        raise GitRefError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"git {' '.join(args)} failed")
    return done.stdout


def resolve_ref(root: Path, ref: str) -> str:
    """The commit `ref` names, checked first: a ref is data (a flag's value, a config key), and one that
    starts with `-` would be read by git as an option (`--output=FILE` writes a file): refused."""
    if not ref.strip():
        raise GitRefError("an empty ref names no commit")
    if ref.startswith("-") or "\0" in ref:
        raise GitRefError(f"{ref!r} is not a git ref (a ref never starts with '-')")
    try:
        commit = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}").strip()
    except GitRefError as exc:
        raise GitRefError(f"unknown revision {ref!r}" if str(exc).startswith("git rev-parse") else str(exc)) from None
    if not commit:
        raise GitRefError(f"unknown revision {ref!r}")
    return commit


def changed_files(root: Path, ref: str) -> set[Path]:
    """Files that differ from `ref` in the working tree, and files git does not track yet."""
    ref = resolve_ref(root, ref)
    top = Path(_git(root, "rev-parse", "--show-toplevel").strip())
    # NUL-separated: names as they are (git quotes non-ASCII names otherwise)
    diffed = _git(root, "diff", "--name-only", "-z", "--no-renames", ref, "--").split("\0")  # relative to the top
    untracked = _git(root, "ls-files", "-z", "--others", "--exclude-standard").split("\0")  # relative to root
    return {resolved(top / name) for name in diffed if name} | {resolved(root / name) for name in untracked if name}


def files_read_last(root: Path) -> dict[str, list[str]]:
    """Each case's files read by its agent in the newest kept run that ran it (paths as kept)."""
    read: dict[str, list[str]] = {}
    for kept_run in kept_runs(root):
        run = kept_run.meta
        for case_id, files in (run.get("files_read") or {}).items():
            read.setdefault(case_id, files)
    return read


def _agent_dirs(refs: Sequence[CaseRef], memo: AgentMemo, agents_dirs: Sequence[Path], mapping) -> dict[str, Optional[Path]]:
    """Each case's agent folder (or module file), resolved once per agent, not once per case."""
    folders: dict[tuple[str, str], Path] = {}
    found: dict[str, Optional[Path]] = {}
    for ref in refs:
        agent = memo.resolve(ref, agents_dirs, mapping).agent
        if agent is None:
            found[ref.id] = None
            continue
        key = (agent.agents_dir, agent.name)
        if key not in folders:
            base = Path(agent.agents_dir) / agent.name
            folders[key] = resolved(base if base.is_dir() else base.with_suffix(".py"))
        found[ref.id] = folders[key]
    return found


#: Folders and files that are plainly not what an agent runs on: a change there needs no word.
_NOT_AGENTS_DIRS = frozenset({"docs", "doc", ".github", ".gitlab", ".circleci", ".ci", ".vscode", ".idea", ".devcontainer"})
_NOT_AGENTS_NAMES = frozenset({".gitignore", ".gitattributes", ".editorconfig", ".pre-commit-config.yaml", ".gitlab-ci.yml",
                               ".dockerignore", "LICENSE", "LICENSE.txt", "LICENSE.md", "NOTICE", "CODEOWNERS", "Jenkinsfile"})
_DOC_SUFFIXES = (".md", ".rst", ".adoc")


def plainly_not_agents(path: Path, root: Path) -> bool:
    """Documentation, CI and editor settings, and tests (a test module no agent imports): a change
    there, chosen by no case, is not worth a warning."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        parts = path.parts
    if any(part in _NOT_AGENTS_DIRS for part in parts[:-1]) or outside_project(path):
        return True
    name = path.name
    if name in _NOT_AGENTS_NAMES or name.upper().startswith(("README", "CHANGELOG", "CHANGES", "CONTRIBUTING", "HISTORY")):
        return True
    if name.endswith(_DOC_SUFFIXES) and len(parts) == 1:  # a root-level document
        return True
    tests = any(part in ("tests", "test") for part in parts[:-1])
    return name.endswith(".py") and (tests or name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py")


@dataclass
class ChangeImpact:
    """What a change since a ref means: the cases chosen, each with why, and the changed files that chose
    none (and are not plainly outside the agents' world)."""

    changed: set[Path] = field(default_factory=set)
    chosen: list[tuple[CaseRef, str]] = field(default_factory=list)
    unattributed: list[Path] = field(default_factory=list)


def changed_impact(refs: Sequence[CaseRef], root: Path, ref: str, agents_dirs: Sequence[Path] = (), mapping=None) -> ChangeImpact:
    """The cases a change since `ref` can affect, each with why; `GitRefError` when git cannot say."""
    changed = changed_files(root, ref)
    impact = ChangeImpact(changed)
    if not changed:
        return impact
    root = resolved(root)
    memo, read = AgentMemo(root), files_read_last(root)
    graph = ImportGraph(root, [resolved(Path(d)) for d in agents_dirs])
    ordered = sorted(changed)
    agents = _agent_dirs(refs, memo, agents_dirs, mapping)
    folders = {p: frozenset(p.parents) for p in ordered}
    agent_dirs = {a for a in agents.values() if a is not None}
    in_an_agent = {p for p in ordered if p in agent_dirs or folders[p] & agent_dirs}
    own = _OwnFiles(root)
    by_agent: dict[Path, tuple[Optional[str], Optional[Path]]] = {}
    used: set[Path] = set()

    def agent_reason(agent: Path) -> tuple[Optional[str], Optional[Path]]:
        if agent not in by_agent:
            by_agent[agent] = (None, None)
            code = next((p for p in ordered if p == agent or agent in folders[p]), None)
            if code is not None:
                by_agent[agent] = (f"a file of its agent changed: {display_path(code, root)}", code)
            else:
                for path in ordered:
                    if path in in_an_agent and path.suffix != ".py":
                        continue  # another agent's own data file: that agent's
                    how = graph.depends(agent, path)
                    if how is not None:
                        verb = "imports" if how == "static" else "names"
                        by_agent[agent] = (f"its agent's code {verb} {display_path(path, root)}, and it changed", path)
                        break
        return by_agent[agent]

    for case in refs:
        reason, hit = own.change(case, changed)
        agent = agents[case.id]
        if reason is None and agent is not None:
            reason, hit = agent_reason(agent)
        if reason is None and case.id in read:
            files = {resolved(root / f) for f in read[case.id]}
            hit = next((p for p in ordered if p in files), None)
            if hit is not None:
                reason = f"its agent read {display_path(hit, root)} in the last kept run, and it changed"
        if reason:
            impact.chosen.append((case, reason))
            used.add(hit)  # type: ignore[arg-type]
    left = [p for p in ordered if p not in used and not plainly_not_agents(p, root)]
    if left:  # (said even when every case was chosen for another file: it is still a file no case explains)
        explained = _explained(left, refs, agent_dirs, graph, read, own, root)
        impact.unattributed = [p for p in left if p not in explained]
    return impact


class _OwnFiles:
    """A case's own files (its eval file or folder, its configs and metric files, its checks), resolved
    once per file: the cases of one eval set share them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._resolved: dict[Path, Path] = {}
        self._checks: dict[Path, Optional[Path]] = {}

    def _r(self, path: Path) -> Path:
        found = self._resolved.get(path)
        if found is None:
            found = self._resolved[path] = resolved(path)
        return found

    def files(self, case: CaseRef) -> tuple[Path, list[Path]]:
        """Its unit (file or folder) and the files whose change is its own."""
        family = family_of(case)
        unit = self._r(family.unit(case))
        own = family.owned(case, unit, self._r)
        if unit not in self._checks:
            checks = checks_file_for(unit, self.root)
            self._checks[unit] = resolved(checks) if checks is not None else None
        return unit, own + ([self._checks[unit]] if self._checks[unit] is not None else [])

    def change(self, case: CaseRef, changed: set[Path]) -> tuple[Optional[str], Optional[Path]]:
        unit, own = self.files(case)
        if not own:  # a conformance case: any file in its folder
            hit = next((p for p in sorted(changed) if unit in p.parents), None)
            checks = self._checks[unit]
        else:
            checks = self._checks[unit]
            hit = next((p for p in own if p in changed and p != checks), None)
        if hit is not None:
            return f"{display_path(hit, self.root)} changed", hit
        if checks is not None and checks in changed:
            return f"its checks changed: {display_path(checks, self.root)}", checks
        return None, None


def _explained(paths: list[Path], refs, agent_dirs, graph: ImportGraph, read, own: _OwnFiles, root: Path) -> set[Path]:
    """Which of `paths` bear on some case (when the cases they bear on were all chosen for another file)."""
    left = set(paths)
    for agent in agent_dirs:
        left -= {p for p in left if p == agent or agent in p.parents or graph.depends(agent, p) is not None}
    units = {}
    for case in refs:
        if not left:
            break
        unit, files = own.files(case)
        units[unit] = files
        left -= set(files)
        left -= {resolved(root / f) for f in read.get(case.id, [])}
    left -= {p for p in left for unit, files in units.items() if not files and unit in p.parents}
    return set(paths) - left


def select_changed(refs: Sequence[CaseRef], root: Path, ref: str, agents_dirs: Sequence[Path] = (), mapping=None) -> list[tuple[CaseRef, str]]:
    """The cases a change since `ref` can affect, each with why; `GitRefError` when git cannot say."""
    return changed_impact(refs, root, ref, agents_dirs, mapping).chosen


def depends_on(refs: Sequence[CaseRef], root: Path, agents_dirs: Sequence[Path] = (), mapping=None) -> dict[str, dict[str, list[str]]]:
    """Each case's agent's files, grouped by how each was found: "imported" or "opened" by its agent in
    the last kept run that ran it, "static" (its agent's code, or a project module the code imports) or
    "named" (a data file the code names) by the import graph; what `list --json` shows as `depends_on`.
    Cases of one agent with the same record share one value."""
    root = resolved(root)
    memo, read = AgentMemo(root), files_read_last(root)
    graph = ImportGraph(root, [resolved(Path(d)) for d in agents_dirs])
    static: dict[Path, dict[str, str]] = {}
    agent_of = _agent_dirs(refs, memo, agents_dirs, mapping)
    shared: dict[tuple, dict[str, list[str]]] = {}
    found: dict[str, dict[str, list[str]]] = {}
    for case in refs:
        agent = agent_of[case.id]
        if agent is not None and agent not in static:
            reach = graph.reach(agent)
            static[agent] = {display_path(p, root): "static" for p in sorted(reach.files)}
            data = [p for p in _data_files(agent) if reach.names(p, root)]  # its own prompts and data its code names
            static[agent] |= {display_path(p, root): "named" for p in data}
        record = read.get(case.id, [])
        key = (agent, tuple(record))
        if key not in shared:
            files = dict(static.get(agent, {}))
            for path in record:  # a record says more than the graph: it ran
                files[path] = "imported" if path.endswith(".py") else "opened"
            grouped: dict[str, list[str]] = {}
            for path, how in sorted(files.items()):
                grouped.setdefault(how, []).append(path)
            shared[key] = grouped
        found[case.id] = shared[key]
    return found


def _data_files(agent: Path, most: int = 200) -> list[Path]:
    """The files of an agent's folder that are not code (nor caches, nor eval files), at most `most`."""
    if not agent.is_dir():
        return []
    found: list[Path] = []
    for folder, dirs, files in os.walk(agent):
        dirs[:] = sorted(d for d in dirs if not outside_project(Path(d)) and not d.startswith(".") and d != "conformance")
        found += [Path(folder) / f for f in sorted(files) if not f.endswith((".py", ".pyc", ".json")) and not is_case_file(Path(f))]
        if len(found) >= most:
            break
    return found[:most]
