"""An agent that fails says where, in the project's own code: the innermost frame that is the
project's (not ADK's, a library's or agentdiff's), the traceback trimmed to those frames, in `run`'s
table as one line, in `--json` and the kept run, in `diff`, and in the TUI's detail, where `e` opens
that file at that line. A SyntaxError is where the parser stopped. Real worker pool, real ADK."""

from __future__ import annotations

import json

import pytest
from agentdiff.tui.app import create_app
from test_cli import run
from tui_support import FakeEditor, settle, until

NATIVE = {
    "broken": "async def run_turn(ctx):\n    return ctx.message\n\n\ndef oops(:\n    pass\n",
    "lookup": ("CITIES = {'paris': 'sunny'}\n\n\ndef weather(city):\n    return CITIES[city]\n\n\n"
               "async def run_turn(ctx):\n    return weather(ctx.message.lower())\n"),
}

SHOP = '''\
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from .tools import price_of


class Scripted(BaseLlm):
    model: str = "scripted"

    async def generate_content_async(self, llm_request, stream=False):
        call = types.FunctionCall(name="price_of", args={"item": "pear"})
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


async def load_tools():
    return [price_of]


root_agent = LlmAgent(name="shop", model=Scripted(), instruction="Sell.", tools=TOOLS)
'''

TOOLS = 'PRICES = {"apple": 1.0}\n\n\ndef price_of(item: str) -> dict:\n    """The price of an item."""\n    return {"price": PRICES[item]}\n'


def _eval_set(path, eval_set_id: str, text: str) -> None:
    path.write_text(json.dumps({"eval_set_id": eval_set_id, "eval_cases": [{"eval_id": "c", "conversation": [
        {"user_content": {"role": "user", "parts": [{"text": text}]}, "final_response": {"role": "model", "parts": [{"text": "sunny"}]}}]}]}))


@pytest.fixture
def failing(tmp_path, monkeypatch):
    for name, source in NATIVE.items():
        (tmp_path / "agents" / name).mkdir(parents=True)
        (tmp_path / "agents" / name / "agent.py").write_text(source)
        _eval_set(tmp_path / "agents" / name / f"{name}.evalset.json", name, "Rome")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_run_says_where_in_the_projects_code_an_agent_failed(failing):
    code, out, _ = run("run")
    assert code == 1
    assert "    agents/broken/agent.py:5: SyntaxError: invalid syntax\n" in out
    assert "    agents/lookup/agent.py:5: KeyError: 'rome' (turn 1)\n" in out  # the innermost frame: the helper, not run_turn
    code, out, _ = run("run", "--json")
    cases = {case["id"]: case for case in json.loads(out)["cases"]}
    lookup = cases["agents/lookup/lookup.evalset.json::c"]
    assert (lookup["error"], lookup["error_location"]) == ("turn 1: KeyError: 'rome'", "agents/lookup/agent.py:5")
    assert lookup["error_trace"].splitlines() == [
        f'  File "{failing}/agents/lookup/agent.py", line 9, in run_turn', "    return weather(ctx.message.lower())",
        f'  File "{failing}/agents/lookup/agent.py", line 5, in weather', "    return CITIES[city]", "KeyError: 'rome'"]
    assert "importlib" not in cases["agents/broken/broken.evalset.json::c"]["error_trace"]  # only the project's frames
    kept = sorted((failing / ".agentdiff" / "runs").glob("*/report.json"))[-1].read_text()
    assert '"error_location": "agents/lookup/agent.py:5"' in kept  # compare and gate read it back


@pytest.mark.adk
def test_an_adk_agents_import_error_and_its_tools_error_name_the_projects_line(tmp_path, monkeypatch):
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("from . import agent\n")
    (tmp_path / "shop" / "tools.py").write_text(TOOLS)
    (tmp_path / "shop" / "agent.py").write_text(SHOP.replace("TOOLS", "[*load_tools()]"))
    _eval_set(tmp_path / "shop" / "shop.evalset.json", "shop", "price of a pear?")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("run")
    assert "    shop/agent.py:21: TypeError: Value after * must be an iterable, not coroutine\n" in out, out
    (tmp_path / "shop" / "agent.py").write_text(SHOP.replace("TOOLS", "[price_of]"))
    code, out, _ = run("run")
    assert "    shop/tools.py:6: KeyError: 'pear' (turn 1)\n" in out, out  # a tool ADK called: the project's frame, not ADK's
    code, out, err = run("diff", "shop/shop.evalset.json::c")
    assert "shop/tools.py:6: KeyError: 'pear' (turn 1)" in out + err and 'return {"price": PRICES[item]}' in out + err


