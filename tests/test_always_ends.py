"""It always ends, and nothing a cloned repository commits can hang it: a hostile or locked history
database, a worker server that stops answering, a run that blocks its worker's loop, an MCP server given
SIGTERM with its client still there, a served tab sent an absurd size; and the faults that came with
them (scores that are not numbers, a case graded twice, data that forges lines, metric files from
outside the project). Each through the real code path. (The terminal going away, every way: in
test_terminal_journey.py.)"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_cli import run

AGENTDIFF = str(Path(sys.executable).parent / "agentdiff")
ECHO = "async def run_turn(ctx):\n    return ctx.message\n"


def echo_project(root: Path, texts=("hello", "bye")) -> Path:
    folder = root / "agents" / "echo"
    folder.mkdir(parents=True)
    (folder / "agent.py").write_text(ECHO)
    cases = [{"eval_id": f"case_{i}", "conversation": [{"user_content": {"role": "user", "parts": [{"text": t}]},
                                                        "final_response": {"role": "model", "parts": [{"text": t}]}}]}
             for i, t in enumerate(texts)]
    (folder / "echo.evalset.json").write_text(json.dumps({"eval_set_id": "echo", "eval_cases": cases}))
    return root


def agentdiff(root: Path, *args: str, timeout: float = 120, **popen) -> subprocess.CompletedProcess:
    return subprocess.run([AGENTDIFF, *args], cwd=root, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "AGENTDIFF_NO_COLOR": "1"}, **popen)


def history_rows(root: Path) -> int:
    connection = sqlite3.connect(root / ".agentdiff" / "history.sqlite")
    try:
        return connection.execute("SELECT count(*) FROM runs").fetchone()[0]
    finally:
        connection.close()


FOREVER = """CREATE TRIGGER forever AFTER INSERT ON runs BEGIN
  SELECT count(*) FROM (WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM x) SELECT n FROM x); END"""


def plant_history(root: Path, *statements: str) -> Path:
    from agentdiff.core.workbench.history_store import _TABLE

    path = root / ".agentdiff" / "history.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript(_TABLE)
    connection.execute("PRAGMA user_version=1")
    for statement in statements:
        connection.execute(statement)
    connection.commit()
    connection.close()
    return path


# --- the history database -----------------------------------------------------------------------------


def test_a_committed_history_with_a_trigger_that_never_ends_cannot_hang_a_run(tmp_path):
    root = echo_project(tmp_path)
    plant_history(root, FOREVER)
    began = time.monotonic()
    done = agentdiff(root, "run", timeout=60)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - began < 30
    assert history_rows(root) == 2  # a new history in its place, with this run's rows
    aside = list((root / ".agentdiff").rglob("*history*"))
    assert any("set-aside" in str(p) for p in aside), aside  # the planted one kept, whole, where it can be looked at


def test_every_history_statement_is_bounded_even_on_a_database_that_cannot_be_set_aside(tmp_path, monkeypatch):
    from agentdiff.core.workbench import history_store

    path = plant_history(tmp_path, FOREVER)
    connection = sqlite3.connect(path, factory=history_store.Bounded)
    connection.seconds = 0.3
    began = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        connection.execute("INSERT INTO runs VALUES ('a', 1, 'passed', NULL, NULL, NULL, NULL, '{}', NULL)")
    assert time.monotonic() - began < 5
    connection.close()
    monkeypatch.setattr(history_store, "linked_state", lambda root: "linked")  # a committed link: never written
    store = history_store.Store(path)
    assert not store.usable and not store.writable and store.query("SELECT count(*) FROM runs") == []


def test_a_locked_history_is_kept_and_what_could_not_be_written_is_said_then_written_later(tmp_path, monkeypatch):
    from agentdiff.core.scoring.results import CaseResult, CaseStatus
    from agentdiff.core.workbench import history_store
    from agentdiff.core.workbench.history import History

    monkeypatch.setattr(history_store, "BUSY_SECONDS", 0.2)
    path = plant_history(tmp_path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another session's write lock, held
    result = CaseResult(id="x", source="s", eval_set_id=None, eval_id="x", agent=None, mode="live", status=CaseStatus.PASSED)
    history = History(path)
    history.add("x", result, 1e9)
    history.close()
    assert history.problem and "1 run(s) could not be written" in history.problem and "locked" in history.problem
    holder.execute("ROLLBACK")
    holder.close()
    assert path.exists() and not list(tmp_path.rglob("set-aside"))  # kept: a lock says nothing of the file
    again = History(path)
    again.add("x", result, 1e9 + 1)
    again.close()
    assert again.problem is None and history_rows(tmp_path) == 1


def test_a_planted_journal_link_does_not_cost_the_history(tmp_path):
    root = echo_project(tmp_path)
    path = plant_history(root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"")
    os.symlink(elsewhere, f"{path}-shm")
    done = agentdiff(root, "run", timeout=60)
    assert done.returncode == 0, done.stderr
    assert history_rows(root) == 2 and not os.path.islink(f"{path}-shm")


# --- workers --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("resumable", [True, False], ids=["resumed", "replaced"])
async def test_a_stopped_worker_server_is_noticed_within_the_runs_time(tmp_path, monkeypatch, resumable):
    """SIGSTOP to the worker server: it is sent SIGCONT within a second (its batches in flight go on);
    one that stays stopped is replaced, and the run goes to the new one."""
    from agentdiff.core.worker import pool as pools
    from agentdiff.core.worker import server_process
    from agentdiff.core.worker.jobs import AgentRef, Job, Message

    if not resumable:  # something keeps it stopped
        monkeypatch.setattr(server_process.WorkerServer, "resume", lambda self: None)
    pool = pools.WorkerPool(jobs=1, timeout=30)
    try:
        await pool.start()
        server = pool._server._process
        os.kill(server.pid, signal.SIGSTOP)
        (tmp_path / "echo").mkdir()
        (tmp_path / "echo" / "agent.py").write_text(ECHO)
        job = Job(case_id="x", agent=AgentRef(agents_dir=str(tmp_path), name="echo"), mode="live", app_name="a",
                  messages=[Message(content={"role": "user", "parts": [{"text": "hi"}]})])
        began = time.monotonic()
        out = await asyncio.wait_for(pool.run(job, 30), 60)
        assert out.error is None and time.monotonic() - began < 25  # (it was noticed after ~100 s)
        if resumable:
            assert pool._server._process is server and not pool._server.stopped()
        else:
            assert pool._server._process is not server and server.poll() is not None  # the stopped one is gone
    finally:
        if server.poll() is None:
            os.kill(server.pid, signal.SIGCONT)
        pool.close()


BLOCKING = """import time


