"""The Python that runs a project's agents: the project's own, so the agent imports what its project
installed, with the ADK version the project pinned.

Chosen in this order (the first that exists wins):
1. `--python PATH`, then `python = "PATH"` in the project configuration (relative to the project root);
2. the active virtual environment (`$VIRTUAL_ENV`);
3. `.venv/` or `venv/` at the project root (uv's and Poetry's in-project environments included);
4. uv's `$UV_PROJECT_ENVIRONMENT`, when the project has a `uv.lock`;
5. a Poetry project's environment: `poetry env info --executable`, else Poetry's default place for it;
6. agentdiff's own interpreter.
An interpreter is probed once (`probe`: its Python and ADK versions, read by running it), never imported.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from agentdiff.core.formats.source_file import read_text_regular

OWN_PYTHON = "agentdiff's own"
#: What the worker needs of the interpreter beyond the standard library (ADK brings it).
NEEDS = "pydantic>=2"
_PROBE = r"""
import json, sys
from importlib import metadata
def version(name):
    try:
        return metadata.version(name)
    except Exception:
        return None
print(json.dumps({"python": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable, "prefix": sys.prefix,
                  "adk": version("google-adk"), "pydantic": version("pydantic")}))
"""


@dataclass(frozen=True)
class Interpreter:
    """The interpreter that runs the agents, why it was chosen, and what it has."""

    path: str
    why: str
    python: str = ""
    adk: Optional[str] = None
    pydantic: Optional[str] = None
    error: Optional[str] = None

    def describe(self, root: Optional[Path] = None) -> str:
        """`Python 3.11.9 (.venv/bin/python, the project's .venv), ADK 1.19.0` — for headers and first lines."""
        shown = _show(self.path, root)
        if self.error:
            return f"{shown} ({self.why}): {self.error}"
        adk = f"ADK {self.adk}" if self.adk else "no ADK"
        return f"Python {self.python} ({shown}, {self.why}), {adk}"

    def short(self, root: Optional[Path] = None) -> str:
        """`ADK 1.19.0 · .venv` — for the TUI's header: the ADK version and the environment it is in."""
        adk = f"ADK {self.adk}" if self.adk else "no ADK"
        folder = Path(self.path).parent
        env = folder.parent if folder.name in ("bin", "Scripts") else folder
        return f"{adk} · {_show(str(env), root)}"


def choose_interpreter(root: Path, explicit: Optional[str] = None, configured: Optional[str] = None) -> tuple[str, str]:
    """(path, why) of the interpreter that runs the project's agents; the path may not exist when it was
    given explicitly (`probe` says so)."""
    if explicit:
        return _executable(Path(explicit).expanduser()), "--python"
    if configured:
        path = Path(configured).expanduser()
        return _executable(path if path.is_absolute() else root / path), "python in the project configuration"
    env = os.environ.get("VIRTUAL_ENV")
    if env and _python_in(Path(env)):
        return str(_python_in(Path(env))), "the active virtual environment"
    for name in (".venv", "venv"):
        found = _python_in(root / name)
        if found:
            return str(found), f"the project's {name}"
        if (root / name / "pyvenv.cfg").is_file():  # an environment whose Python is gone: say so, not skip it
            return str(root / name / "bin" / "python"), f"the project's {name}"
    uv_env = os.environ.get("UV_PROJECT_ENVIRONMENT")
    if uv_env and (root / "uv.lock").is_file():
        path = Path(uv_env).expanduser()
        found = _python_in(path if path.is_absolute() else root / path)
        if found:
            return str(found), "uv's project environment"
    found = _poetry_python(root)
    if found:
        return found, "the project's Poetry environment"
    return sys.executable, OWN_PYTHON


_probed: dict[tuple[str, tuple], Interpreter] = {}


def _stamp(path: str) -> tuple:
    """What changes when the interpreter or its packages do: the executable (not followed through a
    venv's link to its base Python) and each site-packages folder of its environment."""
    env = Path(path).parent.parent
    folders = sorted(env.glob("lib/python*/site-packages")) + sorted(env.glob("Lib/site-packages"))
    return (os.lstat(path).st_mtime_ns, os.stat(path).st_mtime_ns, *(os.stat(f).st_mtime_ns for f in folders))


