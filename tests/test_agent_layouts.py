"""How a case finds its agent in ADK projects laid out as their authors lay them out: hyphenated
project folders, `eval/` packages, `src/` layouts, the agent named in the project's own
`AgentEvaluator` tests, empty `app_name`s, legacy row files, and an error that says how to fix it."""

from __future__ import annotations

import json
from pathlib import Path

from agentdiff.core.project.agent_hints import calls_in
from agentdiff.core.project.agent_packages import is_agent_package
from agentdiff.core.project.agents import resolve_agent
from agentdiff.core.project.config import load_project_config
from agentdiff.core.project.discovery import discover
from test_cli import run

ADK_AGENT = "from google.adk.agents import Agent\nroot_agent = Agent(name='x', model='m')\n"
ECHO_AGENT = "async def run_turn(ctx):\n    return ctx.message\n"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def eval_set(app_name: str | None = None) -> str:
    case: dict = {"eval_id": "hello", "conversation": [{"invocation_id": "i1", "user_content": {"role": "user", "parts": [{"text": "hi"}]},
                                                        "final_response": {"role": "model", "parts": [{"text": "hi"}]}}]}
    if app_name is not None:
        case["session_input"] = {"app_name": app_name, "user_id": "u", "state": {}}
    return json.dumps({"eval_set_id": "simple", "eval_cases": [case]})


def resolved(root: Path, agents_dirs=()) -> dict[str, object]:
    config, errors = load_project_config(root)
    assert errors == []
    found = discover([root], root)
    assert found.errors == [] and found.cases
    out = {}
    for ref in found.cases:
        resolution = resolve_agent(ref, root, tuple(agents_dirs) + config.agents, config.agent_for)
        out[ref.source] = resolution.agent.name if resolution.agent else resolution.error
    return out


def test_a_hyphenated_project_folder_names_its_package(tmp_path):
    root = write(tmp_path / "llm-auditor", {
        "llm_auditor/__init__.py": "from . import agent\n", "llm_auditor/agent.py": ADK_AGENT,
        "deployment/deploy.py": "", "eval/data/auditor.test.json": eval_set(),
    })
    assert resolved(root) == {"eval/data/auditor.test.json": "llm_auditor"}


def test_an_eval_package_is_not_taken_for_the_agent(tmp_path):
    root = write(tmp_path / "proj", {
        "eval/__init__.py": "", "eval/test_eval.py": "import pytest\n", "eval/simple.test.json": eval_set(),
        "my_agent/agent.py": ADK_AGENT, "tests/__init__.py": "",
    })
    assert not is_agent_package(root / "eval") and is_agent_package(root / "my_agent")
    assert resolved(root) == {"eval/simple.test.json": "my_agent"}


def test_configuration_overrides_an_agent_package_holding_the_eval_set(tmp_path):
    root = write(tmp_path / "proj", {
        "alpha/agent.py": ADK_AGENT, "alpha/evals/simple.test.json": eval_set("alpha"), "beta/agent.py": ADK_AGENT,
        "pyproject.toml": '[tool.agentdiff.agent_for]\n"alpha/evals" = "beta"\n',
    })
    assert resolved(root) == {"alpha/evals/simple.test.json": "beta"}


def test_an_agents_dir_given_explicitly_is_tried_before_anything_inferred(tmp_path):
    root = write(tmp_path / "proj", {"eval/__init__.py": "", "eval/simple.test.json": eval_set("other"),
                                     "agents/my_agent/agent.py": ADK_AGENT, "other/agent.py": ADK_AGENT})
    assert resolved(root) == {"eval/simple.test.json": "other"}
    assert resolved(root, [root / "agents"]) == {"eval/simple.test.json": "my_agent"}


def test_a_src_layout_named_by_pyproject(tmp_path):
    root = write(tmp_path / "checkout", {
        "pyproject.toml": '[project]\nname = "travel-concierge"\n',
        "src/travel_concierge/__init__.py": "from .agent import root_agent\n", "src/travel_concierge/agent.py": ADK_AGENT,
        "src/travel_concierge/tools/__init__.py": "", "src/helpers/agent.py": ADK_AGENT,
        "eval/simple.test.json": eval_set(),
    })
    assert resolved(root) == {"eval/simple.test.json": "travel_concierge"}


