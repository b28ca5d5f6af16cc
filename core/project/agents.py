"""Which agent runs a case, found the way design.md orders it, with what was tried when none is.

A conformance case: its `agent:`. An eval case, explicit configuration first, then what is inferred:
1. `[tool.agentdiff.agent_for]` (a key matches the start of the case's id or source);
2. each `--agents`/`agents` dir: the agent package in it holding the eval set, else its only one;
3. the agent the project's own `AgentEvaluator` tests name for the eval file (`agent_hints`), its
   dotted module resolved whole (`import_roots`), or the folder an `adk eval` command the project
   writes down runs it with (`eval_commands`); one that is not there is an error naming it;
4. `session_input.app_name`;
5. an agent package holding the eval set (`agent_packages.is_agent_package`: read, never imported);
6. a parent folder named like an agent;
7. the project's agent (`agent_packages.project_candidates_why`): its pyproject name, its folder's name,
   its only agent package at the root or under `src/` — when two remain, none is guessed.
When none is found, the error lists what was tried and the `agent_for` lines that would choose one; at
a monorepo's root, the projects below that hold agents, and `cd` into the eval file's.
Names given explicitly (1, 3, conformance) may be any package folder; inferred ones (4-7) must be
agent packages. Whether an agent is ADK or native is decided when the worker imports it.
"""

from __future__ import annotations

import os

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.formats.source_file import resolved
from agentdiff.core.project.agent_hints import COMMAND_AGENT, hinted_agents
from agentdiff.core.project.agent_packages import (
    agent_packages,
    all_project_packages,
    is_agent_package,
    project_candidates_why,
    project_dirs,
    sub_projects,
)
from agentdiff.core.project.dataset_cases import DatasetCaseRef
from agentdiff.core.project.family import family_of
from agentdiff.core.project.import_roots import import_roots
from agentdiff.core.project.discovery import CaseRef, EvalCaseRef
from agentdiff.core.worker.jobs import AgentRef


@dataclass(frozen=True)
class AgentResolution:
    agent: Optional[AgentRef]
    tried: tuple[str, ...] = ()
    fix: str = ""
    #: the rule that found `agent` (empty when none was found), e.g. `agent_for "eval"`
    reason: str = ""

    @property
    def error(self) -> Optional[str]:
        """What was tried, then the fix as the lines to paste (`list --agents`, `--json`)."""
        if self.agent is not None:
            return None
        return self.failure + (f"\nto choose it, {self.fix}" if self.fix else "")

    @property
    def failure(self) -> str:
        return "no agent found for this case; tried " + "; ".join(self.tried)

    @property
    def said(self) -> Optional[str]:
        """The error on one line, the fix in words (a case's error: the table, the TUI, reports)."""
        if self.agent is not None:
            return None
        return self.failure + (f"; to choose it, {_fix_in_words(self.fix)}" if self.fix else "")


def _fix_in_words(fix: str) -> str:
    """A fix of several lines (`_fix`'s TOML) said on one."""
    head, sep, rest = fix.partition(":\n[tool.agentdiff.agent_for]\n")
    if sep and head == "add to pyproject.toml":
        return f"add `{rest.strip()}` under [tool.agentdiff.agent_for] in pyproject.toml"
    return " ".join(fix.split())


def is_agent_dir(path: Path) -> bool:
    return path.is_dir() and ((path / "__init__.py").is_file() or (path / "agent.py").is_file())


@lru_cache(maxsize=4096)
def _ancestors(path: Path, root: Path) -> tuple[Path, ...]:
    path, root = path.resolve(), root.resolve()
    found = []
    for parent in [path, *path.parents]:
        found.append(parent)
        if parent == root:
            break
    return tuple(found)


#: An agent is named like a Python package; anything else (a path, `..`) never becomes a path.
_AGENT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def valid_agent_name(name: str) -> bool:
    app, _, sub = name.partition("/")
    return bool(_AGENT_NAME.match(app)) and (not sub or bool(_AGENT_NAME.match(sub)))


def _find(name: str, dirs: Sequence[Path], strict: bool = False) -> Optional[AgentRef]:
    """`name` in the first of `dirs` holding it: any package folder when the name was given explicitly,
    an agent package (`is_agent_package`) when it was inferred (`strict`)."""
    if not valid_agent_name(name):
        return None
    app, _, sub = name.partition("/")
    is_agent = is_agent_package if strict else is_agent_dir
    for agents_dir in dirs:
        if app and is_agent(agents_dir / app):
            return AgentRef(agents_dir=str(agents_dir.resolve()), name=app, sub_agent=sub or None)
    for agents_dir in dirs:  # run from inside the agent's own package: the folder itself is the agent
        if app and resolved(agents_dir).name == app and is_agent(agents_dir):
            return AgentRef(agents_dir=str(resolved(agents_dir).parent), name=app, sub_agent=sub or None)
    return None


