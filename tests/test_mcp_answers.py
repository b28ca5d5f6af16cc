"""What `agentdiff mcp` answers are made of, without a server: a long text as its changed lines, the
latest-results resource within its cap, a summary that quotes every changed place, where a server
started elsewhere is rooted, and `skills install` writing each assistant's files without losing an edit."""

from __future__ import annotations

import io
import json
import tomllib
from pathlib import Path

from agentdiff.core.diff.divergences import _text_change
from agentdiff.tui.assist.lean import lean_diff, text_diff
from agentdiff.tui.assist.server import latest_text
from agentdiff.tui.cli import main
from agentdiff.tui.cli.mcp import project_root


def test_a_long_text_is_given_as_its_changed_lines_with_the_words_marked_and_the_rest_folded():
    expected = "\n".join(f"rule {n}: be kind" for n in range(1, 21))
    actual = expected.replace("rule 3: be kind", "rule 3: be very kind").replace("rule 12: be kind\n", "rule 12: be kind\nrule 12b: new\n")
    lines = text_diff(expected, actual)
    assert "~3: rule 3: be {+very +}kind" in lines and "+13: rule 12b: new" in lines
    assert any(line == "⋯ 5 unchanged lines" for line in lines), lines
    assert not any("rule 20" in line for line in lines)  # past the context: folded


def test_a_diff_document_is_lean_turns_from_one_changed_layers_only_and_no_word_lists():
    long_a, long_b = "x " * 150 + "old", "x " * 150 + "new"
    change = {"kind": "changed", "path": "config.system_instruction", "expected": long_a, "actual": long_b, "words": [["equal", "x"]]}
    document = {
        "schema_version": 1, "agentdiff_version": "1", "case": {"id": "c"}, "error": None,
        "first_divergence": {"layer": "request", "turn_index": 0, "summary": "s", "expected": long_a, "actual": long_b},
        "layers": [{"layer": "request", "status": "changed", "summary": "s"}, {"layer": "response", "status": "same"}],
        "divergences": [{"layer": "request", "turn_index": 0, "summary": "s", "expected": long_a, "actual": long_b}],
        "turns": [{"turn_index": 0, "user_text": "hi", "missing": False,
                   "request": [{"agent": "a", "index": 0, "kind": "changed", "changes": [change], "notes": ["n"]},
                               {"agent": "a", "index": 1, "kind": "changed", "changes": [change], "notes": []}],
                   "tool_calls": {"matches": True, "rows": [{"kind": "same", "changes": [], "response_changes": []}]},
                   "response": {"expected": "a", "actual": "a", "passed": True, "words": [["equal", "a"]]}}],
    }
    lean = lean_diff(document)
    assert "schema_version" not in lean and "error" not in lean and lean["divergences"][0]["turn"] == 1
    assert "expected" not in lean["divergences"][0] and "text_diff" not in lean["first_divergence"]
    assert [layer["layer"] for layer in lean["layers"]] == ["request"] and lean["other_layers"] == "response same"
    turn = lean["turns"][0]
    assert turn["turn"] == 1 and "tool_calls" not in turn and "response" not in turn
    first, again = [c["text_diff"] for r in turn["request"] for c in r["changes"]]
    assert first[-1].startswith("~1: ") and again == "the same as turn 1 · a call 1 · config.system_instruction"
    assert "notes" not in turn["request"][0] and '"words"' not in json.dumps(lean) and lean["text_diffs"].startswith("long texts")
    assert "tool_calls" in lean_diff(document, every=True)["turns"][0]


