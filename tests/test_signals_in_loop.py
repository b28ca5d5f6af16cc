"""A SIGTERM that lands while the event loop runs a callback or a task's step ends the command: asyncio
passes a SystemExit on from there, and logs and swallows any other exception (a busy `run` spends its
time there, and went on deaf to signals). Each case runs in a Python of its own, with agentdiff's
handler, so the signal never reaches the test's process."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

SCRIPT = """
import asyncio, signal
from agentdiff.tui import cli

signal.signal(signal.SIGTERM, cli.terminated)

async def busy():
    signal.raise_signal(signal.SIGTERM)
    await asyncio.sleep(5)

async def main():
    if {in_task}:
        helper = asyncio.create_task(busy())
    else:
        asyncio.get_running_loop().call_soon(signal.raise_signal, signal.SIGTERM)
    await asyncio.sleep(5)

try:
    asyncio.run(main())
    print("went on")
except cli.Terminated:
    print("terminated")
"""


@pytest.mark.parametrize("in_task", [False, True], ids=["in a callback", "in another task's step"])
def test_a_signal_inside_the_loop_ends_the_program(in_task):
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(in_task=in_task)], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "terminated", (done.stdout, done.stderr)
    assert time.monotonic() - began < 4.5  # not after the five seconds' sleep


APP = """
import asyncio, os, signal, sys, time
from agentdiff.tui.cli import endings

class App:  # what run_app needs of a Textual app
    async def run_async(self):
        self.done = asyncio.Event()
        os.kill(os.getpid(), signal.SIGTERM)
        if {blocked}:
            print("blocked", flush=True)
            time.sleep(30)  # the loop held up: only a second signal is heard
        await asyncio.wait_for(self.done.wait(), 10)
        print("exited", flush=True)

    def exit(self):
        self.done.set()

try:
    endings.run_app(App())
except endings.Terminated as ended:
    print("terminated", ended.code, signal.getsignal(signal.SIGTERM) is endings.at_once)
"""


def test_a_signal_asks_the_app_to_exit_and_then_ends_the_command():
    done = subprocess.run([sys.executable, "-c", APP.format(blocked=False)], capture_output=True, text=True, timeout=30)
    assert done.stdout.split() == ["exited", "terminated", "143", "True"], done.stderr


def test_a_second_signal_ends_an_app_whose_loop_is_held_up():
    process = subprocess.Popen([sys.executable, "-c", APP.format(blocked=True)], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "blocked"
        began = time.monotonic()
        process.send_signal(15)
        assert process.wait(timeout=20) == 128 + 15
        assert time.monotonic() - began < 10  # not after the thirty seconds' sleep
    finally:
        process.kill()


def test_an_app_that_cannot_stop_is_ended_by_the_deadline_after_one_signal():
    """One SIGTERM, and the app's loop stays held up (nothing else comes): the deadline ends it."""
    from agentdiff.tui.cli.endings import DEADLINE

    process = subprocess.Popen([sys.executable, "-c", APP.format(blocked=True)], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "blocked"
        began = time.monotonic()
        assert process.wait(timeout=30) == 128 + 15
        assert time.monotonic() - began < DEADLINE + 5  # not after the thirty seconds' sleep
    finally:
        process.kill()


HELD = """
import signal, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
from agentdiff.tui import cli

def main():
    if {executor}:  # joined by Python's exit before the main thread counts as stopped
        ThreadPoolExecutor(1).submit(time.sleep, 600)
    else:
        threading.Thread(target=time.sleep, args=(600,)).start()  # not a daemon: Python's exit waits for it
    print("started", flush=True)
    signal.raise_signal(signal.SIGTERM)
    time.sleep(60)

cli.main = main
sys.argv = ["agentdiff", "run"]
cli.entry()
"""


@pytest.mark.parametrize("second, executor", [(False, False), (True, False), (False, True)],
                         ids=["deadline", "second signal", "an executor's thread, deadline"])
def test_a_thread_that_holds_pythons_exit_never_keeps_the_process_past_its_deadline(second, executor):
    """The command ended on SIGTERM, but a thread that is no daemon (or an executor's, which Python's
    exit joins first) holds Python's exit: the process ends by the deadline, or at once on a second
    signal, never ignoring it."""
    from agentdiff.tui.cli.endings import DEADLINE
    from agentdiff.tui.process_end import CLEANUP_SECONDS

    process = subprocess.Popen([sys.executable, "-c", HELD.format(executor=executor)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "started"
        time.sleep(0.5)
        began = time.monotonic()
        if second:
            process.send_signal(15)
        code = process.wait(timeout=30)
        assert code == 128 + 15
        assert time.monotonic() - began < (CLEANUP_SECONDS + 3 if second else DEADLINE + 5)
        assert "terminated: the runs were stopped; no report was written" in process.stderr.read()
    finally:
        process.kill()
