"""The journeys in a real terminal (tmux): start on a copy of the sample agents, edit a prompt, see
the affected case turn red with the request-layer diff, accept it, see it green, undo, see it red;
and triage every failure of the samples at 80×24 with `n`, the editor opened at the line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tui_support import copy_samples

pytestmark = [pytest.mark.adk, pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")]

AGENTDIFF = Path(sys.executable).with_name("agentdiff")


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", f"agentdiff-test-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}", "-f", "/dev/null", *args], capture_output=True, text=True, check=False).stdout


def pane() -> str:
    return tmux("capture-pane", "-p", "-t", "journey")


def wait_for(predicate, what: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = pane()
        if predicate(text):
            return text
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}; the screen shows:\n{pane()}")


def case_line(text: str, name: str) -> str:
    return next((line for line in text.splitlines() if f" {name}" in line.split("│")[0]), "")


def start(tmp_path: Path, width: int, height: int, paths: str = "sample_agents") -> None:
    """The app in a new tmux server (the last test's server gone first: a session started while it
    exits would go with it)."""
    tmux("kill-server")
    deadline = time.monotonic() + 10
    while tmux("list-sessions") and time.monotonic() < deadline:
        time.sleep(0.1)
    tmux("new-session", "-d", "-s", "journey", "-x", str(width), "-y", str(height), "-c", str(tmp_path), f"env -u COLUMNS -u LINES {AGENTDIFF} {paths}")
    assert "journey" in tmux("list-sessions"), "tmux did not start the session"
    tmux("set-option", "-t", "journey", "window-size", "manual")
    tmux("resize-window", "-t", "journey", "-x", str(width), "-y", str(height))


def quit_app() -> None:
    tmux("send-keys", "-t", "journey", "q")
    deadline = time.monotonic() + 10
    while "journey" in tmux("list-sessions") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "journey" not in tmux("list-sessions")


def test_triage_every_failure_at_80_by_24_and_open_the_editor_at_the_line(tmp_path):
    copy_samples(tmp_path)
    opened = tmp_path / "opened.txt"
    editor = tmp_path / "my-editor"  # a wrapper script: only the configured template gives it the line
    editor.write_text(f"#!/bin/sh\necho \"$@\" >> {opened}\n")
    editor.chmod(0o755)
    (tmp_path / "pyproject.toml").write_text(f'[tool.agentdiff]\neditor = "{editor} --goto {{file}}:{{line}}:{{col}}"\n')
    broken = tmp_path / "sample_agents" / "lookup"  # an agent whose own code raises: `e` opens that line
    broken.mkdir()
    (broken / "agent.py").write_text("def order(orders, key):\n    return orders[key]\n\n\n"
                                     "async def run_turn(ctx):\n    return order({}, ctx.message)\n")
    (broken / "lookup.evalset.json").write_text(json.dumps({"eval_set_id": "lookup", "eval_cases": [{"eval_id": "find_order", "conversation": [
        {"user_content": {"role": "user", "parts": [{"text": "A1001"}]}, "final_response": {"role": "model", "parts": [{"text": "found"}]}}]}]}))
    start(tmp_path, 80, 24)
    try:
        wait_for(lambda t: "✓ 9 ✗ 3 ! 1" in t, "the first runs", timeout=60)
        expected = {  # each failure's first divergence, visible without scrolling
            "refund_too_late": "▶ ● issue_refund",
            "no_second_refund": "▶ ●",
            "dim_living_room": "args.brightness",
        }
        seen = set()
        for _ in expected:
            tmux("send-keys", "-t", "journey", "n")
            screen = wait_for(lambda t: any(f"✗ {name} · failed" in t for name in expected.keys() - seen), "the next failure")
            name = next(n for n in expected.keys() - seen if f"✗ {n} · failed" in screen)
            assert expected[name] in screen and "divergence 1/" in screen, screen
            seen.add(name)
            if name == "dim_living_room":
                tmux("send-keys", "-t", "journey", "e")
                wait_for(lambda t: opened.exists() and opened.read_text(), "the editor", timeout=10)
                file, line, col = opened.read_text().split()[-1].rsplit(":", 2)
                assert opened.read_text().startswith("--goto ")
                assert '"brightness": 40' in Path(file).read_text().splitlines()[int(line) - 1]
        assert seen == expected.keys()
        tmux("send-keys", "-t", "journey", "+")  # the detail alone, then back
        wait_for(lambda t: "✓ 9" not in t, "the detail maximised")
        tmux("send-keys", "-t", "journey", "+")
        wait_for(lambda t: "✓ 9 ✗ 3" in t, "the tree and header back")
        tmux("send-keys", "-t", "journey", "/status:failed")  # one burst, as a paste or a script sends it
        screen = wait_for(lambda t: "3 of 13 cases" in t, "the whole burst in the filter")
        assert "/ status:failed" in screen and "Write this change?" not in screen
        tmux("send-keys", "-t", "journey", "Escape")  # (alone: an Escape just before `q` would read as Alt+q)
        wait_for(lambda t: "of 13 cases" not in t, "the filter closed")
        time.sleep(0.6)  # past tmux's escape-time: sooner, it would send the Escape and the next key as one Alt+key
        tmux("send-keys", "-t", "journey", "/status:error", "Enter")  # pasted, then into the tree: the case alone
        wait_for(lambda t: "! find_order" in t and "✓ refund" not in t and "agent.py:2: KeyError" in t,
                 "the erroring case alone, its error led by its place in the project's code")
        opened.unlink()
        tmux("send-keys", "-t", "journey", "e")
        wait_for(lambda t: opened.exists() and opened.read_text(), "the editor on the agent's code", timeout=10)
        assert opened.read_text().split()[-1].startswith(f"{broken / 'agent.py'}:2:"), opened.read_text()
        quit_app()
    finally:
        tmux("kill-server")


def test_edit_accept_undo_and_review_in_a_real_terminal(tmp_path):
    samples = copy_samples(tmp_path, agents=("home_automation",))
    start(tmp_path, 160, 48)
    try:
        wait_for(lambda t: "✓ 4 ✗ 1" in t, "the first runs")
        assert "✓" in case_line(pane(), "kitchen_on_then_check")
        prompt = samples / "home_automation" / "prompt.md"
        prompt.write_text(prompt.read_text().replace("never invent a device", "never make up a device"))
        wait_for(lambda t: "✗" in case_line(t, "kitchen_on_then_check") and "✓ 3 ✗ 2" in t, "the replay to fail")
        tmux("send-keys", "-t", "journey", "/")
        wait_for(lambda t: "5 of 5 cases" in t, "the filter line")
        tmux("send-keys", "-t", "journey", "kitchen_on")
        wait_for(lambda t: "1 of 5 cases" in t, "the filter to answer as it is typed")
        tmux("send-keys", "-t", "journey", "Enter")
        screen = wait_for(lambda t: "1 request" in t and "make up" in t and "of 5 cases" not in t, "the filter kept and the request-layer diff")
        assert "config.system_instruction" in screen
        tmux("send-keys", "-t", "journey", "a")
        wait_for(lambda t: "Write this change?" in t, "the accept preview")
        tmux("send-keys", "-t", "journey", "y")
        wait_for(lambda t: "✓" in case_line(t, "kitchen_on_then_check") and "✓ 4 ✗ 1" in t, "the case to pass after accept")
        tmux("send-keys", "-t", "journey", "z")
        wait_for(lambda t: "✗" in case_line(t, "kitchen_on_then_check") and "✓ 3 ✗ 2" in t, "the case to fail again after undo")
        baselines = {p: p.read_bytes() for p in samples.rglob("*") if p.is_file() and "generated-" in p.name}
        tmux("send-keys", "-t", "journey", "V")  # review the visible failure
        wait_for(lambda t: "a accept · x reject" in t and "1/1  accept the whole case" in t and "--- a/" in t, "the review's preview")
        tmux("send-keys", "-t", "journey", "a")
        wait_for(lambda t: "reviewed 1 of 1: 1 accepted" in t and "✓ 4 ✗ 1" in t, "the review's summary")
        tmux("send-keys", "-t", "journey", "z")
        wait_for(lambda t: "✓ 3 ✗ 2" in t, "the review's accept undone")
        assert {p: p.read_bytes() for p in baselines} == baselines
        quit_app()
    finally:
        tmux("kill-server")


def test_escape_sequences_in_data_never_reach_the_terminal(tmp_path):
    """An eval_id and an agent's answer holding OSC and CSI sequences: the pane's title stays, the
    screen is not cleared, and the sequences show as pictures (␛)."""
    import json

    evil = "\x1b]0;PWNED\x07\x1b[2Jevil"
    agent = tmp_path / "agents" / "echo"
    agent.mkdir(parents=True)
    (agent / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message\n")
    (agent / "s.evalset.json").write_text(json.dumps({"eval_set_id": "s", "eval_cases": [
        {"eval_id": evil, "conversation": [{"user_content": {"role": "user", "parts": [{"text": evil}]},
                                             "final_response": {"role": "model", "parts": [{"text": "no"}]}}]}]}))
    start(tmp_path, 160, 48, "agents")
    try:
        tmux("set-option", "-t", "journey", "set-titles", "on")
        # the row drawn with its sequences as pictures (a screen caught between two frames may not have it yet)
        wait_for(lambda t: "✗ 1" in t and "␛]0;PWNED" in t and "evil" in t, "the case to run and its row to show ␛ for ESC")
        assert "PWNED" not in tmux("display-message", "-p", "-t", "journey", "#{pane_title}")
        tmux("send-keys", "-t", "journey", "q")
    finally:
        tmux("kill-server")


def _family(pid: int) -> set[int]:
    """The process and every process under it, from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    family, todo = set(), [pid]
    while todo:
        family.add(todo[-1])
        todo.extend(children.get(todo.pop(), []))
    return family