def test_a_change_given_again_says_where_on_the_page_shown_never_on_another():
    from agentdiff.tui.assist.case_answers import lean_page

    long_a, long_b = "x " * 150 + "old", "x " * 150 + "new"
    change = {"kind": "changed", "path": "config.system_instruction", "expected": long_a, "actual": long_b}
    turns = [{"turn_index": n, "user_text": f"turn {n}", "request": [{"agent": "a", "index": 0, "kind": "changed", "changes": [change]}]}
             for n in range(5)]
    whole = {"case": {"id": "c"}, "layers": [{"layer": "request", "status": "changed"}], "divergences": [], "turns": turns}
    _, first, page, pages = lean_page(whole, None, 1, every=False)
    said = [t["request"][0]["changes"][0]["text_diff"] for t in first]
    assert (page, pages) == (1, 2) and isinstance(said[0], list) and said[1] == "the same as turn 1 · a call 1 · config.system_instruction"
    _, second, page, _ = lean_page(whole, None, 2, every=False)
    said = [t["request"][0]["changes"][0]["text_diff"] for t in second]
    assert page == 2 and [t["turn"] for t in second] == [4, 5] and isinstance(said[0], list)  # given whole again: turn 1 is not here
    assert said[1] == "the same as turn 4 · a call 1 · config.system_instruction"
    _, alone, _, _ = lean_page(whole, 3, 1, every=False)
    assert [t["turn"] for t in alone] == [3] and isinstance(alone[0]["request"][0]["changes"][0]["text_diff"], list)


def test_the_latest_results_resource_stays_within_its_cap_and_says_what_it_cut():
    cases = [{"id": f"set.json::case_{n}", "status": "failed", "metrics": [{"reason": "x" * 500}],
              "layers": [{"layer": "response", "first_divergence": f"turn 1 · response · {n}"}]} for n in range(2000)]
    text = latest_text({"cases": cases, "summary": {}}, limit=100_000)
    report = json.loads(text)
    assert len(text) <= 100_000 and "diff(case)" in report["cut"] and report["more_cases"] > 0
    assert report["cases"][0] == {"id": "set.json::case_0", "status": "failed", "first_divergence": "turn 1 · response · 0"}
    assert latest_text({"cases": cases[:2]}) == json.dumps({"cases": cases[:2]}, ensure_ascii=False, separators=(",", ":"))  # small: whole


def test_a_summary_quotes_every_place_a_short_text_changed():
    said = _text_change("It's 60 degrees and foggy in San Francisco.", "Right now San Francisco has 60 degrees and foggy, enjoy!")
    assert said == '"It\'s" → "Right now San Francisco has"; "in San Francisco." → ", enjoy!"', said


def test_a_server_started_outside_the_project_is_rooted_at_the_project_its_paths_name(tmp_path):
    project = tmp_path / "shop"
    (project / "agents" / "billing").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'shop'\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert project_root([project / "agents" / "billing"], elsewhere.resolve()) == project.resolve()
    assert project_root([project / "agents"], project.resolve()) == project.resolve()  # inside: where it started
    assert project_root([project / "agents" / "billing"], tmp_path.resolve()) == project.resolve()  # started above it: the project
    assert project_root([tmp_path / "elsewhere"], tmp_path.resolve()) == tmp_path.resolve()  # no project inside: where it started
    loose = tmp_path / "loose" / "cases"
    loose.mkdir(parents=True)
    assert project_root([loose], elsewhere.resolve()) == loose.resolve()  # no project marker: the folder itself


def _install(tmp_path: Path, monkeypatch, *args: str) -> str:
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    assert main(["skills", "install", "--project", *args], out=out, err=err) == 0, err.getvalue()
    return out.getvalue()


