"""The agent a trace was made by, found in the project: its package, looked for from the trace's folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

_MARKERS = ("pyproject.toml", ".git", ".agentdiff")  # a project's root: no agent is looked for above it


def agent_folder(here: Path, agent: str, root: Path) -> Optional[Path]:
    """The agent package a traced agent is, looked for from `here` up to the project's root (the first
    folder with a `pyproject.toml`, `.git` or `.agentdiff`, or `root`): the one named as the agent (ADK's
    app name is its folder's); else the one whose code names it (`name="…"`: an agent's name is often not
    its folder's); else the only agent package on the way. None: not found."""
    from agentdiff.core.project.agents import is_agent_dir, valid_agent_name

    top = Path(os.path.abspath(root))
    packages: list[Path] = []
    for folder in (here, *here.parents):
        if agent and valid_agent_name(agent) and is_agent_dir(folder / agent):
            return folder / agent
        try:
            packages += sorted(child for child in folder.iterdir() if not child.name.startswith(".") and is_agent_dir(child))
        except OSError:
            pass
        if folder == top or any((folder / marker).exists() for marker in _MARKERS):
            break
    packages = list(dict.fromkeys(packages))
    naming = [p for p in packages if agent and _names(p, agent)]
    if len(naming) == 1:
        return naming[0]
    return packages[0] if len(packages) == 1 else None


def _names(package: Path, agent: str) -> bool:
    """Whether a package's agent code names the agent (as a string: `name="support"`, `name: support`)."""
    for file in ("agent.py", "__init__.py", "root_agent.yaml"):
        try:
            text = (package / file).read_text(encoding="utf-8", errors="replace")[:1_000_000]
        except OSError:
            continue
        if f'"{agent}"' in text or f"'{agent}'" in text or f"name: {agent}" in text:
            return True
    return False


def start(path: Path, root: Path) -> Path:
    """Where a trace's agent is looked for from: its folder, inside the project; else the project's root."""
    here, top = Path(os.path.abspath(path)).parent, Path(os.path.abspath(root))
    return here if here == top or top in here.parents else top
