"""What a coding agent reads from `agentdiff mcp`, in tokens: the README's loop on a copy of the samples
(status, the failures, explain, diff, a prompt fix, run affected, check nothing else broke, accept,
apply, gate), driven over stdio by the `mcp` SDK's client. Each answer is counted as the model reads
it: the tool result's text. The tool list is counted as a client gives it to the model with every
request (names, descriptions, input schemas); the output schemas, which the client reads and the
model is not given, beside it.

Tokens are counted with Claude's tokenizer as litellm bundles it (`tokenizers`); where that file is
missing, as characters ÷ 4, and the table says so.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Callable

from mcp_bench import AGENTDIFF, _project

REFUND_LATE = "refund_too_late"
DIM = "dim_living_room"
RECORDED = "sample_agents/home_automation/conformance/lights/kitchen_on_then_check"


def _document_size(root: Path, count: Callable[[str], int]) -> tuple[int, int]:
    """The recorded case's diff as `agentdiff diff --json` gives it, indented as the server's answers were."""
    import subprocess

    done = subprocess.run([AGENTDIFF, "diff", RECORDED, "--json"], cwd=root, capture_output=True, text=True)
    text = json.dumps(json.loads(done.stdout), indent=2, ensure_ascii=False)
    return len(text), count(text)


def _counter() -> tuple[Callable[[str], int], str]:
    try:
        from importlib.util import find_spec

        from tokenizers import Tokenizer

        found = find_spec("litellm")  # only where its files are: importing it reaches for the network
        path = Path(found.submodule_search_locations[0]) / "litellm_core_utils" / "tokenizers" / "anthropic_tokenizer.json"
        tokenizer = Tokenizer.from_file(str(path))
        return (lambda text: len(tokenizer.encode(text).ids)), "Claude's tokenizer (litellm's copy)"
    except Exception:  # noqa: BLE001 - no tokenizer here: an estimate, said as one
        return (lambda text: -(-len(text) // 4)), "characters ÷ 4 (no tokenizer installed)"


async def _session(root: Path, count: Callable[[str], int]) -> list[tuple[str, int, int]]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    steps: list[tuple[str, int, int]] = []
    params = StdioServerParameters(command=AGENTDIFF, args=["mcp"], cwd=str(root))
    with open(root / "server.log", "w") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                shown = json.dumps([{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools.tools])
                steps.append(("tool list as a model is given it (name, description, input schema)", len(shown), count(shown)))
                schemas = json.dumps([t.output_schema for t in tools.tools if t.output_schema])
                steps.append(("output schemas (read by the client, not the model)", len(schemas), count(schemas)))

                async def step(label: str, tool: str, **arguments) -> dict:
                    result = await session.call_tool(tool, arguments)
                    text = "".join(getattr(block, "text", "") for block in result.content)
                    assert not result.is_error, text
                    steps.append((label, len(text), count(text)))
                    return json.loads(text)

                await asyncio.sleep(3)  # a fresh server's first answers: what a client sees as it connects
                await step("status", "status")
                await step("list_cases failed,error", "list_cases", filter="status:failed,error")
                await step("run all", "run", which="all", timeout=300)
                await step("explain a failing case", "explain", case=REFUND_LATE)
                await step("diff of that case", "diff", case=REFUND_LATE)
                prompt = root / "sample_agents" / "customer_service" / "prompt.md"
                prompt.write_text(prompt.read_text().replace("issue_refund(order_id=<order_id>, amount=<total>)",
                                                             "issue_refund(order_id=<order_id>, amount=<total>) if <eligible>"))
                await step("run affected after the fix", "run", which="affected", timeout=300)
                await step("status after the fix", "status")
                await step("list_cases failed,error after", "list_cases", filter="status:failed,error")
                await step("diff of a second failing case", "diff", case=DIM)
                plan = await step("accept (the plan)", "accept", case=DIM)
                await step("apply", "apply", plan_digest=plan["plan_digest"])
                await step("gate", "gate")
                home = root / "sample_agents" / "home_automation" / "prompt.md"
                home.write_text(home.read_text().replace("## Playbook\n", "## Playbook\n- Never change a device the user did not name.\n"))
                await step("run a recorded case after a prompt edit", "run", cases=[RECORDED], timeout=120)
                await step("diff of that recorded case (the prompt in every request)", "diff", case=RECORDED)
                steps.append(("the same diff as the diff --json document, pretty-printed (the server's answer before)",
                              *_document_size(root, count)))
    return steps


def mcp_tokens_benchmark() -> list[tuple[str, str, str]]:
    count, how = _counter()
    with tempfile.TemporaryDirectory(prefix="agentdiff-mcp-tokens-") as folder:
        root = Path(folder)
        _project(root)
        started = time.perf_counter()
        steps = asyncio.run(_session(root, count))
        seconds = time.perf_counter() - started
    rows = [(f"mcp tokens: {label}", f"{tokens:,} tokens ({chars:,} characters)", "") for label, chars, tokens in steps]
    answers = steps[2:-1]  # the tool answers: not the tool list, the schemas, or the reference document
    rows.append(("mcp tokens: the loop's answers, in all", f"{sum(t for _, _, t in answers):,} tokens", f"counted with {how}; {seconds:.0f} s"))
    return rows


if __name__ == "__main__":
    for row in mcp_tokens_benchmark():
        print(" | ".join(row))
