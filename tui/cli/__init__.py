"""The `agentdiff` command line: the parser built from one module per command, and the entry point.

`agentdiff [PATHS…]` with no command is `agentdiff watch [PATHS…]` (the TUI). Exit codes: 0 every
case passed, 1 any case failed, errored, was flaky or not evaluated, 2 usage or load errors (bad
files are reported on stderr and the good ones still run).

The package sits above `agentdiff.tui.app` (only `watch` imports it, lazily) and may import
`agentdiff.core`; heavy imports (the runner, ADK, Textual) stay inside the command functions, so
`agentdiff --help` starts fast.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Optional, Sequence, TextIO

from agentdiff.core import __version__

from . import accept, baselines, compare, completion, diff, doctor, failures, gate, import_traces, list_cases, mcp, merge, receive, record, redo, review, run, score, serve, sign, skills, undo, watch
from .endings import ENDING, Terminated, ending, left, say, terminated, what_stopped
from .errors import EXIT_USAGE, UsageError, exists, quoted
from ..safe_text import SafeStream

# In the order `agentdiff --help` lists them; each module has NAME, add_parser() and command().
COMMANDS = {module.NAME: module for module in (score, list_cases, watch, run, record, accept, import_traces, review, undo, redo, diff, compare, gate,
                                               baselines, sign, failures, merge, serve, receive, mcp, skills, doctor, completion)}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentdiff",
        description="A workbench for evaluating AI agents; speaks Google ADK's eval and conformance formats.",
    )
    parser.add_argument("--version", action="version", version=f"agentdiff {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS.values():
        module.add_parser(commands)
    return parser


def main(argv: Optional[Sequence[str]] = None, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    out, err = SafeStream(out), SafeStream(err)  # data's control characters are shown, never obeyed
    parser = build_parser()
    completion.autocomplete(parser)  # Tab in a shell with `agentdiff completion …` loaded: answers and exits
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        os.getcwd()
    except OSError:  # the folder the shell is in was deleted or moved away
        if not {"-h", "--help", "--version"} & set(argv):
            print("error: the current folder no longer exists (deleted or moved); cd into the project again", file=err)
            return EXIT_USAGE
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        named = [arg for arg in argv if arg in COMMANDS and not exists(arg)]
        if named:
            print(f"error: options go after the command: agentdiff {named[0]} {' '.join(a for a in argv if a != named[0])}", file=err)
            return EXIT_USAGE
        argv = [watch.NAME, *argv]  # `agentdiff --python PATH` is the TUI with that option
    if not argv or (argv[0] not in COMMANDS and not argv[0].startswith("-")):
        if argv and not exists(argv[0]):
            names = ", ".join([name for name in COMMANDS if name != watch.NAME] + [watch.NAME])
            print(f"error: unknown command or path {quoted(argv[0])} (commands: {names})", file=err)
            return EXIT_USAGE
        argv = [watch.NAME, *argv]  # `agentdiff [PATHS…]` is the TUI
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(out)
        return EXIT_USAGE
    try:
        if args.command != completion.NAME:
            from agentdiff.core.baselines.journal import recover_at_start

            recover_at_start(Path.cwd())  # a write a crash interrupted: rolled back before anything reads the files
        args.run_command = main  # a command that runs others (the MCP server's tools) runs them through this
        return COMMANDS[args.command].command(args, out, err)
    except UsageError as error:
        print(f"error: {error}", file=err)
        return EXIT_USAGE
    finally:
        from agentdiff.core.formats.set_aside import take_notices

        for notice in take_notices():  # agentdiff's own state files that could not be read, set aside
            print(f"warning: {notice}", file=err)


def _quiet_asyncio() -> None:
    """A second Ctrl+C can land inside a task: asyncio would report it ("Task exception was never
    retrieved", a traceback) when the task is collected; or inside asyncio's own cleanup, leaving its
    loop to be closed as Python exits ("Exception ignored in: BaseEventLoop.__del__ … Invalid file
    descriptor"). The one line said here is the whole story."""
    import logging
    import warnings

    logging.getLogger("asyncio").disabled = True
    warnings.simplefilter("ignore")  # "coroutine … was never awaited": one the signal cut off as it was made
    sys.unraisablehook = lambda _unraisable: None  # the process is ending on a signal: nothing to add


def _unraisable(unraisable) -> None:
    """A Ctrl+C that lands in a callback nothing can raise from (a weak reference's, as a second one
    comes while asyncio cancels the runs of the first) is the interruption already being handled:
    not reported ("Exception ignored in …") over its one line. Anything else is, as Python would."""
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)


def _from_interrupt(error: BaseException) -> bool:
    """Whether an exception was raised while a KeyboardInterrupt was being handled."""
    seen = error.__context__
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__context__
    return False


def entry() -> None:
    """The `agentdiff` command. Ctrl+C (SIGINT), SIGTERM, SIGHUP and SIGQUIT stop the runs, end every
    worker, remove agentdiff's temporary files, write no report, and exit 128 + the signal's number with
    one line."""
    previous = {sig: signal.signal(sig, terminated) for sig in ENDING}
    sys.unraisablehook = _unraisable
    interrupted = False
    try:
        try:
            code = main()
        except RuntimeError as error:
            # a second Ctrl+C while asyncio cancels the runs of the first stops its loop mid-cleanup:
            # asyncio then reports that, over the interruption it came from; it is the same interruption
            if not _from_interrupt(error):
                raise
            raise KeyboardInterrupt from None
    except BrokenPipeError:
        # the reader went away (`agentdiff list | head -1`): end quietly, as a tool killed by SIGPIPE
        # does, and let nothing more reach the closed pipe (Python's flush at exit would say so)
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        code = 128 + getattr(signal, "SIGPIPE", 13)
    except KeyboardInterrupt:
        # a second Ctrl+C (or a SIGTERM after it, as CI cancels a job) ends it at once, its cleanup bounded
        ending(130, f"\ninterrupted{what_stopped()}")
        interrupted = True
        _quiet_asyncio()
        say()
        code = 130
    except Terminated as ended:
        ending(128 + ended.signum, f"\nterminated{what_stopped()}")
        interrupted = True
        _quiet_asyncio()
        say()  # (not when the terminal is gone: SIGHUP)
        code = 128 + ended.signum
    finally:
        # After a signal the process is ending: a second one ends it at once, with the status of an
        # interruption (never Python's own exit cut short in the middle, status -2).
        if not interrupted:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    left()
    sys.exit(code)
