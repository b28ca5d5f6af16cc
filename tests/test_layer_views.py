"""The detail's layers as rows: which layers a case has, and where the current divergence is marked."""

from __future__ import annotations


def test_a_failing_route_check_marks_the_node_row_and_a_case_with_no_node_has_no_nodes_layer():
    from agentdiff.core.diff.model import CaseDiff, DiffCriteria, Divergence, LayerStatus, TurnDiff
    from agentdiff.core.traces.model import NodeStep
    from agentdiff.tui.diff_render import layer_views, nodes_view

    ran = (NodeStep(path="classify", route="refund"), NodeStep(path="refund_desk"))
    turn = TurnDiff(index=0, user_text="refund?", actual_nodes=ran)
    check = Divergence(layer="nodes", turn=0, index=None, path="", kind="check", summary="turn 1 · check required_route", row=0)
    view = nodes_view(turn, LayerStatus("nodes", "changed", 1), check)
    assert view.rows[0][1].plain.startswith("▶") and not view.rows[1][1].plain.startswith("▶")
    layers = tuple(LayerStatus(layer, "same") for layer in ("request", "tool_calls", "response", "session", "nodes"))
    plain = CaseDiff(case_id="c", criteria=DiffCriteria(), turns=(TurnDiff(index=0, user_text="hi"),), session=None, layers=layers,
                     divergences=())
    assert layer_views(plain, 0, None)[0] is None  # trip_planner's case: no "5 nodes · same"
    assert layer_views(dataclass_replace(plain, turns=(turn,)), 0, check)[0] is not None


def dataclass_replace(value, **changes):
    import dataclasses

    return dataclasses.replace(value, **changes)


def test_a_runs_error_in_the_header_leads_with_what_to_do_and_keeps_its_place():
    from agentdiff.tui.widgets.detail_lines import error_lines

    raised = "turn 1: ValueError: No API key was provided. Please pass a valid API key."
    fix = "no model credentials: set GOOGLE_API_KEY, or GOOGLE_GENAI_USE_ENTERPRISE=TRUE (… before ADK 2.13) with GOOGLE_CLOUD_PROJECT"
    full = error_lines(f"{raised} ({fix})", short=False)
    assert full.plain == f"\n{fix}\n{raised}"
    assert error_lines(f"{raised} ({fix})", short=True).plain == f"\n{fix}"  # 80×24: the fix alone
    placed = error_lines("app/tools.py:9: ModuleNotFoundError: No module named 'supabase' (supabase comes from supabase, "
                         "which the project declares in requirements.txt)", short=True)
    assert placed.plain.startswith("\napp/tools.py:9: supabase comes from supabase")  # the place still leads, for `e`
    assert error_lines("agents/x.py:3: RuntimeError: boom (x)", short=True).plain == "\nagents/x.py:3: RuntimeError: boom (x)"
