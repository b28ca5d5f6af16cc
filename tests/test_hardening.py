"""Hostile inputs, agent faults and interrupted writes: each ends as a clear error, nothing crashes,
nothing hangs, and no baseline is ever left half-written."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agentdiff.core.baselines.journal import (
    BaselineWriteError,
    FileWrite,
    sha256_of,
    write_baseline,
)
from agentdiff.core.formats.adk_results import load_eval_set_result
from agentdiff.core.formats.adk_test.fixture import load_fixture
from agentdiff.core.formats.conformance import load_conformance_case
from agentdiff.core.formats.eval_set_files import load_config_file, load_eval_set
from agentdiff.core.project.agents import resolve_agent
from agentdiff.core.project.discovery import discover
from agentdiff.core.worker.jobs import AgentRef, Job, Message
from conftest import NATIVE_AGENTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# --- hostile files ------------------------------------------------------------------------------

hostile = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(str.encode),
    st.sampled_from([b"{", b'{"eval_set_id": 1}', b"[" * 5000, b"\x00\x00{}", b'{"eval_cases": [{"eval_id": null}]}', b"\xff\xfe{}"]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=hostile)
def test_no_loader_raises_on_any_bytes(tmp_path, data):
    from agentdiff.core.formats.agents_cli.dataset import load_dataset
    from agentdiff.core.formats.agents_cli.grade_results import load_grade_results
    from agentdiff.core.formats.agents_cli.manifest import read_manifest
    from agentdiff.core.formats.agents_cli.metrics_config import load_metrics_config

    for name, load in (
        ("x.evalset.json", lambda p: load_eval_set(p)),
        ("test_config.json", lambda p: load_config_file(p)),
        ("r.evalset_result.json", lambda p: load_eval_set_result(p)),
        ("basic-dataset.json", lambda p: load_dataset(p)),  # agents-cli's: datasets and traces
        ("results_1.json", lambda p: load_grade_results(p)),
        ("eval_config.yaml", lambda p: load_metrics_config(p)),
        ("agents-cli-manifest.yaml", lambda p: read_manifest(p.parent)),
        ("fixture.json", lambda p: load_fixture(p)),  # ADK's `adk test` fixtures
    ):
        path = tmp_path / name
        path.write_bytes(data)
        loaded, errors = load(path)
        assert loaded is not None or errors
    from agentdiff.core.formats.otlp.spans import read_spans
    from agentdiff.core.traces.otlp import conversations

    for name in ("traces.json", "traces.pb"):  # OpenTelemetry trace files: read, or said; never raised
        path = tmp_path / name
        path.write_bytes(data)
        spans, errors = read_spans(path, tmp_path)
        assert spans or errors
        conversations(spans)
    case = tmp_path / "cat" / "case"
    case.mkdir(parents=True, exist_ok=True)
    for name in ("spec.yaml", "generated-recordings.yaml", "generated-session.yaml"):
        (case / name).write_bytes(data)
    loaded, errors = load_conformance_case(case, "cat/case")
    assert loaded is not None or errors


def error_of(path: Path) -> str:
    if path.parent.name == "tests":
        loaded, errors = load_fixture(path)
    else:
        loaded, errors = load_eval_set(path) if path.suffix == ".json" else load_conformance_case(path.parent, "case")
    assert errors, "expected a load error"
    return str(errors[0])


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("a.evalset.json", b'{"eval_set_id": "x", "eval_cases": [', "invalid JSON"),
        ("a.evalset.json", b"[" * 100_000, "nested too deeply"),
        ("a.evalset.json", b'{"eval_set_id": "x\x00"}', "invalid JSON"),
        ("a.evalset.json", b'{"eval_set_id": "\xff"}', "not valid UTF-8"),
        ("spec.yaml", b"description: !!python/object/apply:os.system [echo hacked]\nagent: a\n", "could not determine a constructor"),
        ("spec.yaml", b"a: &a [x,x,x,x,x,x,x,x,x]\n" + b"".join(b"%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n" % ((98 + i,) * 2 + (97 + i,) * 9) for i in range(9)), "alias bomb"),
        ("spec.yaml", b"\x00description: x\n", "invalid YAML"),
        ("a.evalset.json", b'{"eval_set_id": "x", "n": ' + b"9" * 5000 + b"}", "1:27: invalid JSON: a number with more than 4,300 digits"),
        ("spec.yaml", b"agent: a\ninitial_state: {n: " + b"9" * 5000 + b"}\n", "invalid YAML: a number with more than 4,300 digits"),
        ("a.evalset.json", b'{"x": ' + b"[" * 500 + b"]" * 500 + b"}", "nested too deeply (more than 200 levels)"),
        ("tests/greeting.json", b'{"events": ' + b"[" * 100_000, "nested too deeply"),  # an `adk test` fixture
        ("tests/greeting.json", b'{"events": [{"author": "user", "n": ' + b"9" * 5000 + b"}]}", "a number with more than 4,300 digits"),
        ("tests/greeting.json", b'{"events": [{"author": "\\ud800"}]}', "half of a surrogate pair"),
        ("tests/greeting.json", b'{"events": "all of them"}', "1:2: `events` is a list"),
        ("tests/greeting.json", b'{"events": [7]}', "an event is a JSON object"),
    ],
)
def test_hostile_files_are_clear_errors(tmp_path, name, content, message):
    path = tmp_path / "case" / name
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    start = time.monotonic()
    assert message in error_of(path)
    assert time.monotonic() - start < 5


def test_a_huge_file_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "huge.evalset.json"
    with open(path, "wb") as handle:
        handle.truncate(100_000_000)  # sparse: 100 MB that costs nothing to make
    start = time.monotonic()
    assert "file is too large to load (100,000,000 bytes; the limit is 64,000,000 bytes)" in error_of(path)
    assert time.monotonic() - start < 1


def test_a_symlink_loop_in_the_tree_ends(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "loop").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "a" / "x.evalset.json").write_text('{"eval_set_id": "x", "eval_cases": []}')
    found = discover([tmp_path], tmp_path)
    assert found.errors == [] and found.eval_sets


@pytest.mark.parametrize("agent", ["../../etc", "/etc", "a/../../b", "os.path", ".."])
def test_agent_names_never_become_paths_outside(tmp_path, agent):
    case = tmp_path / "cases" / "c" / "one"
    case.mkdir(parents=True)
    (case / "spec.yaml").write_text(f"description: x\nagent: '{agent}'\nuser_messages: [{{text: hi}}]\n")
    (ref,) = discover([tmp_path], tmp_path).cases
    resolution = resolve_agent(ref, tmp_path)
    assert resolution.agent is None and "not an agent's name" in resolution.error


async def test_agents_are_imported_only_from_the_agents_dir(tmp_path, worker_pool):
    job = Job(case_id="x", agent=AgentRef(agents_dir=str(tmp_path), name="json"), mode="live", app_name="x",
              messages=[Message(content={"parts": [{"text": "hi"}]})])
    out = await worker_pool.run(job)
    assert "'json' is not an agent folder" in out.error


# --- agent faults -------------------------------------------------------------------------------


def native_job(name: str, text: str = "hi") -> Job:
    return Job(case_id=name, agent=AgentRef(agents_dir=str(NATIVE_AGENTS), name=name), mode="live", app_name=name,
               messages=[Message(content={"role": "user", "parts": [{"text": text}]})])


async def test_runaway_memory_is_stopped_by_the_limit():
    from agentdiff.core.worker.pool import WorkerPool

    pool = WorkerPool(jobs=2, timeout=60, memory_mb=700)
    try:
        start = time.monotonic()
        out = await pool.run(native_job("greedy"))
        assert out.error is not None and "MemoryError" in out.error
        assert time.monotonic() - start < 30
    finally:
        pool.close()


async def test_processes_an_agent_leaves_behind_are_stopped(worker_pool):
    out = await worker_pool.run(native_job("spawner"))
    (pid,) = out.state["children"]
    await _gone(pid, "the agent's child process")


async def _gone(pid: int, what: str) -> None:
    """Waits up to 5 s for process `pid` to be gone; fails naming it otherwise."""
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        await asyncio.sleep(0.1)
    pytest.fail(f"{what} {pid} is still running")


async def test_a_process_the_agent_daemonises_is_ended_with_the_run(worker_pool):
    """fork, setsid, fork: the daemon leaves the run's process group and its parent, and would be
    adopted by init; the worker adopts it instead, and ends it when the run ends."""
    out = await worker_pool.run(native_job("daemoniser"))
    await _gone(out.state["daemon"], "the daemon the agent left,")


async def test_an_agent_that_kills_its_parent_ends_only_its_own_run():
    """`os.kill(os.getppid(), SIGKILL)`: the parent is the run's keeper, not the worker server, so the
    runs in flight beside the culprit finish as if nothing happened, and later runs still have a server."""
    from agentdiff.core.worker.pool import WorkerPool

    pool = WorkerPool(jobs=4, processes=4, timeout=60)  # one run per process: nothing to re-run alone
    try:
        await pool.start()
        bystanders = [pool.run(native_job("slow_good", f"bystander {i}")) for i in range(3)]
        outs = await asyncio.gather(pool.run(native_job("parricide")), *bystanders)
        assert [out.error for out in outs[1:]] == [None, None, None], [out.error for out in outs]
        assert all(out.events for out in outs[1:])
        assert (await pool.run(native_job("good"))).error is None  # and the server is still there
    finally:
        pool.close()


async def test_megabytes_of_output_are_kept_short(tmp_path, worker_pool):
    (tmp_path / "chatty").mkdir()
    (tmp_path / "chatty" / "agent.py").write_text("async def run_turn(ctx):\n    print('x' * 5_000_000)\n    return 'done'\n")
    job = native_job("chatty").model_copy(update={"agent": AgentRef(agents_dir=str(tmp_path), name="chatty")})
    out = await worker_pool.run(job)
    assert out.error is None and len(out.log) <= 4000


# --- writes -------------------------------------------------------------------------------------

WRITER = """
import sys
from pathlib import Path
from agentdiff.core.baselines.journal import FileWrite, sha256_of, write_baseline
root, target = Path(sys.argv[1]), Path(sys.argv[1]) / "baseline.json"
texts = [("A" * 3_000_000) + "\\n", ("B" * 3_000_000) + "\\n"]
i = 0
while True:
    write_baseline([FileWrite(target, texts[i % 2], sha256_of(target))], root, "loop")
    i += 1
