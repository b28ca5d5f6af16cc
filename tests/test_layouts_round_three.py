"""Layouts of public ADK projects (round three), each laid out here as its description says: what is a
case, what is not, and what `list`, `run` and `doctor` say about it."""

from __future__ import annotations

import json
import sys

import pytest
from test_cli import run
from workbench_support import ECHO_AGENT

OPENAPI = "openapi: 3.0.0\ninfo:\n  title: Shop API\n  version: '1.0'\npaths:\n  /orders:\n    get:\n      summary: list orders\n"


def eval_set(set_id: str, *texts: str) -> str:
    return json.dumps({"eval_set_id": set_id, "eval_cases": [
        {"eval_id": f"case_{n}", "conversation": [{"user_content": {"role": "user", "parts": [{"text": text}]},
                                                  "final_response": {"role": "model", "parts": [{"text": text}]}}]}
        for n, text in enumerate(texts)]})


def test_an_openapi_spec_yaml_outside_tests_is_not_a_conformance_case(tmp_path, monkeypatch):
    """`docs/api/spec.yaml` (OpenAPI) beside a project's eval set: ADK's `adk conformance test` would never
    run it (it looks under tests/, and skips a spec with no recordings). Not a load error: a note."""
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "agent.py").write_text(ECHO_AGENT)
    (tmp_path / "shop" / "shop.evalset.json").write_text(eval_set("shop", "hello"))
    (tmp_path / "docs" / "api").mkdir(parents=True)
    (tmp_path / "docs" / "api" / "spec.yaml").write_text(OPENAPI)
    monkeypatch.chdir(tmp_path)
    code, out, err = run("list")
    assert code == 0, err
    assert "1 cases, 0 load errors" in out and "description" not in err.split("note:")[0]
    assert "note: docs/api/spec.yaml: not a conformance case: outside tests/, no recordings beside it, and its keys (info, openapi, paths)" in err
    code, out, err = run("run")
    assert code == 0, err


def test_a_spec_yaml_is_a_conformance_case_where_adk_would_run_it(tmp_path, monkeypatch):
    """Under tests/ (ADK's default), with recordings beside it, or written as a spec (a case not yet
    recorded, anywhere): a case, and a broken one a load error with its line."""
    spec = "description: turn on the light\nagent: home\nuser_messages:\n  - text: light on\n"
    for folder in ("tests/conformance/lights/on", "cases/lights/new_case"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "spec.yaml").write_text(spec)
    (tmp_path / "tests" / "broken" / "b").mkdir(parents=True)
    (tmp_path / "tests" / "broken" / "b" / "spec.yaml").write_text(OPENAPI)  # under tests/: ADK reads it, and refuses it
    (tmp_path / "api" / "v1").mkdir(parents=True)
    (tmp_path / "api" / "v1" / "spec.yaml").write_text(OPENAPI)
    (tmp_path / "api" / "v1" / "generated-recordings.yaml").write_text("recordings: []\n")  # recordings beside it: ADK would
    monkeypatch.chdir(tmp_path)
    code, out, err = run("list", "--json")
    listed = json.loads(out)
    ids = sorted(case["id"] for case in listed["cases"])
    assert ids == ["cases/lights/new_case", "tests/conformance/lights/on"], listed
    files = sorted({error["file"] for error in listed["errors"]})
    assert files == ["api/v1/spec.yaml", "tests/broken/b/spec.yaml"], listed["errors"]
    assert listed["notes"] == [] and code == 2
    code, out, err = run("list", "api/v1/spec.yaml")  # a path the user names is read whatever it is
    assert code == 2 and "api/v1/spec.yaml" in err


