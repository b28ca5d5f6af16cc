"""CLI edges that must end cleanly, one line on stderr and an exit code, never a hang or a traceback:
each row goes through the real entry point `agentdiff.tui.cli.main` with StringIO streams."""

from __future__ import annotations

import json

import io
import os
import sys

import pytest
from agentdiff.tui.cli import main, watch
from conftest import ROOT

SAMPLE_RESULTS = ROOT / "sample_agents" / "home_automation" / ".adk" / "eval_history"
COMMANDS = "score, list, run, record, accept, import, review, undo, redo, diff, compare, gate, baselines, sign, failures, merge, serve, receive, mcp, skills, doctor, completion, watch"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def no_app(monkeypatch):
    """Any attempt to open the TUI fails the test instead of hanging it."""
    import types

    def create_app(*args, **kwargs):
        raise AssertionError("the TUI must not open without a terminal")

    monkeypatch.setitem(sys.modules, "agentdiff.tui.app", types.SimpleNamespace(create_app=create_app))


# (argv, exit code, the stderr line expected)
EDGES = [
    pytest.param([], 2, "error: the workbench needs a terminal; use `agentdiff run` for headless runs", id="no-command-no-terminal"),
    pytest.param(["watch"], 2, "error: the workbench needs a terminal; use `agentdiff run` for headless runs", id="watch-no-terminal"),
    pytest.param(["."], 2, "error: the workbench needs a terminal; use `agentdiff run` for headless runs", id="path-no-terminal"),
    pytest.param(["frobnicate"], 2, f"error: unknown command or path 'frobnicate' (commands: {COMMANDS})", id="unknown-command"),
    pytest.param(["frobnicate", "."], 2, f"error: unknown command or path 'frobnicate' (commands: {COMMANDS})", id="unknown-command-with-args"),
    pytest.param(["list", "/nonexistent"], 2, "error: /nonexistent: no such file or folder", id="list-missing-absolute"),
    pytest.param(["list", "missing"], 2, "error: missing: no such file or folder", id="list-missing-relative"),
    pytest.param(["list", "/nonexistent", "--json"], 2, None, id="list-missing-json"),
    pytest.param(["score", str(SAMPLE_RESULTS), "--report", "junit=/nonexistent-agentdiff/sub/junit.xml"], 2,
                 "error: cannot write the junit report to /nonexistent-agentdiff/sub/junit.xml: no such folder: /nonexistent-agentdiff/sub",
                 id="score-report-parent-missing-outside-cwd"),
    pytest.param(["score", str(SAMPLE_RESULTS), "--report", "junit=."], 2,
                 "error: cannot write the junit report to .: it is a folder", id="score-report-is-a-folder"),
    pytest.param(["run", "--report", "junit=/nonexistent-agentdiff/junit.xml"], 2,
                 "error: cannot write the junit report to /nonexistent-agentdiff/junit.xml: no such folder: /nonexistent-agentdiff",
                 id="run-report-parent-missing-outside-cwd"),
    pytest.param(["run", "--report", "csv=."], 2, "error: cannot write the csv report to .: it is a folder", id="run-report-is-a-folder"),
]