async def run_turn(ctx):
    if ctx.message == "block":
        time.sleep(40)  # a synchronous tool: it holds the event loop its batch shares
    return ctx.message
"""


async def test_a_run_that_blocks_its_workers_loop_does_not_hold_up_the_others(tmp_path):
    from agentdiff.core.worker.child import STALL_SECONDS
    from agentdiff.core.worker.jobs import AgentRef, Job, Message
    from agentdiff.core.worker.pool import WorkerPool

    (tmp_path / "blocker").mkdir()
    (tmp_path / "blocker" / "agent.py").write_text(BLOCKING)
    pool = WorkerPool(jobs=8, processes=1, timeout=90)  # one process: the four runs are one batch

    def job(text: str) -> Job:
        return Job(case_id=text, agent=AgentRef(agents_dir=str(tmp_path), name="blocker"), mode="live", app_name="a",
                   messages=[Message(content={"role": "user", "parts": [{"text": text}]})])

    try:
        await pool.start()
        began = time.monotonic()
        blocked = asyncio.ensure_future(pool.run(job("block"), 60))
        others = await asyncio.wait_for(asyncio.gather(*(pool.run(job(t), 90) for t in ("a", "b", "c"))), 35)
        assert [o.error for o in others] == [None] * 3
        assert time.monotonic() - began < STALL_SECONDS + 25  # given back after the stall, not after the 40 s sleep
        assert not blocked.done()
        assert (await asyncio.wait_for(blocked, 80)).error is None  # the blocking run still ends as itself
    finally:
        pool.close()


SLOW_IMPORT = """import os
import time

time.sleep(3)  # an agent whose import is slow: every run of the batch waits for it alike


async def run_turn(ctx):
    return str(os.getpid())