def test_an_agent_asking_for_application_default_credentials_at_import_is_told_how_to_get_them(tmp_path, monkeypatch):
    """`google.auth.default()` at import, no credentials: an API key cannot fix that, so the hint says
    `gcloud auth application-default login` or GOOGLE_APPLICATION_CREDENTIALS."""
    (tmp_path / "bq_agent").mkdir()
    (tmp_path / "bq_agent" / "agent.py").write_text(
        "import google.auth\n\ncredentials, project = google.auth.default()\n\n\nasync def run_turn(ctx):\n    return ctx.message\n")
    (tmp_path / "bq_agent" / "bq.evalset.json").write_text(eval_set("bq", "hello"))
    for name in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))  # no application-default login either
    monkeypatch.setenv("NO_GCE_CHECK", "True")  # and no metadata server to ask
    monkeypatch.chdir(tmp_path)
    code, out, err = run("run", "--json")
    error = json.loads(out)["cases"][0]["error"]
    assert code == 1 and "DefaultCredentialsError" in error, error
    assert "gcloud auth application-default login" in error and "GOOGLE_APPLICATION_CREDENTIALS" in error
    assert "set GOOGLE_API_KEY" not in error


def test_doctor_in_an_empty_folder_says_it_found_nothing_and_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run("doctor")
    assert code == 1 and "no problems" not in out
    assert "no eval files found under . (looked for *.test.json, *.evalset.json" in out


def test_doctor_with_no_agent_imported_does_not_claim_none_needs_gemini(tmp_path, monkeypatch):
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "orphan.evalset.json").write_text(eval_set("orphan", "hello"))  # no agent anywhere
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    code, out, err = run("doctor")
    assert "no agent here needs them" not in out
    assert "no Gemini credentials; no agent could be imported to tell whether one needs them" in out


def test_what_was_tried_names_each_rule_once(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "my-shop"\n')
    for name in ("billing", "support"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "agent.py").write_text(ECHO_AGENT)
        (tmp_path / name / "__init__.py").write_text("from . import agent\n")
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "shop.evalset.json").write_text(eval_set("shop", "hello"))
    monkeypatch.chdir(tmp_path)
    code, out, err = run("run", "--json")
    error = json.loads(out)["cases"][0]["error"]
    assert error.count("pyproject.toml's [project] name 'my-shop'") == 1, error
    assert "more than one agent could run it, so none was guessed: billing, support" in error


def test_a_file_with_many_bad_rows_shows_its_first_errors_and_a_count(tmp_path, monkeypatch):
    """Hand-made eval sets with a bad field in every case: a few lines per file, grouped under it,
    never one line per case."""
    (tmp_path / "evals").mkdir()
    for n in range(2):
        (tmp_path / "evals" / f"rows_{n}.evalset.json").write_text(json.dumps(
            {"eval_set_id": f"rows_{n}", "eval_cases": [{"eval_id": f"r{i}", "conversation": 5} for i in range(8)]}, indent=1))
    monkeypatch.chdir(tmp_path)
    code, out, err = run("list")
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(lines) == 8, err
    for n in range(2):
        assert sum(f"rows_{n}.evalset.json" in line for line in lines) == 4, err
    assert "error: evals/rows_0.evalset.json: and 5 more problems in this file (`agentdiff list --json` lists every one)" in err
    code, out, _ = run("list", "--json")
    assert len(json.loads(out)["errors"]) == 16  # every one there


