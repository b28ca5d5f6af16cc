"""agentdiff installed once, as a tool (pipx, from a copy of the sources), on a project whose own
environment pins an older ADK: the tool's environment has no ADK at all, the project's has ADK 1.19
and nothing of agentdiff, and every case runs on the project's Python, scored as ADK 1.19 scores it
itself."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REF_AGENTS, REFERENCE_CONFIGS, ROOT, TESTS, reference_eval_set

pytestmark = pytest.mark.adk
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
CONFIG = "any_order"  # string match types and ignore_args: scored differently by ADK 1.19 and 2.13


def sh(*cmd, cwd=None, expect=0, timeout=600) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, env=ENV, cwd=cwd)
    assert done.returncode == expect, f"{cmd} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def tool(tmp_path_factory) -> Path:
    """`agentdiff` as `pipx install` makes it: its own environment, no ADK."""
    tmp = tmp_path_factory.mktemp("tool")
    shutil.copytree(ROOT, tmp / "src", ignore=shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "__pycache__"))
    sh(sys.executable, "-m", "venv", tmp / "pipx-env")
    sh(tmp / "pipx-env" / "bin" / "pip", "install", "-q", "--disable-pip-version-check", "pipx")
    env = {**ENV, "PIPX_HOME": str(tmp / "pipx"), "PIPX_BIN_DIR": str(tmp / "bin")}
    done = subprocess.run([str(tmp / "pipx-env" / "bin" / "pipx"), "install", str(tmp / "src")], capture_output=True, text=True,
                          timeout=900, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    tool_python = tmp / "pipx" / "venvs" / "agentdiff" / "bin" / "python"
    said = sh(tool_python, "-c", "import google.adk", expect=1).stderr.strip()  # (google.protobuf is there: OTLP traces are read)
    assert said.endswith(("No module named 'google'", "No module named 'google.adk'")), said
    return tmp / "bin" / "agentdiff"


@pytest.fixture(scope="module")
def project(tmp_path_factory, oldest_adk_python) -> Path:
    """A project laid out as ADK's docs lay one out, its `.venv` the oldest ADK's environment."""
    root = tmp_path_factory.mktemp("project") / "scripted-agent"
    shutil.copytree(REF_AGENTS / "ref_agent", root / "ref_agent", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "pyproject.toml").write_text('[project]\nname = "scripted-agent"\ndependencies = ["google-adk==1.19.0"]\n')
    (root / "eval").mkdir()
    (root / "eval" / "ref.evalset.json").write_text(json.dumps(reference_eval_set()))
    (root / "eval" / "test_config.json").write_text(json.dumps({"criteria": REFERENCE_CONFIGS[CONFIG]}))
    (root / ".venv").symlink_to(oldest_adk_python.parent.parent, target_is_directory=True)
    return root


def test_the_tool_runs_a_projects_agents_on_its_own_python_and_adk(tool, project, tmp_path):
    done = sh(tool, "run", "--json", cwd=project, expect=1)  # some reference cases fail on purpose
    first = done.stderr.splitlines()[0]
    assert first == "starting workers: Python %d.%d.%d (.venv/bin/python, the project's .venv), ADK 1.19.0…" % sys.version_info[:3]
    ours = {case["eval_id"]: case for case in json.loads(done.stdout)["cases"]}

    (tmp_path / "set.json").write_text(json.dumps(reference_eval_set()))
    (tmp_path / "configs.json").write_text(json.dumps({CONFIG: REFERENCE_CONFIGS[CONFIG]}))
    sh(project / ".venv" / "bin" / "python", TESTS / "adk_version_reference.py", project, "ref_agent", tmp_path / "set.json",
       tmp_path / "configs.json", tmp_path / "adk.json")
    adk = json.loads((tmp_path / "adk.json").read_text())["configs"][CONFIG]
    assert sorted(ours) == sorted(adk)
    for eval_id, theirs in adk.items():
        case = ours[eval_id]
        assert case["scored_as"] == "ADK 1.19.0"
        assert [(m["name"], m["score"], m["status"]) for m in case["metrics"]] == [
            (m["name"], m["score"], m["status"]) for m in theirs["metrics"]], eval_id
        assert case["status"] == theirs["status"], eval_id


def test_doctor_from_the_tool_finds_the_projects_python_and_adk(tool, project):
    out = sh(tool, "doctor", "--color", "never", cwd=project).stdout
    assert "agents run on Python %d.%d.%d (.venv/bin/python, the project's .venv), ADK 1.19.0" % sys.version_info[:3] in out
    assert "✓ the project asks for google-adk==1.19.0 (met by 1.19.0)" in out
    assert "✓ ref_agent imports  (for eval/ref.evalset.json; models ScriptedModel:scripted-model)" in out
    assert out.endswith("14 cases; no problems\n")


def test_uv_tool_install_gives_the_same_command(tmp_path):
    """`uv tool install` from a copy of the sources: the command, its stylesheet and its completion."""
    shutil.copytree(ROOT, tmp_path / "src", ignore=shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "__pycache__"))
    sh(sys.executable, "-m", "venv", tmp_path / "uv-env")
    sh(tmp_path / "uv-env" / "bin" / "pip", "install", "-q", "--disable-pip-version-check", "uv")
    env = {**ENV, "UV_TOOL_DIR": str(tmp_path / "tools"), "UV_TOOL_BIN_DIR": str(tmp_path / "bin"), "UV_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([str(tmp_path / "uv-env" / "bin" / "uv"), "tool", "install", "--python", sys.executable, str(tmp_path / "src")],
                          capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    agentdiff = tmp_path / "bin" / "agentdiff"
    assert sh(agentdiff, "--version").stdout.startswith("agentdiff ")
    assert "-F _python_argcomplete agentdiff" in sh(agentdiff, "completion", "bash").stdout
    shutil.copytree(ROOT / "sample_agents" / "home_automation", tmp_path / "proj" / "home_automation", ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    assert "5 cases, 0 load errors" in sh(agentdiff, "list", cwd=tmp_path / "proj").stdout
    tool_python = next((tmp_path / "tools" / "agentdiff" / "bin").glob("python*"))
    assert sh(tool_python, "-c", "import agentdiff.tui, pathlib; print(next(pathlib.Path(agentdiff.tui.__file__).parent.glob('*.tcss')))").stdout.strip().endswith("app.tcss")
