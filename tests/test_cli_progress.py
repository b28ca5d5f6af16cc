"""`agentdiff run` talks while it works: a first line at once, per-case durations, a heartbeat for a
case that runs long, one updating line on a terminal, and `--color` on run, score, list and diff.

Most tests use an in-process pool (`EchoPool`, patched in as the CLI's worker pool); one runs the
real worker pool on a small echo project."""

from __future__ import annotations

import asyncio
import io
import os
import re
import sys

import pytest
from agentdiff.tui.cli import main
from agentdiff.tui.cli import run as run_module
from agentdiff.tui.cli.color import paint_word_diff, wants_color
from conftest import ROOT
from workbench_support import EchoPool, case_id, echo_project

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
CASE_LINE = re.compile(r"^\[(\d+)/(\d+)\] (\S) (\S+)  \((\d+\.\d) s\)$")


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


class FakePool:
    """An `EchoPool` as the CLI's pool: `delays[case_id]` seconds before a case answers; `jobs` runs
    at a time, as WorkerPool says (the CLI starts that many cases at once)."""

    def __init__(self, delays: dict[str, float] | None = None, jobs: int | None = None) -> None:
        self.echo = EchoPool()
        self.delays = delays or {}
        self.closed = False
        if jobs is not None:
            self.jobs = jobs

    async def run(self, job, timeout=None):
        await asyncio.sleep(self.delays.get(job.case_id, 0.0))
        return await self.echo.run(job, timeout)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def project(tmp_path, monkeypatch):
    echo_project(tmp_path, {"echo": ["hello", "bye"]})
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


def use_pool(monkeypatch, pool: FakePool) -> FakePool:
    monkeypatch.setattr(run_module, "worker_pool", lambda args, config, options, python=None: pool)
    return pool


def test_the_first_lines_come_before_any_case_line_and_each_case_has_its_own_time(project, monkeypatch):
    first, second = case_id("echo", "case_0"), case_id("echo", "case_1")
    pool = use_pool(monkeypatch, FakePool({first: 0.4, second: 0.4}, jobs=1))  # one after the other
    code, out, err = cli("run")
    assert code == 0, err
    lines = err.splitlines()
    assert lines[0].startswith("starting workers: Python ") and lines[0].endswith("…") and lines[1] == "running 2 cases"
    matches = [CASE_LINE.match(line) for line in lines[2:]]
    assert all(matches) and [m.group(1) for m in matches] == ["1", "2"]
    seconds = [float(m.group(5)) for m in matches]
    # since the start of the command, the second case would say 0.8 s or more
    assert all(0.3 <= s < 0.75 for s in seconds), seconds
    assert pool.closed
    assert "2 cases: 2 passed" in out and not ANSI.search(out + err)


def test_a_case_that_hangs_says_so_until_it_answers(project, monkeypatch):
    slow, fast = case_id("echo", "case_0"), case_id("echo", "case_1")
    monkeypatch.setattr(run_module, "HEARTBEAT_SECONDS", 0.1)
    use_pool(monkeypatch, FakePool({slow: 0.55}))
    code, _, err = cli("run")
    assert code == 0, err
    lines = err.splitlines()
    beats = [i for i, line in enumerate(lines) if re.fullmatch(rf"case {re.escape(slow)}: \d+(\.\d)? s, waiting for the agent", line)]
    assert len(beats) >= 3, err
    assert not any(fast in line and "waiting" in line for line in lines)
    done = next(i for i, line in enumerate(lines) if line.startswith("[2/2]") and slow in line)
    assert max(beats) < done  # the heartbeat stops when the case is done


def test_on_one_terminal_the_progress_is_a_single_updating_line(project, monkeypatch):
    use_pool(monkeypatch, FakePool())
    monkeypatch.setattr(run_module, "_same_terminal", lambda a, b: True)
    code, out, err = cli("run", "--color", "never")
    assert code == 0, err
    first, rest = err.split("\n", 1)  # which Python and ADK run the agents stays on the screen
    assert first.startswith("\r\x1b[2Kstarting workers: Python ") and first.endswith("…")
    assert "\n" not in rest  # no line per case: the table is the only list
    assert rest.startswith("\r\x1b[2Krunning 2 cases") and rest.endswith("\r\x1b[2K")
    assert "[2/2] ✓ " in err and "2 cases: 2 passed" in out


