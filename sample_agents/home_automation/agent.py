"""Homey, a home automation agent: an ADK LlmAgent with device tools.

The devices live in the session state (`devices`), so what the tools change is part of the trace.
The model is the offline demo model, which follows the playbook in `prompt.md`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from google.adk.agents import LlmAgent
from google.adk.tools.tool_context import ToolContext

from demo_model import playbook_model

PROMPT = (Path(__file__).parent / "prompt.md").read_text(encoding="utf-8")

DEFAULT_DEVICES = {"kitchen light": "off", "bedroom heater": "on", "living room lamp": "off", "garage door": "closed"}


def _devices(tool_context: ToolContext) -> dict:
    return dict(tool_context.state.get("devices") or DEFAULT_DEVICES)


def set_device_state(device: str, state: str, tool_context: ToolContext, brightness: Optional[int] = None) -> dict:
    """Switch a device on or off; lamps also take a brightness from 0 to 100."""
    devices = _devices(tool_context)
    if device not in devices:
        return {"status": "error", "message": f"unknown device {device}"}
    devices[device] = state if brightness is None else f"{state} at {brightness}%"
    tool_context.state["devices"] = devices
    return {"status": "ok", "device": device, "state": devices[device]}


def get_device_state(device: str, tool_context: ToolContext) -> dict:
    """Report whether a device is on or off."""
    return {"device": device, "state": _devices(tool_context).get(device, "unknown")}


root_agent = LlmAgent(
    name="home_automation",
    model=playbook_model("demo-home-model"),
    instruction=PROMPT,
    tools=[set_device_state, get_device_state],
)
