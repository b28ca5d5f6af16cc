"""Which agent runs a case, found the way design.md orders it, with what was tried when none is.

In order: a conformance case's `agent:`; an eval set inside an agent's package; the eval case's
`session_input.app_name`; the configured mapping (`[tool.agentdiff.agents]`); a parent folder named
like an agent. An agent is a folder with `__init__.py` or `agent.py` inside an agents dir; whether it
is an ADK or a native agent is decided when the worker imports it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.project.discovery import CaseRef, ConformanceCaseRef
from agentdiff.core.worker.jobs import AgentRef


@dataclass(frozen=True)
class AgentResolution:
    agent: Optional[AgentRef]
    tried: tuple[str, ...] = ()

    @property
    def error(self) -> Optional[str]:
        if self.agent is not None:
            return None
        return "no agent found for this case; tried " + "; ".join(self.tried)


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


def _find(name: str, dirs: Sequence[Path]) -> Optional[AgentRef]:
    if not valid_agent_name(name):
        return None
    app, _, sub = name.partition("/")
    for agents_dir in dirs:
        if app and is_agent_dir(agents_dir / app):
            return AgentRef(agents_dir=str(agents_dir.resolve()), name=app, sub_agent=sub or None)
    return None


def resolve_agent(
    ref: CaseRef,
    root: Path,
    agents_dirs: Sequence[Path] = (),
    mapping: Optional[dict[str, str]] = None,
) -> AgentResolution:
    tried: list[str] = []
    if isinstance(ref, ConformanceCaseRef):
        name = ref.case.spec.agent
        if not valid_agent_name(name):
            return AgentResolution(None, (f"agent {name!r} (from spec.yaml), which is not an agent's name (letters, digits and _, as a Python package)",))
        dirs = [*agents_dirs, *_ancestors(ref.case.dir, root)]
        found = _find(name, dirs)
        shown = ", ".join(dict.fromkeys(_show(d, root) for d in dirs))
        return AgentResolution(found, () if found else (f"agent {name!r} (from spec.yaml) in {shown}",))
    source = ref.eval_set.source.path
    ancestors = _ancestors(source.parent, root)
    for folder in ancestors:
        if is_agent_dir(folder):
            return AgentResolution(AgentRef(agents_dir=str(folder.parent), name=folder.name))
    tried.append("a package folder holding the eval set")
    dirs = [*agents_dirs, *ancestors]
    session = ref.case.session_input
    if session is not None and session.app_name:
        found = _find(session.app_name, dirs)
        if found:
            return AgentResolution(found)
        tried.append(f"session_input.app_name {session.app_name!r}")
    for pattern, name in (mapping or {}).items():
        if ref.id.startswith(pattern) or ref.source.startswith(pattern):
            found = _find(name, dirs)
            if found:
                return AgentResolution(found)
            tried.append(f"the configured agent {name!r} for {pattern!r}")
    for folder in ancestors:
        found = _find(folder.name, [*agents_dirs, *folder.parents])
        if found:
            return AgentResolution(found)
    tried.append("a parent folder named like an agent in " + (", ".join(_show(d, root) for d in agents_dirs) or "the folders above"))
    return AgentResolution(None, tuple(tried))


def _show(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix() or "."
    except ValueError:
        return path.as_posix()