def _find_module(name: str, dirs: Sequence[Path], root: Path, test_file: Optional[Path] = None) -> tuple[Optional[AgentRef], str]:
    """An agent module as an `AgentEvaluator` call names it, resolved whole as ADK imports it
    (`importlib.import_module`): a dotted `shop.eval_agents.billing` is the folder
    `shop/eval_agents/billing` in a folder the tests import from (`import_roots`: the root, `src/`,
    pytest's `pythonpath`, a conftest's `sys.path` changes), never its top package; `….agent` is
    the folder holding `agent.py`. A single name is also looked for in `dirs`. (the agent, or where it
    was looked for)."""
    module, _, sub = name.partition("/")
    parts = module.split(".")
    if not all(_AGENT_NAME.match(part) for part in parts) or (sub and not valid_agent_name(sub)):
        return None, "which is not a Python module's dotted name"
    if len(parts) > 1 and parts[-1] == "agent":
        parts = parts[:-1]  # `pkg.agent`: ADK takes the module itself; the package is `pkg`
    roots = import_roots(root, test_file)
    for base in roots:
        folder = base.joinpath(*parts)
        if is_agent_dir(folder):
            return AgentRef(agents_dir=str(folder.parent.resolve()), name=parts[-1], sub_agent=sub or None,
                            import_from=str(base.resolve()) if len(parts) > 1 else None), ""
    for base in roots:  # a module file of a package that defines `agent` (`pkg.test_billing_agent`)
        folder = base.joinpath(*parts[:-1])
        if len(parts) > 1 and (folder / f"{parts[-1]}.py").is_file() and is_agent_dir(folder):
            return AgentRef(agents_dir=str(folder.parent.resolve()), name=parts[-2], sub_agent=sub or None, entry=parts[-1],
                            import_from=str(base.resolve()) if len(parts) > 2 else None), ""
    if len(parts) == 1:
        found = _find(parts[0] + (f"/{sub}" if sub else ""), dirs)
        if found:
            return found, ""
    looked = ", ".join(dict.fromkeys(_show(d, root) for d in (roots if len(parts) > 1 else [*roots, *dirs])))
    return None, f"which is no package (a folder with __init__.py or agent.py) under {looked}"


def resolve_agent(
    ref: CaseRef,
    root: Path,
    agents_dirs: Sequence[Path] = (),
    mapping: Optional[dict[str, str]] = None,
) -> AgentResolution:
    family = family_of(ref)
    placed = family.placed_agent(ref)
    if placed is not None:
        return AgentResolution(placed, reason=f"{family.agent_named_in}")
    name = family.named_agent(ref)
    if name is not None:  # the agent its own file names
        where = family.agent_named_in
        if not valid_agent_name(name):
            return AgentResolution(None, (f"agent {name!r} (from {where}), which is not an agent's name (letters, digits and _, as a Python package)",))
        dirs = [*agents_dirs, *_ancestors(family.unit(ref), root)]
        found = _find(name, dirs)
        shown = ", ".join(dict.fromkeys(_show(d, root) for d in dirs))
        if found:
            return AgentResolution(found, reason=f"{where} agent")
        return AgentResolution(None, (f"agent {name!r} (from {where}) in {shown}",))
    return _resolve_eval_case(ref, root, agents_dirs, mapping or {})


