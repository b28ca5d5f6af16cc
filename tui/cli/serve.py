"""`agentdiff serve [PATHS…] [--host H] [--port N]`: the workbench in a browser tab, through
textual-serve: each tab gets the same app as `agentdiff watch` in a process of its own. Bound to
127.0.0.1 unless `--host` says otherwise, with a warning then: anyone who can reach the address can
accept and edit baselines."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Optional, TextIO

from .errors import EXIT_OK, EXIT_USAGE, exists, quoted
from .options import add_run_options

NAME = "serve"


def exposure_warning(host: str) -> Optional[str]:
    """What to say when `host` lets other machines in (anything but a loopback address)."""
    import ipaddress

    if host == "localhost":
        return None
    try:
        if ipaddress.ip_address(host).is_loopback:
            return None
    except ValueError:
        pass  # a host name: it may resolve to anything
    return f"warning: serving on {host}: anyone who can reach it can run your agents, accept and edit baselines"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="the workbench in a browser (textual-serve), on 127.0.0.1 by default",
        description="Serve the workbench (the same app as `agentdiff watch PATHS`) to a browser: each tab runs it in a "
        "process of its own, in this folder. Bound to 127.0.0.1 unless --host names another address (then anyone who "
        "can reach it can edit baselines).",
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="folders of cases and agents (default: the configured paths, else .)")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="the port (default 8000)")
    add_run_options(parser, repeats=True)


def watch_command(args: argparse.Namespace) -> str:
    """The `agentdiff watch` command line each tab runs: the same paths and run options."""
    argv = [sys.executable, "-m", "agentdiff.tui.cli", "watch", *map(str, args.paths)]
    for flag, value in (("--mode", getattr(args, "mode", None)), ("--num-runs", args.num_runs), ("--jobs", args.jobs),
                        ("--timeout", args.timeout), ("--python", args.python), ("--streaming-mode", args.streaming_mode)):
        if value is not None:
            argv += [flag, str(value)]
    for agents in args.agents:
        argv += ["--agents", str(agents)]
    if args.run_tools:
        argv.append("--run-tools")
    if args.no_judge_cache:
        argv.append("--no-judge-cache")
    return shlex.join(argv)


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    missing = [p for p in args.paths if not exists(p)]
    if missing:
        print(f"error: no such folder: {quoted(missing[0])}", file=err)
        return EXIT_USAGE
    from textual_serve.server import Server

    warning = exposure_warning(args.host)
    if warning:
        print(warning, file=err)
    print(f"serving the workbench on http://{args.host}:{args.port} (Ctrl+C stops)", file=err)
    Server(watch_command(args), host=args.host, port=args.port, title="agentdiff").serve()
    return EXIT_OK