"""


def test_a_kill_during_writes_leaves_the_old_file_or_the_new_one(tmp_path):
    target = tmp_path / "baseline.json"
    target.write_text(("A" * 3_000_000) + "\n")
    for attempt in range(12):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)])
        time.sleep(0.15 + attempt * 0.037)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        text = target.read_text()
        assert text in (("A" * 3_000_000) + "\n", ("B" * 3_000_000) + "\n"), f"a mixed file after kill {attempt}"


def test_a_failed_write_says_why_and_leaves_every_file_as_it_was(tmp_path, monkeypatch):
    from agentdiff.core.baselines import journal as baseline_writer

    first, second = tmp_path / "one.yaml", tmp_path / "two.yaml"
    first.write_text("old one\n")
    second.write_text("old two\n")
    real = baseline_writer.stage

    def full_disk(path, text, *rest, **named):
        if path == second:
            raise OSError(28, "No space left on device", str(path))
        return real(path, text, *rest, **named)

    monkeypatch.setattr(baseline_writer, "stage", full_disk)
    writes = [FileWrite(first, "new one\n", sha256_of(first)), FileWrite(second, "new two\n", sha256_of(second))]
    with pytest.raises(BaselineWriteError, match="nothing was written: No space left on device"):
        write_baseline(writes, tmp_path, "test")
    assert first.read_text() == "old one\n" and second.read_text() == "old two\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".agentdiff", "one.yaml", "two.yaml"]  # no temporary left
    assert not any((tmp_path / ".agentdiff" / "journal").iterdir())


def test_undo_works_after_a_restart(tmp_path):
    target = tmp_path / "baseline.json"
    target.write_text("old\n")
    write_baseline([FileWrite(target, "new\n", sha256_of(target))], tmp_path, "accept")
    code = "import sys; from pathlib import Path; from agentdiff.core.baselines.journal import undo_last; print(undo_last(Path(sys.argv[1])).reason)"
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "accept" and target.read_text() == "old\n"


# --- watch storms -------------------------------------------------------------------------------


async def test_a_thousand_changed_files_are_one_rerun(tmp_path):
    from agentdiff.core.workbench.case_index import CaseFiles, CaseIndex
    from agentdiff.core.workbench.changes import classify
    from agentdiff.core.workbench.watcher import watchfiles_source

    agent = tmp_path / "agents" / "bot"
    (agent / "data").mkdir(parents=True)
    (agent / "agent.py").write_text("x = 1\n")
    cases = CaseIndex()
    for i in range(3):
        cases.put(CaseFiles(f"case{i}", frozenset({tmp_path / f"c{i}.evalset.json"}), None, agent.resolve()))
    changes = watchfiles_source([tmp_path], debounce_ms=200)()
    batches: list[set[Path]] = []

    async def collect() -> None:
        async for batch in changes:
            batches.append(batch)

    task = asyncio.ensure_future(collect())
    await asyncio.sleep(0.5)
    for i in range(1000):
        (agent / "data" / f"f{i}.json").write_text("{}")
    await asyncio.sleep(2.0)
    task.cancel()
    changed = set().union(*batches)
    assert len(changed) >= 1000 and len(batches) <= 3
    selections = classify(changed, cases, tmp_path)
    assert [(s.action, sorted(s.case_ids)) for s in selections] == [("run", ["case0", "case1", "case2"])]


async def test_a_second_save_in_the_second_of_the_first_is_seen_when_polling(tmp_path):
    """A poller keeps a file's time in whole seconds: the second save is given by the second look."""
    from agentdiff.core.workbench.watcher import watchfiles_source

    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Style: formal\n")
    os.utime(prompt, (1_700_000_000, 1_700_000_000))
    changes = watchfiles_source([tmp_path], force_polling=True, second_look_s=1.0)()
    batches: list[set[Path]] = []

    async def collect() -> None:
        async for batch in changes:
            batches.append(batch)

    task = asyncio.ensure_future(collect())
    try:
        loop = asyncio.get_running_loop()
        deadline, when = loop.time() + 20, 1_700_000_000
        while prompt not in set().union(*batches) and loop.time() < deadline:
            when += 10  # until the poller, started meanwhile, sees a save: each one some seconds later
            prompt.write_text("Style: casual\n")
            os.utime(prompt, (when, when))
            for _ in range(10):
                await asyncio.sleep(0.05)
                if prompt in set().union(*batches):
                    break
        assert any(prompt in batch for batch in batches), batches
        first = len(batches)
        prompt.write_text("Style: casual, brief\n")  # the same second, to the poller, before the second look
        os.utime(prompt, (when, when))
        deadline = loop.time() + 10
        while not any(prompt in batch for batch in batches[first:]) and loop.time() < deadline:
            await asyncio.sleep(0.05)
        assert [batch for batch in batches[first:] if prompt in batch] == [{prompt}], batches
        await asyncio.sleep(1.0)
        assert sum(prompt in batch for batch in batches[first:]) == 1, batches  # given once, not again
    finally:
        task.cancel()


