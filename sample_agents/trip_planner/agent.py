"""Wanderly, a trip planner: a front-desk agent that hands over to two sub-agents with
`transfer_to_agent`. Each agent's prompt is its own file; the model is the offline demo model."""

from __future__ import annotations

from pathlib import Path

from google.adk.agents import LlmAgent

from demo_model import playbook_model

HERE = Path(__file__).parent

FLIGHTS = {
    "Paris": {"flight": "WL 101", "date": "June 3", "price": 120},
    "Rome": {"flight": "WL 207", "date": "June 4", "price": 95},
    "Tokyo": {"flight": "WL 880", "date": "June 9", "price": 740},
    "Lisbon": {"flight": "WL 315", "date": "June 5", "price": 110},
}
HOTELS = {
    "Paris": {"hotel": "Hôtel des Arts", "price": 180},
    "Rome": {"hotel": "Albergo Roma", "price": 140},
    "Tokyo": {"hotel": "Sakura Inn", "price": 160},
    "Lisbon": {"hotel": "Casa Alfama", "price": 120},
}


def search_flights(destination: str) -> dict:
    """The best flight to a city."""
    found = FLIGHTS.get(destination.title())
    return {"found": False} if found is None else {"found": True, "destination": destination.title(), **found}


def search_hotels(city: str) -> dict:
    """The best hotel in a city, with its price per night."""
    found = HOTELS.get(city.title())
    return {"found": False} if found is None else {"found": True, "city": city.title(), **found}


flight_booker = LlmAgent(
    name="flight_booker",
    description="Finds and books flights.",
    model=playbook_model("demo-travel-model"),
    instruction=(HERE / "flight_prompt.md").read_text(encoding="utf-8"),
    tools=[search_flights],
)

hotel_booker = LlmAgent(
    name="hotel_booker",
    description="Finds and books hotels.",
    model=playbook_model("demo-travel-model"),
    instruction=(HERE / "hotel_prompt.md").read_text(encoding="utf-8"),
    tools=[search_hotels],
)

root_agent = LlmAgent(
    name="trip_planner",
    model=playbook_model("demo-travel-model"),
    instruction=(HERE / "prompt.md").read_text(encoding="utf-8"),
    sub_agents=[flight_booker, hotel_booker],
)
