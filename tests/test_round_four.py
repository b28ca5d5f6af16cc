"""Layouts and messages public ADK and agents-cli projects met (round four), rebuilt offline: each case runs
or ends with one line that says what is missing and how to fix it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from workbench_support import echo_project


def agentdiff(root: Path, *args: str, env: "dict | None" = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentdiff.tui.cli", *args], cwd=root, capture_output=True, text=True, timeout=180,
                          env={**(env if env is not None else os.environ), "AGENTDIFF_NO_COLOR": "1"})


def one_turn(eval_id: str, said: str, answer: str) -> dict:
    """An eval case of one turn: the user says `said`, the agent is expected to answer `answer`."""
    return {"eval_id": eval_id, "conversation": [{"user_content": {"role": "user", "parts": [{"text": said}]},
                                                  "final_response": {"role": "model", "parts": [{"text": answer}]}}]}


def test_a_judge_without_credentials_says_which_to_set(tmp_path):
    echo_project(tmp_path, {"echo": ["hello"]})
    judge = {"judge_model": "gemini-2.5-flash", "num_samples": 1}
    (tmp_path / "agents" / "echo" / "test_config.json").write_text(json.dumps({"criteria": {"final_response_match_v2": {
        "threshold": 0.5, "judge_model_options": judge}}}))
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI",
                                                            "GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_GEMINI_BASE_URL")}
    done = agentdiff(tmp_path, "run", "--no-judge-cache", env=env)
    assert "final_response_match_v2: the judge could not call its model: no Gemini credentials are set (GOOGLE_API_KEY" in done.stdout, done.stdout


def test_no_agent_found_is_one_line_with_its_fix_and_list_agents_gives_the_lines_to_paste(tmp_path):
    (tmp_path / "loose").mkdir()
    case = one_turn("a", "hi", "hi")
    (tmp_path / "loose" / "x.evalset.json").write_text(json.dumps({"eval_set_id": "x", "eval_cases": [case]}))
    done = agentdiff(tmp_path, "run")
    said = [line for line in done.stdout.splitlines() if "no agent found" in line]
    assert len(said) == 1 and said[0].strip().endswith(
        'to choose it, add `"loose/x.evalset.json" = "<your_agent_package>"` under [tool.agentdiff.agent_for] in pyproject.toml')
    assert "\\n" not in done.stdout
    listed = agentdiff(tmp_path, "list", "--agents").stdout
    assert '    [tool.agentdiff.agent_for]\n    "loose/x.evalset.json" = "<your_agent_package>"' in listed


def test_a_note_about_eval_sets_not_read_is_one_line(tmp_path):
    (tmp_path / "evals").mkdir()
    case = one_turn("a", "hi", "hi")
    (tmp_path / "evals" / "smoke.json").write_text(json.dumps({"eval_set_id": "x", "eval_cases": [case]}))
    done = agentdiff(tmp_path, "list")
    notes = [line for line in done.stderr.splitlines() if line.startswith("note:")]
    assert notes and all("\\n" not in line for line in notes), done.stderr
    assert any('add `paths = ["evals/smoke.json"]` under [tool.agentdiff] in pyproject.toml' in line for line in notes)


def test_a_legacy_row_file_with_a_criterion_agentevaluator_refuses_is_a_located_error_and_none_of_its_cases_runs(tmp_path):
    echo_project(tmp_path, {"echo": []})
    folder = tmp_path / "agents" / "echo"
    (folder / "echo.evalset.json").unlink()
    (folder / "old.test.json").write_text(json.dumps([{"query": "hi", "expected_tool_use": [], "reference": "hi"}]))
    (folder / "test_config.json").write_text('{\n  "criteria": {\n    "response_match_score": 0.8,\n    "final_response_match_v2": 0.5\n  }\n}\n')
    done = agentdiff(tmp_path, "run")
    assert done.returncode == 2
    assert "error: agents/echo/test_config.json:4: Invalid criteria key: final_response_match_v2: AgentEvaluator refuses it" in done.stderr
    assert "its eval config did not load" in done.stdout  # its case is an error, not a run with that metric not evaluated


def test_a_tool_pydantic_cannot_declare_is_named_with_its_parameter_file_and_line_in_one_line(tmp_path):
    from fake_gemini import FakeGemini, Reply

    (tmp_path / "bad_tool").mkdir()
    (tmp_path / "bad_tool" / "__init__.py").write_text("from . import agent\n")
    (tmp_path / "bad_tool" / "agent.py").write_text(
        "from typing import Dict\n\nfrom google.adk.agents import Agent\n\n\n"
        "def get_capital(country: str, context: Dict[str, any] = None) -> dict:\n    \"\"\"The capital.\"\"\"\n    return {}\n\n\n"
        "root_agent = Agent(name='bad_tool', model='gemini-2.5-flash', instruction='Answer.', tools=[get_capital])\n")
    case = one_turn("a", "capital?", "Paris")
    (tmp_path / "bad_tool" / "b.test.json").write_text(json.dumps({"eval_set_id": "b", "eval_cases": [case]}))
    server = FakeGemini(lambda call: Reply(text="Paris")).start()
    try:
        done = agentdiff(tmp_path, "run", "--json", env={**os.environ, **server.env})
    finally:
        server.close()
    result = json.loads(done.stdout)["cases"][0]
    assert result["status"] == "error" and result["error_location"] == "bad_tool/agent.py:6"
    assert result["error"] == ("turn 1: PydanticSchemaGenerationError: tool get_capital: its parameter `context: Dict[str, any]` cannot be "
                               "declared to the model (no schema for <built-in function any>): give it types pydantic knows (typing.Any, not any)")


def _echo_with_unnamed_set(root: Path, where: str) -> None:
    """An echo agent at agents/echo whose eval set is at `where`, a name no rule finds by itself."""
    echo_project(root, {"echo": ["hello"]})
    (root / "agents" / "echo" / "echo.evalset.json").rename(root / "set.tmp")
    (root / where).parent.mkdir(parents=True, exist_ok=True)
    (root / "set.tmp").rename(root / where)


def _listed(root: Path) -> dict:
    done = agentdiff(root, "list", "--agents", "--json")
    return {case["id"]: case for case in json.loads(done.stdout)["cases"]}


def test_adk_eval_in_a_script_in_a_subfolder_with_shell_variables_is_read(tmp_path):
    _echo_with_unnamed_set(tmp_path, "evaluation/golden/echo/evalset.json")
    (tmp_path / "evaluation" / "run_evals.sh").write_text(
        '#!/bin/sh\nset -e\nEVAL_DIR=evaluation\nAGENT="${AGENT:-agents/echo}"\nadk eval "$AGENT" "$EVAL_DIR/golden/echo/evalset.json" "$1"\n')
    listed = _listed(tmp_path)
    assert list(listed) == ["evaluation/golden/echo/evalset.json::case_0"], listed
    assert listed["evaluation/golden/echo/evalset.json::case_0"]["agent"] == "echo"


def test_a_makefiles_adk_variable_and_its_config_file_path_are_honoured(tmp_path):
    _echo_with_unnamed_set(tmp_path, "tests/evals/basic.json")
    (tmp_path / "tests" / "evals" / "test_config.json").unlink(missing_ok=True)
    (tmp_path / "tests" / "evals" / "strict.json").write_text(json.dumps({"criteria": {"response_match_score": 0.95}}))
    (tmp_path / "Makefile").write_text("ADK := .venv/bin/adk\n\neval:\n\t$(ADK) eval agents/echo tests/evals/basic.json "
                                       "--config_file_path tests/evals/strict.json\n")
    done = agentdiff(tmp_path, "run", "--json")
    case = json.loads(done.stdout)["cases"][0]
    assert case["id"] == "tests/evals/basic.json::case_0" and case["status"] == "passed", done.stderr
    assert [(m["name"], m["threshold"]) for m in case["metrics"] if m["threshold"] is not None] == [("response_match_score", 0.95)]


def test_a_glob_in_a_makefiles_adk_eval_names_the_files_the_shell_expands_it_to(tmp_path):
    _echo_with_unnamed_set(tmp_path, "tests/eval/basic.json")
    (tmp_path / "tests" / "strict.json").write_text(json.dumps({"criteria": {"response_match_score": 0.6}}))
    (tmp_path / "Makefile").write_text("eval:\n\tuv run adk eval agents/echo tests/eval/* --config_file_path tests/strict.json\n")
    listed = agentdiff(tmp_path, "list", "--json")
    case = json.loads(listed.stdout)["cases"][0]
    assert case["id"] == "tests/eval/basic.json::case_0" and case["config"] == "tests/strict.json", case


def test_agent_starter_packs_escaped_default_and_a_path_to_adk_are_read(tmp_path):
    _echo_with_unnamed_set(tmp_path, "tests/eval/evalsets/basic.json")
    (tmp_path / "Makefile").write_text("eval:\n\tuv run adk eval agents/echo $${EVALSET:-tests/eval/evalsets/basic.json}\n")
    assert list(_listed(tmp_path)) == ["tests/eval/evalsets/basic.json::case_0"]
    (tmp_path / "Makefile").write_text("eval:\n\t.venv/bin/adk eval agents/echo tests/eval/evalsets/basic.json\n")
    assert list(_listed(tmp_path)) == ["tests/eval/evalsets/basic.json::case_0"]


def test_an_agent_picked_as_the_only_one_at_the_root_names_the_agents_further_down(tmp_path):
    from workbench_support import ECHO_AGENT

    for folder in ("agent_examples", "architectures/01_reflection", "architectures/02_tool_use"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "agent.py").write_text(ECHO_AGENT)
    (tmp_path / "tests" / "behavior").mkdir(parents=True)
    case = one_turn("hello", "hello", "hello")
    (tmp_path / "tests" / "behavior" / "hello.test.json").write_text(json.dumps({"eval_set_id": "hello", "eval_cases": [case]}))
    (tmp_path / "tests" / "run_all.sh").write_text('adk eval "$1" tests/behavior/hello.test.json\n')
    listed = _listed(tmp_path)["tests/behavior/hello.test.json::hello"]
    assert listed["agent"] == "agent_examples"
    assert listed["agent_reason"].endswith("(agents further down could run it too: architectures/01_reflection, architectures/02_tool_use; "
                                           "`agent_for` chooses one)")


def test_a_namespace_packages_missing_part_names_the_distribution_the_project_declares(tmp_path, monkeypatch):
    from agentdiff.core.worker.hints import how_to_fix
    from workbench_support import ECHO_AGENT

    echo_project(tmp_path, {"echo": ["hello"]})
    agent = tmp_path / "agents" / "echo" / "agent.py"
    agent.write_text("from google.cloud import tracequux_v1  # noqa\n" + ECHO_AGENT)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\ndependencies = ["google-cloud-tracequux>=1.2"]\n')
    done = agentdiff(tmp_path, "run", "--json")  # the worker says it, as the agent's import fails there
    error = json.loads(done.stdout)["cases"][0]["error"]
    assert "google.cloud.tracequux_v1 comes from google-cloud-tracequux, which the project declares in pyproject.toml" in error, error
    assert "pip install google-cloud-tracequux" in error and "missing from the checkout" not in error
    failure = ImportError("cannot import name 'tracequux_v1' from 'google.cloud' (unknown location)", name="google.cloud")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n')
    (tmp_path / "uv.lock").write_text('version = 1\n\n[[package]]\nname = "google-cloud-tracequux"\nversion = "1.2.0"\n')
    assert "which the project declares in uv.lock" in how_to_fix(failure)
    (tmp_path / "uv.lock").unlink()
    said = how_to_fix(failure)
    assert "google.cloud is a namespace package" in said and "missing from the checkout" not in said, said


def test_an_agents_cli_project_works_from_any_folder_under_it_as_agents_cli_does(tmp_path):
    import shutil

    from conftest import ROOT

    project = tmp_path / "demo"
    shutil.copytree(ROOT / "sample_agents" / "weather_desk", project, ignore=shutil.ignore_patterns(".agentdiff", "__pycache__"))
    for folder, prefix in (("tests/eval", "datasets/"), ("tests/eval/datasets", "")):
        done = agentdiff(project / folder, "list", "--agents", "--json")
        cases = json.loads(done.stdout)["cases"]
        assert len(cases) == 4 and {case["agent"] for case in cases} == {"app"}, (folder, done.stderr)
        assert cases[0]["id"] == f"{prefix}basic-dataset.json::greeting"  # ids from the folder it runs in, as paths are
    done = agentdiff(project / "app", "list")
    assert "0 cases" in done.stdout and ("note: this folder is inside the agents-cli project at .. (its agents-cli-manifest.yaml), "
                                         "whose cases are under its tests/eval/datasets/: run agentdiff there (cd ..)") in done.stderr
    assert len(json.loads(agentdiff(project / "app", "list", "--json", "../tests/eval").stdout)["cases"]) == 4

def test_list_json_names_the_files_that_did_not_load_as_run_json_does(tmp_path):
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "broken.evalset.json").write_text("{")
    listed = json.loads(agentdiff(tmp_path, "list", "--json").stdout)
    ran = json.loads(agentdiff(tmp_path, "run", "--json").stdout)  # nothing to run: no worker, the report all the same
    assert [e["file"] for e in listed["load_errors"]] == [e["file"] for e in ran["load_errors"]] == ["evals/broken.evalset.json"]
    assert listed["errors"] == listed["load_errors"]  # the old name, kept for the scripts that read it


def test_an_agent_module_file_inside_a_package_is_named_in_full_as_it_is_imported(tmp_path):
    """`agent_module="city_agent.eval_agents.data_analyst_eval_agent"`, a module file of a package: shown
    and reported by the dotted name ADK imports, not from its package down."""
    package = tmp_path / "city_agent" / "eval_agents"
    package.mkdir(parents=True)
    (tmp_path / "city_agent" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("from . import data_analyst_eval_agent\n")
    (package / "data_analyst_eval_agent.py").write_text("NOT_AN_AGENT = 1\n")
    (tmp_path / "tests" / "data").mkdir(parents=True)
    (tmp_path / "tests" / "data" / "analyst.evalset.json").write_text(json.dumps({"eval_set_id": "a", "eval_cases": [one_turn("c", "hi", "hi")]}))
    (tmp_path / "tests" / "test_analyst.py").write_text(
        "from google.adk.evaluation.agent_evaluator import AgentEvaluator\n\n\nasync def test_it():\n"
        "    await AgentEvaluator.evaluate(agent_module='city_agent.eval_agents.data_analyst_eval_agent',\n"
        "                                  eval_dataset_file_path_or_dir='tests/data/analyst.evalset.json')\n")
    listed = agentdiff(tmp_path, "list", "--agents")
    assert "tests/data/analyst.evalset.json  → city_agent.eval_agents.data_analyst_eval_agent  (AgentEvaluator.evaluate" in listed.stdout
    case = json.loads(agentdiff(tmp_path, "run", "--json").stdout)["cases"][0]
    assert case["agent"] == "city_agent.eval_agents.data_analyst_eval_agent"
    assert case["error"].startswith("LookupError: city_agent.eval_agents.data_analyst_eval_agent: no `app`, `root_agent`"), case["error"]


def test_an_agent_with_an_output_schema_runs_and_is_recorded(tmp_path):
    """`output_schema=` puts a model class in the request's config (`response_schema`), which pydantic
    cannot write as JSON: the request is kept with the class's JSON schema instead of failing the run."""
    from fake_gemini import FakeGemini, Reply

    (tmp_path / "my_agent").mkdir()
    (tmp_path / "my_agent" / "__init__.py").write_text("from . import agent\n")
    (tmp_path / "my_agent" / "agent.py").write_text(
        "from google.adk.agents import LlmAgent\nfrom pydantic import BaseModel\n\n\nclass Out(BaseModel):\n    answer: str\n\n\n"
        "root_agent = LlmAgent(name='my_agent', model='gemini-2.5-flash', instruction='Answer.', output_schema=Out)\n")
    case = one_turn("c1", "hi", '{"answer": "hi"}')
    (tmp_path / "my_agent" / "basic.test.json").write_text(json.dumps({"eval_set_id": "s", "eval_cases": [case]}))
    server = FakeGemini(lambda call: Reply(text='{"answer": "hi"}')).start()
    try:
        env = {**os.environ, **server.env}
        live = json.loads(agentdiff(tmp_path, "run", "--json", "--mode", "live", env=env).stdout)["cases"][0]
        assert live["status"] == "passed", live["error"]
        assert "answer" in json.dumps(server.calls[0].body["generationConfig"])  # the schema was sent
        recorded = agentdiff(tmp_path, "record", "my_agent/basic.test.json::c1", env=env)
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        again = json.loads(agentdiff(tmp_path, "run", "--json", "--mode", "live", env=env).stdout)["cases"][0]
        assert again["status"] == "passed", again["error"]
    finally:
        server.close()


