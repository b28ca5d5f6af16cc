"""Shell completion: commands, each command's options and case ids, through the scripts
`agentdiff completion bash|zsh|fish` prints, run by the real shells. Case ids come from whatever
repository the shell is in, so they are hostile data: completing them must never run them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

BIN = Path(sys.executable).parent
#: eval_ids a cloned repository could hold: each would run `touch` if it reached shell expansion
HOSTILE = ["$(touch pwned1)", "`touch pwned2`", "x;touch pwned3", "it's \"q\" *", "a$HOME|b&c"]


def _env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}


def _project(tmp_path: Path, hostile: bool = False) -> Path:
    shutil.copytree(ROOT / "sample_agents" / "home_automation", tmp_path / "home_automation", ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    if hostile:
        path = tmp_path / "home_automation" / "home_automation.evalset.json"
        data = json.loads(path.read_text())
        for eval_id in HOSTILE:
            data["eval_cases"].append({**data["eval_cases"][0], "eval_id": eval_id})
        path.write_text(json.dumps(data, indent=2))
    return tmp_path


def bash_complete(line: str, cwd: Path) -> list[str]:
    """What bash's completion function (from `completion bash`) offers for the end of `line`: the
    shell's own variables as bash sets them on Tab, words split at COMP_WORDBREAKS' ":" too."""
    probe = r'''eval -- "$(agentdiff completion bash)"
COMP_LINE=$1; COMP_POINT=${#COMP_LINE}; COMP_TYPE=9
read -ra COMP_WORDS <<< "${COMP_LINE//:/ : }"; [[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_python_argcomplete agentdiff
printf '%s\n' "${COMPREPLY[@]}"'''
    done = subprocess.run(["bash", "--norc", "-c", probe, "probe", line], capture_output=True, text=True, cwd=cwd, timeout=60, env=_env())
    assert done.returncode == 0, done.stderr
    return [word.rstrip(" ") for word in done.stdout.splitlines() if word]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completes_commands_options_and_case_ids(tmp_path):
    cwd = _project(tmp_path)
    assert bash_complete("agentdiff ga", cwd) == ["gate"]
    assert bash_complete("agentdiff run --changed", cwd) == ["--changed-since", "--changed-since-strict"]
    assert "--baseline" in bash_complete("agentdiff gate --", cwd)
    assert not any(word.startswith("-") for word in bash_complete("agentdiff diff ", cwd))  # options once "-" is typed
    # bash split the id at ":": what it offers is the rest after the last ":", so the line reads the whole id
    assert bash_complete("agentdiff diff home_automation/home_automation.evalset.json::dim", cwd) == ["dim_living_room"]
    assert bash_complete("agentdiff diff dim_li", cwd) == ["dim_living_room"]  # an eval_id alone, as commands take it
    assert "two_devices" in bash_complete("agentdiff run two", cwd)
    assert set(bash_complete("agentdiff diff home_automation/home_automation.evalset.json", cwd)) == {
        "home_automation/home_automation.evalset.json", "home_automation/home_automation.evalset.json::bedroom_status",
        "home_automation/home_automation.evalset.json::dim_living_room", "home_automation/home_automation.evalset.json::turn_on_kitchen_light",
        "home_automation/home_automation.evalset.json::two_devices"}
    assert bash_complete("agentdiff failures bind wrong_tool bed", cwd) == ["bedroom_status"]  # a subcommand's case argument too


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_never_expands_a_case_id_and_what_it_inserts_reads_back_as_the_id(tmp_path):
    cwd = _project(tmp_path, hostile=True)
    offered = bash_complete("agentdiff diff ", cwd)
    # the shell reads each word completion would put on the line back as the one argument it names
    words = "".join(f" {word}" for word in offered)
    argv = subprocess.run(["bash", "--norc", "-c", f"printf '%s\\n'{words}"], capture_output=True, text=True, cwd=cwd).stdout.splitlines()
    assert len(argv) == len(offered) and set(HOSTILE) <= set(argv)
    assert {f"home_automation/home_automation.evalset.json::{eval_id}" for eval_id in HOSTILE} <= set(argv)
    assert bash_complete(r"agentdiff diff \$\(t", cwd) == [r"\$\(touch\ pwned1\)"]  # as typed, escaped
    assert not list(cwd.glob("pwned*"))


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", f"agentdiff-completion-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}", "-f", "/dev/null", *args], capture_output=True, text=True).stdout


def _pane_until(text: str, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    while True:
        pane = tmux("capture-pane", "-p", "-t", "z")
        if text in pane or time.monotonic() > deadline:
            return pane
        time.sleep(0.2)


@pytest.mark.skipif(shutil.which("zsh") is None or shutil.which("tmux") is None, reason="needs zsh and tmux (.ci/run installs zsh)")
def test_zsh_in_a_real_terminal_completes_hostile_ids_quoted_and_runs_none(tmp_path):
    cwd = _project(tmp_path, hostile=True)
    tmux("kill-server")
    env = f"env -i PATH={BIN}:/usr/bin:/bin HOME={tmp_path} TERM=xterm"
    tmux("new-session", "-d", "-s", "z", "-x", "160", "-y", "40", "-c", str(cwd), f"{env} zsh -f")
    try:
        tmux("send-keys", "-t", "z", 'autoload -U compinit && compinit -u && eval -- "$(agentdiff completion zsh)" && echo READY', "Enter")
        assert "READY" in _pane_until("READY\n")
        tmux("send-keys", "-t", "z", "agentdiff diff dim_l", "Tab")
        assert "agentdiff diff dim_living_room" in _pane_until("dim_living_room")
        tmux("send-keys", "-t", "z", "C-u", r"agentdiff diff \$(t", "Tab")
        assert r"agentdiff diff \$\(touch\ pwned1\)" in _pane_until("pwned1")
        tmux("send-keys", "-t", "z", "C-u", r"agentdiff diff \`", "Tab")
        assert r"agentdiff diff \`touch\ pwned2\`" in _pane_until("pwned2")
        tmux("send-keys", "-t", "z", "C-u", "agentdiff diff ", "Tab")  # the whole list, hostile ids shown as text
        assert "`touch pwned2`" in _pane_until("home_automation/home_automation.evalset.json::$(touch pwned1)")
    finally:
        tmux("kill-server")
    assert not list(cwd.glob("pwned*"))


@pytest.mark.skipif(shutil.which("fish") is None, reason="needs fish (.ci/run installs it)")
def test_fish_offers_hostile_ids_as_text_and_runs_none(tmp_path):
    cwd = _project(tmp_path, hostile=True)
    script = 'agentdiff completion fish | source; complete -C "agentdiff diff "; complete -C "agentdiff ga"'
    done = subprocess.run(["fish", "--no-config", "-c", script], capture_output=True, text=True, cwd=cwd, timeout=60, env=_env())
    offered = [line.split("\t")[0] for line in done.stdout.splitlines()]
    assert set(HOSTILE) <= set(offered) and "dim_living_room" in offered and "gate" in offered
    assert not list(cwd.glob("pwned*"))


def test_the_scripts_are_argcompletes_and_ids_lists_what_they_complete(tmp_path):
    from agentdiff.tui.cli.completion import script

    assert "complete -o nospace -o default -o bashdefault -F _python_argcomplete agentdiff" in script("bash")
    assert "compdef _python_argcomplete agentdiff" in script("zsh")
    assert "complete --command agentdiff -f -a '(__fish_agentdiff_complete)'" in script("fish")
    cwd = _project(tmp_path, hostile=True)
    ids = subprocess.run([sys.executable, "-m", "agentdiff.tui.cli", "completion", "ids"], capture_output=True, text=True, cwd=cwd, check=True).stdout
    assert "home_automation/home_automation.evalset.json::$(touch pwned1)" in ids.splitlines() and "$(touch pwned1)" in ids.splitlines()
