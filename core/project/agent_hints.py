"""The agent a project's own tests name: `AgentEvaluator.evaluate("pkg", "eval/x.test.json")`.

`*.py` files under `tests/`, `test/`, `eval/` and `evals/` (at the root, or in a package at the
root), and the root's own `test_*.py`, `*_test.py` and `eval*.py`, are read with `ast` (never imported;
at most `MAX_FILES` files, each at most `MAX_BYTES`). A call `AgentEvaluator.evaluate(...)` or
`AgentEvaluator.evaluate_eval_set(...)` names an agent module (1st positional or `agent_module=`) and an
eval file or folder (2nd positional or `eval_dataset_file_path_or_dir=`; `evaluate_eval_set`'s
`eval_set=`, an `EvalSet` read from a file: `EvalSet.model_validate_json(Path(p).read_text())`,
`json.load(open(p))`, or the project's own loader given a `.json` path: the file `p`), and maybe a sub-agent
(`agent_name=`, 4th positional of `evaluate`); the call maps that path to the module as written
(with the sub-agent: `module/sub_agent`), which `agents` finds as a folder from the project root (a
dotted module) or as a package. Each argument is worked out statically (`static_value`): string literals, names assigned
once in the file, `__file__`, `Path(...)`, `/`, `.parent`, `.parents[N]`, `os.path.join`/`dirname`/`abspath`, `str()`
and f-strings of those; anything else (a loop variable, a call into the project) is skipped. Relative
paths are taken from the project root, as pytest runs them from there; else from the test file.
"""

from __future__ import annotations

import ast
import fnmatch
import os
from collections import Counter
from pathlib import Path
from typing import Optional

from agentdiff.core.formats.source_file import read_text_regular
from agentdiff.core.project.eval_commands import eval_commands, is_command_file

#: An agent named by an `adk eval` command: its folder, not a module (`hinted_agents`).
COMMAND_AGENT = "dir:"

SCANNED = ("tests", "test", "eval", "evals")
MAX_FILES = 300
MAX_BYTES = 200_000
_CALLS = {"evaluate", "evaluate_eval_set"}
_PATH_KEYWORDS = {"eval_dataset_file_path_or_dir", "eval_dataset", "eval_set_file_path", "eval_set"}
#: What turns a file into an `EvalSet` in a test (`EvalSet.model_validate_json(Path(p).read_text())`,
#: `json.load(open(p))`): the file is the one named inside.
_PARSERS = {"model_validate_json", "model_validate", "parse_file", "parse_raw", "parse_obj", "load", "loads",
            "load_eval_set_from_file", "_load_eval_set_from_file"}
_READERS = {"read_text", "read_bytes", "read"}
_parsed: dict[str, tuple[tuple[int, int], tuple[tuple[str, str], ...]]] = {}  # path → (mtime, size), calls


_PATH_CALLS = {"Path", "PurePath", "PosixPath", "str", "fspath", "abspath", "realpath", "normpath", "join", "joinpath"}
_SAME_PATH_METHODS = {"resolve", "absolute", "expanduser", "as_posix"}


