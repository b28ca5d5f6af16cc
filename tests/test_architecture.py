"""The house is checked, not hoped for: import-linter's contracts (pyproject.toml), small modules,
and no module reaching into another's private names."""

from __future__ import annotations

import ast
import subprocess
import sys

from conftest import ROOT

PACKAGES = {"agentdiff.core": ROOT / "core", "agentdiff.tui": ROOT / "tui"}
MAX_LINES = 400


def _modules():
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            yield package + "." + ".".join(path.relative_to(folder).with_suffix("").parts), path


def test_the_import_contracts_hold():
    lint = "from importlinter.cli import lint_imports; raise SystemExit(lint_imports(no_cache=True, no_logo=True))"
    done = subprocess.run([sys.executable, "-c", lint], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_subpackage_says_its_job_and_what_it_may_import():
    for name, path in _modules():
        if path.name == "__init__.py":
            doc = ast.get_docstring(ast.parse(path.read_text())) or ""
            assert len(doc) > 60, f"{name}: its __init__ docstring should say its job and what it may import"


def test_no_module_is_over_the_size_the_house_splits_at():
    sizes = {name: len(path.read_text().splitlines()) for name, path in _modules()}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_no_module_imports_another_modules_private_names():
    found = []
    for name, path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("agentdiff"):
                private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
                if private:
                    found.append(f"{name}: from {node.module} import {', '.join(private)}")
    assert found == []


def _imports_of(name: str, path) -> set[str]:
    """The agentdiff modules `name` imports, anywhere in its file (a function's own imports too),
    relative imports resolved; a package's name for `from pkg import mod` when `mod` is no module."""
    package = name.removesuffix(".__init__") if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def test_no_import_cycle_anywhere():
    """Each package a graph of files with no cycle: no module reaches itself through the modules it
    imports (at import or in a function). Strongly connected parts of more than one module are cycles."""
    modules = dict(_modules())
    packages = {name.removesuffix(".__init__"): name for name in modules if name.endswith(".__init__")}  # `from . import x` runs it
    graph = {name: sorted({packages.get(m, m) for m in _imports_of(name, path)} & set(modules) - {name}) for name, path in modules.items()}
    index, low, stack, on_stack, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                cycles.append(sorted(part))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in graph:
        if node not in index:
            visit(node)
    assert cycles == []
