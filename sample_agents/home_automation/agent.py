"""A home automation agent: an ADK LlmAgent with device tools and an offline demo model."""

from __future__ import annotations

import re
from pathlib import Path
from typing import AsyncGenerator, Optional

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

PROMPT = (Path(__file__).parent / "prompt.md").read_text(encoding="utf-8")

DEVICES = {"kitchen light": "off", "bedroom heater": "on", "living room lamp": "off", "garage door": "closed"}


def set_device_state(device: str, state: str, brightness: Optional[int] = None) -> dict:
    """Switch a device on or off; lamps also take a brightness from 0 to 100."""
    if device not in DEVICES:
        return {"status": "error", "message": f"unknown device {device}"}
    DEVICES[device] = state
    return {"status": "ok", "device": device, "state": state}


def get_device_state(device: str) -> dict:
    """Report whether a device is on or off."""
    return {"device": device, "state": DEVICES.get(device, "unknown")}


class DemoModel(BaseLlm):
    """An offline stand-in for a model: reads the user's request and calls the device tools."""

    model: str = "demo-home-model"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        responses = [p.function_response for p in last.parts or [] if p.function_response]
        if responses:
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=_confirm(responses))]))
            return
        text = " ".join(p.text or "" for p in last.parts or []).lower()
        calls = []
        for clause in re.split(r"\band\b|,", text):
            device = next((d for d in DEVICES if d in clause), None)
            if device is None:
                continue
            if re.search(r"\b(on|off|open|close)\b", clause):
                state = re.search(r"\b(on|off|open|close)\b", clause).group(1)
                calls.append(types.FunctionCall(name="set_device_state", args={"device": device, "state": state}))
            else:
                calls.append(types.FunctionCall(name="get_device_state", args={"device": device}))
        if not calls:
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="Which device do you mean?")]))
            return
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=c) for c in calls]))


def _confirm(responses) -> str:
    sentences = []
    for response in responses:
        result = response.response or {}
        if response.name == "set_device_state":
            sentences.append(f"The {result.get('device')} is now {result.get('state')}.")
        else:
            sentences.append(f"The {result.get('device')} is {result.get('state')}.")
    return " ".join(sentences)


root_agent = LlmAgent(
    name="home_automation",
    model=DemoModel(),
    instruction=PROMPT,
    tools=[set_device_state, get_device_state],
)
