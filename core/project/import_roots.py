"""The folders a project's tests import from, where ADK's `AgentEvaluator` imports its `agent_module`
(`importlib.import_module`, so from `sys.path` as pytest set it up), read statically (never run):

* the project root, and its `src/`;
* pytest's `pythonpath` setting (`[tool.pytest.ini_options]` in `pyproject.toml`, `[pytest]` in
  `pytest.ini`);
* what a `conftest.py` (at the root, in `tests/`/`test/`, or above the test file) adds with
  `sys.path.insert(i, X)`, `sys.path.append(X)` or `sys.path.extend([X, …])`, `X` known statically
  (`agent_hints.static_value`: literals, `__file__`, `Path`, `os.path.join`/`dirname`, …);
* the test file's own first folder upward without an `__init__.py` (pytest's default `prepend` import
  mode puts it on `sys.path`).
"""

from __future__ import annotations

import ast
import configparser
import os
import tomllib
from pathlib import Path
from typing import Optional

from agentdiff.core.formats.source_file import read_text_regular

MAX_BYTES = 200_000


def _conftest_paths(conftest: Path) -> list[Path]:
    from agentdiff.core.project.agent_hints import assigned_once, static_value

    try:
        if conftest.stat().st_size > MAX_BYTES:
            return []
        tree = ast.parse(read_text_regular(conftest, "replace"))
    except (OSError, SyntaxError, ValueError):
        return []
    names = assigned_once(tree)
    found: list[Path] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("insert", "append", "extend")):
            continue
        owner = node.func.value
        if not (isinstance(owner, ast.Attribute) and owner.attr == "path" and isinstance(owner.value, ast.Name) and owner.value.id == "sys"):
            continue
        args = node.args[1:] if node.func.attr == "insert" else node.args
        if node.func.attr == "extend" and args and isinstance(args[0], (ast.List, ast.Tuple)):
            args = list(args[0].elts)
        for arg in args[:8]:
            value = static_value(arg, names, str(conftest))
            if value:
                path = Path(value) if os.path.isabs(value) else conftest.parent / value
                found.append(Path(os.path.normpath(path)))
    return found


def _pytest_pythonpath(root: Path) -> list[Path]:
    values: list[str] = []
    try:
        data = tomllib.loads(read_text_regular(root / "pyproject.toml"))
        setting = ((data.get("tool") or {}).get("pytest") or {}).get("ini_options", {}).get("pythonpath")
        values += [setting] if isinstance(setting, str) else [v for v in setting or () if isinstance(v, str)]
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError):
        pass
    ini = configparser.ConfigParser()
    try:
        ini.read_string(read_text_regular(root / "pytest.ini"))
        values += ini.get("pytest", "pythonpath", fallback="").split()
    except (OSError, configparser.Error, UnicodeDecodeError):
        pass
    return [Path(os.path.normpath(root / v.split()[0])) for v in values if v.strip()]


def _prepend_dir(test_file: Path, root: Path) -> Optional[Path]:
    """The folder pytest's `prepend` import mode puts on `sys.path` for a test file: the first one
    upward that is not a package."""
    folder = test_file.parent
    while (folder / "__init__.py").is_file() and folder != root and root in folder.parents:
        folder = folder.parent
    return folder


def import_roots(root: Path, test_file: Optional[Path] = None) -> list[Path]:
    """Where the tests import from, in the order searched (distinct, existing folders)."""
    root = root.resolve()
    roots = [root, root / "src", *_pytest_pythonpath(root)]
    conftests = [root / "conftest.py", root / "tests" / "conftest.py", root / "test" / "conftest.py"]
    if test_file is not None:
        test_file = test_file.resolve()
        conftests += [folder / "conftest.py" for folder in test_file.parents if folder == root or root in folder.parents]
    for conftest in dict.fromkeys(conftests):
        if conftest.is_file():
            roots += _conftest_paths(conftest)
    if test_file is not None:
        prepend = _prepend_dir(test_file, root)
        if prepend is not None:
            roots.append(prepend)
    return [path for path in dict.fromkeys(roots) if path.is_dir()]
