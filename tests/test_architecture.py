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
