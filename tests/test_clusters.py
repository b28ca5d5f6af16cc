"""Failure clusters: failing cases grouped by the signature of their first divergence, in the
reports and in the TUI (grouped with C; a cluster labelled with l labels its cases, one undo step)."""

from __future__ import annotations

import json

from agentdiff.core.reports.json_report import render_json
from agentdiff.core.reports.markdown import render_markdown
from agentdiff.core.workbench.triage import Triage
from fake_pool import CannedPool
from tui_support import copy_samples, make_app, settle, until

REFUND_LATE = "sample_agents/customer_service/customer_service.evalset.json::refund_too_late"
REFUND_TWICE = "sample_agents/customer_service/customer_service.evalset.json::no_second_refund"
DIM = "sample_agents/home_automation/home_automation.evalset.json::dim_living_room"
EXTRA_REFUND = "tool_calls · inserted · issue_refund"


async def test_cases_that_broke_the_same_way_share_a_cluster_in_reports_and_in_the_tree(tmp_path):
    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        results = [state.run.result for state in app.workbench.cases.values()]
        by_id = {r.id: r.cluster for r in results}
        assert by_id[REFUND_LATE] == by_id[REFUND_TWICE] == EXTRA_REFUND
        assert by_id[DIM] == "tool_calls · changed · set_device_state · args.brightness"
        assert all(r.cluster is None for r in results if r.status.value == "passed")
        summary = json.loads(render_json(results))["summary"]
        assert summary["clusters"][0] == {"signature": EXTRA_REFUND, "cases": [REFUND_LATE, REFUND_TWICE]}
        assert f"| 2 | {EXTRA_REFUND} | refund_too_late, no_second_refund |" in render_markdown(results)

        await pilot.press("C")
        await pilot.pause(0.2)
        tree = app.main.tree
        tops = {str(node.label): node for node in tree.root.children}
        cluster = tops[f"✗ {EXTRA_REFUND}"]
        assert set(tree.cases_under(cluster)) == {REFUND_LATE, REFUND_TWICE} and "✓ passing" in tops
        tree.move_cursor(cluster)
        await pilot.pause(0.1)
        await pilot.press("l", *"double refund", "enter")
        await until(pilot, lambda: Triage.load(tmp_path).label_of(REFUND_TWICE) == "double refund")
        assert Triage.load(tmp_path).label_of(REFUND_LATE) == "double refund"
        await pilot.press("z")  # one label for the cluster, one step back
        await until(pilot, lambda: Triage.load(tmp_path).label_of(REFUND_LATE) is None)
        assert Triage.load(tmp_path).label_of(REFUND_TWICE) is None
        await pilot.press("C")
        await pilot.pause(0.2)
        assert "customer_service" in {str(node.label) for node in tree.root.children}
