"""Gizmo Store support: order look-up and refunds, with side-effect tools and a refund policy.

The refund tools keep their side effects in the session state (`refunded`), so a replay shows
what a run would have changed. The model is the offline demo model, following `prompt.md`.
"""

from __future__ import annotations

from pathlib import Path

from google.adk.agents import LlmAgent
from google.adk.tools.tool_context import ToolContext

from demo_model import playbook_model

PROMPT = (Path(__file__).parent / "prompt.md").read_text(encoding="utf-8")

ORDERS = {
    "A1001": {"status": "delivered", "total": 42.0, "days_since_delivery": 3},
    "A1002": {"status": "shipped", "total": 18.5, "days_since_delivery": None},
    "A1003": {"status": "delivered", "total": 99.0, "days_since_delivery": 45},
}


def lookup_order(order_id: str) -> dict:
    """Look an order up by its number."""
    order = ORDERS.get(order_id.upper())
    if order is None:
        return {"found": False, "message": f"There is no order {order_id}."}
    return {"found": True, "order_id": order_id.upper(), **order}


def check_refund_policy(order_id: str, tool_context: ToolContext) -> dict:
    """Whether an order may be refunded under the store's policy."""
    order = ORDERS.get(order_id.upper())
    if order is None:
        return {"eligible": False, "message": f"There is no order {order_id}."}
    if order_id.upper() in tool_context.state.get("refunded", []):
        return {"eligible": False, "message": f"Order {order_id} was already refunded."}
    days = order["days_since_delivery"]
    if days is None:
        return {"eligible": False, "message": f"Order {order_id} has not been delivered yet."}
    if days > 30:
        return {"eligible": False, "message": f"Order {order_id} was delivered {days} days ago; refunds are possible for 30 days."}
    return {"eligible": True, "message": f"Order {order_id} can be refunded."}


def issue_refund(order_id: str, amount: float, tool_context: ToolContext) -> dict:
    """Refund an order (once): money goes back to the customer."""
    refunded = list(tool_context.state.get("refunded", []))
    policy = check_refund_policy(order_id, tool_context)
    if not policy["eligible"]:
        return {"refunded": False, "message": f"No refund: {policy['message']}"}
    refunded.append(order_id.upper())
    tool_context.state["refunded"] = refunded
    return {"refunded": True, "message": f"I have refunded ${amount:.2f} for order {order_id.upper()}."}


root_agent = LlmAgent(
    name="customer_service",
    model=playbook_model("demo-support-model"),
    instruction=PROMPT,
    tools=[lookup_order, check_refund_policy, issue_refund],
)
