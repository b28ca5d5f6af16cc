"""The timeline (`6`): a turn's model and tool calls on a time axis with their latency, tokens and the
agent or node that made them, from the timings a run keeps; beside a kept run's (`B`)."""

from __future__ import annotations

from agentdiff.core.traces.from_run import trace_from_output
from agentdiff.core.traces.timeline import turn_spans
from agentdiff.core.worker.jobs import ExchangeOut, Message, RunOutput, ToolOut
from agentdiff.tui.timeline_view import timeline_view
from tui_support import ScriptedChanges, copy_samples, make_app, settle

WORKFLOW = "sample_agents/support_router/conformance/orders/where_is_my_order"
DATASET_CASE = "sample_agents/weather_desk/tests/eval/datasets/basic-dataset.json::weather_query"


def _run(model_seconds: float, tool_seconds: float) -> RunOutput:
    usage = {"usage_metadata": {"prompt_token_count": 296, "candidates_token_count": 12}}
    return RunOutput(
        events=[{"author": "user", "content": {"role": "user", "parts": [{"text": "hi"}]}},
                {"author": "desk", "content": {"role": "model", "parts": [{"text": "done"}]}}],
        exchanges=[ExchangeOut(agent="desk", turn=0, index=0, seq=0, request={"model": "gemini-2.5-flash"}, responses=[usage],
                               start=0.1, end=0.1 + model_seconds),
                   ExchangeOut(agent="desk", turn=0, index=1, seq=2, request={"model": "gemini-2.5-flash"}, responses=[usage],
                               start=0.2 + model_seconds + tool_seconds, end=0.3 + model_seconds + tool_seconds)],
        tools=[ToolOut(agent="desk", turn=0, seq=1, name="lookup_order", start=0.1 + model_seconds, end=0.1 + model_seconds + tool_seconds,
                       has_response=True, response={"status": "shipped"})])


def test_a_turns_calls_are_spans_in_the_order_they_began_with_their_tokens():
    trace = trace_from_output(_run(0.8, 0.3), [Message(content={"role": "user", "parts": [{"text": "hi"}]})])
    spans = turn_spans(trace.turns[0])
    assert [(s.kind, s.name, s.by) for s in spans] == [("model", "gemini-2.5-flash", "desk"), ("tool", "lookup_order", "desk"),
                                                     ("model", "gemini-2.5-flash", "desk")]
    assert round(spans[0].seconds, 3) == 0.8 and (spans[0].prompt_tokens, spans[0].output_tokens) == (296, 12)


def test_the_view_puts_both_sides_on_one_scale_and_says_when_a_side_kept_no_timings():
    message = [Message(content={"role": "user", "parts": [{"text": "hi"}]})]
    before, now = trace_from_output(_run(0.4, 0.1), message), trace_from_output(_run(1.6, 0.1), message)
    view = timeline_view(before, now, 0)
    assert view.title == "6 timeline · 2 model calls · 1 tool call · 1.90 s"
    (left, right), *_ = view.rows
    assert "400 ms  model gemini-2.5-flash · desk · 296→12 tok" in left.plain and "1.60 s  model" in right.plain
    assert left.plain.count("█") < right.plain.count("█")  # the slower call is the longer bar, on one scale
    alone = timeline_view(None, now, 0)
    assert alone.rows[0][0].plain.startswith("the baseline keeps no timings")
    assert all(left.plain == right.plain for left, right in alone.rows)  # one side: drawn once, the whole width
    assert timeline_view(None, None, 0).status == "absent"


async def test_6_shows_a_workflows_and_an_agents_cli_cases_calls_from_a_real_run(tmp_path, worker_pool):
    copy_samples(tmp_path, agents=("support_router", "weather_desk"))
    app = make_app(tmp_path, worker_pool, ScriptedChanges())
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot, timeout=60)
        for case_id, by in ((WORKFLOW, "order_desk"), (DATASET_CASE, "weather_desk")):
            app.main.tree.select_case(case_id)
            await pilot.pause(0.1)
            if not app.main.detail.timeline_open or not app.main.detail.layer_in_view("timeline"):
                await pilot.press("6")  # unfolds it, or brings the open one into view
            await pilot.pause(0.2)
            section = app.main.detail.query_one("#layer-timeline")
            title = str(section.query_one(".layer-title").render())
            assert section.display and title.startswith("6 timeline · 2 model calls · 1 tool call"), title
            spans = turn_spans(app.workbench.cases[case_id].run.trace.turns[0])
            assert spans and all(span.by == by and span.end >= span.start for span in spans)
            screen = app.export_screenshot().replace("&#160;", " ")
            assert "6 timeline" in screen and "▕" in screen  # on screen, its bars drawn
            shown = timeline_view(None, app.workbench.cases[case_id].run.trace, 0).rows
            assert shown[0][0].plain.startswith("the baseline keeps no timings")  # the run's calls alone, the whole width
            assert "model demo-" in shown[1][1].plain and "tok" in shown[1][1].plain
            assert section.region.y < 50 - 3  # brought into view, below its title its first bar


def test_a_model_calls_span_ends_with_its_answer_not_after_the_tool_it_asked_for(tmp_path, worker_pool):
    """ADK runs the tools a model call asks for before it asks that call for more: the call's span ends
    with its answer, so a slow tool is the tool's bar, never the model's."""
    import asyncio

    from agentdiff.core.project.discovery import discover
    from agentdiff.core.run.options import RunOptions
    from agentdiff.core.run.runner import run_case

    samples = copy_samples(tmp_path, agents=("weather_desk",))
    agent = samples / "weather_desk" / "app" / "agent.py"
    agent.write_text(agent.read_text().replace('    """Simulates a web search for the weather in a city."""\n',
                                               '    """Simulates a web search for the weather in a city."""\n    import time\n    time.sleep(0.6)\n'))
    (ref,) = [c for c in discover([samples], tmp_path).cases if c.id == DATASET_CASE]
    run = asyncio.run(run_case(ref, worker_pool, RunOptions(), tmp_path))
    spans = turn_spans(run.trace.turns[0])
    tool = next(s for s in spans if s.kind == "tool")
    asked = [s for s in spans if s.kind == "model" and s.start <= tool.start]
    assert tool.seconds >= 0.6 and asked, spans
    assert all(s.end <= tool.start + 0.05 and s.seconds < 0.5 for s in asked), spans


async def test_6_on_another_case_brings_the_open_timeline_into_view_before_it_folds_it(tmp_path):
    from fake_pool import CannedPool

    copy_samples(tmp_path)
    app = make_app(tmp_path, CannedPool(tmp_path))
    refund_twice = "sample_agents/customer_service/customer_service.evalset.json::no_second_refund"
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.main.tree.select_case("sample_agents/customer_service/customer_service.evalset.json::order_status")
        await pilot.pause(0.1)
        await pilot.press("6")
        await pilot.pause(0.2)
        assert app.main.detail.timeline_open and app.main.detail.layer_in_view("timeline")
        app.main.tree.select_case(refund_twice)  # a long case: its timeline far below the screen
        await pilot.pause(0.2)
        assert app.main.detail.timeline_open and not app.main.detail.layer_in_view("timeline")
        await pilot.press("6")
        await pilot.pause(0.2)
        assert app.main.detail.timeline_open and app.main.detail.layer_in_view("timeline")  # shown, not folded out of sight
        await pilot.press("6")
        await pilot.pause(0.1)
        assert not app.main.detail.timeline_open
