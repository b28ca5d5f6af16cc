"""An ADK 2 workflow in the TUI, on the real worker pool (the `support_router` sample): the detail
shows the nodes that ran as a layer of its own, aligned against the recording where one has them,
what ran alone where the baseline (an EvalSet) records no node path, and no such layer for an agent
that is not a workflow."""

from __future__ import annotations

import pytest
from agentdiff.core.scoring.results import CaseStatus
from tui_support import ScriptedChanges, copy_samples, make_app, screen_text, settle

pytestmark = pytest.mark.adk

ROUTER = "sample_agents/support_router"
MONEY_BACK = f"{ROUTER}/support_router.evalset.json::money_back"
RECORDED = f"{ROUTER}/conformance/orders/where_is_my_order"
NOT_A_WORKFLOW = "sample_agents/home_automation/home_automation.evalset.json::turn_on_kitchen_light"


async def test_the_nodes_layer_shows_what_ran_and_the_route_that_broke_a_case(tmp_path, worker_pool):
    copy_samples(tmp_path, agents=("support_router", "home_automation"))
    app = make_app(tmp_path, worker_pool, ScriptedChanges())
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot, timeout=60)
        cases = app.workbench.cases
        assert {cases[c].status for c in (MONEY_BACK, RECORDED, NOT_A_WORKFLOW)} == {CaseStatus.FAILED, CaseStatus.PASSED}
        assert cases[MONEY_BACK].status is CaseStatus.FAILED

        app.main.tree.select_case(MONEY_BACK)
        await pilot.pause(0.2)
        screen = screen_text(app)
        assert "5 nodes" in screen and "the baseline records no node path" in screen
        assert "classify → status" in screen and "order_desk" in screen  # what ran, on the actual side
        diff = cases[MONEY_BACK].run.diff
        assert diff.layer("nodes").status == "changed"
        assert any(d.layer == "nodes" and "classify took route status, not refund" in d.summary for d in diff.divergences)

        app.main.tree.select_case(RECORDED)
        await pilot.pause(0.2)
        screen = screen_text(app)
        assert screen.count("classify → status") == 2 and cases[RECORDED].run.diff.layer("nodes").status == "same"
        assert 'workflow output: "Order A1002 is shipped."' in screen

        app.main.tree.select_case(NOT_A_WORKFLOW)
        await pilot.pause(0.2)
        assert "5 nodes" not in screen_text(app)  # not a workflow: no such layer