def test_the_second_look_gives_a_missed_save_once_never_a_deletion_again_and_forgets_what_it_looked_at(tmp_path):
    from agentdiff.core.workbench.watcher import SecondLook

    prompt, gone = tmp_path / "prompt.txt", tmp_path / "old.txt"
    prompt.write_text("a")
    gone.write_text("x")
    look = SecondLook()
    assert sorted(look.keep({prompt, gone, tmp_path})) == [gone, prompt]  # a folder is not looked at again
    prompt.write_text("ab")  # missed by the watcher
    gone.unlink()
    assert look.keep({gone}) == []  # the deletion was given
    assert look.changed([prompt, gone]) == {prompt} and look.keep({prompt}) == [prompt]
    assert look.changed([prompt]) == set() and look.given == {} and look.looks == {}

    look.keep({prompt})
    prompt.write_text("abc")  # a save the watcher has not reported yet when the look comes
    assert look.changed([prompt]) == {prompt} and look.keep({prompt}, looked={prompt}) == [prompt]
    assert look.new({prompt, gone}) == {gone}  # its report, after: given once
    prompt.write_text("abcd")
    assert look.new({prompt}) == {prompt}


async def test_changes_made_while_a_batch_is_handled_are_the_next_batch_together(tmp_path):
    from agentdiff.core.workbench.watcher import watchfiles_source

    changes = watchfiles_source([tmp_path])()
    batches: list[set[Path]] = []

    async def collect() -> None:
        async for batch in changes:
            batches.append(batch)
            await asyncio.sleep(1.5)  # a reload that takes its time

    task = asyncio.ensure_future(collect())
    try:
        loop = asyncio.get_running_loop()
        deadline, n = loop.time() + 20, 0
        while not batches and loop.time() < deadline:  # until the watcher, started meanwhile, sees a file
            n += 1
            (tmp_path / f"first{n}.py").write_text("")
            await asyncio.sleep(0.2)
        assert batches
        await asyncio.sleep(0.2)
        for i in range(3):
            (tmp_path / f"f{i}.py").write_text("x")
            await asyncio.sleep(0.1)
        deadline = loop.time() + 10
        while not any(tmp_path / "f0.py" in batch for batch in batches) and loop.time() < deadline:
            await asyncio.sleep(0.05)
        (later,) = [batch for batch in batches if tmp_path / "f0.py" in batch]
        assert {tmp_path / f"f{i}.py" for i in range(3)} <= later, batches
    finally:
        task.cancel()