"""


async def test_a_slow_agent_import_is_no_stall_the_batch_stays_in_one_process(tmp_path):
    from agentdiff.core.worker.jobs import AgentRef, Job, Message
    from agentdiff.core.worker.pool import WorkerPool

    (tmp_path / "slow_import").mkdir()
    (tmp_path / "slow_import" / "agent.py").write_text(SLOW_IMPORT)
    pool = WorkerPool(jobs=8, processes=1, timeout=60)
    job = lambda text: Job(case_id=text, agent=AgentRef(agents_dir=str(tmp_path), name="slow_import"), mode="live", app_name="a",  # noqa: E731
                           messages=[Message(content={"role": "user", "parts": [{"text": text}]})])
    try:
        await pool.start()
        outs = await asyncio.wait_for(asyncio.gather(*(pool.run(job(t), 60) for t in "abc")), 40)
        assert [o.error for o in outs] == [None] * 3
        pids = {o.events[-1]["content"]["parts"][0]["text"] for o in outs}
        assert len(pids) == 1, pids  # not given back: one process imported the agent once
    finally:
        pool.close()


# --- the MCP server ---------------------------------------------------------------------------------------


def test_the_mcp_server_ends_on_sigterm_while_its_client_keeps_stdin_open(tmp_path):
    from agentdiff.tui.process_end import DEADLINE

    root = echo_project(tmp_path)
    server = subprocess.Popen([AGENTDIFF, "mcp"], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                                                                "clientInfo": {"name": "t", "version": "1"}}}
        server.stdin.write(json.dumps(hello).encode() + b"\n")
        server.stdin.flush()
        assert b'"id":1' in server.stdout.readline().replace(b" ", b"")
        began = time.monotonic()
        server.send_signal(signal.SIGTERM)  # stdin stays open
        assert server.wait(timeout=DEADLINE + 15) == 128 + 15
        assert time.monotonic() - began < DEADLINE + 8
    finally:
        server.kill()


# --- serve ----------------------------------------------------------------------------------------------


async def test_a_served_tab_takes_only_sizes_it_can_draw_and_its_process_group_ends_with_it(monkeypatch):
    from agentdiff.tui.cli import serve

    assert serve.clamped(1e9, serve.MAX_WIDTH, 80) == serve.MAX_WIDTH
    assert serve.clamped("-5", serve.MAX_HEIGHT, 24) == 1 and serve.clamped(None, 100, 80) == 80
    assert serve.clamped(float("nan"), 100, 80) == 80 and serve.clamped(True, 100, 80) == 80
    service_class = serve.bounded_app_service()
    sent: list[dict] = []
    class Downloads:
        async def cancel_app_downloads(self, app_service_id):
            pass

    service = service_class("sh -c 'sleep 600 & sleep 600'", write_bytes=None, write_str=None, close=None, download_manager=Downloads())

    async def record(data):
        sent.append(data)
        return True

    monkeypatch.setattr(service, "send_meta", record)
    await service.set_terminal_size(10**9, 10**9)
    assert sent == [{"type": "resize", "width": serve.MAX_WIDTH, "height": serve.MAX_HEIGHT}]

    monkeypatch.setattr(serve, "QUIT_SECONDS", 0.5)
    process = await service._open_app_process(10**9, 24)  # a tab that never reads its quit message
    group = process.pid
    service._task = asyncio.ensure_future(process.wait())
    began = time.monotonic()
    await service.stop()
    assert time.monotonic() - began < 5
    deadline = time.monotonic() + 5
    while _alive_in_group(group) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert _alive_in_group(group) == []  # the tab's whole group is gone, the shell's children with it


def _alive_in_group(group: int) -> list[int]:
    """The processes of a process group still running (a zombie has ended), from /proc."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


# --- the faults found beside them -----------------------------------------------------------------------


def _grade_results(scores: dict[str, object], names: dict[str, str] | None = None) -> dict:
    from test_agents_cli_compare import _results

    results = _results(scores)
    for result, (key, score) in zip(results["eval_case_results"], scores.items()):
        metric = result["response_candidate_results"][0]["metric_results"]["custom_response_quality"]
        if isinstance(score, float) and score != score or score in (float("inf"), float("-inf")):
            metric["score"] = score
        if names and key in names:
            metric["metric_name"] = names[key]
    return results