def probe(path: str, why: str) -> Interpreter:
    """Run `path` once to learn its Python and ADK versions (cached while the file is unchanged)."""
    try:
        stamp = _stamp(path)
    except OSError:
        return Interpreter(path, why, error="no such interpreter")
    if (path, stamp) in _probed:
        return Interpreter(**{**_probed[path, stamp].__dict__, "why": why})
    try:
        done = subprocess.run([path, "-c", _PROBE], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        facts = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        facts = None
    if not facts:
        return Interpreter(path, why, error="could not be run as Python")
    found = Interpreter(path, why, facts["python"], facts.get("adk"), facts.get("pydantic"))
    if not found.pydantic or not found.pydantic.split(".")[0].isdigit() or int(found.pydantic.split(".")[0]) < 2:
        found = Interpreter(**{**found.__dict__, "error": f"it has no {NEEDS}, which agentdiff's worker needs "
                               f"(install google-adk or pydantic into it, or choose another with --python)"})
    _probed[path, stamp] = found
    return found


def find_interpreter(root: Path, explicit: Optional[str] = None, configured: Optional[str] = None) -> Interpreter:
    return probe(*choose_interpreter(root, explicit, configured))


def _python_in(env: Path) -> Optional[Path]:
    for candidate in (env / "bin" / "python", env / "bin" / "python3", env / "Scripts" / "python.exe"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _executable(path: Path) -> str:
    """A path to an interpreter, or to an environment folder (its `bin/python`)."""
    if path.is_dir():
        return str(_python_in(path) or path)
    return str(path)


def _poetry_python(root: Path) -> Optional[str]:
    if not (root / "poetry.lock").is_file() and "[tool.poetry" not in _text(root / "pyproject.toml"):
        return None
    poetry = shutil.which("poetry")
    if poetry:
        try:
            done = subprocess.run([poetry, "env", "info", "--executable"], cwd=root, capture_output=True, text=True,
                                  timeout=30, stdin=subprocess.DEVNULL)
            path = done.stdout.strip()
            if done.returncode == 0 and path and Path(path).is_file():
                return path
        except (OSError, subprocess.TimeoutExpired):
            pass
    return _poetry_default_env(root)


def _poetry_default_env(root: Path) -> Optional[str]:
    """Poetry's own place for a project's environment: `<cache>/virtualenvs/<name>-<hash of the
    project's path>-py<X.Y>`, where the cache is `$POETRY_CACHE_DIR` or `~/.cache/pypoetry`."""
    name = _poetry_name(root)
    if not name:
        return None
    base = os.environ.get("POETRY_VIRTUALENVS_PATH") or os.path.join(
        os.environ.get("POETRY_CACHE_DIR") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pypoetry"),
        "virtualenvs")
    sanitized = re.sub(r'[ $`!*@"\\\r\n\t]', "_", name.lower())[:42]
    digest = hashlib.sha256(os.path.normcase(os.path.realpath(root)).encode()).digest()
    prefix = f"{sanitized}-{base64.urlsafe_b64encode(digest).decode()[:8]}-py"
    folder = Path(base)
    if not folder.is_dir():
        return None
    for env in sorted(folder.glob(prefix + "*"), key=_python_version, reverse=True):  # the newest Python first
        found = _python_in(env)
        if found:
            return str(found)
    return None


def _python_version(env: Path) -> tuple[int, ...]:
    """`name-hash-py3.12` → (3, 12)."""
    tail = env.name.rpartition("-py")[2]
    return tuple(int(part) for part in tail.split(".") if part.isdigit())


def _poetry_name(root: Path) -> Optional[str]:
    try:
        data = tomllib.loads(_text(root / "pyproject.toml"))
    except tomllib.TOMLDecodeError:
        return None
    for table in (data.get("tool", {}).get("poetry", {}), data.get("project", {})):
        if isinstance(table, dict) and isinstance(table.get("name"), str):
            return table["name"]
    return None


def _text(path: Path) -> str:
    try:
        return read_text_regular(path)
    except (OSError, UnicodeDecodeError):
        return ""


def _show(path: str, root: Optional[Path]) -> str:
    if root is not None:
        try:
            return Path(path).relative_to(root).as_posix()
        except ValueError:
            pass
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if home != "/" and path.startswith(home + os.sep) else path
