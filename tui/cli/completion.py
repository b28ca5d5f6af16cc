"""`agentdiff completion bash|zsh|fish`: a shell completion script for commands, their options and
case ids (`eval -- "$(agentdiff completion bash)"` in ~/.bashrc; zsh: the same with `zsh`; fish:
`agentdiff completion fish | source`). `agentdiff completion ids` lists the case ids it completes, and
the eval_ids and case names that name one case.

The scripts are argcomplete's: on Tab the shell runs `agentdiff` itself with the line in its
environment, argcomplete walks this parser, and the candidates come back quoted for that shell. Case
ids are data from the files of whatever repository the shell is in, so they must never reach shell
expansion: a hand-written script that hands them to `compgen -W` runs `$(…)` written in an eval_id.
argcomplete escapes every character bash or zsh would expand (`$`, backticks, quotes, globs) and fish
quotes candidates itself."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Iterable, TextIO

from .errors import EXIT_OK

NAME = "completion"
SHELLS = ("bash", "zsh", "fish")
#: The positional arguments that take case ids (or the files and folders holding cases).
CASE_ARGUMENTS = ("case", "cases", "paths")


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="print a shell completion script (bash, zsh, fish) for commands, options and case ids",
        description="Print a completion script: bash: eval -- \"$(agentdiff completion bash)\"; zsh: eval -- \"$(agentdiff "
        "completion zsh)\"; fish: agentdiff completion fish | source. `ids` prints the case ids it completes.",
    )
    parser.add_argument("shell", choices=(*SHELLS, "ids"))


def case_names(root: Path) -> list[str]:
    """The case ids under `root` (as the configuration's paths find them), then each eval_id or case
    name that names one case, as every command takes it."""
    from agentdiff.core.project.config import load_project_config
    from agentdiff.core.project.discovery import discover

    config, _ = load_project_config(root)
    refs = discover(list(config.paths) or [Path(".")], root=root).cases
    ids = [ref.id for ref in refs]
    counts: dict[str, int] = {}
    for ref in refs:
        counts[ref.name] = counts.get(ref.name, 0) + 1
    known = set(ids)
    return ids + [name for name, count in counts.items() if count == 1 and name not in known]


def complete_cases(prefix: str, **_: object) -> list[str]:
    """argcomplete's completer for case arguments: the case ids and names that start with what was
    typed, then the files and folders that do (a path is a case argument too). argcomplete quotes
    them for the shell."""
    from argcomplete.completers import FilesCompleter

    try:
        names = [name for name in case_names(Path.cwd()) if name.startswith(prefix)]
    except Exception:  # a project that does not load completes as files; Tab never prints a traceback
        names = []
    return names + [path for path in FilesCompleter()(prefix) if path not in names]


def _subparsers(parser: argparse.ArgumentParser) -> Iterable[argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield sub
                yield from _subparsers(sub)


def add_completers(parser: argparse.ArgumentParser) -> None:
    """Give every command's case arguments the case completer (other positionals complete as files)."""
    for sub in _subparsers(parser):
        for action in sub._actions:
            if not action.option_strings and action.dest in CASE_ARGUMENTS:
                action.completer = complete_cases  # type: ignore[attr-defined]


def autocomplete(parser: argparse.ArgumentParser) -> None:
    """When the shell asks for completions (argcomplete's `_ARGCOMPLETE` is set), answer and exit;
    otherwise nothing (argcomplete is not even imported)."""
    if "_ARGCOMPLETE" not in os.environ:
        return
    import argcomplete

    add_completers(parser)
    argcomplete.autocomplete(parser, always_complete_options=False)  # options once a "-" is typed, as before


def script(shell: str) -> str:
    from argcomplete import shellcode

    return shellcode(["agentdiff"], shell=shell)


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.shell == "ids":
        for name in case_names(Path.cwd()):
            print(name, file=out)
        return EXIT_OK
    out.write(script(args.shell))
    return EXIT_OK