@pytest.mark.parametrize("argv, code, line", EDGES)
def test_cli_edges_exit_cleanly_with_one_line(argv, code, line, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(watch, "has_terminal", lambda *streams: False)
    no_app(monkeypatch)
    got, _, err = run(*argv)
    assert got == code, err
    if line is not None:
        assert err.splitlines() == [line]
    assert "Traceback" not in err


# (argv, the text of argparse's `error:` line)
RANGES = [
    pytest.param(["run", "--jobs", "0"], "argument --jobs: must be ≥ 1, got 0", id="run-jobs-0"),
    pytest.param(["run", "--jobs", "-3"], "argument --jobs: must be ≥ 1, got -3", id="run-jobs-negative"),
    pytest.param(["run", "--jobs", "two"], "argument --jobs: expected a whole number ≥ 1, got 'two'", id="run-jobs-not-a-number"),
    pytest.param(["run", "--num-runs", "0"], "argument --num-runs: must be ≥ 1, got 0", id="run-num-runs-0"),
    pytest.param(["watch", "--num-runs", "0"], "argument --num-runs: must be ≥ 1, got 0", id="watch-num-runs-0"),
    pytest.param(["run", "--timeout", "0"], "argument --timeout: must be a number of seconds > 0, got 0", id="run-timeout-0"),
    pytest.param(["run", "--timeout", "-1.5"], "argument --timeout: must be a number of seconds > 0, got -1.5", id="run-timeout-negative"),
    pytest.param(["run", "--timeout", "nan"], "argument --timeout: must be a number of seconds > 0, got nan", id="run-timeout-nan"),
    pytest.param(["record", "x", "--jobs", "0"], "argument --jobs: must be ≥ 1, got 0", id="record-jobs-0"),
    pytest.param(["diff", "x", "--timeout", "0"], "argument --timeout: must be a number of seconds > 0, got 0", id="diff-timeout-0"),
]


@pytest.mark.parametrize("argv, message", RANGES)
def test_option_ranges_are_argparse_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run(*argv)
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(f"error: {message}")


def test_valid_option_values_still_parse():
    from agentdiff.tui.cli import build_parser

    args = build_parser().parse_args(["run", "--jobs", "1", "--num-runs", "1", "--timeout", "0.5"])
    assert (args.jobs, args.num_runs, args.timeout) == (1, 1, 0.5)


def test_has_terminal_needs_both_streams_to_be_ttys():
    class Stream:
        def __init__(self, tty):
            self.tty = tty

        def isatty(self):
            return self.tty

    class Closed:
        def isatty(self):
            raise ValueError("I/O operation on closed file")

    tty, pipe = Stream(True), Stream(False)
    assert watch.has_terminal(tty, tty)
    assert not watch.has_terminal(pipe, tty)
    assert not watch.has_terminal(tty, pipe)
    assert not watch.has_terminal(tty, Closed())
    assert not watch.has_terminal(tty, io.StringIO())


def test_watch_under_pytest_sees_no_terminal_and_does_not_open_the_app(tmp_path, monkeypatch):
    """No monkeypatched check: pytest's own streams are not a terminal."""
    monkeypatch.chdir(tmp_path)
    no_app(monkeypatch)
    assert run("watch") == (2, "", "error: the workbench needs a terminal; use `agentdiff run` for headless runs\n")


def test_a_report_inside_the_current_directory_gets_its_folders_created(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run("score", str(SAMPLE_RESULTS), "--report", "junit=out/deep/junit.xml")
    assert code == 1, err  # the sample results hold one failing case
    assert (tmp_path / "out" / "deep" / "junit.xml").is_file()


def test_a_report_outside_the_current_directory_is_not_given_folders(tmp_path, monkeypatch):
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    target = tmp_path / "elsewhere" / "junit.xml"
    code, out, err = run("score", str(SAMPLE_RESULTS), "--report", f"junit={target}")
    assert code == 2 and out == ""
    assert err.splitlines() == [f"error: cannot write the junit report to {target}: no such folder: {target.parent}"]
    assert not target.parent.exists()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs POSIX permissions and a non-root user")
def test_a_report_that_cannot_be_written_is_one_line_and_exit_2(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, out, err = run("score", str(SAMPLE_RESULTS), "--report", "junit=locked/junit.xml", "--report", "json=ok.json")
    finally:
        locked.chmod(0o700)
    assert code == 2
    assert err.splitlines() == ["error: cannot write the junit report to locked/junit.xml: Permission denied"]
    assert "4 cases" in out  # the results are still shown
    assert (tmp_path / "ok.json").is_file()  # and the other reports still written


def test_a_write_error_from_the_writer_is_one_line_not_a_traceback(tmp_path, monkeypatch):
    from agentdiff.tui.cli import options

    def failing(kind, cases, path, *rest):
        raise OSError(28, "No space left on device")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(options, "write_report", failing)
    code, _, err = run("score", str(SAMPLE_RESULTS), "--report", "markdown=report.md")
    assert code == 2
    assert err.splitlines() == ["error: cannot write the markdown report to report.md: No space left on device"]


def test_options_before_the_command_say_where_they_go(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run("--python", "/nonexistent", "run")
    assert (code, out, err) == (2, "", "error: options go after the command: agentdiff run --python /nonexistent\n")


@pytest.mark.parametrize("command", ["run", "list", "diff", "score", "accept", "record", "doctor", "review", "watch"])
def test_an_id_too_long_for_a_file_name_is_one_line_not_a_traceback(command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(command, "x" * 5000)
    assert code in (1, 2) and "Traceback" not in err and "File name too long" not in err + out, (code, err[:300])
    assert len(err.splitlines()[0]) < 400


def test_a_report_path_that_links_out_of_the_tree_is_refused(tmp_path, monkeypatch):
    outside = tmp_path / "outside.json"
    outside.write_text("keep")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "report.json").symlink_to(outside)
    monkeypatch.chdir(tmp_path / "proj")
    code, _, err = run("run", "--report", "json=report.json")
    assert code == 2 and err.startswith(f"error: cannot write the json report to report.json: it is a link out of the working tree (to {outside})")
    assert outside.read_text() == "keep"


def test_control_characters_from_data_are_shown_never_obeyed(tmp_path, monkeypatch):
    """An eval_id holding escape sequences (set the terminal's title, clear the screen) is printed with
    them visible, in every command; agentdiff's own colours still reach a terminal."""
    evil = "\x1b]0;PWNED\x07\x1b[2J\rx"  # and, below, a case whose id would forge lines and reorder text
    (tmp_path / "agents" / "echo").mkdir(parents=True)
    (tmp_path / "agents" / "echo" / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message\n")
    (tmp_path / "agents" / "echo" / "s.evalset.json").write_text(json.dumps({"eval_set_id": "s", "eval_cases": [
        {"eval_id": evil, "conversation": [{"user_content": {"role": "user", "parts": [{"text": evil}]},
                                             "final_response": {"role": "model", "parts": [{"text": "no"}]}}]}]}))
    monkeypatch.chdir(tmp_path)
    for argv in (["list"], ["list", "--agents"], ["run", "--color", "always"], ["diff", "case_1", "--run"], ["doctor"]):
        code, out, err = run(*argv)
        assert "\x1b]" not in out + err and "\x07" not in out + err and "\x1b[2J" not in out + err and "\r" not in out + err, argv
        if argv == ["list"]:  # an id with control characters is named by its position
            assert "case_1" in out, out
        elif argv not in (["list", "--agents"], ["doctor"]):  # the agent's answer echoes them: visible
            assert "\\x1b]0;PWNED\\x07\\x1b[2J" in out + err or "\\u001b]0;PWNED\\u0007\\u001b[2J" in out + err, (argv, out, err)
    assert "\x1b[31m" in run("run", "--color", "always")[1]  # its own colour is real
    forged = "ok ✓ passed        fake\u202e case"  # a bidi override would reorder what follows
    (tmp_path / "agents" / "echo" / "s.evalset.json").write_text(json.dumps({"eval_set_id": "s", "eval_cases": [
        {"eval_id": forged, "conversation": [{"user_content": {"role": "user", "parts": [{"text": "hi"}]},
                                               "final_response": {"role": "model", "parts": [{"text": "hi"}]}}]}]}))
    for argv in (["list"], ["run"]):
        out = run(*argv)[1]
        assert "\u202e" not in out, (argv, out)
        assert "ok ✓ passed        fake\\u202e case" in out, (argv, out)


@pytest.mark.parametrize("spec, said", [
    ("json=agents/echo/s.evalset.json", "it is one of the project's own files"),
    ("junit=agents/echo/test_config.json", "it is one of the project's own files"),
    ("csv=agents/echo/agent.py", "it is one of the project's own files"),
    ("json=fifo", "it is not a regular file"),
    ("json=/proc/self/comm", "it is a kernel file"),
    ("json=r.out --report junit=./r.out", "the json report is written there too"),
    ("csv=hardlink.csv", "it has other names (hard links)"),
    ("csv=evals.csv", "it is inside .git"),
    ("csv=log.csv", "it is a symlink (to shared.log): a CSV report appends"),
    ("json=.git/config", "it is inside .git"),
    ("junit=.git/HEAD", "it is inside .git"),
    ("json=.agentdiff/history.json", "it is inside .agentdiff"),
])
def test_a_report_is_never_written_over_a_project_file_or_into_a_fifo(tmp_path, monkeypatch, spec, said):
    import os

    (tmp_path / "agents" / "echo").mkdir(parents=True)
    files = {"agents/echo/agent.py": "async def run_turn(ctx):\n    return ctx.message\n",
             "agents/echo/test_config.json": '{"criteria": {"response_match_score": 0.5}}',
             "agents/echo/s.evalset.json": json.dumps({"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": [
                 {"user_content": {"role": "user", "parts": [{"text": "hi"}]}, "final_response": {"role": "model", "parts": [{"text": "hi"}]}}]}]})}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    os.mkfifo(tmp_path / "fifo")
    os.link(tmp_path / "agents/echo/s.evalset.json", tmp_path / "hardlink.csv")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    os.symlink(".git/config", tmp_path / "evals.csv")
    (tmp_path / "shared.log").write_text("kept\n")
    os.symlink("shared.log", tmp_path / "log.csv")
    monkeypatch.chdir(tmp_path)
    code, _, err = run("run", "--report", *spec.split(" "))
    assert code == 2 and said in err, err
    assert not (tmp_path / "r.out").exists()
    assert {name: (tmp_path / name).read_text() for name in files} == files
    assert (tmp_path / ".git" / "config").read_text() == "[core]\n" and (tmp_path / "shared.log").read_text() == "kept\n"


def test_a_csv_report_never_appends_through_a_link_made_after_the_check(tmp_path):
    from agentdiff.core.reports import write_report

    (tmp_path / "config").write_text("[core]\n")
    (tmp_path / "evals.csv").symlink_to("config")
    with pytest.raises(OSError):
        write_report("csv", [], tmp_path / "evals.csv")
    assert (tmp_path / "config").read_text() == "[core]\n"
    write_report("csv", [], tmp_path / "new.csv")
    write_report("csv", [], tmp_path / "new.csv")  # appended: one header
    assert (tmp_path / "new.csv").read_text().count("\n") == 1


def test_a_newline_in_a_file_name_never_forges_a_line(tmp_path, monkeypatch):
    (tmp_path / "agents" / "echo").mkdir(parents=True)
    (tmp_path / "agents" / "echo" / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message\n")
    case = {"eval_id": "c1", "conversation": [{"user_content": {"role": "user", "parts": [{"text": "hi"}]},
                                              "final_response": {"role": "model", "parts": [{"text": "bye"}]}}]}
    for name in ("s.evalset.json", "nl\nX.evalset.json"):
        (tmp_path / "agents" / "echo" / name).write_text(json.dumps({"eval_set_id": "s", "eval_cases": [case]}))
    monkeypatch.chdir(tmp_path)
    outputs = [run("list"), run("diff", "c1"), run("run"), run("accept", "agents/echo/nl\\nX.evalset.json::c1", "--yes"), run("undo")]
    for code, out, err in outputs:
        lines = (out + err).splitlines()
        assert not any(line.startswith("X.evalset.json") or line.startswith("X.agentdiff") for line in lines), out + err
    assert "agents/echo/nl\\nX.evalset.json::c1" in outputs[1][2]  # the ambiguous id, listed on one line
    assert outputs[3][0] == 0 and "--- a/agents/echo/nl\\nX.evalset.json" in outputs[3][1]
    assert "  agents/echo/nl\\nX.evalset.json" in outputs[4][1]
    assert json.loads((tmp_path / "agents" / "echo" / "nl\nX.evalset.json").read_text())["eval_cases"][0] == case  # undone


def test_a_markdown_report_is_written_over_on_the_next_run_but_a_readme_never(tmp_path, monkeypatch):
    (tmp_path / "agents" / "echo").mkdir(parents=True)
    (tmp_path / "agents" / "echo" / "agent.py").write_text("async def run_turn(ctx):\n    return ctx.message\n")
    (tmp_path / "agents" / "echo" / "s.evalset.json").write_text(json.dumps({"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": [
        {"user_content": {"role": "user", "parts": [{"text": "hi"}]}, "final_response": {"role": "model", "parts": [{"text": "hi"}]}}]}]}))
    (tmp_path / "README.md").write_text("# my project\n")
    monkeypatch.chdir(tmp_path)
    assert run("run", "--report", "markdown=report.md")[0] == 0
    assert run("run", "--report", "markdown=report.md")[0] == 0  # the report it wrote before
    code, _, err = run("run", "--report", "markdown=README.md")
    assert code == 2 and "it is one of the project's own files" in err and (tmp_path / "README.md").read_text() == "# my project\n"


def test_a_deleted_working_folder_is_one_line_not_a_traceback(tmp_path):
    import subprocess
    import sys

    script = f'mkdir gone && cd gone && rmdir ../gone && exec "{sys.executable}" -c "from agentdiff.tui.cli import entry; entry()" list'
    done = subprocess.run(["sh", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stderr) == (2, "error: the current folder no longer exists (deleted or moved); cd into the project again\n")


def test_asyncio_stopping_mid_cleanup_after_a_second_ctrl_c_reads_as_the_interruption(monkeypatch, capsys):
    """A second Ctrl+C while asyncio cancels the runs makes it raise "Event loop stopped before Future
    completed." over the KeyboardInterrupt: still one line and 130, never that traceback."""
    import agentdiff.tui.cli as cli

    def interrupted_twice():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("Event loop stopped before Future completed.")

    import signal

    monkeypatch.setattr(cli, "main", interrupted_twice)
    monkeypatch.setattr(sys, "argv", ["agentdiff", "run"])
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, *cli.ENDING)}
    try:
        with pytest.raises(SystemExit) as exited:
            cli.entry()
        # the process is ending: a second Ctrl+C or SIGTERM ends it at once, never ignored
        assert all(signal.getsignal(sig) is cli.endings.at_once for sig in before)
    finally:
        for sig, handler in before.items():  # this test process's Ctrl+C (and its children's) as it was
            signal.signal(sig, handler)
    assert exited.value.code == 130
    assert capsys.readouterr().err.strip() == "interrupted: the runs were stopped; no report was written"
    monkeypatch.setattr(cli, "main", lambda: (_ for _ in ()).throw(RuntimeError("a bug of ours")))
    with pytest.raises(RuntimeError, match="a bug of ours"):  # any other RuntimeError is no interruption
        cli.entry()


def _echo_project(root, cases=1, eval_set_id="s", reply="ctx.message"):
    (root / "agents" / "echo").mkdir(parents=True)
    (root / "agents" / "echo" / "agent.py").write_text(f"async def run_turn(ctx):\n    return {reply}\n")
    conversation = [{"user_content": {"role": "user", "parts": [{"text": "hi"}]}, "final_response": {"role": "model", "parts": [{"text": "hi"}]}}]
    (root / "agents" / "echo" / "s.evalset.json").write_text(json.dumps(
        {"eval_set_id": eval_set_id, "eval_cases": [{"eval_id": f"case_number_{i}", "conversation": conversation} for i in range(cases)]}))


def test_an_eval_set_id_holding_a_nul_still_gets_its_adk_results_file(tmp_path, monkeypatch):
    _echo_project(tmp_path, eval_set_id="s\x00et")
    monkeypatch.chdir(tmp_path)
    code, _, err = run("run", "--report", "adk=agents")
    assert code == 0 and "embedded null byte" not in err, err
    (written,) = (tmp_path / "agents" / "echo" / ".adk" / "eval_history").iterdir()
    assert "\x00" not in written.name and written.name.startswith("echo_s_et_")
    assert json.loads(written.read_text())["eval_set_id"] == "s\x00et"  # the id inside stays as written


@pytest.mark.parametrize("argv", [["list"], ["completion", "ids"], ["list", "--json"]])
def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path, argv):
    import subprocess
    import sys

    _echo_project(tmp_path, cases=3000)
    done = subprocess.run(f"{sys.executable} -m agentdiff.tui.cli {' '.join(argv)} | head -1; exit ${{PIPESTATUS[0]}}",
                          shell=True, executable="/bin/bash", cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.stderr == "" and done.returncode == 141 and len(done.stdout.splitlines()) == 1, done.stderr[-2000:]


def test_an_agentdiff_that_is_a_file_is_named_not_file_exists(tmp_path, monkeypatch):
    _echo_project(tmp_path, reply="'nothing alike'")
    (tmp_path / ".agentdiff").write_text("not a folder")
    monkeypatch.chdir(tmp_path)
    code, _, err = run("run")
    assert code == 1 and "warning: this run could not be kept under .agentdiff/runs (.agentdiff is a file, not a folder" in err, err
    code, _, err = run("accept", "agents/echo/s.evalset.json::case_number_0", "--yes")
    assert code == 2 and "error: nothing was written: .agentdiff is a file, not a folder" in err, err
    assert "File exists" not in err and (tmp_path / ".agentdiff").read_text() == "not a folder"


@pytest.mark.adk
def test_a_dotenv_that_does_not_load_is_named(tmp_path, monkeypatch):
    import shutil

    from conftest import ROOT

    shutil.copytree(ROOT / "sample_agents" / "home_automation", tmp_path / "home_automation", ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    shutil.copy(ROOT / "sample_agents" / "demo_model.py", tmp_path / "demo_model.py")
    (tmp_path / "home_automation" / ".env").write_bytes(b"FOO=a\x00b\n")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("run", "home_automation/home_automation.evalset.json::bedroom_status")
    assert code == 1 and f"{tmp_path / 'home_automation' / '.env'} does not load: ValueError: embedded null byte" in out, out


SHOP_AGENT = '''def lookup(order_id: str) -> dict:
    return {"order_id": order_id, "status": "shipped"}


async def run_turn(ctx):
    found = await ctx.tool("lookup", {"order_id": "A1"}, lookup)  # no model asked for it
    return f"Order {found['order_id']} is {found['status']}."
'''


def test_a_tool_call_no_model_asked_for_is_one_call_in_run_and_in_diff(tmp_path, monkeypatch):
    (tmp_path / "agents" / "shop").mkdir(parents=True)
    (tmp_path / "agents" / "shop" / "agent.py").write_text(SHOP_AGENT)

    def conversation(tools):
        return [{"user_content": {"role": "user", "parts": [{"text": "where is A1?"}]},
                 "final_response": {"role": "model", "parts": [{"text": "Order A1 is shipped."}]}, "intermediate_data": {"tool_uses": tools}}]

    cases = [{"eval_id": "none_expected", "conversation": conversation([])},
             {"eval_id": "one_expected", "conversation": conversation([{"name": "lookup", "args": {"order_id": "A1"}}])}]
    (tmp_path / "agents" / "shop" / "s.evalset.json").write_text(json.dumps({"eval_set_id": "s", "eval_cases": cases}))
    monkeypatch.chdir(tmp_path)
    report = {case["eval_id"]: case for case in json.loads(run("run", "--json")[1])["cases"]}
    assert report["none_expected"]["status"] == "failed" and report["one_expected"]["status"] == "passed"
    trajectory = {eval_id: next(m["score"] for m in case["metrics"] if m["name"] == "tool_trajectory_avg_score") for eval_id, case in report.items()}
    assert trajectory == {"none_expected": 0.0, "one_expected": 1.0}
    extra = json.loads(run("diff", "none_expected", "--run", "--json")[1])["first_divergence"]
    assert extra["layer"] == "tool_calls" and extra["kind"] == "inserted" and extra["actual"]["name"] == "lookup"
    code, out, err = run("diff", "one_expected", "--run", "--json")  # `one_expected` names one case, not `none_expected` too
    assert code == 0 and json.loads(out)["first_divergence"] is None, err


def test_a_ref_that_reads_as_a_git_option_is_refused_and_writes_nothing(tmp_path, monkeypatch):
    import subprocess

    _echo_project(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=tmp_path, check=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    monkeypatch.chdir(tmp_path)
    for argv in (["run", f"--changed-since=--output={victim}"], ["baselines", "--since=--cached"], ["run", "--changed-since=-R"]):
        code, _, err = run(*argv)
        assert code == 2 and "is not a git ref (a ref never starts with '-')" in err, (argv, err)
    (tmp_path / "pyproject.toml").write_text(f'[tool.agentdiff.gate]\nrequire_signoff = true\nsignoff_since = "--output={victim}"\n')
    for _ in range(2):
        run("run")
    code, _, err = run("gate")
    assert code == 2 and "is not a git ref" in err, err
    assert victim.read_text() == "precious"
    code, _, err = run("run", "--changed-since", "HEAD")  # a real ref still works
    assert code == 0 and "is not a git ref" not in err, err


@pytest.mark.parametrize("broken", ['<<<<<<< HEAD\n{"a": {}}\n=======\n{"b": {}}\n>>>>>>> main\n', '{"case_number_0": {"signed_off": {"by": "x"}', "[1, 2]"])
def test_a_registration_file_that_does_not_read_is_never_written_over(tmp_path, monkeypatch, broken):
    _echo_project(tmp_path, reply="'nothing alike'")
    registration = tmp_path / "agents" / "echo" / "s.agentdiff-record.json"
    registration.write_text(broken)
    evalset = (tmp_path / "agents" / "echo" / "s.evalset.json").read_text()
    monkeypatch.chdir(tmp_path)
    code, _, err = run("accept", "agents/echo/s.evalset.json::case_number_0", "--yes")
    assert code == 2 and "s.agentdiff-record.json is not" in err and "nothing was written" in err, err
    assert registration.read_text() == broken and (tmp_path / "agents" / "echo" / "s.evalset.json").read_text() == evalset


def test_a_file_name_that_is_not_utf8_is_a_load_error_and_the_rest_runs(tmp_path, monkeypatch):
    _echo_project(tmp_path)
    good = tmp_path / "agents" / "echo" / "s.evalset.json"
    os.rename(good, os.fsencode(str(tmp_path / "agents" / "echo")) + b"/\xff\xfe.evalset.json")
    (tmp_path / "agents" / "echo" / "ok.evalset.json").write_text(json.dumps(
        {"eval_set_id": "ok", "eval_cases": [{"eval_id": "a", "conversation": [{"user_content": {"role": "user", "parts": [{"text": "hi"}]},
                                                                                 "final_response": {"role": "model", "parts": [{"text": "hi"}]}}]}]}))
    monkeypatch.chdir(tmp_path)
    code, out, err = run("run", "--report", "json=r.json")
    assert code == 2 and "agents/echo/\\xff\\xfe.evalset.json: its name is not valid UTF-8: rename the file" in err, err
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["passed"] == 1


@pytest.mark.parametrize("pyproject", ["[tool]\nagentdiff = 3\n", "tool = {agentdiff = [1]}\n"])
def test_a_configuration_that_is_not_a_table_is_one_line(tmp_path, monkeypatch, pyproject):
    (tmp_path / "pyproject.toml").write_text(pyproject)
    monkeypatch.chdir(tmp_path)
    for argv in (["list"], ["completion", "ids"], ["gate"]):
        code, _, err = run(*argv)
        assert "Traceback" not in err and (argv[0] == "completion" or "[tool.agentdiff] must be a table of settings" in err), (argv, err)


@pytest.mark.parametrize("spec", ["1/99999999999999999999", "1/1000000000", "\u0661/\u0662"])
def test_a_shard_count_out_of_bounds_is_a_usage_error(capsys, spec):
    with pytest.raises(SystemExit) as ended:
        run("run", f"--shard={spec}")
    assert ended.value.code == 2 and "--shard: expected K/N with 1 ≤ K ≤ N ≤ 10,000" in capsys.readouterr().err


def test_an_empty_run_name_a_sign_of_nothing_and_an_empty_ref_are_errors(tmp_path, monkeypatch):
    _echo_project(tmp_path)
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path)
    for argv in (["compare", ""], ["gate", "--baseline", "", ""]):
        code, out, err = run(*argv)
        assert code == 2 and "a RUN cannot be empty" in err, (argv, err)
    code, _, err = run("sign", "empty")
    assert code == 2 and "nothing to sign" in err and not (tmp_path / ".agentdiff" / "journal").exists()
    code, _, err = run("run", "--changed-since=")
    assert code == 2 and "an empty ref names no commit" in err
    code, _, err = run("run", "--changed-since=x\ny")
    assert code == 2 and "\n" not in err.rstrip("\n"), err  # the ref shown on one line