def test_an_agent_that_turns_vertex_off_when_a_key_is_set_is_told_to_set_the_key(tmp_path):
    """The agent asks for Application Default Credentials unless GEMINI_API_KEY is set: the fix is the key."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("from . import agent\n")
    (tmp_path / "app" / "agent.py").write_text(
        "import os\n\nfrom google.adk.agents import Agent\n\n"
        "os.environ['GOOGLE_CLOUD_PROJECT'] = 'some-project'\nos.environ['GOOGLE_CLOUD_LOCATION'] = 'us-central1'\n"
        "if 'GEMINI_API_KEY' in os.environ:\n    os.environ['GOOGLE_GENAI_USE_VERTEXAI'] = 'False'\nelse:\n"
        "    os.environ['GOOGLE_GENAI_USE_VERTEXAI'] = 'True'\n\n"
        "root_agent = Agent(name='app', model='gemini-2.5-flash', instruction='Answer.')\n")
    case = {**one_turn("c", "hi", "hi"), "session_input": {"app_name": "app", "user_id": "u", "state": {}}}
    (tmp_path / "tests" / "eval").mkdir(parents=True)
    (tmp_path / "tests" / "eval" / "basic.evalset.json").write_text(json.dumps({"eval_set_id": "b", "eval_cases": [case]}))
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GOOGLE_", "GEMINI_"))}
    env["GOOGLE_APPLICATION_CREDENTIALS"] = str(tmp_path / "no-such-key.json")  # no credentials found, wherever this runs
    result = json.loads(agentdiff(tmp_path, "run", "--json", env=env).stdout)["cases"][0]
    assert result["status"] == "error"
    assert "the agent uses Vertex AI unless GEMINI_API_KEY is set (app/agent.py:7): set GEMINI_API_KEY" in result["error"], result["error"]
