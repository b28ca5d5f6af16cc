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


async def test_workers_start_and_answer_under_a_temporary_folder_too_deep_for_a_socket_path(tmp_path, monkeypatch):
    """A Unix socket's path holds at most 107 bytes: a deep TMPDIR (a CI runner's, a pytest
    tmp_path's) must not stop the workers from starting."""
    import tempfile

    from agentdiff.core.worker.pool import WorkerPool

    deep = tmp_path / ("a-long-folder-name-" * 6) / "tmp"
    deep.mkdir(parents=True)
    monkeypatch.setenv("TMPDIR", str(deep))
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    pool = WorkerPool(jobs=1, timeout=60)
    try:
        out = await pool.run(job("good"))
        assert out.error is None and out.events[-1]["content"]["parts"][0]["text"] == "version one: HELLO"
        assert len(str(next(deep.iterdir()) / "workers.sock")) > 108
    finally:
        pool.close()
    assert list(deep.iterdir()) == []


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


STUCK_AGENT = '''
import asyncio, os, time

async def run_turn(ctx):
    with open(os.path.join(os.path.dirname(__file__), "starts"), "a") as f:
        f.write(ctx.message + "\\n")
    if ctx.message == "blocks":
        time.sleep(60)  # holds the event loop: wait_for cannot stop it
    if ctx.message == "swallows":
        while True:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                pass
    if ctx.message == "sleeps":
        await asyncio.sleep(60)
    return "fine"
'''


async def test_a_run_stuck_past_its_timeout_is_the_only_one_blamed_and_runs_once(tmp_path):
    from agentdiff.core.worker.pool import WorkerPool

    (tmp_path / "stuck").mkdir()
    (tmp_path / "stuck" / "agent.py").write_text(STUCK_AGENT)
    pool = WorkerPool(jobs=4, processes=1)  # one process: the stuck run and the fine one share it
    try:
        for stuck in ("blocks", "swallows", "sleeps"):
            await check_stuck_run(pool, tmp_path, stuck)
    finally:
        pool.close()


async def check_stuck_run(pool, tmp_path, stuck: str) -> None:
    (tmp_path / "stuck" / "starts").write_text("")
    stuck_out, fine_out = await asyncio.gather(
        pool.run(job("stuck", tmp_path, text=stuck), timeout=1.5),
        pool.run(job("stuck", tmp_path, text="fine"), timeout=1.5),
    )
    assert stuck_out.error is not None and stuck_out.error.startswith("timed out after 1.5 s"), stuck
    assert fine_out.error is None and fine_out.events[-1]["content"]["parts"][0]["text"] == "fine", stuck
    starts = (tmp_path / "stuck" / "starts").read_text().split()
    assert starts.count(stuck) == 1, (stuck, starts)  # answered by the worker, not run again on its own


async def test_a_worker_that_fails_outside_the_agents_turn_says_why(worker_pool, tmp_path):
    (tmp_path / "breaks_worker").mkdir()
    (tmp_path / "breaks_worker" / "agent.py").write_text(
        "import sys\n"
        "async def run_turn(ctx):\n"
        "    jobs = sys.modules[next(n for n in sys.modules if n.endswith('worker.jobs'))]\n"
        "    def refuse(*args, **kwargs):\n"
        "        raise MemoryError('no room for the result')\n"
        "    jobs.RunOutput.model_dump_json = refuse  # sending the result now fails, as out of memory\n"
        "    return 'ok'\n"
    )
    out = await worker_pool.run(job("breaks_worker", tmp_path))
    assert out.error is not None
    assert out.error.startswith("the agent's process failed: MemoryError: no room for the result"), out.error
    assert "memory_mb" in out.error


def test_runs_that_arrive_together_are_spread_in_even_batches():
    from agentdiff.core.worker.pool import _share

    assert _share(400, 2, 128) == 100  # four batches of 100, not 128, 128, 128 and 16
    assert _share(200, 1, 128) == 100  # one process free now: two even batches of a group of 200
    assert _share(200, 2, 128) == 100
    assert _share(10, 2, 128) == 5
    assert _share(1, 2, 128) == 1
    assert _share(129, 1, 128) == 65
    assert _share(5, 8, 1) == 1
    sizes, left = [], 400  # what the dispatcher takes, batch after batch, from one group of 400
    while left:
        sizes.append(_share(left, 1, 128))
        left -= sizes[-1]
    assert sizes == [100, 100, 100, 100]
