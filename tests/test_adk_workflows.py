"""ADK 2 graph workflows on the real worker pool and ADK 2.13, the model reached through the fake
Gemini server: every model call of an LLM node inside a `Workflow` is recorded and replayed like an
agent's (ADK's own replay accepts what agentdiff records, and agentdiff replays what ADK records),
replay makes no model call at all (one that escapes fails the run), and a tool call the Environment
Simulator answers is in the trace, marked simulated."""

from __future__ import annotations

import json
import sys

import pytest
import yaml
from fake_gemini import FakeGemini, Reply
from test_cli import run

pytestmark = pytest.mark.adk

AGENT = '''\
from google.adk.agents import LlmAgent
from google.adk.events.event import Event
from google.adk.workflow import Workflow


def lookup_order(order_id: str) -> dict:
    """Looks up an order's status."""
    return {"order_id": order_id, "status": "shipped"}


def classify(node_input):
    text = "".join(part.text or "" for part in node_input.parts)
    return Event(output=text, route="refund" if "refund" in text.lower() else "status")


refund_desk = LlmAgent(name="refund_desk", model="gemini-2.5-flash", instruction="You handle refunds. Be brief.")
status_desk = LlmAgent(name="status_desk", model="gemini-2.5-flash", instruction="You report order status. Use lookup_order.",
                       tools=[lookup_order])

root_agent = Workflow(name="support_flow", edges=[("START", classify, {"refund": refund_desk, "status": status_desk})])
'''

SPEC = {"description": "an order status question, routed to the status desk", "agent": "support_flow",
        "user_messages": [{"text": "Where is order 42?"}]}
CASE = "support_flow/conformance/status/where_is_my_order"


def respond(call) -> Reply:
    if any("functionResponse" in part for content in call.body.get("contents", []) for part in content.get("parts", [])):
        return Reply(text="Order 42 has shipped.")
    if "lookup_order" in json.dumps(call.body.get("tools", [])):
        return Reply(function_calls=[{"name": "lookup_order", "args": {"order_id": "42"}}])
    return Reply(text="Your refund is on its way.")


