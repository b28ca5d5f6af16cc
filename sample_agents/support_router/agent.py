"""Gizmo Store's front desk as an ADK 2 graph workflow: a function node reads the message and routes
it, and one of two LLM nodes answers it (the refund desk, or the order desk with its look-up tool).

The routing is plain code, so what ran is deterministic: the node layer shows a route change as
`route: classify status → refund`. The models are the offline demo model, each following its prompt.
"""

from __future__ import annotations

from pathlib import Path

from google.adk.agents import LlmAgent
from google.adk.events.event import Event
from google.adk.workflow import Workflow

from demo_model import playbook_model

HERE = Path(__file__).parent

ORDERS = {"A1001": "delivered", "A1002": "shipped"}
REFUND_WORDS = ("refund",)  # "money back" is not here yet: `money_back` routes to the order desk


def lookup_order(order_id: str) -> dict:
    """Look an order up by its number."""
    status = ORDERS.get(order_id.upper())
    return {"found": status is not None, "order_id": order_id.upper(), "status": status or "unknown"}


def classify(node_input):
    """Route refunds to the refund desk and everything else to the order desk."""
    text = "".join(part.text or "" for part in node_input.parts)
    return Event(output=text, route="refund" if any(word in text.lower() for word in REFUND_WORDS) else "status")


refund_desk = LlmAgent(name="refund_desk", model=playbook_model(), instruction=(HERE / "refund_prompt.md").read_text(encoding="utf-8"))
order_desk = LlmAgent(name="order_desk", model=playbook_model(), instruction=(HERE / "order_prompt.md").read_text(encoding="utf-8"),
                      tools=[lookup_order])

root_agent = Workflow(name="support_router", edges=[("START", classify, {"refund": refund_desk, "status": order_desk})])
