"""Agents run in worker processes: faults are contained, edits are always picked up."""

from __future__ import annotations

import asyncio
import shutil

from agentdiff.core.worker.jobs import AgentRef, Job, Message
from conftest import NATIVE_AGENTS


def job(name: str, agents_dir=NATIVE_AGENTS, text: str = "hello", mode: str = "live") -> Job:
    return Job(
        case_id=name, agent=AgentRef(agents_dir=str(agents_dir), name=name), mode=mode, app_name=name,
        messages=[Message(content={"role": "user", "parts": [{"text": text}]})],
    )


async def test_each_fault_ends_as_an_error_with_its_reason_and_the_others_go_on(worker_pool):
    names = ["raises", "hangs", "exits", "hard_exit", "segfault", "good"]
    outputs = await asyncio.gather(*(worker_pool.run(job(name), timeout=3) for name in names))
    errors = dict(zip(names, (out.error for out in outputs), strict=True))
    assert errors["raises"] == "turn 1: RuntimeError: the agent broke"
    assert errors["hangs"] == "timed out after 3 s (the agent's process was stopped)"
    assert errors["exits"] == "turn 1: SystemExit: 3"
    assert errors["hard_exit"] == "the agent's process exited with code 7 before finishing the run"
    assert errors["segfault"] == "the agent's process was killed by SIGSEGV"
    assert errors["good"] is None
    good = outputs[-1]
    assert good.events[-1]["content"]["parts"][0]["text"] == "version one: HELLO"
    assert good.state == {"seen": ["hello"]}
    assert good.tools[0].name == "echo" and good.tools[0].response == {"echo": "HELLO"}


async def test_a_rerun_after_an_edit_runs_the_edited_code(worker_pool, tmp_path):
    shutil.copytree(NATIVE_AGENTS / "good", tmp_path / "good")
    first = await worker_pool.run(job("good", tmp_path))
    agent_file = tmp_path / "good" / "agent.py"
    agent_file.write_text(agent_file.read_text().replace('VERSION = "one"', 'VERSION = "two"'))
    second = await worker_pool.run(job("good", tmp_path))
    assert first.events[-1]["content"]["parts"][0]["text"] == "version one: HELLO"
    assert second.events[-1]["content"]["parts"][0]["text"] == "version two: HELLO"
    assert str(agent_file) in second.files_read


async def test_what_the_agent_prints_stays_out_of_the_terminal(worker_pool, tmp_path, capfd):
    (tmp_path / "noisy").mkdir()
    (tmp_path / "noisy" / "agent.py").write_text("async def run_turn(ctx):\n    print('chatter')\n    return 'ok'\n")
    out = await worker_pool.run(job("noisy", tmp_path))
    assert "chatter" in out.log
    assert "chatter" not in capfd.readouterr().out


async def test_an_agent_that_cannot_be_imported_is_an_error(worker_pool, tmp_path):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "agent.py").write_text("def oops(:\n")
    out = await worker_pool.run(job("broken", tmp_path))
    assert out.error is not None and "SyntaxError" in out.error


async def test_a_crash_in_a_shared_process_costs_only_the_culprit(worker_pool):
    messages = ["a", "b", "die", "c"]
    outputs = await asyncio.gather(*(worker_pool.run(job("moody", text=m)) for m in messages))
    answers = [out.events[-1]["content"]["parts"][0]["text"] if not out.error else out.error for out in outputs]
    assert answers == ["fine: a", "fine: b", "the agent's process exited with code 9 before finishing the run", "fine: c"]
