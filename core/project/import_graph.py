"""The project's static import graph: which of the project's files an agent's code can reach, read
from the source with `ast` (never imported), so that `run --changed-since` and watch mode know what a
change can affect before, or without, a run.

An agent's code is every `.py` file of its package (or its module). An import `a.b` in a file is looked
for under each of these folders, and every hit counts (a wider net is the safe side: a case re-run for
nothing costs a run, a case not re-run is a stale verdict):

* the folder the agent is imported from (`agents_dir`, and `import_from` for a dotted module);
* the project's import roots (`import_roots`: the root, its `src/`, pytest's `pythonpath`, what a
  `conftest.py` puts on `sys.path`);
* the folders the file itself puts on `sys.path` (`sys.path.insert/append` of a path `static_value`
  works out: `Path(__file__).resolve().parents[2]`, `os.path.join(os.path.dirname(__file__), "..")`);
* every folder above the file, up to the project root (a `sys.path.insert` of one built some other way).

A relative import is resolved from the file's package. Imports inside functions, `try` blocks and
`if TYPE_CHECKING:` count, and so does `importlib.import_module("a.b")` with a literal name. Importing
`a.b.c` runs `a/__init__.py` and `a/b/__init__.py` too, so they are reached. Only the project's files
count: nothing in a virtual environment, `site-packages` or the standard library.

A file that is not Python (a prompt, YAML, JSON) cannot be imported. It is **named** by an agent when a
file the agent reaches holds a string literal with its file name (`"prompt.md"`, `"config.yaml"`) or
with the name of the folder that holds it (`"prompts"`): the ways code builds the path of a file it
opens. What is built at run time (`f"{name}.md"`, a path from the environment, a URL) only a run's
record sees.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence

from agentdiff.core.formats.source_file import read_text_regular
from agentdiff.core.worker.jobs import AgentRef

#: Folders that hold no project code: environments, caches, tools' own folders.
OUTSIDE_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "site-packages", "dist-packages",
                          "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", ".agentdiff", ".adk"})
MAX_BYTES = 2_000_000  # a bigger .py file is generated, not written: its imports are not read
MAX_FILES = 20_000  # files one agent may reach before the walk stops (it says so: `Reach.complete`)
MAX_STRING = 300  # longer string constants are text, not paths

_PATH_CALLS = {"insert", "append", "extend"}


@dataclass(frozen=True)
class _Parsed:
    imports: tuple[tuple[str, int, tuple[str, ...]], ...]  # (module, level, names imported from it)
    path_dirs: tuple[str, ...]  # folders the file puts on sys.path (absolute)
    strings: frozenset[str]  # its short string constants


_EMPTY = _Parsed((), (), frozenset())
_CACHE: dict[str, tuple[tuple[int, int], _Parsed]] = {}
_MOST = 100_000


def _stamp(path: str) -> Optional[tuple[int, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def parse(path: Path) -> _Parsed:
    """What one file imports, adds to `sys.path` and names; read once per version of the file."""
    key = str(path)
    stamp = _stamp(key)
    if stamp is None:
        return _EMPTY
    cached = _CACHE.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    parsed = _parse(path) if stamp[1] <= MAX_BYTES else _EMPTY
    if len(_CACHE) >= _MOST:
        _CACHE.clear()
    _CACHE[key] = (stamp, parsed)
    return parsed


def _parse(path: Path) -> _Parsed:
    from agentdiff.core.project.agent_hints import assigned_once, static_value

    try:
        tree = ast.parse(read_text_regular(path, "replace"), str(path))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return _EMPTY  # a file that does not parse: its own folder still ties it to its agent
    imports: list[tuple[str, int, tuple[str, ...]]] = []
    strings: set[str] = set()
    calls: list[ast.Call] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports += [(alias.name, 0, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            imports.append((node.module or "", node.level, tuple(a.name for a in node.names if a.name != "*")))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and 0 < len(node.value) <= MAX_STRING:
            strings.add(node.value)
        elif isinstance(node, ast.Call):
            calls.append(node)
    names: Optional[dict[str, ast.AST]] = None
    path_dirs: list[str] = []
    for call in calls:
        func = call.func
        attr = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if attr in ("import_module", "__import__") and call.args and isinstance(call.args[0], ast.Constant) \
                and isinstance(call.args[0].value, str):
            imports.append((call.args[0].value.lstrip("."), 0, ()))
            continue
        if attr not in _PATH_CALLS or not isinstance(func, ast.Attribute):
            continue
        owner = func.value
        if not (isinstance(owner, ast.Attribute) and owner.attr == "path" and isinstance(owner.value, ast.Name) and owner.value.id == "sys"):
            continue
        args = call.args[1:] if attr == "insert" else call.args
        if attr == "extend" and args and isinstance(args[0], (ast.List, ast.Tuple)):
            args = list(args[0].elts)
        if names is None:
            names = assigned_once(tree)
        for arg in args[:8]:
            value = static_value(arg, names, str(path))
            if value:
                path_dirs.append(os.path.normpath(value if os.path.isabs(value) else os.path.join(path.parent, value)))
    return _Parsed(tuple(imports), tuple(dict.fromkeys(path_dirs)), frozenset(strings))


def outside_project(path: Path) -> bool:
    return any(part in OUTSIDE_DIRS for part in path.parts)


def project_files(paths: Iterable[str], root: Path, agent: AgentRef) -> list[str]:
    """Of the files a run recorded (absolute; the worker sends every file that is not the environment's),
    the project's: under the root or the agent's folders, and in none of the `OUTSIDE_DIRS`."""
    roots = (str(root), agent.agents_dir, agent.import_from or "")
    prefixes = tuple({os.path.abspath(r).rstrip(os.sep) + os.sep for r in roots if r})
    kept = (os.path.normpath(p) for p in paths)
    return sorted({p for p in kept if p.startswith(prefixes) and not (OUTSIDE_DIRS & set(p.split(os.sep)))})


@dataclass
class Reach:
    """The project files an agent's code reaches: each with the file that imports it."""

    files: dict[Path, Optional[Path]]  # reached file → the file importing it (None: the agent's own)
    complete: bool = True  # False: the walk stopped at MAX_FILES
    _strings: Optional[frozenset[str]] = None

    def imported(self) -> frozenset[str]:
        """Every name a dotted import of the agent's code holds (`a.b` → `a`, `b`)."""
        return frozenset(part for f in self.files for module, _, names in parse(f).imports for part in (*module.split("."), *names) if part)

    def strings(self) -> frozenset[str]:
        if self._strings is None:
            self._strings = frozenset(s for f in self.files for s in parse(f).strings)
        return self._strings

    def names(self, path: Path, root: Path) -> bool:
        """Whether the agent's code names the data file `path` (its file name, or the name of its folder
        below `root`), as code that opens it builds its path."""
        strings = self.strings()
        name = path.name
        if any(name in s for s in strings):
            return True
        folder = path.parent.name if path.parent != root else ""
        return len(folder) >= 3 and (folder in strings or folder + "/" in strings or "/" + folder in strings)


class ImportGraph:
    """The static import graph of one project, walked per agent as asked and kept until the files change
    (each file's parse is keyed by its modification time and size)."""

    def __init__(self, root: Path, extra_roots: Sequence[Path] = ()) -> None:
        from agentdiff.core.project.import_roots import import_roots

        self.root = Path(os.path.abspath(root))
        self.boundaries = tuple(dict.fromkeys([self.root, *(Path(os.path.abspath(p)) for p in extra_roots)]))
        try:
            self._import_roots = [Path(os.path.abspath(p)) for p in import_roots(self.root)]
        except OSError:
            self._import_roots = [self.root]
        self._reaches: dict[tuple[Path, Optional[Path]], Reach] = {}
        self._found: dict[tuple[Path, str], Optional[list[Path]]] = {}  # (folder, dotted name) → its files

    def depends(self, agent_dir: Path, path: Path, import_from: Optional[Path] = None) -> Optional[str]:
        """How the agent in `agent_dir` depends on `path` (`depends_on`), its reach walked once per graph."""
        key = (Path(os.path.abspath(agent_dir)), import_from)
        reach = self._reaches.get(key)
        if reach is None:
            reach = self._reaches[key] = self.reach(*key)
        return depends_on(reach, Path(os.path.abspath(path)), self.root)

    def inside(self, path: Path) -> bool:
        return any(b == path or b in path.parents for b in self.boundaries) and not outside_project(path)

    def reach(self, agent_dir: Path, import_from: Optional[Path] = None) -> Reach:
        """Every project file the agent in `agent_dir` (a package folder, or a module's `.py` file) can
        import, its own files included."""
        agent_dir = Path(os.path.abspath(agent_dir))
        try:
            entries = self._own_files(agent_dir)
        except OSError:  # its folder cannot be read: its code reaches nothing that can be told
            entries = []
        base = [agent_dir.parent, *([Path(os.path.abspath(import_from))] if import_from else []), *self._import_roots]
        top = self._boundary(agent_dir) or agent_dir.parent
        files: dict[Path, Optional[Path]] = {f: None for f in entries}
        queue = list(entries)
        complete = True
        while queue:
            current = queue.pop()
            parsed = parse(current)
            roots = [*base, *(Path(d) for d in parsed.path_dirs), *self._ancestors(current, top)]
            for module, level, names in parsed.imports:
                for found in self._resolve(module, level, names, current, roots):
                    if found not in files and self.inside(found):
                        files[found] = current
                        queue.append(found)
                        if len(files) >= MAX_FILES:
                            return Reach(files, complete=False)
        return Reach(files, complete)

    def _boundary(self, path: Path) -> Optional[Path]:
        return next((b for b in self.boundaries if b in path.parents), None)

    @staticmethod
    def _ancestors(path: Path, top: Path) -> list[Path]:
        found = []
        for folder in path.parents:
            found.append(folder)
            if folder == top or top not in folder.parents:
                break
        return found

    @staticmethod
    def _own_files(agent_dir: Path) -> list[Path]:
        if agent_dir.suffix == ".py" or not agent_dir.is_dir():
            module = agent_dir if agent_dir.suffix == ".py" else agent_dir.with_suffix(".py")
            return [module] if module.is_file() else []
        found: list[Path] = []
        for folder, dirs, files in os.walk(agent_dir):
            dirs[:] = sorted(d for d in dirs if d not in OUTSIDE_DIRS and not d.startswith("."))
            found += [Path(folder) / f for f in sorted(files) if f.endswith(".py")]
            if len(found) >= MAX_FILES:
                break
        return found

    def _resolve(self, module: str, level: int, names: tuple[str, ...], current: Path, roots: Iterable[Path]) -> list[Path]:
        if level:
            base = current.parent
            for _ in range(level - 1):
                base = base.parent
            bases: Iterable[Path] = [base]
        else:
            if not module:
                return []
            bases = dict.fromkeys(roots)
        parts = [p for p in module.split(".") if p]
        found: list[Path] = []
        for base in bases:
            hit = self._module_files(base, parts)
            if hit is None:
                continue
            found += hit
            package = base.joinpath(*parts)
            for name in names:  # `from pkg import mod`: a submodule, when there is one
                sub = self._module_files(package, [name])
                if sub:
                    found += sub
        return found

    def _module_files(self, base: Path, parts: list[str]) -> Optional[list[Path]]:
        key = (base, ".".join(parts))
        if key not in self._found:
            try:
                self._found[key] = _module_files(base, parts)
            except OSError:  # a folder that cannot be read (permissions): nothing found there
                self._found[key] = None
        return self._found[key]


def _module_files(base: Path, parts: list[str]) -> Optional[list[Path]]:
    """The files importing `parts` (dotted) from `base` runs: each package's `__init__.py` on the way and
    the module itself; None when `base` holds no such module. With no parts (`from . import x`), the
    package's `__init__.py`."""
    if not parts:
        init = base / "__init__.py"
        return [init] if init.is_file() else [] if base.is_dir() else None
    files: list[Path] = []
    folder = base
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        package = folder / part
        if package.is_dir():
            init = package / "__init__.py"
            if init.is_file():
                files.append(init)
            folder = package
            continue
        module = folder / (part + ".py")
        if module.is_file():
            files.append(module)
            return files  # `a.b` where `a.py` is a module: the rest are attributes
        return None if index == 0 else (files or None) if not last else (files or None)
    return files


def depends_on(reach: Reach, path: Path, root: Path) -> Optional[str]:
    """How the agent whose reach this is depends on `path`: "static" (its code imports it, or it is its
    code), "named" (a data file its code names), or None."""
    if path in reach.files:
        return "static"
    if path.suffix == ".py":  # a module deleted (or not yet there) that the agent's code imports by name
        stem = path.parent.name if path.name == "__init__.py" else path.stem
        return "static" if not path.exists() and stem in reach.imported() else None
    return "named" if reach.names(path, root) else None
