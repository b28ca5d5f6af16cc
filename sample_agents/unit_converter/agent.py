"""A kitchen unit converter written as a plain-Python agent (agentdiff's native protocol; no ADK).

Every model call goes through `ctx.llm` and every tool call through `ctx.tool`, so agentdiff
records, replays and diffs it exactly like an ADK agent. The model is the offline demo model,
following `prompt.md`.
"""

from __future__ import annotations

from pathlib import Path

from demo_model import respond

NAME = "unit_converter"
MODEL = "demo-kitchen-model"
PROMPT = (Path(__file__).parent / "prompt.md").read_text(encoding="utf-8")

GRAMS_PER_CUP = {"flour": 120, "sugar": 200, "butter": 227, "water": 240, "honey": 340}

TOOLS = [
    {
        "function_declarations": [
            {
                "name": "convert",
                "description": "Convert an amount of an ingredient between cups and grams.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "amount": {"type": "string"},
                        "ingredient": {"type": "string"},
                        "from_unit": {"type": "string", "enum": ["cup", "gram"]},
                        "to_unit": {"type": "string", "enum": ["cup", "gram"]},
                    },
                    "required": ["amount", "ingredient", "from_unit", "to_unit"],
                },
            }
        ]
    }
]


def convert(amount: str, ingredient: str, from_unit: str, to_unit: str) -> dict:
    """Convert between cups and grams with the ingredient's density."""
    grams_per_cup = GRAMS_PER_CUP.get(ingredient.lower())
    if grams_per_cup is None:
        return {"error": f"unknown ingredient {ingredient}"}
    value = float(amount)
    result = value * grams_per_cup if from_unit == "cup" else value / grams_per_cup
    return {"result": round(result) if to_unit == "gram" else round(result, 2)}


FUNCTIONS = {"convert": convert}


async def run_turn(ctx) -> None:
    """One user message: ask the model, run the tools it calls, until it answers."""
    for _ in range(8):
        request = {"model": MODEL, "contents": list(ctx.history), "config": {"system_instruction": PROMPT, "tools": TOOLS}}
        response = await ctx.llm(request, model=respond)
        calls = [p["function_call"] for p in response["content"]["parts"] if p.get("function_call")]
        if not calls:
            return None  # the model's text is the answer
        for call in calls:
            await ctx.tool(call["name"], call.get("args") or {}, FUNCTIONS[call["name"]])
    return "Sorry, I could not finish that conversion."