def assigned_once(tree: ast.AST) -> dict[str, ast.AST]:
    """Names bound exactly once in the file, by a plain `x = ...`, to what (a name also bound by a loop,
    a `with`, a parameter or a second assignment has no single value)."""
    bound = Counter(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    bound.update(n.arg for n in ast.walk(tree) if isinstance(n, ast.arg))
    values: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            values[node.target.id] = node.value
    return {name: value for name, value in values.items() if bound[name] == 1}


def static_value(node: Optional[ast.AST], names: dict[str, ast.AST], file: str, depth: int = 0) -> Optional[str]:
    """The string (a path: `/`-joined; absolute when built on `__file__`) `node` always evaluates to,
    or None when it cannot be known without running the file."""
    if node is None or depth > 20:
        return None
    again = lambda n: static_value(n, names, file, depth + 1)  # noqa: E731
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        return file if node.id == "__file__" else again(names.get(node.id))
    if isinstance(node, ast.JoinedStr):
        if any(isinstance(v, ast.FormattedValue) and (v.conversion != -1 or v.format_spec) for v in node.values):
            return None  # `{x!r}`, `{x:>5}`: not the value itself
        parts = [again(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values]
        return None if None in parts else "".join(parts)  # type: ignore[arg-type]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = again(node.left), again(node.right)
        return None if left is None or right is None else os.path.join(left, right)
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = again(node.value)
        return None if inner is None else os.path.dirname(inner)
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents"
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int) and 0 <= node.slice.value < 64):
        inner = again(node.value.value)  # `Path(__file__).parents[2]`: three folders up
        for _ in range(node.slice.value + 1):
            inner = None if inner is None else os.path.dirname(inner)
        return inner
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if isinstance(func, ast.Attribute) and name in _SAME_PATH_METHODS | {"joinpath"} and not _is_module(func.value):
        base = again(func.value)
        rest = [again(a) for a in node.args]
        return None if base is None or None in rest else os.path.join(base, *rest)  # type: ignore[arg-type]
    args = [again(a) for a in node.args]
    if not args or None in args:
        return None
    if name == "dirname" and len(args) == 1:
        return os.path.dirname(args[0])  # type: ignore[arg-type]
    if name in _PATH_CALLS:
        return os.path.join(*args)  # type: ignore[arg-type]
    return None


def _loaded_from(node: Optional[ast.AST], names: dict[str, ast.AST], file: str, depth: int = 0) -> Optional[str]:
    """The file an eval set argument is read from: a path as `static_value` knows it, or the one inside the
    calls that parse and read it (`EvalSet.model_validate_json(Path(p).read_text())`)."""
    if node is None or depth > 10:
        return None
    if isinstance(node, ast.Name) and node.id in names:
        return _loaded_from(names[node.id], names, file, depth + 1)
    if isinstance(node, ast.Call):  # keywords (`encoding=`, `strict=`) do not change which file
        name = _call_name(node)
        if name in _PARSERS and node.args:
            return _loaded_from(node.args[0], names, file, depth + 1)
        if name in _READERS and isinstance(node.func, ast.Attribute) and not node.args:
            return _loaded_from(node.func.value, names, file, depth + 1)
        if name == "open" and node.args:
            return static_value(node.args[0], names, file)
        if node.args and name not in _PATH_CALLS:  # the project's own loader: `load_eval_set("tests/unit/x.test.json")`
            inner = _loaded_from(node.args[0], names, file, depth + 1)
            return inner if inner and inner.endswith(".json") else None
    return static_value(node, names, file)


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _is_module(node: ast.AST) -> bool:
    """`os.path` / `pathlib` / `os`: the owner of a function, not a path value."""
    return (isinstance(node, ast.Name) and node.id in ("os", "pathlib", "posixpath")) or (
        isinstance(node, ast.Attribute) and node.attr == "path")


def _is_evaluator(func: ast.AST) -> bool:
    if not isinstance(func, ast.Attribute) or func.attr not in _CALLS:
        return False
    owner = func.value
    return (isinstance(owner, ast.Name) and owner.id == "AgentEvaluator") or (
        isinstance(owner, ast.Attribute) and owner.attr == "AgentEvaluator")