def test_the_projects_own_agent_evaluator_test_names_the_agent(tmp_path):
    root = write(tmp_path / "proj", {
        "customer_service/agent.py": ADK_AGENT, "billing/agent.py": ADK_AGENT,
        "eval/eval_data/simple.test.json": eval_set(), "eval/other/other.test.json": eval_set(),
        "tests/test_agent.py": (
            "from google.adk.evaluation.agent_evaluator import AgentEvaluator\n\n"
            "async def test_all():\n"
            '    await AgentEvaluator.evaluate("customer_service", "eval/eval_data/simple.test.json")\n'
            '    await AgentEvaluator.evaluate(agent_module="billing.agent", eval_dataset_file_path_or_dir="eval/other")\n'
        ),
    })
    assert calls_in((root / "tests/test_agent.py").read_text()) == (
        ("customer_service", "eval/eval_data/simple.test.json"), ("billing.agent", "eval/other"))
    assert resolved(root) == {"eval/eval_data/simple.test.json": "customer_service", "eval/other/other.test.json": "billing"}


def test_paths_the_test_builds_from_its_own_file_are_read_statically(tmp_path):
    test = (
        "import os, pathlib\nfrom google.adk.evaluation import AgentEvaluator\n\n"
        'DATA = pathlib.Path(__file__).parent / "data"\n\n'
        "async def test_inspire():\n"
        '    await AgentEvaluator.evaluate("travel_concierge", str(pathlib.Path(__file__).parent / "data/inspire.test.json"))\n\n'
        "async def test_folder():\n"
        '    agent_name = "billing"\n'
        '    await AgentEvaluator.evaluate(agent_name, os.path.join(os.path.dirname(os.path.abspath(__file__)), "other"))\n\n'
        "async def test_unknowable(path):\n"
        '    await AgentEvaluator.evaluate("billing", path)\n'
        '    for name in ["a.test.json"]:\n'
        '        await AgentEvaluator.evaluate("billing", DATA / name)\n'
    )
    root = write(tmp_path / "proj", {
        "travel_concierge/agent.py": ADK_AGENT, "billing/agent.py": ADK_AGENT, "eval/__init__.py": "",
        "eval/test_eval.py": test, "eval/data/inspire.test.json": eval_set(""), "eval/other/x.evalset.json": eval_set(""),
    })
    assert calls_in(test, "/p/eval/test_eval.py") == (
        ("travel_concierge", "/p/eval/data/inspire.test.json"), ("billing", "/p/eval/other"))
    assert resolved(root) == {"eval/data/inspire.test.json": "travel_concierge", "eval/other/x.evalset.json": "billing"}


def test_a_sub_agent_and_tests_inside_the_package_are_read(tmp_path):
    root = write(tmp_path / "proj", {
        "trip_planner/__init__.py": "from . import agent\n", "trip_planner/agent.py": ADK_AGENT,
        "trip_planner/eval/__init__.py": "", "trip_planner/eval/inquiry.test.json": eval_set(""),
        "trip_planner/eval/test_inquiry.py": (
            "from google.adk.evaluation.agent_evaluator import AgentEvaluator\n\n"
            "async def test_inquiry():\n"
            '    await AgentEvaluator.evaluate("trip_planner", "trip_planner/eval/inquiry.test.json", agent_name="identify_agent")\n'
        ),
        "evals/whole.evalset.json": eval_set(""),
        "eval_all.py": 'from google.adk.evaluation import AgentEvaluator\nAgentEvaluator.evaluate("trip_planner", "evals/whole.evalset.json", 1, "booker")\n',
    })
    found = discover([root], root)
    agents = {ref.source: resolve_agent(ref, root, (), {}) for ref in found.cases}
    assert {source: (r.agent.name, r.agent.sub_agent, r.reason) for source, r in agents.items()} == {
        "trip_planner/eval/inquiry.test.json": ("trip_planner", "identify_agent", "AgentEvaluator.evaluate in trip_planner/eval/test_inquiry.py"),
        "evals/whole.evalset.json": ("trip_planner", "booker", "AgentEvaluator.evaluate in eval_all.py"),
    }


