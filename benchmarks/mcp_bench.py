"""`agentdiff mcp` on a copy of the samples, driven by the `mcp` SDK's client over stdio, warm: how fast
`diff` of one case answers, how fast `run(which="affected")` returns after a prompt edit in replay,
against `status` (the protocol's own round trip, measured in the same run), and the server's CPU while
idle."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AGENTDIFF = str(Path(sys.executable).parent / "agentdiff")
DIM = "sample_agents/home_automation/home_automation.evalset.json::dim_living_room"


def _project(into: Path) -> Path:
    samples = into / "sample_agents"
    samples.mkdir()
    shutil.copy(ROOT / "sample_agents" / "demo_model.py", samples / "demo_model.py")
    for agent in ("customer_service", "home_automation"):
        shutil.copytree(ROOT / "sample_agents" / agent, samples / agent, ignore=shutil.ignore_patterns("__pycache__", ".adk", "*.agentdiff-record.json"))
    return samples


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children that ended (from /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


async def _measure(root: Path) -> list[tuple[str, str, str]]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    samples = root / "sample_agents"
    prompt = samples / "home_automation" / "prompt.md"
    params = StdioServerParameters(command=AGENTDIFF, args=["mcp"], cwd=str(root))
    with open(root / "server.log", "w") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()

                async def timed(tool: str, **arguments) -> tuple[float, dict]:
                    started = time.perf_counter()
                    result = await session.call_tool(tool, arguments)
                    seconds = time.perf_counter() - started
                    assert not result.is_error, result.content[0].text
                    return seconds, json.loads(result.content[0].text)

                await timed("run", which="all", timeout=300)  # warm: every case has run once, the workers are up
                status = [(await timed("status"))[0] for _ in range(30)]
                diffs = [(await timed("diff", case=DIM))[0] for _ in range(30)]
                await timed("run", which="all", mode="replay", timeout=300)
                affected, ran = [], []
                original = prompt.read_text()
                for n in range(6):
                    prompt.write_text(original + f"\nBe brief ({n}).\n")
                    seconds, answer = await timed("run", which="affected", timeout=60)
                    affected.append(seconds)
                    ran.append(answer["ran"])
                prompt.write_text(original)
                await timed("run", which="affected", timeout=60)
                pid = int(os.popen(f"pgrep -n -f '{AGENTDIFF} mcp'").read().strip() or 0)
                idle = None
                if pid:
                    before = _cpu_seconds(pid)
                    await asyncio.sleep(5)
                    idle = (_cpu_seconds(pid) - before) / 5
    ms = lambda xs: f"{statistics.median(xs) * 1000:.0f} ms"  # noqa: E731
    p95 = lambda xs: f"{sorted(xs)[int(len(xs) * 0.95) - 1] * 1000:.0f} ms"  # noqa: E731
    return [
        ("mcp: status round trip (median / p95)", f"{ms(status)} / {p95(status)}", "reference: the protocol's own cost"),
        ("mcp: diff of one case (median / p95)", f"{ms(diffs)} / {p95(diffs)}", "≤ 100 ms"),
        ("mcp: diff ÷ status", f"{statistics.median(diffs) / statistics.median(status):.1f}×", "the answer's own work"),
        ("mcp: run affected after a prompt edit, replay (median / max)", f"{ms(affected)} / {max(affected) * 1000:.0f} ms",
         f"≤ 300 ms ({statistics.median(ran):.0f} cases re-ran each time)"),
        ("mcp: server CPU while idle", "n/a" if idle is None else f"{idle * 100:.2f}% of a core", "~0"),
    ]


def mcp_benchmark() -> list[tuple[str, str, str]]:
    with tempfile.TemporaryDirectory(prefix="agentdiff-mcp-bench-") as folder:
        root = Path(folder)
        _project(root)
        return asyncio.run(_measure(root))