def test_undo_refuses_to_lose_an_edit_made_after_the_write(tmp_path):
    from agentdiff.core.baselines.journal import BaselineConflict, undo_last

    target = tmp_path / "baseline.json"
    target.write_text("old\n")
    write_baseline([FileWrite(target, "new\n", sha256_of(target))], tmp_path, "accept")
    target.write_text("new, then edited by hand\n")
    with pytest.raises(BaselineConflict, match="changed since it was written, in the lines it wrote or next to them; undo would lose that change"):
        undo_last(tmp_path)
    assert target.read_text() == "new, then edited by hand\n"


def _children_of(parent: int) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if int(Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].split()[1]) == parent:
                    found.append(int(pid))
            except (OSError, ValueError):
                continue
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _descendants_of(root: int) -> dict[int, int]:
    """Every process under `root`, each with its parent."""
    found: dict[int, int] = {}
    parents = [root]
    while parents:
        parent = parents.pop()
        for child in _children_of(parent):
            found[child] = parent
            parents.append(child)
    return found


def test_closing_the_pool_leaves_no_worker_behind():
    from agentdiff.core.worker.pool import WorkerPool

    async def scenario() -> tuple[int, dict[int, int]]:
        pool = WorkerPool(jobs=2, timeout=120)
        hang = asyncio.ensure_future(pool.run(native_job("hangs")))
        server, below = 0, {}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until the server is up and a keeper has forked the hanging run's worker
            await asyncio.sleep(0.5)
            server = pool._server._process.pid if pool._server is not None and pool._server._process is not None else 0
            below = _descendants_of(server) if server else {}
            if any(parent != server for parent in below.values()):
                break
        await asyncio.sleep(0.5)  # the run under way in it
        below = _descendants_of(server)
        pool.close()
        hang.cancel()
        return server, below

    server, below = asyncio.run(scenario())
    assert any(parent != server for parent in below.values()), ("the hanging run should have had a worker", server, below)
    deadline = time.monotonic() + 10
    while [pid for pid in [server, *below] if _alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in [server, *below] if _alive(pid)] == []