def _src_shop(root, agent_module: str) -> None:
    """A `src/` layout: `shop` (its root agent echoes) holding `shop.eval_agents.billing_eval_agent`,
    which imports the project by its absolute name; the conftest puts `src/` on `sys.path`, and the
    test names the billing agent by its dotted module."""
    (root / "pyproject.toml").write_text('[project]\nname = "shop"\n')
    shop = root / "src" / "shop"
    (shop / "eval_agents" / "billing_eval_agent").mkdir(parents=True)
    (shop / "__init__.py").write_text("from . import agent\n")
    (shop / "agent.py").write_text(ECHO_AGENT)
    (shop / "tools.py").write_text("PREFIX = 'billing: '\n")
    (shop / "eval_agents" / "__init__.py").write_text("")
    (shop / "eval_agents" / "billing_eval_agent" / "__init__.py").write_text("from . import agent\n")
    (shop / "eval_agents" / "billing_eval_agent" / "agent.py").write_text(
        "from shop.tools import PREFIX\n\n\nasync def run_turn(ctx):\n    return PREFIX + ctx.message\n")
    (root / "tests" / "eval").mkdir(parents=True)
    (root / "tests" / "conftest.py").write_text(
        "import os\nimport sys\n\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'src'))\n")
    data = json.loads(eval_set("billing", "hello"))
    data["eval_cases"][0]["conversation"][0]["final_response"]["parts"][0]["text"] = "billing: hello"
    (root / "tests" / "eval" / "billing.test.json").write_text(json.dumps(data))
    (root / "tests" / "test_billing.py").write_text(
        "import pytest\nfrom google.adk.evaluation.agent_evaluator import AgentEvaluator\n\n\n@pytest.mark.asyncio\n"
        "async def test_billing():\n    await AgentEvaluator.evaluate(\n"
        f"        agent_module={agent_module!r},\n        eval_dataset_file_path_or_dir='tests/eval/billing.test.json',\n    )\n")


def test_a_dotted_agent_module_is_resolved_whole_through_the_conftests_path(tmp_path, monkeypatch):
    """`agent_module="shop.eval_agents.billing_eval_agent"` with `src/` on the conftest's `sys.path`: the
    billing agent runs (imported as `shop.eval_agents.billing_eval_agent`, so its absolute imports
    work), not the root agent of `shop`."""
    _src_shop(tmp_path, "shop.eval_agents.billing_eval_agent")
    monkeypatch.chdir(tmp_path)
    code, out, err = run("run", "--json")
    case = json.loads(out)["cases"][0]
    assert code == 0 and case["status"] == "passed" and case["agent"] == "shop.eval_agents.billing_eval_agent", case


def test_a_named_agent_module_that_is_not_there_is_an_error_naming_it(tmp_path, monkeypatch):
    """A typo in the dotted module: never its nearest package (`shop`, or `src`) in its place."""
    _src_shop(tmp_path, "shop.eval_agents.biling_eval_agent")
    monkeypatch.chdir(tmp_path)
    code, out, err = run("run", "--json")
    error = json.loads(out)["cases"][0]["error"]
    assert code == 1 and "the module 'shop.eval_agents.biling_eval_agent' that tests/test_billing.py names as its agent_module" in error, error
    assert "which is no package" in error and "src" in error and "fix the agent_module in tests/test_billing.py" in error


def test_the_drop_in_imports_a_dotted_agent_module_by_its_dotted_name(tmp_path, monkeypatch):
    """`agentdiff.core.testing.AgentEvaluator` under pytest: the worker imports the module from the
    folder its top package was found in, so the agent's `from shop.tools import …` works there too."""
    from agentdiff.core.testing import agent_ref

    _src_shop(tmp_path, "shop.eval_agents.billing_eval_agent")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    try:
        ref = agent_ref("shop.eval_agents.billing_eval_agent")
        assert (ref.name, ref.import_from) == ("billing_eval_agent", str((tmp_path / "src").resolve()))
        assert agent_ref("shop.eval_agents.billing_eval_agent.agent").import_from == ref.import_from
    finally:  # find_spec imported the parent packages: leave no `shop` behind for other tests
        for name in [n for n in sys.modules if n == "shop" or n.startswith("shop.")]:
            del sys.modules[name]