def test_a_dotted_agent_module_is_a_folder_from_the_project_root(tmp_path):
    root = write(tmp_path / "proj", {
        "main_agent/agent.py": ADK_AGENT,
        "tests/integration/fixture/trip_agent/__init__.py": "from . import agent\n",
        "tests/integration/fixture/trip_agent/agent.py": ADK_AGENT,
        "tests/integration/fixture/trip_agent/inquiry.test.json": eval_set(""),
        "tests/integration/test_sub_agent.py": (
            "from google.adk.evaluation.agent_evaluator import AgentEvaluator\n\n"
            "async def test_sub():\n"
            '    await AgentEvaluator.evaluate(agent_module="tests.integration.fixture.trip_agent",\n'
            '        eval_dataset_file_path_or_dir="tests/integration/fixture/trip_agent/inquiry.test.json", agent_name="identify")\n'
        ),
    })
    (ref,) = discover([root], root).cases
    agent = resolve_agent(ref, root, (), {}).agent
    assert (Path(agent.agents_dir), agent.name, agent.sub_agent) == (root / "tests/integration/fixture", "trip_agent", "identify")


def test_an_empty_app_name_falls_through_to_the_project(tmp_path):
    root = write(tmp_path / "my-agent", {"my_agent/agent.py": ADK_AGENT, "evals/simple.evalset.json": eval_set("")})
    assert resolved(root) == {"evals/simple.evalset.json": "my_agent"}


def test_an_app_name_that_differs_from_the_package_is_not_an_error(tmp_path):
    root = write(tmp_path / "proj", {"the_agent/agent.py": ADK_AGENT, "evals/simple.evalset.json": eval_set("Customer Support")})
    assert resolved(root) == {"evals/simple.evalset.json": "the_agent"}


def test_a_legacy_row_file(tmp_path):
    rows = [{"query": "hi", "expected_tool_use": [], "reference": "hi"}]
    root = write(tmp_path / "personal-shopper", {"personal_shopper/__init__.py": "from .agent import root_agent\n",
                                                 "personal_shopper/agent.py": ADK_AGENT, "eval/rows.test.json": json.dumps(rows)})
    assert resolved(root) == {"eval/rows.test.json": "personal_shopper"}


def test_two_agents_and_nothing_to_choose_is_an_error_that_says_how_to_fix_it(tmp_path):
    root = write(tmp_path / "proj", {"alpha/agent.py": ADK_AGENT, "beta/__init__.py": "from .core import root_agent\n",
                                     "beta/core.py": ADK_AGENT, "eval/__init__.py": "", "eval/simple.test.json": eval_set()})
    error = resolved(root)["eval/simple.test.json"]
    assert error.startswith("no agent found for this case; tried ")
    assert "none was guessed: alpha, beta" in error
    assert error.endswith('add to pyproject.toml:\n[tool.agentdiff.agent_for]\n"eval/simple.test.json" = "alpha"  # or "beta"')
    (root / "pyproject.toml").write_text('[tool.agentdiff.agent_for]\n"eval/simple.test.json" = "beta"\n')
    assert resolved(root) == {"eval/simple.test.json": "beta"}


def test_no_agent_at_all_suggests_a_placeholder(tmp_path):
    root = write(tmp_path / "proj", {"eval/__init__.py": "", "eval/simple.test.json": eval_set()})
    error = resolved(root)["eval/simple.test.json"]
    assert error.endswith('"eval/simple.test.json" = "<your_agent_package>"')


def test_agentdiff_run_finds_a_native_agent_beside_an_eval_package(tmp_path, monkeypatch):
    root = write(tmp_path / "echo-bot", {"echo_bot/agent.py": ECHO_AGENT, "eval/__init__.py": "",
                                         "eval/test_eval.py": "def test_nothing():\n    pass\n", "eval/simple.test.json": eval_set("")})
    monkeypatch.chdir(root)
    code, out, err = run("run", ".", "--json", "--jobs", "1")
    assert code == 0, err + out
    (case,) = json.loads(out)["cases"]
    assert case["agent"] == "echo_bot" and case["status"] == "passed"


def test_list_agents_shows_each_files_agent_and_why(tmp_path, monkeypatch):
    root = write(tmp_path / "proj", {
        "customer_service/agent.py": ADK_AGENT, "billing/agent.py": ADK_AGENT,
        "eval/eval_data/simple.test.json": eval_set(), "evals/other.evalset.json": eval_set("billing"),
        "tests/test_agent.py": 'async def test_all():\n    await AgentEvaluator.evaluate("customer_service", "eval/eval_data/simple.test.json")\n',
        "orphans/nobody.test.json": eval_set(),
    })
    monkeypatch.chdir(root)
    code, out, err = run("list", "--agents", "--color", "never")
    assert code == 0, err + out
    assert "eval/eval_data/simple.test.json  → customer_service  (AgentEvaluator.evaluate in tests/test_agent.py)" in out
    assert "evals/other.evalset.json  → billing  (session_input.app_name)" in out
    assert "orphans/nobody.test.json  → no agent" in out and '"orphans/nobody.test.json" = "billing"  # or "customer_service"' in out
    code, out, err = run("list", "--agents", "--json")
    items = {item["source"]: item for item in json.loads(out)["cases"]}
    assert items["evals/other.evalset.json"]["agent"] == "billing"
    assert items["evals/other.evalset.json"]["agent_reason"] == "session_input.app_name"
    assert items["eval/eval_data/simple.test.json"]["agent_reason"] == "AgentEvaluator.evaluate in tests/test_agent.py"
    assert items["orphans/nobody.test.json"]["agent"] is None and "agent_error" in items["orphans/nobody.test.json"]


