"""`agentdiff doctor`: the agents' Python and ADK, each agent imported there, credentials by name."""

from __future__ import annotations

import sys

import pytest
from agentdiff.core.project.doctor import Imported, _adk_requirement, credential_checks, dotenv_names, requirement_allows
from test_cli import run
from workbench_support import echo_project


@pytest.mark.parametrize("spec, version, allowed", [
    ("", "2.13.0", True),
    ("==1.19.0", "1.19.0", True),
    ("==1.19.0", "1.19.1", False),
    ("==1.19.*", "1.19.4", True),
    (">=1.19,<2", "2.13.0", False),
    (">=1.19,<2", "1.26.0", True),
    ("~=1.19", "1.30.0", True),
    ("~=1.19.0", "1.20.0", False),
    ("!=2.0.0", "2.0.0", False),
    (">=1.0.0rc1", "1.2.0", None),
])
def test_whether_a_version_meets_the_projects_requirement(spec, version, allowed):
    assert requirement_allows(spec, version) is allowed


def test_the_adk_requirement_is_read_from_pyproject_poetry_or_requirements(tmp_path):
    assert _adk_requirement(tmp_path) is None
    (tmp_path / "requirements.txt").write_text("requests\ngoogle-adk[eval] >= 1.19 ; python_version >= '3.10'\n")
    assert _adk_requirement(tmp_path) == ">=1.19"
    (tmp_path / "pyproject.toml").write_text('[tool.poetry.dependencies]\npython = "^3.11"\ngoogle-adk = "^1.26.0"\n')
    assert _adk_requirement(tmp_path) == ">=1.26.0,<2.0.0"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["google-adk-community>=0.2", "google_adk==1.2.1"]\n')
    assert _adk_requirement(tmp_path) == "==1.2.1"


def test_credentials_are_named_never_shown(tmp_path):
    agent = tmp_path / "proj" / "my_agent"
    agent.mkdir(parents=True)
    (tmp_path / "proj" / ".env").write_text("# keys\nexport GOOGLE_API_KEY='sk-secret'\nEMPTY=\nOTHER=1\n")
    assert dotenv_names(tmp_path / "proj" / ".env") == ["GOOGLE_API_KEY", "OTHER"]
    checks = credential_checks({agent: Imported(models=("gemini-2.5-flash",))}, environ={"OPENAI_API_KEY": "sk-other"})
    assert [(c.ok, c.text) for c in checks] == [
        (True, "OPENAI_API_KEY is set (the environment)"),
        (True, f"GOOGLE_API_KEY is set ({tmp_path / 'proj' / '.env'})"),
    ]
    assert "secret" not in repr(checks) and "sk-other" not in repr(checks)
    (tmp_path / "proj" / ".env").unlink()
    (problem,) = credential_checks({agent: Imported(models=("Gemini:gemini-2.5-flash",))}, environ={})
    assert problem.ok is False and problem.text.startswith("no Gemini credentials: live runs of my_agent will fail")
    (fine,) = credential_checks({agent: Imported(models=("PlaybookModel:demo",))}, environ={})
    assert fine.ok is None


def test_a_scaffolds_placeholder_values_are_not_credentials_and_the_enterprise_switch_counts(tmp_path):
    """agents-cli's scaffold ships `.env` with `GOOGLE_CLOUD_PROJECT=your-gcp-project-id` and `GOOGLE_GENAI_USE_ENTERPRISE`."""
    agent = tmp_path / "proj" / "app"
    agent.mkdir(parents=True)
    dotenv = tmp_path / "proj" / ".env"
    dotenv.write_text("GOOGLE_GENAI_USE_ENTERPRISE=True\nGOOGLE_CLOUD_PROJECT=your-gcp-project-id  # set me\nGOOGLE_CLOUD_LOCATION=global\n")
    checks = credential_checks({agent: Imported(models=("gemini-2.5-flash",))}, environ={})
    said = {c.text: c.ok for c in checks}
    assert said[f"GOOGLE_CLOUD_PROJECT in {dotenv} is a placeholder, not a value: calls with it fail"] is False
    switched = f"GOOGLE_GENAI_USE_ENTERPRISE is on ({dotenv}): Gemini calls go to Vertex AI, which needs GOOGLE_CLOUD_PROJECT"
    assert any(text.startswith(switched) for text in said) and "your-gcp-project-id" not in repr(checks)
    checks = credential_checks({agent: Imported(models=("gemini-2.5-flash",))}, environ={"GOOGLE_API_KEY": "k"})
    assert any(c.text.startswith(switched) and c.ok is False for c in checks)  # the key the advice led to is not used
    dotenv.write_text("GOOGLE_GENAI_USE_ENTERPRISE=False\n")
    (problem,) = credential_checks({agent: Imported(models=("gemini-2.5-flash",))}, environ={})[1:]
    assert "GOOGLE_GENAI_USE_ENTERPRISE=TRUE" in problem.fix
    dotenv.write_text("GOOGLE_GENAI_USE_ENTERPRISE=True\nGOOGLE_CLOUD_PROJECT=acme-prod-42\nGOOGLE_CLOUD_LOCATION=global\n")
    checks = credential_checks({agent: Imported(models=("gemini-2.5-flash",))}, environ={})
    assert all(c.ok for c in checks) and len(checks) == 3  # Vertex by its newer switch: ready


