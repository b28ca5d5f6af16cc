"""core stays headless: importing all of it pulls in no Textual, Rich, TUI or heavy dependency."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import agentdiff.core


def test_core_imports_no_ui_and_no_heavy_modules():
    # worker.warm exists to load google-adk into the worker server (never into the app's process)
    modules = [m.name for m in pkgutil.walk_packages(agentdiff.core.__path__, "agentdiff.core.") if m.name != "agentdiff.core.worker.warm"]
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    loaded = json.loads(subprocess.check_output([sys.executable, "-c", code], text=True))
    forbidden = [m for m in loaded if m.split(".")[0] in {"textual", "rich", "nltk", "rouge_score", "numpy"}
                 or m.startswith(("agentdiff.tui", "google.adk", "google.genai"))]
    assert forbidden == []
    assert len(modules) > 10


def test_cli_starts_without_heavy_imports():
    code = "import sys, json; import agentdiff.tui.cli; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.check_output([sys.executable, "-c", code], text=True))
    assert not [m for m in loaded if m.split(".")[0] in {"nltk", "numpy", "textual"} or m.startswith(("google.adk", "google.genai"))]
