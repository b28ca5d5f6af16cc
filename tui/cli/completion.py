"""`agentdiff completion bash|zsh|fish`: a shell completion script for commands, their options and
case ids (`eval -- "$(agentdiff completion bash)"` in ~/.bashrc; zsh: the same with `zsh`; fish:
`agentdiff completion fish | source`). `agentdiff completion ids` lists the case ids it completes, and
the eval_ids and case names that name one case."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from .errors import EXIT_OK

NAME = "completion"
SHELLS = ("bash", "zsh", "fish")


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="print a shell completion script (bash, zsh, fish) for commands, options and case ids",
        description="Print a completion script: bash: eval -- \"$(agentdiff completion bash)\"; zsh: eval -- \"$(agentdiff "
        "completion zsh)\"; fish: agentdiff completion fish | source. `ids` prints the case ids it completes.",
    )
    parser.add_argument("shell", choices=(*SHELLS, "ids"))


def _commands() -> dict[str, list[str]]:
    """Each command and its long options, from the parser itself."""
    from . import build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: sorted({o for action in sub._actions for o in action.option_strings if o.startswith("--")})
            for name, sub in subparsers.choices.items()}


def bash_script() -> str:
    commands = _commands()
    cases = "\n".join(f'        {name}) opts="{" ".join(options)}" ;;' for name, options in commands.items())
    return f'''_agentdiff() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} cmd=${{COMP_WORDS[1]}} opts
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "{" ".join(commands)} --version --help" -- "$cur"))
        return
    fi
    if [[ "$cur" == -* ]]; then
        case "$cmd" in
{cases}
        esac
        COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
        return
    fi
    # a case id holds "::", and bash splits words at ":": complete the whole id, then offer what
    # follows the part bash already split off (as bash-completion's __ltrim_colon_completions does)
    local line=${{COMP_LINE:0:$COMP_POINT}} whole
    whole=${{line##* }}
    local IFS=$'\\n'
    COMPREPLY=($(compgen -W "$(agentdiff completion ids 2>/dev/null)" -- "$whole") $(compgen -f -- "$whole"))
    if [[ "$whole" == *:* && "$COMP_WORDBREAKS" == *:* ]]; then
        local prefix=${{whole%"${{whole##*:}}"}} i
        for i in "${{!COMPREPLY[@]}}"; do COMPREPLY[$i]=${{COMPREPLY[$i]#"$prefix"}}; done
    fi
}}
complete -o filenames -F _agentdiff agentdiff
'''


def zsh_script() -> str:
    return "autoload -U +X bashcompinit && bashcompinit\n" + bash_script()


def fish_script() -> str:
    commands = _commands()
    lines = [f'complete -c agentdiff -f -n "__fish_use_subcommand" -a "{" ".join(commands)}"']
    for name, options in commands.items():
        for option in options:
            lines.append(f'complete -c agentdiff -n "__fish_seen_subcommand_from {name}" -l {option[2:]}')
    lines.append('complete -c agentdiff -n "not __fish_use_subcommand" -a "(agentdiff completion ids 2>/dev/null)"')
    return "\n".join(lines) + "\n"


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.shell == "ids":
        from agentdiff.core.project.config import load_project_config
        from agentdiff.core.project.discovery import discover

        config, _ = load_project_config(Path.cwd())
        refs = discover(list(config.paths) or [Path(".")], root=Path.cwd()).cases
        for ref in refs:
            print(ref.id, file=out)
        names: dict[str, int] = {}
        for ref in refs:
            names[ref.name] = names.get(ref.name, 0) + 1
        ids = {ref.id for ref in refs}
        for name, count in names.items():  # an eval_id or case name that names one case, as every command takes it
            if count == 1 and name not in ids:
                print(name, file=out)
        return EXIT_OK
    out.write({"bash": bash_script, "zsh": zsh_script, "fish": fish_script}[args.shell]())
    return EXIT_OK
