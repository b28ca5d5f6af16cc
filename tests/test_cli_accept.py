"""`agentdiff accept`, `undo` and `redo` on hand-formatted eval files: only the accepted values' bytes
change, undo puts every byte back, a batch is one step, and a hand edit never gets the journal stuck."""

from __future__ import annotations

import io
import json
import sys

import pytest
from test_cli import run
from workbench_support import ECHO_AGENT

# A team's hand-maintained eval set: 4-space indent, CRLF line endings, inline arrays, non-ASCII
# text, unusual key order, no trailing newline. The echo agent answers each user text with itself.
HAND_FORMATTED = (
    '{\r\n'
    '    "eval_set_id": "greetings",\r\n'
    '    "eval_cases": [\r\n'
    '        {"eval_id": "hello", "conversation": [\r\n'
    '            {"user_content": {"parts": [{"text": "hello"}], "role": "user"},\r\n'
    '             "final_response": {"parts": [{"text": "goodbye"}], "role": "model"}}\r\n'
    '        ]},\r\n'
    '        {"eval_id": "café", "conversation": [\r\n'
    '            {"user_content": {"parts": [{"text": "café au lait"}], "role": "user"},\r\n'
    '             "final_response": {"parts": [{"text": "thé"}], "role": "model"}}\r\n'
    '        ]},\r\n'
    '        {"eval_id": "same", "conversation": [\r\n'
    '            {"user_content": {"parts": [{"text": "same"}], "role": "user"},\r\n'
    '             "final_response": {"parts": [{"text": "same"}], "role": "model"}}\r\n'
    '        ]}\r\n'
    '    ]\r\n'
    '}'
)
SET = "agents/echo/echo.evalset.json"


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "agents" / "echo").mkdir(parents=True)
    (tmp_path / "agents" / "echo" / "agent.py").write_text(ECHO_AGENT)
    (tmp_path / SET).write_bytes(HAND_FORMATTED.encode("utf-8"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def text(project) -> str:
    return (project / SET).read_bytes().decode("utf-8")


def test_accept_changes_only_the_accepted_value_and_undo_puts_every_byte_back(project):
    code, out, err = run("accept", "hello", "--yes")
    assert code == 0, err
    assert text(project) == HAND_FORMATTED.replace('[{"text": "goodbye"}]', '[{"text": "hello"}]')
    assert '-             "final_response": {"parts": [{"text": "goodbye"}], "role": "model"}}' in out
    assert out.splitlines()[-1] == f"written: accept the whole case: {SET}::hello (`agentdiff undo` takes it back)"
    code, out, _ = run("accept", "hello", "--yes")
    assert (code, out) == (1, "nothing to accept: the baseline already says what the run did (the whole case)\n")
    code, out, _ = run("undo")
    assert code == 0 and out.startswith(f"undone: accept the whole case: {SET}::hello\n")
    assert text(project) == HAND_FORMATTED and not (project / "agents" / "echo" / "echo.agentdiff-record.json").exists()
    assert run("redo")[0] == 0 and '"hello"' in text(project)
    assert run("undo")[0] == 0 and text(project) == HAND_FORMATTED
    assert run("undo") == (1, "nothing to undo\n", "")


def test_a_passing_case_has_nothing_to_accept_and_nothing_is_written(project):
    code, out, _ = run("accept", "same", "--yes")
    assert code == 1 and out.startswith("nothing to accept")
    assert text(project) == HAND_FORMATTED and not (project / ".agentdiff" / "journal").exists()


def test_all_failed_is_one_step_and_one_undo(project):
    code, out, err = run("accept", "--all-failed", "--yes")
    assert code == 0, err
    assert "accept 2 cases (2 files)" in out
    assert json.loads(text(project))["eval_cases"][1]["conversation"][0]["final_response"]["parts"][0]["text"] == "café au lait"
    assert text(project).count("\r\n") == HAND_FORMATTED.count("\r\n")  # the file keeps its line endings
    code, out, _ = run("undo")
    assert code == 0 and text(project) == HAND_FORMATTED


def test_without_a_terminal_accept_asks_for_yes(project):
    code, out, err = run("accept", "hello")
    assert code == 2 and err == "error: not asked: no terminal to answer on; pass --yes to write without asking\n"
    assert text(project) == HAND_FORMATTED


def test_undo_takes_back_only_its_lines_and_keeps_a_hand_edit_made_elsewhere_in_the_file(project):
    assert run("accept", "hello", "--yes")[0] == 0
    assert run("accept", "café", "--yes")[0] == 0
    (project / SET).write_bytes((project / SET).read_bytes().replace(b'"same"}]', b'"same!"}]', 1))  # someone edits another case
    code, out, err = run("undo")
    assert code == 0 and out.startswith(f"undone: accept the whole case: {SET}::café"), err
    assert f"undo kept the other changes made to {SET} since" in err
    edited = HAND_FORMATTED.replace('"same"}]', '"same!"}]', 1)
    assert text(project) == edited.replace('[{"text": "goodbye"}]', '[{"text": "hello"}]')
    assert run("redo")[0] == 0 and run("undo")[0] == 0  # redo merges the same way
    assert run("undo")[0] == 0 and text(project) == edited  # every byte of the hand edit, CRLF and all, and nothing else


def test_a_hand_edit_of_the_accepted_lines_blocks_undo_until_that_step_is_dropped(project):
    assert run("accept", "hello", "--yes")[0] == 0
    assert run("accept", "café", "--yes")[0] == 0
    (project / SET).write_bytes((project / SET).read_bytes().replace(b'"caf\xc3\xa9 au lait"}]', b'"caf\xc3\xa9 au lait!!"}]', 1))
    edited = text(project)
    code, _, err = run("undo")
    assert code == 2 and (f"{SET} changed since it was written, in the lines it wrote or next to them; undo would lose that change") in err
    assert text(project) == edited
    code, out, _ = run("undo", "--drop")
    assert code == 0 and out.startswith(f"dropped (its files stay as they are): accept the whole case: {SET}::café")
    assert text(project) == edited


def test_accept_names_what_it_cannot_do(project):
    assert run("accept") == (2, "", "error: name the cases to accept (CASE…), or --all-failed\n")
    code, _, err = run("accept", "nosuchcase", "--yes")
    assert code == 2 and "no case matches 'nosuchcase'" in err
    assert run("accept", "hello", "--turn", "0", "--yes")[2] == "error: --turn counts from 1\n"


def test_review_walks_the_failures_with_single_keys(project, monkeypatch):
    """Keys come one at a time, as from a terminal: accept hello, take it back, reject it, skip café."""
    from agentdiff.tui.cli import build_parser, review

    keys = iter("azxs")  # then, again: accept both cases of the one file, one after the other
    args = build_parser().parse_args(["review"])
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    out, err = io.StringIO(), io.StringIO()
    code = review.command(args, out, err, key=lambda: next(keys, ""))
    text_out = out.getvalue()
    assert code == 0, err.getvalue()
    assert f"[1/2] {SET}::hello: failed" in text_out and '+             "final_response": {"parts": [{"text": "hello"}]' in text_out
    assert "written: accept the whole case" in text_out and "undone: accept the whole case" in text_out
    assert "  tool_trajectory_avg_score 1.00 ≥ 1 · response_match_score 0.00 < 0.8" in text_out  # against their thresholds, as the TUI's header
    assert "\n  first divergence: turn 1 · response" in text_out and "[0m" not in text_out  # no colour off a terminal
    keys = iter("q")
    coloured = io.StringIO()
    review.command(build_parser().parse_args(["review", "--color", "always"]), coloured, err, key=lambda: next(keys, ""))
    from agentdiff.tui.safe_text import ESC

    assert f"{ESC}[31mresponse_match_score 0.00 < 0.8{ESC}[0m" in coloured.getvalue()  # a failing metric red
    assert any(line.startswith(f"{ESC}[32m+") for line in coloured.getvalue().splitlines())  # the diff's added lines green
    assert text_out.rstrip().endswith("reviewed 2 of 2: 0 accepted, 1 rejected, 1 skipped")
    assert text(project) == HAND_FORMATTED
    keys = iter("aa")
    code = review.command(args, io.StringIO(), err, key=lambda: next(keys, ""))
    assert code == 0 and json.loads(text(project))["eval_cases"][1]["conversation"][0]["final_response"]["parts"][0]["text"] == "café au lait"
    assert '"text": "hello"' in text(project)  # the second accept kept the first


def test_review_without_a_terminal_points_to_accept(project):
    code, _, err = run("review")
    assert code == 2 and err == "error: review needs a terminal to answer on; in a script, use `agentdiff accept --all-failed --yes`\n"


def test_accept_all_failed_leaves_out_a_case_whose_run_failed_and_accepts_the_others(project):
    (project / "agents" / "boom").mkdir()
    (project / "agents" / "boom" / "agent.py").write_text("async def run_turn(ctx):\n    raise RuntimeError('boom')\n")
    (project / "agents" / "boom" / "boom.evalset.json").write_text(json.dumps({"eval_set_id": "boom", "eval_cases": [
        {"eval_id": "b", "conversation": [{"user_content": {"role": "user", "parts": [{"text": "x"}]},
                                           "final_response": {"role": "model", "parts": [{"text": "y"}]}}]}]}))
    code, out, err = run("accept", "--all-failed", "--yes")
    assert code == 0, err
    assert "left out, the run failed: agents/boom/boom.evalset.json::b: turn 1: RuntimeError: boom" in err
    assert '"hello"}], "role": "model"' in text(project) and '"café au lait"}], "role": "model"' in text(project)