def _resolve_eval_case(ref: EvalCaseRef, root: Path, agents_dirs: Sequence[Path], mapping: dict[str, str]) -> AgentResolution:
    tried: list[str] = []
    source = ref.eval_set.source.path
    ancestors = _ancestors(source.parent, root)
    dirs = [*agents_dirs, *ancestors, *project_dirs(root.resolve())]
    for pattern, name in mapping.items():
        if ref.id.startswith(pattern) or ref.source.startswith(pattern):
            found = _find_module(name, dirs, root)[0] if "." in name else _find(name, dirs)
            if found:
                return AgentResolution(found, reason=f'agent_for "{pattern}"')
            tried.append(f"the configured agent {name!r} for {pattern!r}")
    for agents_dir in agents_dirs:
        found, why = _in_agents_dir(agents_dir, ancestors)
        if found:
            return AgentResolution(found, reason=f"{why} in --agents {_show(agents_dir, root)}")
    if agents_dirs:
        tried.append("an agent package holding the eval set, or the only one, in " + ", ".join(_show(d, root) for d in agents_dirs))
    own = family_of(ref).project_agent(ref, root, tried)  # its project's own rule (an agents-cli manifest's)
    if own is not None:
        return own
    for name, test_file in hinted_agents(source, root):
        if name.startswith(COMMAND_AGENT):  # `adk eval AGENT_DIR FILE` written in a Makefile, a script, the README
            folder = Path(name.removeprefix(COMMAND_AGENT))
            if is_agent_dir(folder):
                return AgentResolution(AgentRef(agents_dir=str(folder.parent), name=folder.name), reason=f"adk eval in {_show(test_file, root)}")
            return AgentResolution(None, (*tried, f"the folder {_show(folder, root)!r} that `adk eval` in {_show(test_file, root)} names as "
                                   "its agent, which is no package (a folder with __init__.py or agent.py)"),
                                   f"fix the `adk eval` command in {_show(test_file, root)}, or choose the agent in pyproject.toml:\n"
                                   f"[tool.agentdiff.agent_for]\n\"{ref.source}\" = \"<your_agent_package>\"")
        found, where = _find_module(name, dirs, root, test_file)
        if found:
            return AgentResolution(found, reason=f"AgentEvaluator.evaluate in {_show(test_file, root)}")
        # The agent the project's own test runs it with: another one in its place would be silently wrong.
        module = name.partition("/")[0]
        return AgentResolution(None, (*tried, f"the module {module!r} that {_show(test_file, root)} names as its agent_module, {where}"),
                               f"fix the agent_module in {_show(test_file, root)}, or choose the agent in pyproject.toml:\n"
                               f"[tool.agentdiff.agent_for]\n\"{ref.source}\" = \"<your_agent_package>\"")
    session = ref.case.session_input
    if session is not None and session.app_name:
        found = _find(session.app_name, dirs, strict=True)
        if found:
            return AgentResolution(found, reason="session_input.app_name")
        tried.append(f"session_input.app_name {session.app_name!r}")
    for folder in ancestors:
        if is_agent_package(folder):
            return AgentResolution(AgentRef(agents_dir=str(folder.parent), name=folder.name), reason="package holding the eval set")
    tried.append("an agent package holding the eval set")
    for folder in ancestors:
        found = _find(folder.name, [*agents_dirs, *folder.parents], strict=True)
        if found:
            return AgentResolution(found, reason=f"parent folder {_show(folder, root)!r} named like an agent")
    tried.append("a parent folder named like an agent in " + (", ".join(_show(d, root) for d in agents_dirs) or "the folders above"))
    candidates, how, whys = project_candidates_why(root)
    if len(candidates) == 1:
        return AgentResolution(candidates[0], reason=whys[0])
    tried.extend(how)
    names = [c.name for c in candidates] or all_project_packages(root)
    if len(names) > 1:
        tried.append("more than one agent could run it, so none was guessed: " + ", ".join(names))
    if not names:  # a monorepo's root: its projects, each with its agents (and its own environment), are below
        projects = sub_projects(root)
        home = next((p for p in projects if p in source.resolve().parents), None)
        if home is not None or projects:
            shown = ", ".join(_show(p, root) for p in projects[:8]) + (f" and {len(projects) - 8} more" if len(projects) > 8 else "")
            fix = (f"run agentdiff in the project the eval file belongs to: cd {_show(home, root)} && agentdiff" if home is not None
                   else "run agentdiff in the project whose agent runs it: cd <project> && agentdiff")
            return AgentResolution(None, (*tried, f"the projects below, which hold agents: {shown}"), fix)
    return AgentResolution(None, tuple(tried), _fix(ref.source, names))


def manifest_agent(ref: DatasetCaseRef, root: Path, tried: list[str]) -> AgentResolution:
    """An agents-cli case's agent: the package its project's manifest names (`agent_directory`)."""
    manifest = ref.manifest
    if manifest is None:
        tried.append("an agents-cli project (agents-cli-manifest.yaml) around the dataset")
        return AgentResolution(None, tuple(tried), _fix(ref.source, all_project_packages(root)))
    folder = manifest.root / manifest.agent_directory
    if is_agent_dir(folder):
        return AgentResolution(AgentRef(agents_dir=str(folder.parent.resolve()), name=folder.name),
                               reason=f"agent_directory of {_show(manifest.root / manifest.file, root)}")
    tried.append(f"agent_directory {manifest.agent_directory!r} of {_show(manifest.root / manifest.file, root)}, "
                 "which is not a Python package (a folder with __init__.py or agent.py)")
    return AgentResolution(None, tuple(tried), f"set `agent_directory` in {manifest.file} to the agent's package")


def _in_agents_dir(agents_dir: Path, ancestors: Sequence[Path]) -> tuple[Optional[AgentRef], str]:
    """In an agents dir given explicitly: the agent package holding the eval set, else its only one
    (with which of the two it was)."""
    resolved = agents_dir.resolve()
    for folder in ancestors:
        if folder.parent == resolved and is_agent_package(folder):
            return AgentRef(agents_dir=str(resolved), name=folder.name), "package holding the eval set"
    packages = agent_packages(resolved)
    if len(packages) == 1:
        return AgentRef(agents_dir=str(resolved), name=packages[0].name), "the only agent package"
    return None, ""


def _fix(source: str, names: Sequence[str]) -> str:
    """The lines that would choose the agent (`agent_for` keys match the start of a case's source)."""
    value = f'"{names[0]}"' if names else '"<your_agent_package>"'
    if len(names) > 1:
        value += "  # or " + ", ".join(f'"{n}"' for n in names[1:])
    return f'add to pyproject.toml:\n[tool.agentdiff.agent_for]\n"{source}" = {value}'


def _show(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix() or "."
    except ValueError:  # above the root (agentdiff run in a folder of the project): from the root, as `..` goes
        try:
            return Path(os.path.relpath(path.resolve(), root.resolve())).as_posix()
        except ValueError:  # another drive
            return path.as_posix()