def _alive(pids: set[int]) -> set[int]:
    """Those of pids still running (a zombie has finished)."""
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


def _exit_status(pid: int, reaped) -> int:
    """A finished process's exit status: from /proc while it is a zombie (the last field of its stat,
    as wait() gives it), else what reaped() says (tmux's record of its pane)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().split()[-1]) >> 8
    except (OSError, ValueError):
        return int(reaped())


@pytest.mark.parametrize("how", ["SIGTERM", "SIGHUP"])
def test_an_ending_signal_closes_the_app_and_leaves_no_process_behind(tmp_path, how):
    """SIGTERM to the app, or the terminal going away (SIGHUP: tmux's server killed): the app exits
    the way `q` does, its workers with it; its input thread is not left spinning on the dead terminal."""
    agent = tmp_path / "agents" / "echo"
    agent.mkdir(parents=True)
    (agent / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message\n")
    (agent / "s.evalset.json").write_text(json.dumps({"eval_set_id": "s", "eval_cases": [
        {"eval_id": "hello", "conversation": [{"user_content": {"role": "user", "parts": [{"text": "hi"}]},
                                               "final_response": {"role": "model", "parts": [{"text": "hi"}]}}]}]}))
    start(tmp_path, 120, 40, "agents")
    try:
        tmux("set-option", "-t", "journey", "remain-on-exit", "on")
        wait_for(lambda t: "✓ 1" in t and "hello" in t, "the case to run")
        app = int(tmux("display-message", "-p", "-t", "journey", "#{pane_pid}").strip())
        family = _family(app)
        assert len(family) > 1, "the app has its worker"
        if how == "SIGTERM":
            os.kill(app, 15)
        else:
            tmux("send-keys", "-t", "journey", "q")
            tmux("kill-server")
        deadline = time.monotonic() + 15
        while _alive(family) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(family), f"left running: {sorted(_alive(family))}"
        if how == "SIGTERM":  # the screen put back, then the one line, and 128 + 15 (tmux may take a while to reap it)
            lines = [line for line in wait_for(lambda t: "terminated" in t, "the app's last line").splitlines() if line.strip()]
            assert lines[0] == "terminated" and all(line.startswith("Pane is dead") for line in lines[1:]), lines
            assert _exit_status(app, lambda: tmux("display-message", "-p", "-t", "journey", "#{pane_dead_status}").strip()) == 143
    finally:
        tmux("kill-server")


SLOW_AGENT = """import asyncio


async def run_turn(ctx):
    if ctx.message == "slow":
        await asyncio.sleep(120)  # a run in flight when the terminal goes
    return ctx.message
"""


def _slow_project(tmp_path: Path) -> None:
    agent = tmp_path / "agents" / "echo"
    agent.mkdir(parents=True)
    (agent / "agent.py").write_text(SLOW_AGENT)
    cases = [{"eval_id": name, "conversation": [{"user_content": {"role": "user", "parts": [{"text": text}]},
                                                 "final_response": {"role": "model", "parts": [{"text": "hi"}]}}]}
             for name, text in (("hello", "hi"), ("slow_one", "slow"))]
    (agent / "s.evalset.json").write_text(json.dumps({"eval_set_id": "s", "eval_cases": cases}))
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsleep 600\n")
    editor.chmod(0o755)


@pytest.mark.parametrize("how", ["kill-server, then SIGCONT", "kill-session", "SIGHUP to its group", "a dialog open",
                                 "the editor open"])
def test_no_process_outlives_its_terminal(tmp_path, how):
    """The terminal goes while a run is in flight, every way a user makes it go (tmux's server or
    session killed, the window's group hung up; with a dialog open; with the app suspended under the
    editor `e` opened): the app, its workers and the editor end within seconds."""
    from agentdiff.tui.process_end import DEADLINE

    _slow_project(tmp_path)
    tmux("kill-server")
    tmux("new-session", "-d", "-s", "journey", "-x", "100", "-y", "30", "-c", str(tmp_path),
         f"env -u COLUMNS -u LINES EDITOR={tmp_path / 'editor.sh'} {AGENTDIFF} agents --timeout 300")
    try:
        wait_for(lambda t: "hello" in t and "✓ 1" in t and "⟳" in t, "one case done and one in flight")
        app = int(tmux("display-message", "-p", "-t", "journey", "#{pane_pid}").strip())
        if how == "a dialog open":
            tmux("send-keys", "-t", "journey", "?")
            wait_for(lambda t: "Jump to the response layer" in t, "the help dialog")
        if how == "the editor open":
            tmux("send-keys", "-t", "journey", "e")
            deadline = time.monotonic() + 10
            while not any("editor.sh" in _cmdline(p) for p in _family(app)) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert any("editor.sh" in _cmdline(p) for p in _family(app)), "the editor did not open"
        family = _family(app)
        assert len(family) > 1, "the app has its worker"
        if how == "kill-session":
            tmux("kill-session", "-t", "journey")
        elif how == "SIGHUP to its group":
            os.killpg(os.getpgid(app), 1)
        else:
            tmux("kill-server")  # the kernel's SIGHUP and SIGCONT; a loaded machine may deliver another SIGCONT late
            time.sleep(0.2)
            os.kill(app, 18)
        began = time.monotonic()
        while _alive(family) and time.monotonic() - began < DEADLINE + 10:
            time.sleep(0.2)
        assert not _alive(family), f"left running after {time.monotonic() - began:.1f} s: " + \
            ", ".join(f"{p} {_cmdline(p)!r}" for p in sorted(_alive(family)))
    finally:
        tmux("kill-server")


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def test_the_app_ends_when_its_terminal_vanishes_with_no_signal(tmp_path):
    """An SSH session dropped: the pty goes and, for a process whose session has no controlling terminal,
    no signal comes at all. The app reads end-of-file from the dead pty and ends, instead of spinning."""
    import fcntl
    import select
    import struct
    import termios

    _slow_project(tmp_path)
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES", "TEXTUAL_DRIVER")}
    process = subprocess.Popen([str(AGENTDIFF), "agents", "--timeout", "300"], stdin=slave, stdout=slave, stderr=slave,
                               cwd=tmp_path, start_new_session=True, env={**env, "TERM": "xterm-256color"})
    os.close(slave)
    try:
        shown = b""
        deadline = time.monotonic() + 30
        while b"slow_one" not in shown and time.monotonic() < deadline:  # drained, as a terminal would
            if select.select([master], [], [], 0.2)[0]:
                shown += os.read(master, 65536)
        assert b"slow_one" in shown, "the app did not draw its cases"
        family = _family(process.pid)
        os.close(master)  # the pty is gone; no signal is sent
        began = time.monotonic()
        while _alive(family) and time.monotonic() - began < 15:
            time.sleep(0.2)
        assert not _alive(family), f"left running: {sorted(_alive(family))}"
        assert process.wait(timeout=5) == 128 + 1  # as a hung-up terminal's SIGHUP would end it
    finally:
        process.kill()
