"""The node layer from ADK 2 events (shapes as ADK 2.13 emits them): one step per node run with its
route, output and branch; the workflow's own output; alignment by node path where a route change
reads `route: classify refund → status` and another node answering reads `node: a → b`; parallel
branches compared regardless of the order they finished in; journey checks on nodes validated."""

from __future__ import annotations

from agentdiff.core.diff.case import diff_case
from agentdiff.core.diff.nodes import diff_nodes
from agentdiff.core.diff.session import diff_session
from agentdiff.core.formats.checks_file import load_checks_file
from agentdiff.core.traces.model import SessionSnapshot, Trace, Turn
from agentdiff.core.traces.nodes import node_steps, parallel_canonical, workflow_output


def node_event(path, output=None, route=None, branch=None, answer=None, output_for=None, author="flow"):
    event = {"author": author, "node_info": {"path": path, "output_for": output_for or [path]}, "branch": branch,
             "actions": {"state_delta": {}, **({"route": route} if route is not None else {})}}
    if answer is not None:  # an LLM node: its message is its output
        event["node_info"]["message_as_output"] = True
        event["content"] = {"role": "model", "parts": [{"text": answer}]}
    else:
        event["output"] = output
    return event


def routed(route: str, desk: str) -> list[dict]:
    return [{"author": "user", "content": {"role": "user", "parts": [{"text": "hi"}]}},
            node_event("flow@1/classify@1", "hi", route),
            node_event(f"flow@1/{desk}@1", answer="done", output_for=[f"flow@1/{desk}@1", "flow@1"], author=desk)]


def trace(events: list[dict]) -> Trace:
    has, output = workflow_output(events)
    return Trace(turns=(Turn(index=0, nodes=node_steps(events), final_response="done", workflow_output=output, has_workflow_output=has),))


def test_each_node_run_is_a_step_with_its_route_output_and_the_workflows_own_output():
    steps = node_steps(routed("refund", "refund_desk"))
    assert [(s.path, s.run, s.route, s.output, s.message_output) for s in steps] == [
        ("classify", "classify@1", "refund", "hi", False), ("refund_desk", "refund_desk@1", None, "done", True)]
    assert workflow_output(routed("refund", "refund_desk")) == (True, "done")
    assert node_steps([{"author": "agent", "content": {"parts": [{"text": "x"}]}}]) == ()  # not a workflow


def test_nested_nodes_are_named_by_their_path_below_the_root_and_camel_case_dumps_read_alike():
    event = node_event("flow@1/inner@1/writer@2", answer="w", output_for=["flow@1/inner@1/writer@2", "flow@1/inner@1"])
    camel = {"author": "flow", "nodeInfo": {"path": "flow@1/inner@1/writer@2", "outputFor": ["flow@1"]}, "output": 3}
    assert [(s.path, s.name, s.run) for s in node_steps([event])] == [("inner/writer", "writer", "writer@2")]
    assert workflow_output([camel]) == (True, 3)


def test_a_route_change_and_the_node_that_answered_instead_are_one_row_each():
    diff = diff_case(trace(routed("status", "status_desk")), trace(routed("refund", "refund_desk")))
    nodes = [d.summary for d in diff.divergences if d.layer == "nodes"]
    assert nodes == ["turn 1 · nodes · route: classify status → refund", "turn 1 · nodes · node: status_desk → refund_desk"]
    assert diff.layer("nodes").status == "changed" and not any(d.counts for d in diff.divergences if d.layer == "nodes")
    assert diff_case(trace(routed("refund", "refund_desk")), trace(routed("refund", "refund_desk"))).layer("nodes").status == "same"


def test_a_node_that_ran_only_on_one_side_is_inserted_or_deleted_and_a_changed_output_is_said():
    expected = [node_event("flow@1/a@1", 1), node_event("flow@1/b@1", 2)]
    actual = [node_event("flow@1/a@1", 5), node_event("flow@1/b@1", 2), node_event("flow@1/audit@1", None)]
    rows = diff_nodes(node_steps(expected), node_steps(actual))
    assert [(r.kind, r.expected.path if r.expected else None, r.actual.path if r.actual else None) for r in rows] == [
        ("changed", "a", "a"), ("same", "b", "b"), ("inserted", None, "audit")]
    summaries = [d.summary for d in diff_case(trace(expected), trace(actual)).divergences]
    assert summaries == ["turn 1 · nodes · a output 1 → 5", "turn 1 · nodes · node audit ran (not in the baseline)"]
    assert [r.kind for r in diff_nodes(node_steps(actual), node_steps(expected))][-1] == "deleted"