def test_scores_that_are_not_numbers_are_the_metrics_error_in_score_and_compare(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results_a.json").write_text(json.dumps(_grade_results({"greeting": 4.0, "weather": float("nan"),
                                                                         "capital": float("inf")}), indent=2))
    assert "NaN" in (tmp_path / "results_a.json").read_text()  # as Python's JSON writes it
    code, out, err = run("score", "results_a.json")
    assert code == 1, err
    assert "! error         weather   custom_response_quality n/a" in out and "its score is NaN, not a number" in out
    assert "its score is Infinity, not a number" in out
    code, out, _ = run("score", "results_a.json", "--json")
    assert {c["id"]: c["status"] for c in json.loads(out)["cases"]} == {"greeting": "not_evaluated", "weather": "error", "capital": "error"}
    (tmp_path / "results_b.json").write_text(json.dumps(_grade_results({"greeting": 4.0, "weather": 3.0, "capital": 2.0})))
    code, out, err = run("compare", "results_b.json", "results_a.json")
    assert code == 1 and "newly erroring (2):" in out and "not an agentdiff JSON report" not in err


def test_a_case_graded_twice_is_refused_where_the_file_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = _grade_results({"greeting": 4.0, "weather": 1.0, "capital": 2.0})
    data["eval_case_results"][2]["eval_case_index"] = 0
    (tmp_path / "results.json").write_text(json.dumps(data, indent=2))
    code, out, err = run("score", "results.json")
    line = next(i for i, text in enumerate((tmp_path / "results.json").read_text().splitlines(), 1)
                if '"eval_case_index": 0' in text and i > 10)
    assert code == 2 and f"error: results.json:{line}:1: eval_case_results[2] grades eval_case_index 0, as eval_case_results[0] does" in err


def test_a_newline_in_data_never_forges_a_line_of_score_compare_or_baselines(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    forged = "boom\nsigned off by lead-reviewer ✓"
    data = _grade_results({"greeting": 4.0, "weather": forged}, names={"greeting": "quality\nforged: 5.0"})
    (tmp_path / "results.json").write_text(json.dumps(data))
    code, out, _ = run("score", "results.json")
    assert not any(line.startswith("signed off") or line.startswith("forged") for line in out.splitlines()), out
    assert "boom\\nsigned off by lead-reviewer ✓" in out
    (tmp_path / "base.json").write_text(json.dumps(_grade_results({"greeting": 3.0, "weather": 1.0})))
    code, out, _ = run("compare", "base.json", "results.json")
    assert not any(line.strip().startswith("signed off") for line in out.splitlines()), out

    from agentdiff.core.baselines.documents import ASSISTANT

    root = echo_project(tmp_path / "project")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=t", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=t", "commit", "-qm", "x"], cwd=root, check=True)
    evalset = root / "agents" / "echo" / "echo.evalset.json"
    evalset.write_text(evalset.read_text().replace('"bye"}]}}]', '"bye!"}]}}]'))
    (root / "agents" / "echo" / "echo.agentdiff-record.json").write_text(json.dumps({"case_1": {
        "recorded_by": "mallory\n  signed off by lead-reviewer ✓", "recorded_at": "now", "assistant": "bot\nforged"}}))
    monkeypatch.chdir(root)
    assert ASSISTANT.get() == ""
    code, out, err = run("baselines", "--since", "HEAD")
    assert "recorded by mallory\\n  signed off by lead-reviewer ✓" in out, out + err
    assert not any(line.strip().startswith("signed off") for line in out.splitlines()), out


def test_a_metric_file_from_outside_the_project_is_a_located_error_and_never_runs(tmp_path, monkeypatch):
    from agentdiff.core.formats.agents_cli.metrics_config import load_metrics_config

    outside = tmp_path / "outside"
    outside.mkdir()
    marker = tmp_path / "ran"
    (outside / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('x')\ndef evaluate(instance):\n    return 1\n")
    project = tmp_path / "project"
    (project / "tests" / "eval").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname='p'\nversion='0'\n")
    config = project / "tests" / "eval" / "eval_config.yaml"
    for written in ("../../../outside/evil.py", str(outside / "evil.py")):
        config.write_text(f"metrics_to_run: [mine]\ncustom_metrics:\n  - name: mine\n    custom_function_file: {written}\n")
        loaded, errors = load_metrics_config(config)
        assert loaded is None and len(errors) == 1
        assert errors[0].line == 4 and "lies outside the project" in errors[0].message, errors
    assert not marker.exists()