def test_editor_saves_and_litter_count_once_for_the_real_file(tmp_path):
    from agentdiff.core.workbench.case_index import CaseFiles, CaseIndex
    from agentdiff.core.workbench.changes import classify

    agent = tmp_path / "agents" / "bot"
    agent.mkdir(parents=True)
    prompt = agent / "prompt.md"
    prompt.write_text("hello")
    evalset = tmp_path / "bot.evalset.json"
    evalset.write_text("{}")
    cases = CaseIndex()
    cases.put(CaseFiles("c1", frozenset({evalset.resolve()}), None, agent.resolve(), frozenset({prompt.resolve()})))
    # vim: swap file, backup, a probe file, then the written file; sed -i: a temp file renamed over it
    litter = [agent / ".prompt.md.swp", agent / "prompt.md~", agent / "4913", agent / "sedAbC123"]
    (selection,) = classify([*litter, prompt], cases, tmp_path)
    assert (selection.action, selection.case_ids, selection.reason) == ("run", ["c1"], "re-run: agents/bot/prompt.md changed")
    # delete and recreate an eval set: one reload
    evalset.unlink()
    evalset.write_text("{}")
    (selection,) = classify([evalset, evalset], cases, tmp_path)
    assert selection.action == "reload" and selection.paths == [evalset.resolve()]


