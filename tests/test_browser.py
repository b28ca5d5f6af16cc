"""The workbench in a real browser: `agentdiff serve` (textual-serve) in headless Chromium (Debian's,
through Playwright): the page loads, the case tree is drawn with its cursor, and a key moves it.

The terminal is drawn on a canvas, so the test looks at pixels: the tree's cursor is the row of
bright blue in the left third of the page."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
from conftest import ROOT
from png_pixels import decode_png

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.adk, pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (.ci/run installs Debian's chromium)")]


def cursor_rows(png: bytes) -> list[int]:
    width, height, bpp, rows = decode_png(png)
    found = []
    for y in range(height):
        line = rows[y]
        blue = sum(1 for x in range(width // 3) if line[x * bpp + 2] > 150 and line[x * bpp] < 60 and 80 < line[x * bpp + 1] < 160)
        if blue > 60:
            found.append(y)
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_workbench_in_a_browser_draws_the_tree_and_follows_keys(tmp_path):
    playwright = pytest.importorskip("playwright.sync_api", reason="needs Playwright (installed by the test command)")
    shutil.copytree(ROOT / "sample_agents" / "home_automation", tmp_path / "sample_agents" / "home_automation",
                    ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    shutil.copy(ROOT / "sample_agents" / "demo_model.py", tmp_path / "sample_agents" / "demo_model.py")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "agentdiff.tui.cli", "serve", "sample_agents", "--port", str(port)],
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        address = ""
        deadline = time.monotonic() + 30
        while not address and time.monotonic() < deadline:  # the address with its token, as printed at start
            line = server.stdout.readline().decode()
            if "serving the workbench on " in line:
                address = line.split("serving the workbench on ", 1)[1].split()[0]
        assert address.startswith(f"http://127.0.0.1:{port}/?token="), address
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        import urllib.error
        import urllib.request

        for url, headers in ((f"http://127.0.0.1:{port}/", {}),  # no token
                             (address, {"Host": f"evil.example:{port}"}),  # a rebound name
                             (address.replace("/?", "/ws?"), {"Origin": "http://evil.example"})):  # another site's page
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10)
            assert refused.value.code == 403
        with playwright.sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1200, "height": 700})
            page.goto(address)
            before: list[int] = []
            deadline = time.monotonic() + 60
            while not before and time.monotonic() < deadline:  # the app starts in its own process, then draws
                time.sleep(0.5)
                before = cursor_rows(page.screenshot())
            assert before, "the case tree's cursor was never drawn"
            page.mouse.click(100, before[len(before) // 2])  # the tree has the keys (a click on the cursor's row)
            page.keyboard.press("j")
            after: list[int] = []
            deadline = time.monotonic() + 20
            while not (after and after[0] > before[0]) and time.monotonic() < deadline:
                time.sleep(0.3)
                after = cursor_rows(page.screenshot())
            assert after and after[0] > before[0], (before, after)  # one case down
            assert abs((after[-1] - after[0]) - (before[-1] - before[0])) <= 2  # the same one-row bar
            browser.close()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=10)


def test_serving_beyond_this_machine_says_who_can_reach_it():
    from agentdiff.tui.cli.serve import exposure_warning

    assert [exposure_warning(host) for host in ("127.0.0.1", "127.0.0.2", "localhost", "::1")] == [None] * 4
    for host in ("0.0.0.0", "192.168.1.5", "my-box.example"):
        assert exposure_warning(host) == f"warning: serving on {host}: anyone who can reach it can run your agents, accept and edit baselines"
    done = subprocess.run([sys.executable, "-m", "agentdiff.tui.cli", "serve", "no_such_folder"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "no such folder" in done.stderr  # checked before anything is served
