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

signal.signal(signal.SIGTERM, cli._terminated)

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
