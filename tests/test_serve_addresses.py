"""`agentdiff serve` on the addresses a user gives it: bound to every interface it answers this
machine's addresses (with the token) and still refuses foreign names; an IPv6 address is printed in
brackets; folders are never listed. Through the real server, over real sockets (no browser needed)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest


def free_port(family: int = socket.AF_INET, host: str = "127.0.0.1") -> int:
    with socket.socket(family) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def routed_address() -> str | None:
    """This machine's address on its first non-loopback interface, if it has one (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith("127.") else address


class Served:
    def __init__(self, tmp_path, host: str, port: int) -> None:
        (tmp_path / "agents").mkdir()
        self.process = subprocess.Popen([sys.executable, "-m", "agentdiff.tui.cli", "serve", "agents", "--host", host, "--port", str(port)],
                                        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        self.said = ""
        deadline = time.monotonic() + 30
        while "serving the workbench on " not in self.said and time.monotonic() < deadline:
            self.said += self.process.stdout.readline().decode()
        self.address = self.said.split("serving the workbench on ", 1)[1].split()[0]
        self.token = self.address.split("token=", 1)[1]

    def wait_listening(self, host: str, port: int) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection((host, port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.2)

    def close(self) -> None:
        os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(timeout=10)


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def test_bound_to_every_interface_it_answers_this_machines_addresses_and_refuses_foreign_names(tmp_path):
    port = free_port()
    served = Served(tmp_path, "0.0.0.0", port)
    try:
        assert "warning: serving on 0.0.0.0" in served.said
        assert served.address == f"http://127.0.0.1:{port}/?token={served.token}"
        served.wait_listening("127.0.0.1", port)
        addresses = ["127.0.0.1", "localhost", "127.0.0.2"] + [a for a in [routed_address()] if a]
        for host in addresses:
            status, page = fetch(f"http://{host}:{port}/?token={served.token}")
            assert status == 200, (host, page)
            # the page's socket goes back to the address the browser used, not to 0.0.0.0
            assert f'data-session-websocket-url="ws://{host}:{port}/ws"' in page, host
        status, _ = fetch(f"http://127.0.0.1:{port}/?token={served.token}", {"Host": f"evil.example:{port}"})
        assert status == 403  # a rebound name
        status, _ = fetch(f"http://127.0.0.1:{port}/ws?token={served.token}", {"Origin": "http://evil.example"})
        assert status == 403  # another site's page
        assert fetch(f"http://127.0.0.1:{port}/")[0] == 403  # no token
        # the static folder: never listed, and nothing in it served without the token
        assert fetch(f"http://127.0.0.1:{port}/static/")[0] == 403
        assert fetch(f"http://127.0.0.1:{port}/static/?token={served.token}")[0] == 404
        files = re.findall(r'/static/[\w./-]+\.(?:js|css)', fetch(f"http://127.0.0.1:{port}/?token={served.token}")[1])
        assert files and fetch(f"http://127.0.0.1:{port}{files[0]}")[0] == 403
        assert fetch(f"http://127.0.0.1:{port}{files[0]}?token={served.token}")[0] == 200
    finally:
        served.close()
    said = served.said + served.process.stdout.read().decode()
    # every address it prints opens the page: none without its token (that one answers 403)
    assert re.findall(r"https?://[^\s'\"]+", said) == [served.address], said


def test_an_ipv6_address_is_printed_in_brackets_and_answers(tmp_path):
    try:
        port = free_port(socket.AF_INET6, "::1")
    except OSError:
        pytest.skip("no IPv6 loopback here")
    served = Served(tmp_path, "::1", port)
    try:
        assert served.address == f"http://[::1]:{port}/?token={served.token}"
        served.wait_listening("::1", port)
        status, page = fetch(served.address)
        assert status == 200 and f'data-session-websocket-url="ws://[::1]:{port}/ws"' in page
    finally:
        served.close()
