"""A full disk, for real: the project on a small tmpfs filled to its last few KB. `accept`, `undo`,
`undo --drop` and `redo` say one line, change nothing (every file byte for byte, the journal as it
was, no temporary file left) and exit 2; `run` still gives its results and says that the run could
not be kept. Needs root (to mount the tmpfs), as CI has."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0 or shutil.which("mount") is None,
                                reason="mounting a tmpfs needs root")

CONVERSATION = [{"user_content": {"role": "user", "parts": [{"text": "hi there"}]},
                 "final_response": {"role": "model", "parts": [{"text": "bye now"}]}}]


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def agentdiff(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentdiff.tui.cli", *argv], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != "filler" and ".agentdiff/runs" not in str(p)
            and "history" not in p.name and "lock" not in p.name}


def fill(root: Path, leave_kb: int) -> None:
    avail = shutil.disk_usage(root).free // 1024
    with open(root / "filler", "wb") as handle:
        handle.write(b"\0" * max(0, avail - leave_kb) * 1024)


@pytest.mark.parametrize("leave_kb", [0, 4])
def test_on_a_full_disk_accept_and_undo_change_nothing_and_say_one_line(small_disk, leave_kb):
    root = small_disk
    (root / "agents" / "echo").mkdir(parents=True)
    (root / "agents" / "echo" / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message + '!'\n")
    (root / "agents" / "echo" / "test_config.json").write_text('{"criteria": {"response_match_score": 0.9}}')
    (root / "agents" / "echo" / "s.evalset.json").write_text(json.dumps(
        {"eval_set_id": "s", "eval_cases": [{"eval_id": c, "conversation": CONVERSATION} for c in ("a", "b", "c")]}, indent=2))
    assert agentdiff(root, "accept", "agents/echo/s.evalset.json::a", "--yes").returncode == 0
    assert agentdiff(root, "accept", "agents/echo/s.evalset.json::c", "--yes").returncode == 0
    assert agentdiff(root, "undo").returncode == 0  # c undone: there is something to redo too
    fill(root, leave_kb)
    before = snapshot(root)
    steps = [["accept", "agents/echo/s.evalset.json::b", "--yes"], ["redo"], ["undo"]]
    for argv in steps + ([["undo", "--drop"]] if leave_kb == 0 else []):  # a drop rewrites one small entry: 4 KB hold it
        done = agentdiff(root, *argv)
        said = [line for line in done.stderr.splitlines() if line]
        assert done.returncode == 2 and "Traceback" not in done.stderr, (argv, done.stderr)
        assert said[-1].startswith("error: nothing was ") and "No space left on device" in said[-1], (argv, said)
        assert snapshot(root) == before, argv
        assert not list(root.rglob("*.tmp")), argv
    (root / "filler").unlink()
    assert agentdiff(root, "undo").returncode == 0  # the journal is whole: undo works once there is room
    assert "bye now" in (root / "agents" / "echo" / "s.evalset.json").read_text()


def test_a_run_on_a_full_disk_gives_its_results_and_says_it_was_not_kept(small_disk):
    root = small_disk
    (root / "agents" / "echo").mkdir(parents=True)
    (root / "agents" / "echo" / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message\n")
    (root / "agents" / "echo" / "s.evalset.json").write_text(json.dumps({"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": [
        {"user_content": {"role": "user", "parts": [{"text": "hi"}]}, "final_response": {"role": "model", "parts": [{"text": "hi"}]}}]}]}))
    (root / ".agentdiff").mkdir()
    fill(root, 0)
    done = agentdiff(root, "run")
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stderr
    assert "warning: this run could not be kept under .agentdiff/runs (No space left on device)" in done.stderr
    assert "Traceback" not in done.stderr