def test_list_agents_gives_a_file_whose_cases_differ_one_line_per_case(tmp_path, monkeypatch):
    cases = [json.loads(eval_set(name))["eval_cases"][0] | {"eval_id": name} for name in ("alpha", "beta")]
    root = write(tmp_path / "proj", {"alpha/agent.py": ADK_AGENT, "beta/agent.py": ADK_AGENT,
                                     "evals/mixed.evalset.json": json.dumps({"eval_set_id": "m", "eval_cases": cases}),
                                     "pyproject.toml": '[tool.agentdiff.agent_for]\n"evals/mixed.evalset.json::alpha" = "alpha"\n'})
    monkeypatch.chdir(root)
    code, out, err = run("list", "--agents", "--color", "never")
    assert code == 0, err + out
    assert 'evals/mixed.evalset.json::alpha  → alpha  (agent_for "evals/mixed.evalset.json::alpha")' in out
    assert "evals/mixed.evalset.json::beta  → beta  (session_input.app_name)" in out


def test_eval_files_the_projects_tests_name_are_found_whatever_their_names(tmp_path, monkeypatch):
    root = write(tmp_path / "proj", {
        "alpha/agent.py": ECHO_AGENT, "beta/agent.py": ECHO_AGENT,
        "eval/data/simple_eval.json": eval_set(), "eval/data/test_config.json": json.dumps({"criteria": {"response_match_score": 0.5}}),
        "tests/fixture/one.json": eval_set(), "tests/fixture/package.json": '{"name": "not an eval set"}',
        "tests/fixture/old.evalset_result.json": "[]",
        "tests/test_agent.py": (
            'async def test_all():\n'
            '    await AgentEvaluator.evaluate("beta.agent", "eval/data/simple_eval.json")\n'
            '    await AgentEvaluator.evaluate_eval_set(agent_module="alpha", eval_set_file_path="tests/fixture")\n'
        ),
        "elsewhere/unnamed.json": eval_set(),
    })
    monkeypatch.chdir(root)
    code, out, err = run("list", "--json")
    assert code == 0, err + out
    assert sorted(item["source"] for item in json.loads(out)["cases"]) == ["eval/data/simple_eval.json", "tests/fixture/one.json"]
    code, out, err = run("list", "elsewhere", "--json")  # only inside the paths searched
    assert json.loads(out)["cases"] == []
    code, out, err = run("run", "eval/data/simple_eval.json", "--json", "--jobs", "1")
    assert code == 0, err + out
    (case,) = json.loads(out)["cases"]
    assert case["agent"] == "beta" and case["status"] == "passed"


def test_a_named_eval_file_that_does_not_load_is_a_load_error(tmp_path, monkeypatch):
    root = write(tmp_path / "proj", {"alpha/agent.py": ECHO_AGENT, "eval/data/broken.json": "{",
                                     "tests/test_agent.py": 'AgentEvaluator.evaluate("alpha", "eval/data/broken.json")\n'})
    monkeypatch.chdir(root)
    code, out, err = run("list")
    assert code != 0 and "eval/data/broken.json" in err


def test_run_from_inside_an_agent_package_finds_it_for_its_conformance_cases(tmp_path, monkeypatch):
    import shutil

    SAMPLES = Path(__file__).resolve().parent.parent / "sample_agents"
    shutil.copytree(SAMPLES / "home_automation", tmp_path / "home_automation")
    shutil.copy(SAMPLES / "demo_model.py", tmp_path / "demo_model.py")
    inside = tmp_path / "home_automation"
    monkeypatch.chdir(inside)
    found = discover([inside], inside)
    agents = {ref.id: resolve_agent(ref, inside).agent for ref in found.cases}
    assert agents and all(agent is not None and agent.name == "home_automation" for agent in agents.values()), agents
