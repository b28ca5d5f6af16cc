"""Long texts line by line: lines matched first, words marked inside a changed line, unchanged runs
folded; a summary that quotes the first changed line; and the two sides drawn level."""

from __future__ import annotations

import io

from agentdiff.core.diff.model import describe_change
from agentdiff.core.diff.sequence import word_diff
from agentdiff.core.diff.text_lines import first_changed_line, line_rows
from agentdiff.core.diff.tree import Change
from rich.console import Console

PROMPT = "\n".join(["You are Homey.", "## Playbook", *(f"- rule {i}" for i in range(1, 13)), "Devices: lamp."])


def _change(expected: str, actual: str) -> Change:
    return Change("changed", ("config", "system_instruction"), ("config", "system_instruction"), expected, actual,
                  tuple(word_diff(expected, actual)))


def test_an_inserted_line_leaves_the_rest_level_and_unchanged_runs_fold_to_a_count():
    edited = PROMPT.replace("## Playbook\n", "## Playbook\n- Never guess a device.\n")
    rows = line_rows(PROMPT, edited)
    assert [row.kind for row in rows] == ["same", "same", "inserted", "same", "same", "folded"]
    inserted = rows[2]
    assert (inserted.expected, inserted.actual, inserted.actual_number) == (None, "- Never guess a device.", 3)
    assert rows[-1].folded == 11 and rows[3].expected == rows[3].actual == "- rule 1"  # the rest level, one to one


def test_a_changed_line_keeps_its_word_diff_and_a_short_run_between_changes_is_not_folded():
    edited = PROMPT.replace("- rule 2", "- rule two").replace("- rule 6", "- rule six")
    rows = line_rows(PROMPT, edited)
    changed = [row for row in rows if row.kind == "changed"]
    assert [(row.expected, row.actual) for row in changed] == [("- rule 2", "- rule two"), ("- rule 6", "- rule six")]
    assert [op.text for op in changed[0].words if op.op != "equal"] == ["2", "two"]
    assert not any(row.kind == "folded" for row in rows[rows.index(changed[0]):rows.index(changed[1])])


def test_the_summary_quotes_the_first_changed_line_as_it_is():
    inserted = PROMPT.replace("## Playbook\n", "## Playbook\n- Never guess a device.\n")
    assert describe_change(_change(PROMPT, inserted)) == 'config.system_instruction line 3 added: "- Never guess a device."'
    reworded = PROMPT.replace("- rule 4", 'reply "It is <time> in <city>."')
    said = describe_change(_change(PROMPT, reworded))
    assert said == 'config.system_instruction line 6: "- rule 4" → "reply \\"It is <time> in <city>.\\""', said
    removed = PROMPT.replace("- rule 12\n", "")
    assert describe_change(_change(PROMPT, removed)) == 'config.system_instruction line 14 removed: "- rule 12"'
    one_word = PROMPT.replace("Devices: lamp.", "Devices: lamp, heater.")
    assert describe_change(_change(PROMPT, one_word)) == 'config.system_instruction line 15: + ", heater"'
    assert first_changed_line(PROMPT, PROMPT) is None
    paragraph = PROMPT + "\nAlso: always confirm.\n"  # a blank line, then text: the text is quoted
    assert describe_change(_change(PROMPT, paragraph)).endswith('added: "Also: always confirm."')


def test_the_two_sides_are_drawn_level_line_by_line_with_wrapped_lines_hanging_under_their_text():
    from agentdiff.tui.text_rows import text_rows
    from agentdiff.tui.widgets.side_by_side import SideBySide

    edited = PROMPT.replace("## Playbook\n", "## Playbook\n- Never guess a device: ask which one the user means, by name.\n")
    console = Console(file=io.StringIO(), width=60, color_system=None, legacy_windows=False)
    with console.capture() as captured:
        console.print(SideBySide(text_rows(PROMPT, edited)))
    lines = captured.get().splitlines()
    level = [line for line in lines if "- rule 1" in line]
    assert len(level) == 1 and level[0].count("- rule 1") == 2  # expected and actual on one screen line
    inserted = [i for i, line in enumerate(lines) if "Never guess" in line][0]
    assert lines[inserted][:29].strip() == ""  # nothing on the expected side beside the inserted line
    assert lines[inserted + 1][30:].startswith("   which")  # its wrapped part hangs past the line number

