"""Weather Desk: the agent `agents-cli create` scaffolds (a weather tool and a clock tool, wrapped in
an ADK `App`), on the offline demo model of `sample_agents/demo_model.py`, which follows the
Playbook of `prompt.md`."""

from __future__ import annotations

import sys
from pathlib import Path

from google.adk.agents import Agent
from google.adk.apps import App

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # sample_agents/, for the shared demo model
from demo_model import playbook_model  # noqa: E402

PROMPT = (Path(__file__).parent / "prompt.md").read_text(encoding="utf-8")

FORECASTS = {"san francisco": "60 degrees and foggy", "new york": "75 degrees and sunny",
             "paris": "68 degrees and cloudy", "tokyo": "80 degrees and humid"}
TIMES = {"san francisco": "09:00", "new york": "12:00", "paris": "18:00", "tokyo": "01:00"}


def get_weather(query: str) -> dict:
    """Simulates a web search for the weather in a city."""
    return {"forecast": FORECASTS.get(query.lower(), "90 degrees and sunny")}


def get_current_time(city: str) -> dict:
    """Returns the current time in a city."""
    return {"time": TIMES.get(city.lower(), "12:00")}


root_agent = Agent(
    name="weather_desk",
    model=playbook_model("demo-weather-model"),
    instruction=PROMPT,
    tools=[get_weather, get_current_time],
)

app = App(root_agent=root_agent, name="app")
