"""Shell completion: commands, each command's options and case ids, from the parser itself."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

AGENTDIFF = f"{sys.executable} -m agentdiff.tui.cli"


def complete(words: list[str], cwd) -> list[str]:
    """What bash offers for the last of `words`, with the script `completion bash` prints."""
    script = subprocess.run([sys.executable, "-m", "agentdiff.tui.cli", "completion", "bash"], capture_output=True, text=True, check=True).stdout
    shim = f'agentdiff() {{ {AGENTDIFF} "$@"; }}\n'  # the command as installed, for the script's case-id look-up
    line = " ".join(words)
    split = [part for word in words for part in word.replace("::", " :: ").replace(":", " : ").split()]  # as bash splits at ":"
    probe = (f"COMP_LINE={line!r}; COMP_POINT={len(line)}; COMP_WORDS=({' '.join(repr(w) for w in split)}); "
             f"COMP_CWORD={len(split) - 1}; _agentdiff; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    done = subprocess.run(["bash", "-c", shim + script + probe], capture_output=True, text=True, cwd=cwd, timeout=60)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completes_commands_options_and_case_ids(tmp_path):
    shutil.copytree(ROOT / "sample_agents" / "home_automation", tmp_path / "home_automation", ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    assert complete(["agentdiff", "ga"], tmp_path) == ["gate"]
    assert complete(["agentdiff", "run", "--changed"], tmp_path) == ["--changed-since"]
    assert "--baseline" in complete(["agentdiff", "gate", "--"], tmp_path)
    # bash split the id at ":": what it offers is the rest after the last ":", so the line reads the whole id
    assert complete(["agentdiff", "diff", "home_automation/home_automation.evalset.json::dim"], tmp_path) == ["dim_living_room"]
    assert complete(["agentdiff", "diff", "dim_li"], tmp_path) == ["dim_living_room"]  # an eval_id alone, as commands take it
    assert "two_devices" in complete(["agentdiff", "run", "two"], tmp_path)
    assert set(complete(["agentdiff", "diff", "home_automation/home_automation.evalset.json"], tmp_path)) == {
        "home_automation/home_automation.evalset.json", "home_automation/home_automation.evalset.json::bedroom_status",
        "home_automation/home_automation.evalset.json::dim_living_room", "home_automation/home_automation.evalset.json::turn_on_kitchen_light",
        "home_automation/home_automation.evalset.json::two_devices"}


def test_zsh_and_fish_scripts_name_every_command_and_option():
    from agentdiff.tui.cli import COMMANDS
    from agentdiff.tui.cli.completion import fish_script, zsh_script

    zsh, fish = zsh_script(), fish_script()
    assert zsh.startswith("autoload -U +X bashcompinit && bashcompinit\n") and "complete -o filenames -F _agentdiff agentdiff" in zsh
    assert all(name in fish.splitlines()[0] for name in COMMANDS)
    assert 'complete -c agentdiff -n "__fish_seen_subcommand_from run" -l changed-since' in fish
    assert "(agentdiff completion ids 2>/dev/null)" in fish