def test_an_eval_set_a_test_reads_into_evaluate_eval_set_is_found_and_a_fastapi_app_is_no_agent(tmp_path, monkeypatch):
    """`evaluate_eval_set(agent_module="shop", eval_set=EvalSet.model_validate_json(Path(…).read_text()))`
    names `tests/data/golden.json` (no eval-set suffix) and its agent; `web/__init__.py` exports a
    FastAPI `app`, which is not an agent, so no case is "more than one agent could run it"."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "storefront"\n')
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("from . import agent\n")
    (tmp_path / "shop" / "agent.py").write_text(ECHO_AGENT)
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "__init__.py").write_text("from fastapi import FastAPI\n\napp = FastAPI()\n")
    (tmp_path / "tests" / "data").mkdir(parents=True)
    (tmp_path / "tests" / "data" / "golden.json").write_text(eval_set("golden", "hello", "bye"))
    (tmp_path / "tests" / "test_golden.py").write_text(
        "from pathlib import Path\n\nfrom google.adk.evaluation.agent_evaluator import AgentEvaluator\n"
        "from google.adk.evaluation.eval_set import EvalSet\n\nDATA = Path(__file__).parent / 'data'\n\n\n"
        "async def test_golden():\n    eval_set = EvalSet.model_validate_json((DATA / 'golden.json').read_text(encoding='utf-8'))\n"
        "    await AgentEvaluator.evaluate_eval_set(agent_module='shop', eval_set=eval_set, eval_config=None)\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run("run", "--json")
    cases = json.loads(out)["cases"]
    assert code == 0 and [(c["id"], c["agent"], c["status"]) for c in cases] == [
        ("tests/data/golden.json::case_0", "shop", "passed"), ("tests/data/golden.json::case_1", "shop", "passed")], cases
    (tmp_path / "tests" / "test_golden.py").unlink()  # no test names the agent: the FastAPI app is still not one
    code, out, err = run("run", "--json", "tests/data/golden.json")
    assert code == 0 and {c["agent"] for c in json.loads(out)["cases"]} == {"shop"}, out


@pytest.mark.parametrize("init, sibling, is_agent", [
    ("from fastapi import FastAPI\napp = FastAPI()\n", "", False),
    ("from .main import app\n", "from flask import Flask\napp = Flask(__name__)\n", False),
    ("from .main import app\n", "from google.adk.apps import App\napp = App(name='x', root_agent=agent)\n", True),
    ("from google.adk.apps import App\nfrom .core import agent_obj\napp = App(name='x', root_agent=agent_obj)\n", "", True),
    ("from .agent import root_agent\n", "", True),
])
def test_an_app_is_an_agent_only_when_it_is_adks(tmp_path, init, sibling, is_agent):
    from agentdiff.core.project.agent_packages import is_agent_package

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(init)
    if sibling:
        (tmp_path / "pkg" / "main.py").write_text(sibling)
    assert is_agent_package(tmp_path / "pkg") is is_agent


def test_eval_sets_named_otherwise_are_found_beside_a_test_config_and_where_a_makefile_names_them(tmp_path, monkeypatch):
    """`eval/golden_evalset.json` beside `eval/test_config.json` (a JSON schema beside it is no case), and
    `eval/data/refunds_eval.json` that the Makefile's `adk eval support …` runs with `support`."""
    for name in ("orders", "support"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "agent.py").write_text(ECHO_AGENT)
    (tmp_path / "eval" / "data").mkdir(parents=True)
    (tmp_path / "eval" / "golden_evalset.json").write_text(eval_set("golden", "hello"))
    (tmp_path / "eval" / "test_config.json").write_text(json.dumps({"criteria": {"response_match_score": 0.8}}))
    (tmp_path / "eval" / "schema.json").write_text(json.dumps({"type": "object"}))
    (tmp_path / "eval" / "data" / "refunds_eval.json").write_text(eval_set("refunds", "refund", "late refund"))
    (tmp_path / "Makefile").write_text(
        "REFUNDS ?= eval/data/refunds_eval.json\n\neval:\n\tuv run adk eval orders eval/golden_evalset.json\n"
        "\tuv run adk eval \\\n\t\tsupport $(REFUNDS):case_0 --config_file_path eval/test_config.json\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run("run", "--json")
    cases = json.loads(out)["cases"]
    assert code == 0 and [(c["id"], c["agent"]) for c in cases] == [
        ("eval/data/refunds_eval.json::case_0", "support"), ("eval/data/refunds_eval.json::case_1", "support"),
        ("eval/golden_evalset.json::case_0", "orders")], cases
    code, out, err = run("list")
    assert "3 cases, 0 load errors" in out and "schema.json" not in out + err


def test_eval_sets_nothing_names_are_pointed_out_with_how_to_include_them(tmp_path, monkeypatch):
    (tmp_path / "support").mkdir()
    (tmp_path / "support" / "agent.py").write_text(ECHO_AGENT)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "smoke_eval.json").write_text(eval_set("smoke", "hello", "bye"))
    (tmp_path / "evals" / "package.json").write_text(json.dumps({"eval_cases": "not an eval set"}))
    monkeypatch.chdir(tmp_path)
    code, out, err = run("run")
    assert code == 2 and "no cases found" in err, err
    assert "note: evals/smoke_eval.json: an eval set (2 cases) not read: its name does not end in .test.json or .evalset.json" in err
    assert 'paths = ["evals/smoke_eval.json"]' in err and "package.json" not in err
    code, out, err = run("list", "--json")
    assert json.loads(out)["notes"][0].startswith("evals/smoke_eval.json: an eval set (2 cases)")
    (tmp_path / "pyproject.toml").write_text('[tool.agentdiff]\npaths = ["evals/smoke_eval.json"]\n')  # the fix the note gives
    code, out, err = run("run")
    assert code == 0 and "running 2 cases" in err, err


