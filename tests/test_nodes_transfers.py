"""Nodes are a workflow's: ADK 2 stamps a sub-agent's run under an LlmAgent with a node path too, and
that run is an agent transfer, not a workflow node. The run says which agents are not workflows; their
sub-agents' steps leave the nodes layer on both sides, and a workflow keeps every node (one that fails
or sets no output included)."""

from __future__ import annotations

import asyncio

from agentdiff.core.project.discovery import discover
from agentdiff.core.run.options import RunOptions
from agentdiff.core.run.runner import run_case
from agentdiff.core.traces.model import NodeStep, Trace, Turn
from agentdiff.core.traces.nodes import without_transfers
from agentdiff.core.worker.agent_tree import transfer_parents
from tui_support import copy_samples

TRANSFER = "sample_agents/trip_planner/conformance/hotels/hotel_in_paris"
WORKFLOW = "sample_agents/support_router/conformance/orders/where_is_my_order"


def test_the_agents_whose_sub_agents_are_transfers_are_those_that_are_not_workflows():
    from google.adk.agents import LlmAgent
    from google.adk.workflow import Workflow

    def step(text: str) -> str:
        return text

    booker = LlmAgent(name="booker", model="gemini-2.5-flash", sub_agents=[LlmAgent(name="payer", model="gemini-2.5-flash")])
    root = LlmAgent(name="planner", model="gemini-2.5-flash", sub_agents=[booker, LlmAgent(name="helper", model="gemini-2.5-flash")])
    assert sorted(transfer_parents(root)) == ["", "booker"]  # the root itself, and a sub-agent with sub-agents of its own
    flow = Workflow(name="flow", edges=[("START", step)])
    assert transfer_parents(flow) == []  # a workflow's graph is its nodes


def test_a_transfers_steps_leave_the_trace_and_a_workflows_stay():
    steps = (NodeStep(path="hotel_booker", run="hotel_booker@1"), NodeStep(path="inner", run="inner@1"),
             NodeStep(path="inner/writer", run="writer@1"))
    trace = Trace(turns=(Turn(index=0, nodes=steps),))
    assert [s.path for s in without_transfers(trace, [""]).turns[0].nodes] == ["inner/writer"]  # inner: a workflow under the root
    assert [s.path for s in without_transfers(trace, ["inner"]).turns[0].nodes] == ["hotel_booker", "inner"]
    assert without_transfers(trace, []) is trace


def test_an_llm_agents_transfer_has_no_nodes_layer_and_a_workflow_keeps_its_nodes(tmp_path, worker_pool):
    samples = copy_samples(tmp_path, agents=("trip_planner", "support_router"))
    cases = {c.id: c for c in discover([samples], tmp_path).cases}
    transfer = asyncio.run(run_case(cases[TRANSFER], worker_pool, RunOptions(), tmp_path))
    assert transfer.trace.transfer_parents == ("",)
    assert "nodes" not in [layer.layer for layer in transfer.diff.layers], transfer.diff.layers
    assert not any(turn.nodes or turn.actual_nodes for turn in transfer.diff.turns)
    flow = asyncio.run(run_case(cases[WORKFLOW], worker_pool, RunOptions(), tmp_path))
    assert flow.trace.transfer_parents == ()
    assert [layer.status for layer in flow.diff.layers if layer.layer == "nodes"] == ["same"]
    assert [row.expected.path for row in flow.diff.turns[0].nodes] == ["classify", "order_desk"]