def test_fifos_named_like_project_files_are_load_errors_never_a_hang(tmp_path):
    """A FIFO opened for reading blocks until something writes to it: agentdiff never opens one."""
    (tmp_path / "agents" / "echo").mkdir(parents=True)
    (tmp_path / "agents" / "echo" / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message\n")
    for name in ("agents/echo/x.evalset.json", "pyproject.toml", "tests/test_eval.py", "agents/echo/__init__.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(tmp_path / name)
    done = subprocess.run([sys.executable, "-c", "from agentdiff.tui.cli import entry; entry()", "list", "--agents"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert "error: agents/echo/x.evalset.json: not a regular file (a FIFO)" in done.stderr


def test_a_device_or_a_dangling_symlink_named_on_the_command_line_is_an_error_not_nothing(tmp_path):
    (tmp_path / "gone.evalset.json").symlink_to(tmp_path / "moved" / "x.evalset.json")
    done = subprocess.run([sys.executable, "-c", "from agentdiff.tui.cli import entry; entry()", "list", "/dev/zero", "gone.evalset.json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert "error: /dev/zero: not a regular file (a character device)" in done.stderr
    assert f"error: gone.evalset.json: a symlink to '{tmp_path}/moved/x.evalset.json', which does not exist" in done.stderr


@pytest.mark.parametrize("sig, code, said", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated"),
                                             (signal.SIGHUP, 129, "terminated")])
def test_a_signal_during_run_stops_everything_cleanly(tmp_path, sig, code, said):
    """Ctrl+C or SIGTERM mid-run: one line, the conventional exit code, no traceback, no process and
    no temporary file left behind."""
    scratch, process = _slow_run(tmp_path)
    assert process.stderr.readline().startswith("starting workers")
    assert process.stderr.readline().startswith("running 1 case")
    time.sleep(1.0)  # the run is in flight
    process.send_signal(sig)
    out, err = process.communicate(timeout=30)
    assert process.returncode == code and f"{said}: the runs were stopped; no report was written" in err and "Traceback" not in err, (out, err)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (list(scratch.iterdir()) or _running_with(str(scratch))):
        time.sleep(0.1)
    assert list(scratch.iterdir()) == [] and _running_with(str(scratch)) == []


def _slow_run(tmp_path: Path, **popen) -> tuple[Path, subprocess.Popen]:
    """`agentdiff run` on one case of an agent that sleeps a minute, with a private TMPDIR: (that
    folder, the process)."""
    project, scratch = tmp_path / "proj", tmp_path / "tmp"
    (project / "agents" / "slow").mkdir(parents=True)
    scratch.mkdir()
    (project / "agents" / "slow" / "agent.py").write_text("import asyncio\n\nasync def run_turn(ctx):\n    await asyncio.sleep(60)\n    return ctx.message\n")
    (project / "agents" / "slow" / "slow.evalset.json").write_text(json.dumps({"eval_set_id": "slow", "eval_cases": [
        {"eval_id": "a", "conversation": [{"user_content": {"role": "user", "parts": [{"text": "hi"}]}}]}]}))
    process = subprocess.Popen([sys.executable, "-c", "from agentdiff.tui.cli import entry; entry()", "run"], cwd=project,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(scratch)},
                               preexec_fn=_as_a_terminal_starts_it, **popen)
    return scratch, process


def _as_a_terminal_starts_it() -> None:
    """Ctrl+C and Ctrl+\\ at their defaults, as a shell starts a command in the foreground. (A test
    session started in the background, `pytest &` in a script, has them ignored, and a program keeps
    an ignored SIGINT ignored, as agentdiff does: that is the shell's way of sparing background jobs.)"""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def _running_with(text: str) -> list[int]:
    """Processes whose command line mentions `text` (the worker server names its socket's folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


async def test_a_worker_killed_by_sigkill_is_said_so(tmp_path):
    """The keeper ends as its worker ended, so the run says which signal killed it, SIGKILL included."""
    from agentdiff.core.worker.pool import WorkerPool

    (tmp_path / "killer").mkdir()
    (tmp_path / "killer" / "agent.py").write_text("import os, signal\n\nasync def run_turn(ctx):\n    os.kill(os.getpid(), signal.SIGKILL)\n")
    pool = WorkerPool(jobs=1, timeout=60)
    try:
        job = Job(case_id="k", agent=AgentRef(agents_dir=str(tmp_path), name="killer"), mode="live", app_name="killer",
                  messages=[Message(content={"role": "user", "parts": [{"text": "hi"}]})])
        out = await pool.run(job)
        assert out.error == "the agent's process was killed by SIGKILL"
    finally:
        pool.close()


@pytest.mark.parametrize("escape, ok", [("\\ud800", False), ("\\udc00", False), ("x\\ud83d", False), ("\\ud83d\\ude00", True),
                                        ("\\\\ud800", True), ("\\ud83d\\ude00\\udc00", False)])
def test_a_lone_surrogate_escape_is_a_located_load_error_not_a_crash_later(tmp_path, escape, ok):
    """Python's json reads `"\\ud800"` into a string no encoder can write; ADK's loader refuses it."""
    (tmp_path / "s.evalset.json").write_text('{"eval_set_id": "s",\n "eval_cases": [{"eval_id": "id' + escape + '", "conversation": []}]}')
    found = discover([tmp_path], tmp_path)
    if ok:
        assert found.errors == [] and len(found.cases) == 1
        found.cases[0].case.eval_id.encode("utf-8")  # writable
    else:
        (error,) = found.errors
        assert (error.line, "half of a surrogate pair, not a character" in error.message) == (2, True), error


def test_a_suspended_run_is_not_a_false_timeout(tmp_path):
    """Ctrl+Z (SIGSTOP) on `agentdiff run` while its agent works, SIGCONT after the timeout has
    passed: the answers that arrived meanwhile are read, not thrown away as timed out."""
    (tmp_path / "agents" / "slow").mkdir(parents=True)
    (tmp_path / "agents" / "slow" / "agent.py").write_text("import asyncio\n\nasync def run_turn(ctx):\n    await asyncio.sleep(1.5)\n    return ctx.message\n")
    (tmp_path / "agents" / "slow" / "slow.evalset.json").write_text(json.dumps({"eval_set_id": "slow", "eval_cases": [
        {"eval_id": "a", "conversation": [{"user_content": {"role": "user", "parts": [{"text": "hi"}]},
                                           "final_response": {"role": "model", "parts": [{"text": "hi"}]}}]}]}))
    process = subprocess.Popen([sys.executable, "-c", "from agentdiff.tui.cli import entry; entry()", "run", "--timeout", "3"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stderr.readline().startswith("starting workers")
    assert process.stderr.readline().startswith("running 1 case")
    time.sleep(0.5)
    process.send_signal(signal.SIGSTOP)
    time.sleep(5)  # past the timeout; the agent finished meanwhile
    process.send_signal(signal.SIGCONT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0 and "timed out" not in out + err, out + err


@pytest.mark.parametrize("link", ["missing", "test_config.json"])
def test_a_test_config_that_is_a_broken_link_is_an_error_never_adks_defaults(tmp_path, link):
    (tmp_path / "s.evalset.json").write_text('{"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": []}]}')
    (tmp_path / "test_config.json").symlink_to(link)  # dangling, or a loop onto itself
    found = discover([tmp_path], tmp_path)
    (ref,) = found.cases
    assert ref.config_errors and ref.config_errors[0].file == "test_config.json"
    assert ref.config_errors[0].message in ("a symlink to 'missing', which does not exist", "a symlink loop (its links lead back to themselves)")


def test_two_quick_ctrl_cs_to_the_whole_group_still_leave_nothing_behind(tmp_path):
    """A terminal's Ctrl+C goes to every process of the foreground group, and an impatient user
    presses it twice: the second must not cut short the cleanup the first started."""
    scratch, process = _slow_run(tmp_path, start_new_session=True)
    assert process.stderr.readline().startswith("starting workers")
    assert process.stderr.readline().startswith("running 1 case")
    time.sleep(1.0)
    os.killpg(process.pid, signal.SIGINT)
    time.sleep(0.02)
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=30)
    # The first line says it all. (A second Ctrl+C that lands inside a task could make asyncio report
    # that task as it is collected; agentdiff silences that report, which this test does not time.)
    assert process.returncode == 130 and "interrupted: the runs were stopped; no report was written" in err, (out, err)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (list(scratch.iterdir()) or _running_with(str(scratch))):
        time.sleep(0.1)
    assert list(scratch.iterdir()) == [] and _running_with(str(scratch)) == []


INTERRUPTED = (130, "interrupted: the runs were stopped; no report was written")
TERMINATED = (143, "terminated: the runs were stopped; no report was written")


@pytest.mark.parametrize("first, then, endings", [
    (signal.SIGINT, (signal.SIGINT,), [INTERRUPTED]),  # Ctrl+C held down
    # a cancelled CI job: SIGINT, then SIGTERM; one that comes while asyncio still cancels the runs
    # is the stronger request (their cleanup done all the same), one after is ignored
    (signal.SIGINT, (signal.SIGTERM,), [INTERRUPTED, TERMINATED]),
    (signal.SIGTERM, (signal.SIGINT, signal.SIGTERM), [TERMINATED]),
])
def test_signals_repeated_until_the_end_still_exit_cleanly_with_one_line(tmp_path, first, then, endings):
    """Signals that keep coming until the process is gone: none may land in a moment (Python's own
    exit included) where it kills agentdiff, or leaves a traceback or a worker, instead of being ignored."""
    scratch, process = _slow_run(tmp_path, start_new_session=True)
    assert process.stderr.readline().startswith("starting workers")
    assert process.stderr.readline().startswith("running 1 case")
    time.sleep(1.0)
    os.killpg(process.pid, first)
    deadline = time.monotonic() + 30
    sent = 0
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
        try:
            os.killpg(process.pid, then[sent % len(then)])
        except ProcessLookupError:
            break
        sent += 1
    out, err = process.communicate(timeout=30)
    assert (process.returncode, err.strip()) in endings, (process.returncode, out, err)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (list(scratch.iterdir()) or _running_with(str(scratch))):
        time.sleep(0.1)
    assert list(scratch.iterdir()) == [] and _running_with(str(scratch)) == []


def test_a_folder_too_deep_to_list_is_a_load_error_not_silence(tmp_path):
    """Paths past the system's limit (4,096 bytes) cannot be opened by name: said, not skipped."""
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        for _ in range(25):  # 25 × 201 bytes
            os.mkdir("d" * 200, dir_fd=fd)
            inner = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    found = discover([tmp_path], tmp_path)
    assert [e.message for e in found.errors] == ["cannot read folder: File name too long"]


def test_list_says_a_project_configuration_that_does_not_load_as_run_does(tmp_path):
    (tmp_path / "pyproject.toml").write_bytes(b"\xef\xbb\xbf[tool.agentdiff]\nagents = ['agents']\n")
    done = subprocess.run([sys.executable, "-c", "from agentdiff.tui.cli import entry; entry()", "list"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "error: pyproject.toml: invalid TOML: the file starts with a byte-order mark (BOM)" in done.stderr


def test_a_ctrl_c_landing_where_nothing_can_raise_is_not_reported_over_the_interruption(capsys):
    """A second Ctrl+C inside a weak reference's callback (asyncio's set of tasks, as it cancels the
    runs of the first) is the interruption itself; any other unraisable error is reported as Python does."""
    from agentdiff.tui.cli import _unraisable

    def unraisable(error: BaseException):
        """What Python hands its hook when `error` is raised in a finaliser."""
        class Finalised:
            def __del__(self):
                raise error

        seen, hook = [], sys.unraisablehook
        sys.unraisablehook = seen.append
        try:
            Finalised()
        finally:
            sys.unraisablehook = hook
        return seen[0]

    _unraisable(unraisable(KeyboardInterrupt()))
    assert capsys.readouterr().err == ""
    _unraisable(unraisable(ValueError("a callback's own bug")))
    assert "ValueError: a callback's own bug" in capsys.readouterr().err