def test_doctor_on_a_project_whose_agents_import(tmp_path, monkeypatch):
    echo_project(tmp_path, {"echo": ["hi"]})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GOOGLE_API_KEY", "value-never-printed")
    code, out, err = run("doctor", "--python", sys.executable)
    assert (code, err) == (0, ""), out
    assert ", --python), ADK " in out and "✓ echo imports  (for agents/echo/echo.evalset.json)" in out
    assert "GOOGLE_API_KEY is set (the environment)" in out and "value-never-printed" not in out
    assert out.endswith("1 cases; no problems\n")


def test_doctor_names_each_problem_and_its_fix(tmp_path, monkeypatch):
    echo_project(tmp_path, {"echo": ["hi"], "broken": ["hi"]})
    (tmp_path / "agents" / "broken" / "agent.py").write_text("import not_installed_anywhere\n")
    (tmp_path / "loose").mkdir()
    (tmp_path / "loose" / "x.evalset.json").write_text((tmp_path / "agents" / "echo" / "echo.evalset.json").read_text())
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["google-adk<2"]\n')
    monkeypatch.chdir(tmp_path)
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "VIRTUAL_ENV"):
        monkeypatch.delenv(name, raising=False)
    code, out, _ = run("doctor")
    assert code == 1
    assert "✗ broken does not import: ModuleNotFoundError: No module named 'not_installed_anywhere' (it is not installed for " in out
    assert "✗ the project asks for google-adk<2 (not met by 2.13.0)" in out
    assert "✗ the project has no environment of its own here" in out
    assert "✗ loose/x.evalset.json: no agent found for this case; tried " in out
    assert "→ add to pyproject.toml: [tool.agentdiff.agent_for] \"loose/x.evalset.json\" = \"<your_agent_package>\"" in out
    assert out.splitlines()[-1] == "3 cases; 5 problems"


def test_doctor_with_an_interpreter_that_cannot_run_agents(tmp_path, monkeypatch):
    echo_project(tmp_path, {"echo": ["hi"]})
    monkeypatch.chdir(tmp_path)
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    code, out, _ = run("doctor", "--python", str(tmp_path / "nope"))
    assert code == 1
    assert "✗ agents run on nope (--python): no such interpreter" in out
    assert "✓ echo imports" not in out
    assert "· echo (for agents/echo/echo.evalset.json): not imported, the agents' Python cannot run" in out
    assert "✗ no Gemini credentials: live runs of echo will fail" in out  # its models cannot be known


def test_what_to_do_about_an_import_that_failed(tmp_path, monkeypatch):
    from agentdiff.core.worker.hints import how_to_fix

    (tmp_path / "own_pkg").mkdir()
    (tmp_path / "own_pkg" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    missing_file = ModuleNotFoundError("No module named 'own_pkg.tools'", name="own_pkg.tools")
    assert how_to_fix(missing_file) == " (the project's own module own_pkg.tools is not there: a file missing from the checkout?)"
    monkeypatch.chdir(tmp_path)  # a project that declares no dependencies
    not_installed = ModuleNotFoundError("No module named 'supabase'", name="supabase")
    assert how_to_fix(not_installed).startswith(f" (it is not installed for {sys.executable}: install the project's dependencies into that Python")
    (tmp_path / "requirements.txt").write_text("google-adk>=1.19\nsupabase==2.10.0\n")
    assert how_to_fix(not_installed).startswith(" (supabase comes from supabase, which the project declares in requirements.txt and is not "
                                                f"installed for {sys.executable}: install it (`pip install supabase`")
    (tmp_path / "requirements.txt").write_text("google-api-python-client>=2\na2a-sdk>=0.3\nasync-tinydb==1.7.3\n")
    for module, distribution in (("googleapiclient", "google-api-python-client"), ("a2a", "a2a-sdk"), ("tinydb", "async-tinydb")):
        assert how_to_fix(ModuleNotFoundError(f"No module named '{module}'", name=module)).startswith(
            f" ({module} comes from {distribution}, which the project declares in requirements.txt"), module
    namespace = ImportError("cannot import name 'prompt' from 'oprina' (unknown location)", name="oprina")
    assert how_to_fix(namespace) == " (oprina has no __init__.py and no such module in its folder: a file missing from the checkout?)"
    assert how_to_fix(ValueError("No API key was provided. Please pass a valid API key.")).startswith(" (no model credentials: set GOOGLE_API_KEY")
    assert how_to_fix(ModuleNotFoundError("No module named 'google'", name="google")).startswith(" (google-adk is not installed for ")
    offline = OSError("Cannot connect to host generativelanguage.googleapis.com:443 ssl:default [Name or service not known]")
    assert how_to_fix(offline) == " (the model's API could not be reached from here: check the network connection, a proxy, or the API host)"
    assert how_to_fix(RuntimeError("boom")) == ""


def test_doctor_checks_the_drop_in_is_importable_where_the_projects_tests_run(tmp_path, monkeypatch):
    """A project whose tests import agentdiff's drop-in: pytest runs them on the project's Python,
    which needs agentdiff itself (a tool install of agentdiff is not importable there)."""
    from test_interpreters import project_env

    echo_project(tmp_path, {"echo": ["hi"]})
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_agents.py").write_text("from agentdiff.core.testing import AgentEvaluator\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GOOGLE_API_KEY", "x")
    code, out, _ = run("doctor", "--python", sys.executable)
    assert "✓ tests/test_agents.py import agentdiff.core.testing: that Python has it" in out, out
    bare = project_env(tmp_path / "env")
    code, out, _ = run("doctor", "--python", str(bare))
    assert code == 1 and "✗ tests/test_agents.py import agentdiff.core.testing, which that Python cannot import " \
        "(ModuleNotFoundError: No module named 'agentdiff')" in out, out
    assert f"install agentdiff into it ({bare} -m pip install PATH_TO_AGENTDIFF)" in out