@pytest.fixture
def workflow(tmp_path, monkeypatch):
    package = tmp_path / "support_flow"
    package.mkdir()
    (package / "__init__.py").write_text("from . import agent\n")
    (package / "agent.py").write_text(AGENT)
    case = tmp_path / CASE
    case.mkdir(parents=True)
    (case / "spec.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    server = FakeGemini(respond).start()
    for key, value in server.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    yield tmp_path, server
    server.close()


def _fresh_agent(root):
    """The project's workflow, imported anew (each test's own files)."""
    for name in [n for n in sys.modules if n == "support_flow" or n.startswith("support_flow.")]:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        from support_flow.agent import root_agent
    finally:
        sys.path.remove(str(root))
    return root_agent


def test_an_llm_node_inside_a_workflow_is_recorded_and_replayed_with_no_model_call(workflow):
    from adk_conformance import replay_with_adk

    root, fake = workflow
    code, out, err = run("record", CASE)
    assert code == 0, out + err
    recordings = yaml.safe_load((root / CASE / "generated-recordings.yaml").read_text())
    kinds = [("llm" if r.get("llm_recording") else "tool", r.get("agent_name")) for r in recordings["recordings"]]
    assert kinds == [("llm", "status_desk"), ("tool", "status_desk"), ("llm", "status_desk")]
    registration = json.loads((root / CASE / "agentdiff-record.json").read_text())
    assert registration["none"]["models"] == {"refund_desk": "gemini-2.5-flash", "status_desk": "gemini-2.5-flash"}

    passed, message = replay_with_adk(_fresh_agent(root), root / CASE)
    assert passed, message  # ADK replays what agentdiff recorded

    before = len(fake.calls)
    code, out, err = run("run", CASE, "--mode", "replay", "--json")
    assert code == 0, out + err
    (case,) = json.loads(out)["cases"]
    assert (case["status"], case["model_calls"], case["tool_calls"]) == ("passed", 2, 1)
    assert len(fake.calls) == before  # replay is offline: not one model call

    agent_file = root / "support_flow" / "agent.py"
    agent_file.write_text(AGENT.replace("Use lookup_order.", "Always use lookup_order."))
    code, out, _ = run("run", CASE, "--mode", "replay", "--json")
    (case,) = json.loads(out)["cases"]
    assert code == 1 and case["status"] == "failed"
    assert {layer["layer"]: layer["status"] for layer in case["layers"]}["request"] == "changed"
    passed, _ = replay_with_adk(_fresh_agent(root), root / CASE)
    assert not passed and len(fake.calls) == before  # ADK's replay fails the edited prompt too


def test_agentdiff_replays_what_adk_records_from_a_workflow(workflow):
    from adk_conformance import record_with_adk

    root, fake = workflow
    record_with_adk(_fresh_agent(root), root / CASE)
    before = len(fake.calls)
    code, out, err = run("run", CASE, "--mode", "replay", "--json")
    assert code == 0, out + err
    assert json.loads(out)["cases"][0]["status"] == "passed" and len(fake.calls) == before


def test_a_model_call_that_escapes_the_recording_fails_the_replay(workflow):
    root, fake = workflow
    escaping = AGENT.replace('''def classify(node_input):
    text = "".join(part.text or "" for part in node_input.parts)''', '''def classify(node_input):
    from google import genai

    text = "".join(part.text or "" for part in node_input.parts)
    client = genai.Client()
    client.models.generate_content(model="gemini-2.5-flash", contents="is this a refund? " + text)''')
    (root / "support_flow" / "agent.py").write_text(escaping)
    code, out, err = run("record", CASE)
    assert code == 0, out + err
    before = len(fake.calls)
    code, out, _ = run("run", CASE, "--mode", "replay", "--json")
    (case,) = json.loads(out)["cases"]
    assert code == 1 and case["status"] == "error" and "escaped replay" in case["error"]
    assert len(fake.calls) == before


SIMULATED = '''
from google.adk.apps import App
from google.adk.tools.environment_simulation.environment_simulation_config import (
    EnvironmentSimulationConfig, InjectionConfig, ToolSimulationConfig)
from google.adk.tools.environment_simulation.environment_simulation_factory import EnvironmentSimulationFactory

lost = InjectionConfig(injected_response={"order_id": "42", "status": "lost"})
app = App(name="support_flow", root_agent=root_agent, plugins=[EnvironmentSimulationFactory.create_plugin(
    EnvironmentSimulationConfig(tool_simulation_configs=[ToolSimulationConfig(tool_name="lookup_order", injection_configs=[lost])]))])
'''


def test_a_tool_call_the_environment_simulator_answers_is_traced_and_marked_simulated(workflow):
    root, fake = workflow
    (root / "support_flow" / "agent.py").write_text(AGENT + SIMULATED)
    code, out, err = run("record", CASE)
    assert code == 0, out + err
    recordings = yaml.safe_load((root / CASE / "generated-recordings.yaml").read_text())
    tools = [r["tool_recording"] for r in recordings["recordings"] if r.get("tool_recording")]
    assert [(t["tool_call"]["name"], t["tool_response"]["response"]) for t in tools] == [("lookup_order", {"order_id": "42", "status": "lost"})]
    code, out, err = run("run", CASE, "--mode", "replay", "--json")
    (case,) = json.loads(out)["cases"]
    assert code == 0 and (case["status"], case["tool_calls"]) == ("passed", 1), out + err
    code, out, err = run("diff", CASE, "--json")
    (row,) = json.loads(out)["turns"][0]["tool_calls"]["rows"]
    assert row["actual"]["simulated"] is True and row["actual"]["response"] == {"order_id": "42", "status": "lost"}


def test_a_route_change_shows_in_the_node_layer_and_a_route_check_fails_it(workflow):
    """What ran is a layer of its own: a case recorded on the status route, then the classifier
    sends it to refunds. The diff names the route and the node that answered instead; ADK's scoring
    of the events is unchanged by it, and `required_route` makes it the verdict."""
    root, fake = workflow
    code, out, err = run("record", CASE)
    assert code == 0, out + err
    code, out, err = run("diff", CASE, "--mode", "live", "--json")
    document = json.loads(out)
    ran = document["turns"][0]["nodes"]["ran"]
    assert [(step["path"], step["route"]) for step in ran] == [("classify", "status"), ("status_desk", None)]
    assert {layer["layer"]: layer["status"] for layer in document["layers"]}["nodes"] == "same"

    agent_file = root / "support_flow" / "agent.py"
    agent_file.write_text(AGENT.replace('route="refund" if "refund" in text.lower() else "status"', 'route="refund"'))
    code, out, err = run("diff", CASE, "--mode", "live")
    assert "turn 1 · nodes · route: classify status → refund" in out, out + err
    assert "node: status_desk → refund_desk" in out
    document = json.loads(run("diff", CASE, "--mode", "live", "--json")[1])
    kinds = [(row["kind"], (row["expected"] or {}).get("path"), (row["actual"] or {}).get("path")) for row in document["turns"][0]["nodes"]["rows"]]
    assert kinds == [("changed", "classify", "classify"), ("changed", "status_desk", "refund_desk")]
    assert all(not d["counts"] for d in document["divergences"] if d["layer"] == "nodes")
    first = next(line for line in run("diff", CASE, "--mode", "live")[1].splitlines() if line.startswith("first divergence: "))
    table = run("run", CASE, "--mode", "live")[1].splitlines()
    assert table[1].strip() == first.removeprefix("first divergence: "), (table, first)  # `run` leads with what `diff` names first
    code, out, err = run("accept", CASE, "--yes")  # replayed, the recording cannot answer the node that now runs
    assert code != 0 and f"re-record it live (`agentdiff record {CASE}`" in out + err, out + err

    (root / "support_flow" / "conformance" / "agentdiff-checks.yaml").write_text(
        "checks:\n  required_route: {classify: status}\n  forbidden_nodes: [refund_desk]\n  max_node_visits: {classify: 1}\n")
    code, out, err = run("run", CASE, "--mode", "live", "--json")
    (case,) = json.loads(out)["cases"]
    checks = {m["name"]: (m["status"], m.get("reason")) for m in case["metrics"] if m["name"].startswith("check:")}
    assert checks == {
        "check: required_route classify → status": ("failed", "classify took route refund, not status (turn 1)"),
        "check: forbidden_nodes refund_desk": ("failed", "node refund_desk ran (turn 1)"),
        "check: max_node_visits classify ≤ 1": ("passed", None),
    }, checks
    assert code == 1 and case["status"] == "failed"


PARALLEL = '''\
import asyncio

from google.adk.agents import LlmAgent
from google.adk.workflow import JoinNode, Workflow


def lookup_order(order_id: str) -> dict:
    """Looks up an order's status."""
    return {"order_id": order_id, "status": "shipped"}


async def stock(node_input):
    await asyncio.sleep(STOCK_DELAY)
    return "in stock"


async def price(node_input):
    await asyncio.sleep(PRICE_DELAY)
    return "12 EUR"


status_desk = LlmAgent(name="status_desk", model="gemini-2.5-flash", instruction="You report order status. Use lookup_order.",
                       tools=[lookup_order])
inner = Workflow(name="inner", edges=[("START", status_desk)])
merge = JoinNode(name="merge")
root_agent = Workflow(name="support_flow", edges=[("START", inner), (inner, (stock, price)), ((stock, price), merge)])
'''


def test_a_join_of_parallel_branches_and_a_nested_workflow_replay_in_both_tools_whatever_order_the_branches_end(workflow):
    """Branches that end in another order are the same workflow to the node layer (compared by
    branch) and a move of their events to the session layer (ADK's replay, comparing events in
    order, fails it too), replayed with no model call; a prompt edit inside the nested workflow is
    caught by both tools; a branch's output and the join's are compared."""
    from adk_conformance import replay_with_adk

    root, fake = workflow
    agent_file = root / "support_flow" / "agent.py"
    agent_file.write_text("STOCK_DELAY, PRICE_DELAY = 0.0, 0.2\n" + PARALLEL)
    code, out, err = run("record", CASE)
    assert code == 0, out + err
    session = yaml.safe_load((root / CASE / "generated-session.yaml").read_text())
    paths = [e["node_info"]["path"] for e in session["events"] if (e.get("node_info") or {}).get("path", "").count("/")]
    assert paths.index("support_flow@1/stock@1") < paths.index("support_flow@1/price@1")
    passed, message = replay_with_adk(_fresh_agent(root), root / CASE)
    assert passed, message

    agent_file.write_text("STOCK_DELAY, PRICE_DELAY = 0.2, 0.0\n" + PARALLEL)  # the branches now end the other way round
    before = len(fake.calls)
    document = json.loads(run("diff", CASE, "--json")[1])
    ran = [step["path"] for step in document["turns"][0]["nodes"]["ran"]]
    assert ran.index("price") < ran.index("stock")  # they did end the other way round
    layers = {layer["layer"]: layer["status"] for layer in document["layers"]}
    assert layers["nodes"] == "same" and layers["request"] == "same" and layers["tool_calls"] == "same", document["divergences"]
    assert {"inner/status_desk", "merge"} <= set(ran) and len(fake.calls) == before
    # ADK's replay compares the events in order, so both tools fail it, and say it as a move
    moved = [d["summary"] for d in document["divergences"] if d["layer"] == "session"]
    assert layers["session"] == "changed" and any(" (stock) moved to event " in said for said in moved), moved
    passed, message = replay_with_adk(_fresh_agent(root), root / CASE)
    assert not passed and "Event mismatch" in message

    agent_file.write_text("STOCK_DELAY, PRICE_DELAY = 0.0, 0.2\n" + PARALLEL.replace("Use lookup_order.", "Always use lookup_order."))
    code, out, _ = run("run", CASE, "--json")
    (case,) = json.loads(out)["cases"]
    assert code == 1 and {layer["layer"]: layer["status"] for layer in case["layers"]}["request"] == "changed"
    passed, _ = replay_with_adk(_fresh_agent(root), root / CASE)
    assert not passed and len(fake.calls) == before  # ADK's replay fails the node's prompt edit too

    agent_file.write_text("STOCK_DELAY, PRICE_DELAY = 0.0, 0.2\n" + PARALLEL.replace('return "12 EUR"', 'return "15 EUR"'))
    document = json.loads(run("diff", CASE, "--json")[1])
    said = [d["summary"] for d in document["divergences"] if d["layer"] == "nodes"]
    assert 'turn 1 · nodes · price output "12 EUR" → "15 EUR"' in said and "turn 1 · nodes · merge output.price \"12 EUR\" → \"15 EUR\"" in said, said


def test_a_workflows_eval_set_scores_as_adks_agent_evaluator_scores_it(tmp_path, monkeypatch):
    """The support_router sample (a routed ADK 2 workflow) under ADK's own AgentEvaluator and under
    `agentdiff run`: the same score for every metric of every case (efficiency metrics included)."""
    import shutil
    from pathlib import Path

    from adk_reference import run_agent_evaluator

    samples = Path(__file__).resolve().parent.parent / "sample_agents"
    shutil.copytree(samples / "support_router", tmp_path / "support_router", ignore=shutil.ignore_patterns("__pycache__", "conformance"))
    shutil.copy(samples / "demo_model.py", tmp_path / "demo_model.py")
    folder = tmp_path / "support_router"
    criteria = json.loads((folder / "test_config.json").read_text())["criteria"] | {"tool_call_count_v1": 1.0}
    (folder / "test_config.json").write_text(json.dumps({"criteria": criteria}))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [n for n in sys.modules if n == "support_router" or n.startswith("support_router.")]:
        monkeypatch.delitem(sys.modules, name)
    eval_set = json.loads((folder / "support_router.evalset.json").read_text())
    result = json.loads(run_agent_evaluator("support_router", eval_set, criteria, tmp_path, "support_router", num_runs=1).read_text())
    timing = {"invocation_duration_v1"}  # wall time: each run its own
    theirs = {case["eval_id"]: {m["metric_name"]: m.get("score") for m in case["overall_eval_metric_results"] if m["metric_name"] not in timing}
              for case in result["eval_case_results"]}

    monkeypatch.chdir(tmp_path)
    code, out, err = run("run", "support_router", "--json")
    ours = {case["eval_id"]: {m["name"]: m["score"] for m in case["metrics"] if not m["name"].startswith("check:") and m["name"] not in timing}
            for case in json.loads(out)["cases"]}
    assert set(theirs) == {"order_shipped", "refund_by_email", "money_back"} and ours == theirs, (ours, theirs)
    assert {"tool_call_count_v1", "token_usage_v1", "inference_call_count_v1"} <= set(theirs["money_back"])
