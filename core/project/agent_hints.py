"""The agent a project's own tests name: `AgentEvaluator.evaluate("pkg", "eval/x.test.json")`.

`*.py` files under `tests/`, `test/`, `eval/` and `evals/` are read with `ast` (never imported;
at most `MAX_FILES` files, each at most `MAX_BYTES`). A call `AgentEvaluator.evaluate(...)` or
`AgentEvaluator.evaluate_eval_set(...)` whose agent module (1st positional or `agent_module=`) is a
string literal, with an eval file or folder as a string literal (2nd positional or
`eval_dataset_file_path_or_dir=`), maps that path to the module's top package. Paths are taken
relative to the project root, as pytest runs them from there; else relative to the test file.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Optional

SCANNED = ("tests", "test", "eval", "evals")
MAX_FILES = 300
MAX_BYTES = 200_000
_CALLS = {"evaluate", "evaluate_eval_set"}
_PATH_KEYWORDS = {"eval_dataset_file_path_or_dir", "eval_dataset", "eval_set_file_path"}
_parsed: dict[str, tuple[tuple[int, int], tuple[tuple[str, str], ...]]] = {}  # path → (mtime, size), calls


def _string(node: Optional[ast.AST]) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_evaluator(func: ast.AST) -> bool:
    if not isinstance(func, ast.Attribute) or func.attr not in _CALLS:
        return False
    owner = func.value
    return (isinstance(owner, ast.Name) and owner.id == "AgentEvaluator") or (
        isinstance(owner, ast.Attribute) and owner.attr == "AgentEvaluator")


def calls_in(text: str) -> tuple[tuple[str, str], ...]:
    """(agent module, eval path) of each AgentEvaluator call with both as string literals."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return ()
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not _is_evaluator(node.func):
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        module = _string(node.args[0] if node.args else keywords.get("agent_module"))
        path = _string(node.args[1] if len(node.args) > 1 else next((keywords[k] for k in _PATH_KEYWORDS if k in keywords), None))
        if module and path:
            found.append((module, path))
    return tuple(found)


def _files(root: Path):
    count = 0
    for name in SCANNED:
        top = root / name
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
    for file in _files(root):
        try:
            stat = file.stat()
            if stat.st_size > MAX_BYTES:
                continue
            seen = (stat.st_mtime_ns, stat.st_size)
            if _parsed.get(str(file), (None,))[0] != seen:  # read again only when it changed
                _parsed[str(file)] = (seen, calls_in(file.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
        for module, path in _parsed[str(file)][1]:
            target = root / path
            if not target.exists() and (file.parent / path).exists():
                target = file.parent / path
            hints.append((target.resolve(), module.split(".")[0], file))
    return tuple(hints)


def hinted_eval_paths(root: Path) -> list[Path]:
    """The eval files and folders the project's tests name that exist (resolved, distinct, in file order)."""
    return list(dict.fromkeys(path for path, _, _ in _hints(root) if path.exists()))


def hinted_agents(source: Path, root: Path) -> list[tuple[str, Path]]:
    """(package, test file naming it) the project's tests name for the eval file `source`, most specific
    path first; each package once."""
    source = source.resolve()
    matches = [(len(path.parts), name, file) for path, name, file in _hints(root) if source == path or path in source.parents]
    out: dict[str, Path] = {}
    for _, name, file in sorted(matches, key=lambda m: -m[0]):
        out.setdefault(name, file)
    return list(out.items())
