"""Small real projects for workbench tests, and an in-process pool that echoes.

`echo_project(root, {"echo": ["hello", "bye"]})` writes `agents/echo/agent.py` (a native agent that
returns the user's text) and `agents/echo/echo.evalset.json` with one passing one-turn case per text
(`case_0`, `case_1`, …: the expected answer is the user's text). `EchoPool` answers a job in process,
as that agent would, records every job it got, and can be told to answer one case differently.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.worker.jobs import Job, RunOutput

ECHO_AGENT = "async def run_turn(ctx):\n    return ctx.message\n"


def eval_case(eval_id: str, user: str, expected: Optional[str] = None) -> dict[str, Any]:
    """A one-turn EvalSet case: the user says `user`, the agent is expected to answer `expected`
    (the user's text when not given, which the echo agent passes)."""
    return {
        "eval_id": eval_id,
        "conversation": [
            {
                "user_content": {"role": "user", "parts": [{"text": user}]},
                "final_response": {"role": "model", "parts": [{"text": user if expected is None else expected}]},
            }
        ],
    }


def eval_set(agent: str, texts: list[str]) -> dict[str, Any]:
    return {"eval_set_id": agent, "eval_cases": [eval_case(f"case_{i}", text) for i, text in enumerate(texts)]}


def set_path(root: Path, agent: str) -> Path:
    return root / "agents" / agent / f"{agent}.evalset.json"


def case_id(agent: str, eval_id: str) -> str:
    return f"agents/{agent}/{agent}.evalset.json::{eval_id}"


def write_set(root: Path, agent: str, data: dict[str, Any]) -> Path:
    path = set_path(root, agent)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def echo_project(root: Path, agents: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Native echo agents under root/agents, each with its eval set; returns each agent's eval set
    (as data, to edit and write back with `write_set`)."""
    sets = {}
    for agent, texts in agents.items():
        folder = root / "agents" / agent
        folder.mkdir(parents=True)
        (folder / "agent.py").write_text(ECHO_AGENT, encoding="utf-8")
        sets[agent] = eval_set(agent, texts)
        write_set(root, agent, sets[agent])
    return sets


def user_text(job: Job, index: int) -> str:
    return "".join(part.get("text", "") for part in job.messages[index].content.get("parts", []))


class EchoPool:
    """A pool in process: `run(job)` answers every user message with its own text (as the echo
    agent would), or with `answers[case_id]` when told to answer a case differently."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []
        self.answers: dict[str, str] = {}
        self.gate: Optional[asyncio.Event] = None  # when given, every run waits for it to open
        self.received = asyncio.Event()  # set as each job arrives (clear it to wait for the next)

    async def run(self, job: Job, timeout: Optional[float] = None) -> RunOutput:
        self.jobs.append(job)
        self.received.set()
        if self.gate is not None:
            await self.gate.wait()
        events: list[dict[str, Any]] = []
        for i, message in enumerate(job.messages):
            text = self.answers.get(job.case_id, user_text(job, i))
            events.append({"author": "user", "content": message.content, "invocation_id": "i"})
            events.append({"author": job.agent.name, "content": {"role": "model", "parts": [{"text": text}]}, "invocation_id": "i"})
        return RunOutput(events=events, app_name=job.app_name, user_id=job.user_id)

    def ran(self) -> list[str]:
        """The case ids of the jobs so far, in order."""
        return [job.case_id for job in self.jobs]

    def clear(self) -> None:
        self.jobs.clear()


def history_rows(path) -> dict[str, list[dict]]:
    """A history database's rows (`.agentdiff/history.sqlite`): case id → its entries, oldest first."""
    import json
    import sqlite3

    connection = sqlite3.connect(path)
    try:
        table: dict[str, list[dict]] = {}
        for case_id, entry, read in connection.execute("SELECT case_id, entry, read FROM runs ORDER BY time"):
            table.setdefault(case_id, []).append({**json.loads(entry), **({"read": json.loads(read)} if read else {})})
        return table
    finally:
        connection.close()