async def test_the_detail_shows_where_and_e_opens_that_line_of_the_agent(failing, worker_pool):
    editor = FakeEditor()
    app = create_app(failing, [failing / "agents"], pool=worker_pool, watch=False, editor=editor, clock=lambda: 1_800_000_000.0, project="p")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot, timeout=60)
        app.main.tree.select_case("agents/lookup/lookup.evalset.json::c")
        await pilot.pause(0.2)
        header = str(app.screen.query_one("#detail-header").render())
        assert "agents/lookup/agent.py:5: KeyError: 'rome' (turn 1)" in header and "return CITIES[city]" in header
        assert "(e: agents/lookup/agent.py:5)" in header and "(e: agents/lookup/lookup.evalset.json" not in header  # says where e goes
        await pilot.press("e")
        await until(pilot, lambda: editor.opened)
        assert editor.opened == [(failing / "agents" / "lookup" / "agent.py", 5)]


async def test_e_in_a_browser_session_never_starts_the_configured_editor_and_says_where(failing, worker_pool, monkeypatch):
    """`agentdiff serve` draws the app in a browser: `e` with a configured terminal editor (`vi`)
    would start it on the server's terminal and freeze the tab. It says which file and line instead."""
    from agentdiff.tui import editor as editor_module
    from agentdiff.tui.editor import make_editor

    started = []
    monkeypatch.setattr(editor_module, "start", lambda *a, **k: started.append(a))
    monkeypatch.setenv("TEXTUAL_DRIVER", "textual.drivers.web_driver:WebDriver")
    app = create_app(failing, [failing / "agents"], pool=worker_pool, watch=False, editor=make_editor("vi"), clock=lambda: 1_800_000_000.0, project="p")
    monkeypatch.delenv("TEXTUAL_DRIVER")  # the test's own app runs headless; `e` asks how it is drawn when pressed
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot, timeout=60)
        app.main.tree.select_case("agents/lookup/lookup.evalset.json::c")
        await until(pilot, lambda: "(e: agents/lookup/agent.py:5)" in str(app.screen.query_one("#detail-header").render()),
                    timeout=30, what="the case's detail, with where e goes")  # on a busy machine the detail follows later
        monkeypatch.setenv("TEXTUAL_DRIVER", "textual.drivers.web_driver:WebDriver")
        await pilot.press("e")
        await pilot.pause(0.2)
        monkeypatch.delenv("TEXTUAL_DRIVER")
        said = [n.message for n in app._notifications]
        assert started == [] and any(f"open {failing}/agents/lookup/agent.py:5:1 in your editor" in m for m in said), said


async def test_an_erroring_case_keeps_its_expected_side_and_the_turns_that_completed(tmp_path, worker_pool):
    """A three-turn case whose agent breaks in turn 2: turn 1's actual values are there, the expected
    side of every turn too, and turn 2 is marked as where it broke."""
    (tmp_path / "agents" / "steps").mkdir(parents=True)
    (tmp_path / "agents" / "steps" / "agent.py").write_text(
        "async def run_turn(ctx):\n    if ctx.message == 'two':\n        raise RuntimeError('no second step')\n    return ctx.message.upper()\n")
    (tmp_path / "agents" / "steps" / "steps.evalset.json").write_text(json.dumps({"eval_set_id": "steps", "eval_cases": [{"eval_id": "c", "conversation": [
        {"user_content": {"role": "user", "parts": [{"text": text}]}, "final_response": {"role": "model", "parts": [{"text": text.upper()}]}}
        for text in ("one", "two", "three")]}]}))
    editor = FakeEditor()
    app = create_app(tmp_path, [tmp_path / "agents"], pool=worker_pool, watch=False, editor=editor, clock=lambda: 1_800_000_000.0, project="p")
    case = "agents/steps/steps.evalset.json::c"
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot, timeout=60)
        state = app.workbench.cases[case]
        assert state.status.value == "error" and state.run.diff is not None
        turns = state.run.diff.turns
        assert turns[0].response.actual == "ONE" and turns[1].error == "RuntimeError: no second step", state.run.result.error
        assert [t.response.expected for t in turns] == ["ONE", "TWO", "THREE"]  # the expected side stays
        app.main.tree.select_case(case)
        await pilot.pause(0.2)
        from textual.widgets import Tab

        labels = [str(tab.label) for tab in app.main.detail.query(Tab)]
        assert labels == ["turn 1", "turn 2 !", "turn 3 •"], labels
        while app.main.view.turn != 1:
            await pilot.press("t")
        await pilot.pause(0.1)
        assert "the run broke in this turn (its error is above)" in str(app.main.detail.query_one("#turn-user").render())
        assert "RuntimeError: no second step" in str(app.main.detail.query_one("#detail-header").render())  # said once, there