def test_skills_install_writes_each_assistants_skill_and_mcp_configuration_and_never_loses_an_edit(tmp_path, monkeypatch):
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "settings.json").write_text('{"theme": "dark"}')
    (tmp_path / ".gemini" / "settings.json").chmod(0o600)  # private: it may hold tokens
    said = _install(tmp_path, monkeypatch)
    assert (tmp_path / ".gemini" / "settings.json").stat().st_mode & 0o777 == 0o600  # and still private
    for folder in (".claude", ".agents", ".gemini", ".github"):
        skill = (tmp_path / folder / "skills" / "agentdiff-eval-loop" / "SKILL.md").read_text()
        assert skill.startswith("---\nname: agentdiff-eval-loop") and "| tool_calls |" in skill and "agentdiff run --json" in skill
    assert json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["agentdiff"]["args"] == ["mcp"]
    settings = json.loads((tmp_path / ".gemini" / "settings.json").read_text())
    assert settings["theme"] == "dark" and settings["mcpServers"]["agentdiff"]["args"] == ["mcp"]  # merged, the rest kept
    codex = tomllib.loads((tmp_path / ".codex" / "config.toml").read_text())
    assert codex["mcp_servers"]["agentdiff"]["args"] == ["mcp"] and codex["mcp_servers"]["agentdiff"]["tool_timeout_sec"] == 600
    assert said.count(".mcp.json") == 1  # Claude Code's and Copilot's project file, written once

    skill = tmp_path / ".claude" / "skills" / "agentdiff-eval-loop" / "SKILL.md"
    skill.write_text(skill.read_text() + "\nOur team's own rule.\n")
    (tmp_path / ".codex" / "config.toml").write_text('model = "o4"\n\n[mcp_servers.agentdiff]\ncommand = "agentdiff"\nargs = ["mcp", "--no-watch"]\n')
    again = _install(tmp_path, monkeypatch)
    assert "left .claude/skills/agentdiff-eval-loop/SKILL.md as it is: it was edited since agentdiff wrote it" in again
    assert "left .codex/config.toml as it is: its agentdiff entry is not this one" in again and "unchanged .mcp.json" in again
    assert skill.read_text().endswith("Our team's own rule.\n")

    forced = _install(tmp_path, monkeypatch, "--force", "--claude", "--codex")
    assert "updated .claude/skills/agentdiff-eval-loop/SKILL.md" in forced and "updated .codex/config.toml" in forced
    assert "Our team's own rule." in (skill.parent / "SKILL.md.orig").read_text() and "Our team's own rule." not in skill.read_text()
    codex = tomllib.loads((tmp_path / ".codex" / "config.toml").read_text())
    assert codex["model"] == "o4" and codex["mcp_servers"]["agentdiff"]["args"] == ["mcp"]
    skill.write_text(skill.read_text() + "\nA second rule.\n")
    _install(tmp_path, monkeypatch, "--force", "--claude")  # a second --force keeps the first copy too
    assert "Our team's own rule." in (skill.parent / "SKILL.md.orig").read_text() and "A second rule." in (skill.parent / "SKILL.md.orig.1").read_text()


def test_an_assistants_json_config_keeps_its_layout_and_one_with_comments_is_left_with_the_entry_to_add(tmp_path, monkeypatch):
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n    "theme": "dark",\n    "mcpServers": {}\n}\n')
    _install(tmp_path, monkeypatch, "--gemini")
    text = settings.read_text()
    assert text.startswith('{\n    "theme": "dark",\n') and json.loads(text)["mcpServers"]["agentdiff"]["args"] == ["mcp"]  # 4 spaces kept
    settings.write_text('{\n  // my theme\n  "theme": "dark"\n}\n')
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.chdir(tmp_path)
    assert main(["skills", "install", "--project", "--gemini"], out, err) == 2
    assert "is not plain JSON (it holds comments; " in err.getvalue() and 'add this under "mcpServers" by hand: "agentdiff": {' in err.getvalue()
    assert settings.read_text() == '{\n  // my theme\n  "theme": "dark"\n}\n'


def test_drop_forgets_the_step_it_was_confirmed_for_or_none(tmp_path):
    from agentdiff.core.baselines.journal import BaselineConflict, FileWrite, drop_last, write_baseline

    first = write_baseline([FileWrite(tmp_path / "a.json", "1\n", None)], tmp_path, "one")
    second = write_baseline([FileWrite(tmp_path / "b.json", "2\n", None)], tmp_path, "two")
    try:
        drop_last(tmp_path, expected=first.id)  # another step was written since it was shown
    except BaselineConflict as exc:
        assert f"the newest step is now {second.id}" in str(exc)
    else:
        raise AssertionError("dropped a step nobody confirmed")
    assert drop_last(tmp_path, expected=second.id).id == second.id
