"""SVG snapshots of the main states (fixed size, frozen clock, the sample agents' canned outputs
answered by the fake pool, Textual pinned exactly). Update with
`python3 tasks.py test tests/test_tui_snapshots.py --snapshot-update`."""

from __future__ import annotations

import pytest
from fake_pool import CannedPool
from tui_support import copy_samples, edit_the_home_prompt, make_app, settle

SIZE = (150, 42)
DIM = "sample_agents/home_automation/home_automation.evalset.json::dim_living_room"
KITCHEN = "sample_agents/home_automation/conformance/lights/kitchen_on_then_check"


def _app(tmp_path, edit_prompt: bool = False):
    samples = copy_samples(tmp_path, agents=("home_automation",))
    if edit_prompt:
        edit_the_home_prompt(samples)
    return make_app(tmp_path, CannedPool(tmp_path, ["prompt_edit", "samples"] if edit_prompt else "samples"))


def _select(case_id, *keys):
    async def run_before(pilot) -> None:
        await settle(pilot.app, pilot)
        pilot.app.main.tree.select_case(case_id)
        await pilot.pause(0.2)
        if keys:
            await pilot.press(*keys)
            await pilot.pause(0.3)

    return run_before


#: A small terminal (compact header, expected above actual) and a roomy one (side by side).
SIZES = pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])


@SIZES
def test_a_failing_eval_case_shows_its_tool_call_and_answer(snap_compare, tmp_path, size):
    assert snap_compare(_app(tmp_path), terminal_size=size, run_before=_select(DIM))


@SIZES
def test_a_prompt_edit_shows_in_the_request_layer_of_a_replay(snap_compare, tmp_path, size):
    assert snap_compare(_app(tmp_path, edit_prompt=True), terminal_size=size, run_before=_select(KITCHEN))


def test_the_accept_preview(snap_compare, tmp_path):
    assert snap_compare(_app(tmp_path), terminal_size=SIZE, run_before=_select(DIM, "a"))
