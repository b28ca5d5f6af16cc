"""The project's own Python runs its agents: which interpreter is chosen, what a probe learns of it,
and a real run on a project environment that has the project's dependencies but not agentdiff."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from agentdiff.core.project import interpreter
from agentdiff.core.project.interpreter import choose_interpreter, probe
from test_cli import run
from workbench_support import case_id, echo_project, eval_case, write_set

FAKE_PYTHON = "#!/bin/sh\necho '{\"python\": \"3.12.1\", \"executable\": \"x\", \"prefix\": \"p\", \"adk\": \"1.19.0\", \"pydantic\": \"2.9.2\"}'\n"


def fake_env(folder: Path, script: str = FAKE_PYTHON) -> Path:
    python = folder / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(script)
    python.chmod(0o755)
    return python


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "POETRY_VIRTUALENVS_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("POETRY_CACHE_DIR", str(tmp_path / "poetry-cache"))
    monkeypatch.setattr(interpreter.shutil, "which", lambda name: None)  # no poetry command here
    return tmp_path


def test_the_order_an_interpreter_is_chosen_in(clean_env, monkeypatch):
    root = clean_env / "proj"
    root.mkdir()
    assert choose_interpreter(root) == (sys.executable, "agentdiff's own")
    venv = fake_env(root / "venv")
    assert choose_interpreter(root) == (str(venv), "the project's venv")
    dot_venv = fake_env(root / ".venv")
    assert choose_interpreter(root) == (str(dot_venv), "the project's .venv")
    active = fake_env(clean_env / "active")
    monkeypatch.setenv("VIRTUAL_ENV", str(clean_env / "active"))
    assert choose_interpreter(root) == (str(active), "the active virtual environment")
    assert choose_interpreter(root, configured="venv") == (str(venv), "python in the project configuration")
    assert choose_interpreter(root, explicit=str(dot_venv), configured="venv") == (str(dot_venv), "--python")
    monkeypatch.delenv("VIRTUAL_ENV")
    dot_venv.unlink()  # an environment whose Python is gone is reported, not skipped for another
    (root / ".venv" / "pyvenv.cfg").write_text("home = /gone\n")
    assert choose_interpreter(root) == (str(dot_venv), "the project's .venv")
    assert probe(str(dot_venv), "the project's .venv").error == "no such interpreter"


def test_uv_and_poetry_environments_outside_the_project(clean_env, monkeypatch):
    root = clean_env / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[tool.poetry]\nname = "My-Agent"\n')
    digest = base64.urlsafe_b64encode(hashlib.sha256(os.path.normcase(os.path.realpath(root)).encode()).digest()).decode()[:8]
    poetry = fake_env(clean_env / "poetry-cache" / "virtualenvs" / f"my-agent-{digest}-py3.11")
    fake_env(clean_env / "poetry-cache" / "virtualenvs" / "my-agent-otherhash-py3.11")  # another checkout's
    assert choose_interpreter(root) == (str(poetry), "the project's Poetry environment")
    (root / "uv.lock").write_text("")
    uv = fake_env(clean_env / "uv-env")
    monkeypatch.setenv("UV_PROJECT_ENVIRONMENT", str(clean_env / "uv-env"))
    assert choose_interpreter(root) == (str(uv), "uv's project environment")


def test_a_probe_reads_the_versions_and_says_what_is_wrong(clean_env):
    found = probe(str(fake_env(clean_env / "env")), "--python")
    assert (found.python, found.adk, found.pydantic, found.error) == ("3.12.1", "1.19.0", "2.9.2", None)
    assert found.describe() == f"Python 3.12.1 ({clean_env}/env/bin/python, --python), ADK 1.19.0"
    assert found.short(clean_env) == "ADK 1.19.0 · env"
    assert probe(str(clean_env / "nope" / "python"), "--python").error == "no such interpreter"
    broken = fake_env(clean_env / "broken", "#!/bin/sh\nexit 3\n")
    assert probe(str(broken), "--python").error == "could not be run as Python"
    old = fake_env(clean_env / "old", FAKE_PYTHON.replace("2.9.2", "1.10.0"))
    assert "it has no pydantic>=2" in probe(str(old), "--python").error


def test_a_run_names_the_interpreter_it_could_not_use(clean_env, monkeypatch):
    root = clean_env / "proj"
    echo_project(root, {"echo": ["hi"]})
    monkeypatch.chdir(root)
    code, out, err = run("run", "--python", str(clean_env / "missing"))
    assert (code, out) == (2, "")
    assert err == f"error: the agents' Python, {clean_env}/missing (--python): no such interpreter\n"


PROJECT_AGENT = """\
import sys

import projdep


async def run_turn(ctx):
    return projdep.VALUE + " on " + ("the project's .venv" if sys.prefix.endswith("/proj/.venv") else sys.prefix)
"""


def project_env(folder: Path) -> Path:
    """A real environment of the project's: its own package `projdep`, pydantic (as ADK brings it)
    through a path file, and no agentdiff."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    (packages,) = (folder / "lib").glob("python3*/site-packages")
    pydantic_dir = Path(__import__("pydantic").__file__).parent.parent
    (packages / "from_agentdiff_env.pth").write_text(f"{pydantic_dir}\n")
    (packages / "projdep.py").write_text('VALUE = "projdep"\n')
    return folder / "bin" / "python"


def test_agents_run_on_the_projects_environment_without_agentdiff_in_it(clean_env, monkeypatch):
    root = clean_env / "proj"
    echo_project(root, {"echo": ["hi"]})
    (root / "agents" / "echo" / "agent.py").write_text(PROJECT_AGENT)
    write_set(root, "echo", {"eval_set_id": "echo", "eval_cases": [eval_case("case_0", "hi", "projdep on the project's .venv")]})
    python = project_env(root / ".venv")
    assert subprocess.run([str(python), "-c", "import agentdiff"], capture_output=True).returncode != 0
    monkeypatch.chdir(root)
    code, out, err = run("run", "--json")
    first = err.splitlines()[0]
    assert first.startswith("starting workers: Python ") and "(.venv/bin/python, the project's .venv)" in first, err
    report = json.loads(out)
    (case,) = report["cases"]
    assert (case["id"], case["status"], code) == (case_id("echo", "case_0"), "passed", 0), case
    from importlib.metadata import version

    assert report["agents_python"] == {"python": "%d.%d.%d" % sys.version_info[:3], "interpreter": str(root / ".venv" / "bin" / "python"),
                                       "chosen_by": "the project's .venv", "adk": version("google-adk")}  # through the path file