def test_same_terminal_is_true_only_for_one_terminal_on_both_streams():
    master, slave = os.openpty()
    try:
        with open(os.dup(slave), "w") as a, open(os.dup(slave), "w") as b:
            assert run_module._same_terminal(a, b)
            assert not run_module._same_terminal(a, io.StringIO())
    finally:
        os.close(master)
        os.close(slave)


def test_color_always_colours_the_table_and_progress_never_and_json_do_not(project, monkeypatch):
    use_pool(monkeypatch, FakePool())
    code, out, err = cli("run", "--color", "always")
    assert code == 0
    assert "\x1b[32m✓ passed\x1b[0m" in out and "\x1b[32m✓\x1b[0m" in err
    assert ANSI.sub("", out) == cli("run", "--color", "never")[1]  # the same table, with colour
    for argv in (("run", "--color", "never"), ("run",)):  # auto: not a terminal
        code, out, err = cli(*argv)
        assert code == 0 and not ANSI.search(out) and not ANSI.search(err), argv
    code, out, _ = cli("run", "--json", "--color", "always")
    assert code == 0 and not ANSI.search(out)  # JSON is never coloured


def test_no_color_turns_auto_off_and_a_flag_wins_over_it():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert wants_color("auto", Terminal(), {})
    assert wants_color("auto", Terminal(), {"NO_COLOR": ""})  # no-color.org: only a non-empty value
    assert not wants_color("auto", Terminal(), {"NO_COLOR": "1"})
    assert not wants_color("auto", io.StringIO(), {})
    assert wants_color("always", io.StringIO(), {"NO_COLOR": "1"})
    assert not wants_color("never", Terminal(), {})


def test_score_and_list_take_color(project, monkeypatch):
    results = ROOT / "sample_agents" / "home_automation" / ".adk" / "eval_history"
    _, out, _ = cli("score", str(results), "--color", "always")
    assert "\x1b[31m✗ failed\x1b[0m" in out and "\x1b[32m✓ passed\x1b[0m" in out
    assert not ANSI.search(cli("score", str(results), "--color", "never")[1])
    monkeypatch.setenv("NO_COLOR", "1")
    assert ANSI.search(cli("list", "--color", "always")[1])
    assert not ANSI.search(cli("list")[1])


def test_word_changes_in_diff_text_are_red_and_green():
    text = "the [-old-]{+new+} word\n"
    from agentdiff.tui.safe_text import ESC  # agentdiff's own escape, made real by the output stream

    assert paint_word_diff(text, True) == f"the {ESC}[31m[-old-]{ESC}[0m{ESC}[32m{{+new+}}{ESC}[0m word\n"
    assert paint_word_diff(text, False) == text


def test_a_real_run_talks_from_the_start(project):
    code, out, err = cli("run", "--jobs", "2")
    assert code == 0, err
    lines = err.splitlines()
    python = "%d.%d.%d" % sys.version_info[:3]
    assert lines[0].startswith(f"starting workers: Python {python} (") and ", ADK " in lines[0] and lines[1] == "running 2 cases"
    assert sorted(CASE_LINE.match(line).group(4) for line in lines[2:]) == [case_id("echo", "case_0"), case_id("echo", "case_1")]
    assert "2 cases: 2 passed" in out and not ANSI.search(out)


def test_a_headless_run_is_in_the_history_the_tui_plots(project, monkeypatch):
    """`p` and `S` read the history: `run`'s cases are in it too, with their seconds and batch."""
    from agentdiff.core.workbench.history import HISTORY_FILE, History
    from workbench_support import history_rows

    use_pool(monkeypatch, FakePool())
    code, _, err = cli("run")
    assert code == 0, err
    history = History(project / HISTORY_FILE)
    for case in ("case_0", "case_1"):
        (entry,) = history.entries(case_id("echo", case))
        assert entry["status"] == "passed" and entry["score"] is not None and "seconds" in entry and "batch" in entry
    assert len(history_rows(project / HISTORY_FILE)) == 2