async def test_the_tui_with_no_case_says_which_files_look_like_eval_sets(tmp_path):
    from fake_pool import CannedPool
    from tui_support import FakeEditor

    from agentdiff.tui.app import create_app

    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "smoke_eval.json").write_text(eval_set("smoke", "hello"))
    app = create_app(tmp_path, [tmp_path], pool=CannedPool(tmp_path), watch=False, editor=FakeEditor())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.2)
        said = [n.message for n in app._notifications]
        assert any(m.startswith("no cases found. evals/smoke_eval.json: an eval set (1 case) not read") and 'paths = ["evals/smoke_eval.json"]' in m
                   for m in said), said


def test_run_from_a_monorepo_root_names_its_projects_and_the_one_to_cd_into(tmp_path, monkeypatch):
    for project, agent in (("agents/travel", "travel_agent"), ("agents/billing", "billing_agent"), ("tools/lint", "")):
        (tmp_path / project).mkdir(parents=True)
        (tmp_path / project / "pyproject.toml").write_text(f'[project]\nname = "{project.split("/")[-1]}"\n')
        if agent:
            (tmp_path / project / agent).mkdir()
            (tmp_path / project / agent / "agent.py").write_text(ECHO_AGENT)
    (tmp_path / "agents" / "travel" / "eval").mkdir()
    (tmp_path / "agents" / "travel" / "eval" / "trips.evalset.json").write_text(eval_set("trips", "hello"))
    monkeypatch.chdir(tmp_path)
    code, out, err = run("run", "--json")
    error = json.loads(out)["cases"][0]["error"]
    assert "the projects below, which hold agents: agents/billing, agents/travel" in error, error
    assert "cd agents/travel && agentdiff" in error and "<your_agent_package>" not in error


LITELLM_AGENT = """import os

from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm

root_agent = LlmAgent(name="local_agent", model=LiteLlm(model=os.getenv("LOCAL_MODEL", "qwen3:32b")), instruction="Answer briefly.")
"""