def calls_in(text: str, file: str = "__file__") -> tuple[tuple[str, str], ...]:
    """(agent module, eval path) of each AgentEvaluator call whose two arguments are known statically;
    `file` is the test file's own path, for paths built on `__file__`."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return ()
    names = assigned_once(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not _is_evaluator(node.func):
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        module = static_value(node.args[0] if node.args else keywords.get("agent_module"), names, file)
        path = _loaded_from(node.args[1] if len(node.args) > 1 else next((keywords[k] for k in _PATH_KEYWORDS if k in keywords), None), names, file)
        sub = keywords.get("agent_name", node.args[3] if node.func.attr == "evaluate" and len(node.args) > 3 else None)
        sub_name = static_value(sub, names, file) if sub is not None else None
        if module and path:
            found.append((f"{module}/{sub_name}" if sub_name else module, path))
    return tuple(found)


_ROOT_SCRIPTS = ("test_*.py", "*_test.py", "eval*.py")


def _tops(root: Path) -> list[Path]:
    """The folders read: each of `SCANNED` at the root and inside each package (or agent folder) at the root."""
    tops = [root / name for name in SCANNED]
    try:
        packages = sorted(p for p in root.iterdir() if p.is_dir() and p.name not in SCANNED
                          and ((p / "__init__.py").is_file() or (p / "agent.py").is_file()))
    except OSError:
        packages = []
    return tops + [package / name for package in packages for name in SCANNED]


def may_name_agents(path: Path, root: Path) -> bool:
    """Whether `path` is a file this module reads, a test or a file of `adk eval` commands (so editing
    it may move an agent)."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    if is_command_file(path, root):
        return True
    if path.suffix != ".py" or not parts:
        return False
    if len(parts) == 1:
        return any(fnmatch.fnmatch(parts[0], pattern) for pattern in _ROOT_SCRIPTS)
    return parts[0] in SCANNED or (len(parts) > 2 and parts[1] in SCANNED)


def _files(root: Path):
    count = 0
    for pattern in _ROOT_SCRIPTS:
        for file in sorted(root.glob(pattern)):
            if file.is_file():
                count += 1
                yield file
    for top in _tops(root):
        if not top.is_dir():
            continue
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "node_modules"))
            for file in sorted(files):
                if file.endswith(".py"):
                    count += 1
                    if count > MAX_FILES:
                        return
                    yield Path(folder) / file


def _hints(root: Path) -> tuple[tuple[Path, str, Path], ...]:
    """(eval file or folder, resolved; top package; the test file naming them) for every call found."""
    root = root.resolve()
    hints: list[tuple[Path, str, Path]] = []
    read: list[Path] = []
    for file in _files(root):
        read.append(file)
        try:
            stat = file.stat()
            if stat.st_size > MAX_BYTES:
                continue
            seen = (stat.st_mtime_ns, stat.st_size)
            if _parsed.get(str(file), (None,))[0] != seen:  # read again only when it changed
                _parsed[str(file)] = (seen, calls_in(read_text_regular(file, "replace"), str(file)))
        except OSError:
            continue
        for module, path in _parsed[str(file)][1]:
            target = root / path
            if not target.exists() and (file.parent / path).exists():
                target = file.parent / path
            hints.append((target.resolve(), module, file))
    for command in eval_commands(root, read):  # `adk eval AGENT_DIR FILE…` in a Makefile, a script, the README
        hints.extend((path, COMMAND_AGENT + str(command.agent), command.file) for path in command.evals)
    return tuple(hints)


def hinted_eval_paths(root: Path) -> list[Path]:
    """The eval files and folders the project's tests name that exist (resolved, distinct, in file order)."""
    return list(dict.fromkeys(path for path, _, _ in _hints(root) if path.exists()))


def hinted_agents(source: Path, root: Path) -> list[tuple[str, Path]]:
    """(agent module, test file naming it) the project's tests name for the eval file `source`, most
    specific path first; each once. A module is dotted as written (`tests.fixture.my_agent`), with
    `/sub_agent` when the call names one; an `adk eval` command's agent is `COMMAND_AGENT` + its folder."""
    source = source.resolve()
    matches = [(len(path.parts), name, file) for path, name, file in _hints(root) if source == path or path in source.parents]
    out: dict[str, Path] = {}
    for _, name, file in sorted(matches, key=lambda m: -m[0]):
        out.setdefault(name, file)
    return list(out.items())
