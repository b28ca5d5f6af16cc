"""`run --changed-since REF`: only the cases a change since a git ref can affect, as watch mode
re-runs them, each with why it was chosen.

A case is chosen when, among the files changed since REF (committed or not, and new files): its eval
set file or case folder is one; its `test_config.json`, `eval_config.json` or checks file is one; a
file of its agent (the package folder) is one; or a file its agent read in the last kept run that
ran it is one (a prompt file, YAML, data, wherever it lives)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.formats.eval_set_files import CONFIG_FILE_NAME, FALLBACK_CONFIG_NAME
from agentdiff.core.formats.source_file import display_path, resolved
from agentdiff.core.project.agent_memo import AgentMemo
from agentdiff.core.project.dataset_cases import DatasetCaseRef
from agentdiff.core.project.discovery import CaseRef, EvalCaseRef, checks_file_for
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


def _agent_dir(ref: CaseRef, root: Path, memo: AgentMemo, agents_dirs: Sequence[Path], mapping) -> Optional[Path]:
    agent = memo.resolve(ref, agents_dirs, mapping).agent
    if agent is None:
        return None
    base = Path(agent.agents_dir) / agent.name
    return resolved(base if base.is_dir() else base.with_suffix(".py"))


def select_changed(refs: Sequence[CaseRef], root: Path, ref: str, agents_dirs: Sequence[Path] = (), mapping=None) -> list[tuple[CaseRef, str]]:
    """The cases a change since `ref` can affect, each with why; `GitRefError` when git cannot say."""
    changed = changed_files(root, ref)
    if not changed:
        return []
    memo, read = AgentMemo(root), files_read_last(root)
    chosen = []

    def shown(path: Path) -> str:
        return display_path(path, root)

    for case in refs:
        if isinstance(case, DatasetCaseRef):  # its dataset, its baseline file, its eval config and metric files
            unit = resolved(case.eval_set.source.path)
            own = [unit, *(resolved(p) for p in (case.baseline_path, case.metrics.path if case.metrics else None) if p is not None)]
            if case.metrics and case.metrics.path:
                own += [resolved(case.metrics.path.parent / m.source_file) for m in case.metrics.local if m.source_file]
            hit = next((p for p in own if p in changed), None)
        elif isinstance(case, EvalCaseRef):
            unit = resolved(case.eval_set.source.path)
            own = [unit, unit.parent / CONFIG_FILE_NAME, *[p / FALLBACK_CONFIG_NAME for p in unit.parents]]
            hit = next((p for p in own if p in changed), None)
        else:
            unit = resolved(case.case.dir)
            hit = next((p for p in sorted(changed) if unit in p.parents), None)
        checks = checks_file_for(unit, root)
        reason = None
        if hit is not None:
            reason = f"{shown(hit)} changed"
        elif checks is not None and resolved(checks) in changed:
            reason = f"its checks changed: {shown(checks)}"
        else:
            agent = _agent_dir(case, root, memo, agents_dirs, mapping)
            code = next((p for p in sorted(changed) if agent is not None and (p == agent or agent in p.parents)), None)
            if code is not None:
                reason = f"a file of its agent changed: {shown(code)}"
            else:
                files = {resolved(root / f) for f in read.get(case.id, [])}
                used = next((p for p in sorted(changed) if p in files), None)
                if used is not None:
                    reason = f"its agent read {shown(used)} in the last kept run, and it changed"
        if reason:
            chosen.append((case, reason))
    return chosen