def test_doctor_checks_each_litellm_model_as_the_agent_sees_it_and_the_run_says_the_same(tmp_path, monkeypatch):
    """The project's default model without its `.env` (`qwen3:32b`, no provider), then an Ollama base
    that does not answer, then one that does, then a provider whose key is not set."""
    import socket

    (tmp_path / "local_agent").mkdir()
    (tmp_path / "local_agent" / "__init__.py").write_text("from . import agent\n")
    (tmp_path / "local_agent" / "agent.py").write_text(LITELLM_AGENT)
    (tmp_path / "local_agent" / "smoke.evalset.json").write_text(eval_set("smoke", "hello"))
    for name in ("LOCAL_MODEL", "OLLAMA_API_BASE", "OPENAI_API_KEY", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    code, out, err = run("doctor")
    assert code == 1 and "no problems" not in out
    assert "✗ local_agent: the model 'qwen3:32b' names no LiteLLM provider, so every run fails at its first model call" in out, out
    assert "(for Ollama 'ollama_chat/qwen3:32b')" in out
    code, out, err = run("run", "--mode", "live", "--json")
    error = json.loads(out)["cases"][0]["error"]
    assert "LLM Provider NOT provided. You passed model=qwen3:32b (LiteLLM cannot tell which provider serves this model" in error, error
    assert "\n" not in error and "`agentdiff doctor` checks each agent's model" in error
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # bound, never listening: nothing answers there
        (tmp_path / ".env").write_text(f"LOCAL_MODEL=ollama_chat/qwen3:32b\nOLLAMA_API_BASE=http://127.0.0.1:{port}\n")
        code, out, err = run("doctor")
    assert f"the model 'ollama_chat/qwen3:32b' is served at http://127.0.0.1:{port} (OLLAMA_API_BASE), which does not answer" in out, out
    assert "start Ollama (`ollama serve`)" in out and code == 1
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        (tmp_path / ".env").write_text(f"LOCAL_MODEL=ollama_chat/qwen3:32b\nOLLAMA_API_BASE=http://127.0.0.1:{port}\n")
        code, out, err = run("doctor")
    assert f"✓ local_agent: the model 'ollama_chat/qwen3:32b' via ollama_chat at http://127.0.0.1:{port}" in out, out
    assert code == 0 and "no problems" in out
    (tmp_path / ".env").write_text("LOCAL_MODEL=openai/gpt-4o\n")
    code, out, err = run("doctor")
    assert "✗ local_agent: the model 'openai/gpt-4o' (openai) needs OPENAI_API_KEY, which is not set" in out, out


def test_an_agent_module_that_is_a_file_defining_agent_runs_that_agent(tmp_path, monkeypatch):
    """`agent_module="support.test_billing_agent"`: a module of the package that defines `agent` (ADK
    takes it), not the package's own root agent; the drop-in names it the same way."""
    (tmp_path / "support").mkdir()
    (tmp_path / "support" / "__init__.py").write_text("from . import agent\n")
    (tmp_path / "support" / "agent.py").write_text(ECHO_AGENT)
    (tmp_path / "support" / "test_billing_agent.py").write_text(
        "import types\n\n\nasync def _turn(ctx):\n    return 'billing: ' + ctx.message\n\n\nagent = types.SimpleNamespace(run_turn=_turn)\n")
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    data = json.loads(eval_set("billing", "hello"))
    data["eval_cases"][0]["conversation"][0]["final_response"]["parts"][0]["text"] = "billing: hello"
    (tmp_path / "tests" / "unit" / "billing_direct.test.json").write_text(json.dumps(data))
    (tmp_path / "tests" / "unit" / "test_billing.py").write_text(
        "from google.adk.evaluation.agent_evaluator import AgentEvaluator\n\n\nasync def test_billing():\n"
        "    await AgentEvaluator.evaluate(agent_module='support.test_billing_agent',\n"
        "                                  eval_dataset_file_path_or_dir='tests/unit/billing_direct.test.json')\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run("run", "--json")
    case = json.loads(out)["cases"][0]
    assert code == 0 and case["status"] == "passed" and case["agent"] == "support.test_billing_agent", case
    from agentdiff.core.testing import agent_ref

    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert agent_ref("support.test_billing_agent").entry == "test_billing_agent"
    finally:
        for name in [n for n in sys.modules if n == "support" or n.startswith("support.")]:
            del sys.modules[name]


def test_a_folder_an_adk_eval_usage_line_names_holds_eval_sets_for_that_agent(tmp_path, monkeypatch):
    """`adk eval mystery tests/eval/eval_sets/` in a test's docstring and in CLAUDE.md: each `*_eval.json`
    there that loads as an eval set is a case file, run by `mystery` (the other package is not)."""
    for name in ("mystery", "podcast"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "agent.py").write_text(ECHO_AGENT)
    sets = tmp_path / "tests" / "eval" / "eval_sets"
    sets.mkdir(parents=True)
    for name in ("librarian", "scholar"):
        (sets / f"{name}_eval.json").write_text(eval_set(name, "hello"))
    (sets / "notes.json").write_text("[]")
    (tmp_path / "tests" / "eval" / "test_adk_eval.py").write_text('"""Golden datasets.\n\nRun:\n    adk eval mystery tests/eval/eval_sets/\n"""\n')
    (tmp_path / "CLAUDE.md").write_text("## Evaluation\n\n```bash\nadk eval mystery tests/eval/eval_sets/\n```\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run("run", "--json")
    cases = json.loads(out)["cases"]
    assert code == 0 and [(c["id"], c["agent"]) for c in cases] == [
        ("tests/eval/eval_sets/librarian_eval.json::case_0", "mystery"), ("tests/eval/eval_sets/scholar_eval.json::case_0", "mystery")], cases


def test_an_agent_whose_settings_lack_a_variable_or_that_needs_another_adk_says_so_in_one_line(tmp_path, monkeypatch):
    """A pydantic settings class with no value for a field (the project's `.env` was not copied), and an
    import of a name this ADK does not have: one line each, naming the variable, or the ADK version."""
    (tmp_path / "devflow").mkdir()
    (tmp_path / "devflow" / "agent.py").write_text(
        "from pydantic import BaseModel\n\n\nclass AgentConfig(BaseModel):\n    github_personal_access_token: str\n\n\n"
        "config = AgentConfig()\n\n\nasync def run_turn(ctx):\n    return ctx.message\n")
    (tmp_path / "devflow" / "dev.evalset.json").write_text(eval_set("dev", "hello"))
    (tmp_path / "old_adk").mkdir()
    (tmp_path / "old_adk" / "agent.py").write_text(
        "from google.adk.agents.callback_context import NoSuchContextInThisVersion\n\n\nasync def run_turn(ctx):\n    return ctx.message\n")
    (tmp_path / "old_adk" / "old.evalset.json").write_text(eval_set("old", "hello"))
    (tmp_path / "old_sdk").mkdir()  # a module of an installed package that this version of it lacks
    (tmp_path / "old_sdk" / "agent.py").write_text("from pydantic.fastmodel_of_v0 import Model\n\n\nasync def run_turn(ctx):\n    return ctx.message\n")
    (tmp_path / "old_sdk" / "sdk.evalset.json").write_text(eval_set("sdk", "hello"))
    monkeypatch.chdir(tmp_path)
    code, out, err = run("run", "--json")
    errors = {c["agent"]: c["error"] for c in json.loads(out)["cases"]}
    assert "\n" not in errors["devflow"] and "ValidationError: AgentConfig: github_personal_access_token: Field required" in errors["devflow"], errors
    assert "(the agent's settings need GITHUB_PERSONAL_ACCESS_TOKEN: set it in the environment or in a .env beside the agent)" in errors["devflow"]
    assert "the agent was written for another ADK version: this Python has google-adk " in errors["old_adk"], errors
    assert "(pydantic is installed for " in errors["old_sdk"] and "a version without pydantic.fastmodel_of_v0" in errors["old_sdk"], errors