def test_parallel_branches_finishing_in_another_order_are_no_divergence_unless_order_is_strict():
    one = [node_event("flow@1/split@1", 0), node_event("flow@1/b@1", "B", branch="b@1"),
           node_event("flow@1/inner@1/a@1", "A", branch="inner@1"), node_event("flow@1/inner@1/w@1", "W", branch="inner@1"),
           node_event("flow@1/merge@1", {"inner": "W", "b": "B"})]
    other = [one[0], one[2], one[3], one[1], one[4]]
    assert [s.path for s in parallel_canonical(node_steps(other))] == [s.path for s in parallel_canonical(node_steps(one))]
    assert [s.path for s in parallel_canonical(node_steps(one))] == ["split", "b", "inner/a", "inner/w", "merge"]  # a branch keeps its order
    assert all(r.kind == "same" for r in diff_nodes(node_steps(one), node_steps(other)))
    assert any(r.kind != "same" for r in diff_nodes(node_steps(one), node_steps(other), strict_order=True))


def test_session_rows_are_named_by_the_node_that_wrote_the_event():
    events = routed("refund", "refund_desk")
    changed = [*events[:2], {**events[2], "content": {"role": "model", "parts": [{"text": "other"}]}}]
    diff = diff_session(SessionSnapshot(events=tuple(events)), SessionSnapshot(events=tuple(changed)))
    assert [(row.kind, row.author) for row in diff.events] == [("same", "user"), ("same", "classify"), ("changed", "refund_desk")]


def test_node_checks_are_validated_with_their_line(tmp_path):
    path = tmp_path / "agentdiff-checks.yaml"
    path.write_text("checks:\n  forbidden_nodes: [escalate]\n  required_route: {classify: [a]}\n  max_node_visits: {loop: -1}\n")
    checks, errors = load_checks_file(path, "agentdiff-checks.yaml")
    assert checks is None and [(e.line, e.message) for e in errors] == [
        (3, "`required_route` must be a table of node name: route (a string, number or true/false)"),
        (4, "`max_node_visits` must be a table of node name: whole number ≥ 0")]
    path.write_text("checks:\n  forbidden_nodes: [escalate]\n  required_route: {classify: refund}\n  max_node_visits: {loop: 3}\n")
    checks, errors = load_checks_file(path, "agentdiff-checks.yaml")
    assert errors == [] and [s.label for s in checks.for_case([], [])] == [
        "forbidden_nodes escalate", "required_route classify → refund", "max_node_visits loop ≤ 3"]


def test_an_event_that_ends_elsewhere_unchanged_is_one_moved_row_where_it_was_expected():
    user = {"author": "user", "content": {"role": "user", "parts": [{"text": "go"}]}}
    stock, price = node_event("flow@1/stock@1", "in stock", branch="stock@1"), node_event("flow@1/price@1", "12 EUR", branch="price@1")
    merge = node_event("flow@1/merge@1", {"stock": "in stock", "price": "12 EUR"})
    diff = diff_session(SessionSnapshot(events=(user, stock, price, merge)), SessionSnapshot(events=(user, price, stock, merge)))
    assert [(row.kind, row.author, row.expected_index, row.actual_index) for row in diff.events if row.kind != "same"] == [
        ("moved", "stock", 1, 2)]
    summaries = [d.summary for d in diff_case(Trace(session=SessionSnapshot(events=(user, stock, price, merge))),
                                              Trace(session=SessionSnapshot(events=(user, price, stock, merge)))).divergences]
    assert summaries == ["turn 1 · session · event 2 (stock) moved to event 3"]


def test_strict_node_order_compares_parallel_branches_in_the_order_they_ran(tmp_path):
    from agentdiff.core.diff.case import with_strict_node_order
    from agentdiff.core.project.config import load_project_config

    one = [node_event("flow@1/split@1", 0), node_event("flow@1/a@1", "A", branch="a@1"), node_event("flow@1/b@1", "B", branch="b@1")]
    other = [one[0], one[2], one[1]]
    expected, actual = trace(one), trace(other)
    loose = diff_case(expected, actual)
    assert loose.layer("nodes").status == "same"
    strict = with_strict_node_order(loose, expected, actual)
    assert strict.layer("nodes").status == "changed" and strict.criteria.strict_node_order
    assert [d.summary for d in strict.divergences if d.layer == "nodes"] == [
        "turn 1 · nodes · node a did not run", "turn 1 · nodes · node a ran (not in the baseline)"]  # before b, then after it
    (tmp_path / "pyproject.toml").write_text("[tool.agentdiff]\nstrict_node_order = true\n")
    config, errors = load_project_config(tmp_path)
    assert errors == [] and config.strict_node_order is True
    (tmp_path / "pyproject.toml").write_text("[tool.agentdiff]\nstrict_node_order = 'yes'\n")
    config, errors = load_project_config(tmp_path)
    assert [e.message for e in errors] == ["`strict_node_order` must be true or false, not 'yes'"] and config.strict_node_order is False
