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
    print("terminated", ended.code, signal.getsignal(signal.SIGTERM) == signal.SIG_IGN)
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
        assert process.wait(timeout=20) == -15
        assert time.monotonic() - began < 10  # not after the thirty seconds' sleep
    finally:
        process.kill()
