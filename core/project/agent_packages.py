"""Which folders are agent packages, read statically (never imported), and which ones a project names.

A folder is an agent package when it holds `agent.py`, or its `__init__.py` mentions `root_agent` or
`get_agent_async`, imports its agent (`from .agent import`, `from . import agent`), defines a native
agent's `run_turn`, or has an `app` (`app =`, `import app`) that is ADK's `App` (the file, or the
sibling module it imports `app` from, uses `google.adk` or `App(`: a FastAPI `app` is not). An
`eval/` or `tests/` folder whose `__init__.py` is empty or holds only test code is never one.

A project names its agent by its `pyproject.toml` `[project] name` (as is, and with `-` → `_`), by its
folder's name (`llm-auditor` → `llm_auditor`), or by holding exactly one agent package at its root or
under `src/`.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from agentdiff.core.worker.jobs import AgentRef
from agentdiff.core.formats.source_file import read_text_regular

MAX_INIT_BYTES = 200_000
_MARKS = re.compile(
    r"\broot_agent\b|\bget_agent_async\b|\bdef\s+run_turn\b"
    r"|\bfrom\s+\.agent\s+import\b|\bfrom\s+\.\s+import\s+(?:\(?\s*)?agent\b",
    re.MULTILINE,
)
#: `app = …` or `import app`: an agent only when that `app` is ADK's `App` (a FastAPI or Flask `app`
#: is not), which the file, or the sibling module it takes `app` from, shows.
_APP = re.compile(r"^\s*app\s*(?::[^=\n]*)?=|\bimport\s+app\b", re.MULTILINE)
_APP_FROM = re.compile(r"^\s*from\s+\.([A-Za-z_][A-Za-z0-9_]*)\s+import\s+[^\n]*\bapp\b", re.MULTILINE)
_ADK_APP = re.compile(r"\bgoogle\.adk\b|\bApp\s*\(")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _read_small(path: Path) -> str:
    if not path.is_file() or path.stat().st_size > MAX_INIT_BYTES:
        return ""
    return read_text_regular(path, "replace")


def is_agent_package(path: Path) -> bool:
    if not path.is_dir():
        return False
    if (path / "agent.py").is_file():
        return True
    try:
        text = _read_small(path / "__init__.py")
        if _MARKS.search(text):
            return True
        if not _APP.search(text):
            return False
        if _ADK_APP.search(text):
            return True
        sibling = _APP_FROM.search(text)  # `from .main import app`: the module it comes from says what it is
        if sibling is None:
            return False
        module = path / sibling.group(1)
        return bool(_ADK_APP.search(_read_small(module.with_suffix(".py")) or _read_small(module / "__init__.py")))
    except OSError:
        return False


def project_dirs(root: Path) -> list[Path]:
    """Where a project keeps its packages: its root, and `src/` when there is one."""
    return [d for d in (root, root / "src") if d.is_dir()]


def agent_packages(folder: Path) -> list[Path]:
    """The agent packages directly inside `folder`, sorted."""
    try:
        children = sorted(p for p in folder.iterdir() if _NAME.match(p.name) and not p.name.startswith("."))
    except OSError:
        return []
    return [p for p in children if is_agent_package(p)]


def _pyproject_name(root: Path) -> str:
    try:
        data = tomllib.loads(read_text_regular(root / "pyproject.toml"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return ""
    name = (data.get("project") or {}).get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else ""


def project_candidates_why(root: Path) -> tuple[list[AgentRef], list[str], list[str]]:
    """The agents the project itself names (distinct, in order), how each was looked for, and the rule
    that named each candidate (in the candidates' order)."""
    root = root.resolve()
    dirs = project_dirs(root)
    named: list[tuple[str, str]] = []
    pyname = _pyproject_name(root)
    if pyname:
        named += [(n, f"pyproject.toml's [project] name {pyname!r}") for n in dict.fromkeys((pyname, pyname.replace("-", "_")))]
    named.append((root.name.replace("-", "_"), f"the project folder's name {root.name!r}"))
    found: dict[Path, AgentRef] = {}
    why_found: dict[Path, str] = {}
    how: list[str] = []
    for name, why in named:
        if why not in how:  # `my-shop` and `my_shop` are one rule, said once
            how.append(why)
        for folder in dirs:
            if _NAME.match(name) and is_agent_package(folder / name):
                found.setdefault(folder / name, AgentRef(agents_dir=str(folder), name=name))
                why_found.setdefault(folder / name, why)
                break
    packages = [p for folder in dirs for p in agent_packages(folder)]
    if len(packages) == 1:
        found.setdefault(packages[0], AgentRef(agents_dir=str(packages[0].parent), name=packages[0].name))
        deeper = deeper_agents(root, packages[0])  # a rule that had competitors says so: never a silent guess
        why_found.setdefault(packages[0], "the only agent package at the root or under src/" + (
            f" (agents further down could run it too: {', '.join(deeper[:5])}{' …' if len(deeper) > 5 else ''}; `agent_for` chooses one)"
            if deeper else ""))
    how.append("the only agent package at the root or under src/" if len(packages) < 2
               else "the agent packages at the root or under src/ (" + ", ".join(p.name for p in packages) + ")")
    return list(found.values()), how, [why_found[path] for path in found]


#: Folders never looked through for agents further down.
_NOT_AGENTS = {".git", ".venv", "venv", "env", "node_modules", "__pycache__", "site-packages", ".agentdiff", ".adk", "tests", "test",
               "docs", "dist", "build"}


def _subfolders(folder: Path, skipped: set[str]) -> list[Path]:
    """A folder's folders, sorted, without hidden ones and those in `skipped` ([] when it cannot be listed)."""
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name not in skipped)
    except OSError:
        return []


def deeper_agents(root: Path, chosen: Path, depth: int = 3, limit: int = 400) -> list[str]:
    """Agent packages below the root's own folders (`architectures/01_reflection`), other than `chosen` and
    what is inside it: the competitors of a rule that looked only at the root; at most `limit` folders read."""
    found: list[str] = []
    level, seen = [root], 0
    for down in range(depth):
        below = []
        for folder in level:
            for child in _subfolders(folder, _NOT_AGENTS):
                seen += 1
                if seen > limit or child == chosen:
                    continue
                if down and is_agent_package(child):
                    found.append(child.relative_to(root).as_posix())
                elif not (child / "__init__.py").is_file() or down == 0:
                    below.append(child)
        level = below
    return found


def all_project_packages(root: Path) -> list[str]:
    return [p.name for folder in project_dirs(root.resolve()) for p in agent_packages(folder)]


#: How deep below a monorepo's root its projects are looked for.
SUB_PROJECT_DEPTH = 3
_NOT_PROJECTS = {"node_modules", "__pycache__", "site-packages", "venv", "env"}


def sub_projects(root: Path, limit: int = 50) -> list[Path]:
    """The projects inside a monorepo's root that hold agents: folders (at most `SUB_PROJECT_DEPTH`
    down) with their own `pyproject.toml`, `requirements.txt` or `setup.py` whose packages include an
    agent package (at their root or under `src/`); sorted, at most `limit`."""
    root = root.resolve()
    found: list[Path] = []
    level = [root]
    for _ in range(SUB_PROJECT_DEPTH):
        below: list[Path] = []
        for folder in level:
            for child in _subfolders(folder, _NOT_PROJECTS):
                if any((child / marker).is_file() for marker in ("pyproject.toml", "requirements.txt", "setup.py")) and all_project_packages(child):
                    found.append(child)
                else:
                    below.append(child)
            if len(found) >= limit:
                return found
        level = below[:500]
    return found
