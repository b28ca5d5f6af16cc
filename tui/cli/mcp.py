"""`agentdiff mcp [PATHS…]`: the workbench as a Model Context Protocol server over stdio, for a coding
agent (Claude Code, Codex, Gemini CLI…); `--print-config` prints the snippet each one's MCP
configuration takes."""

from __future__ import annotations

import argparse
import io
import json
import os
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Callable, TextIO

from .errors import EXIT_OK, EXIT_USAGE, quoted
from .options import add_run_options, project_session
from ..safe_text import one_line

NAME = "mcp"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="serve the workbench to a coding agent over MCP (stdio): status, run, diff, explain, accept…",
        description="A Model Context Protocol server over stdio on the cases under PATHS, backed by the same workbench as "
        "the TUI: warm workers, the project's Python, watch on (the assistant's edits re-run the cases they affect), "
        "accepts in the same journal as everyone's. It ends when its client closes stdin. "
        "With --print-config, print what each assistant's MCP configuration takes, and exit.",
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="folders of cases and agents (default: the configured paths, else .)")
    parser.add_argument("--print-config", action="store_true", help="print the MCP configuration snippets for Claude Code, Codex, Gemini CLI and Copilot")
    parser.add_argument("--no-watch", action="store_true", help="do not watch files: only run() re-runs cases")
    add_run_options(parser, repeats=True)


def server_command() -> list[str]:
    """How an assistant starts this server: the `agentdiff` on PATH when it is this one, else this
    Python running agentdiff."""
    found = shutil.which("agentdiff")
    here = Path(sys.executable).parent / "agentdiff"
    if found and Path(found).resolve() == here.resolve():
        return [found, NAME]
    if here.is_file():
        return [str(here), NAME]
    return [sys.executable, "-m", "agentdiff.tui.cli", NAME]


def print_config(out: TextIO, root: Path) -> None:
    command, *args = server_command()
    entry = {"command": command, "args": args}
    print("# Claude Code: run this in the project (or put the JSON below in .mcp.json)", file=out)
    print(f"claude mcp add agentdiff -- {shlex.join([command, *args])}", file=out)
    print(json.dumps({"mcpServers": {"agentdiff": entry}}, indent=2), file=out)
    print("\n# Codex: ~/.codex/config.toml (or the project's .codex/config.toml)", file=out)
    print(f"[mcp_servers.agentdiff]\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}\ncwd = {json.dumps(str(root))}\n"
          "startup_timeout_sec = 60  # a first start finds the cases and the project's Python\n"
          "tool_timeout_sec = 600    # run() waits for verdicts (50 s by default, longer when asked)", file=out)
    print("\n# Gemini CLI: .gemini/settings.json in the project (or ~/.gemini/settings.json)", file=out)
    print(json.dumps({"mcpServers": {"agentdiff": {**entry, "cwd": str(root)}}}, indent=2), file=out)
    print("\n# GitHub Copilot: .mcp.json at the project's root (as Claude Code's, above), or ~/.copilot/mcp-config.json", file=out)
    print("\n# Or let agentdiff write them: agentdiff skills install --project (the skill and each assistant's file)", file=out)


def project_root(paths: list[Path], here: Path) -> Path:
    """Where the session is rooted: the project the first path is in, the nearest folder above it (up to
    `here` when the paths are inside it) with a pyproject.toml, a .git or an .agentdiff; else `here` when
    the paths are inside it, else the first path's folder."""
    resolved = [p.resolve() for p in paths]
    inside = all(p == here or here in p.parents for p in resolved)
    first = resolved[0] if resolved[0].is_dir() else resolved[0].parent
    for folder in (first, *first.parents):
        if any((folder / marker).exists() for marker in ("pyproject.toml", ".git", ".agentdiff")):
            return folder
        if inside and folder == here:
            break
    return here if inside else first


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    here = Path.cwd().resolve()
    root = project_root(list(args.paths), here) if args.paths else here
    if root != here:  # the session lives in the project the paths name: its config, its .agentdiff/, its files
        args.paths = [p.resolve() for p in args.paths]
        os.chdir(root)
        print(f"agentdiff mcp: the project is {root} (the folder of {quoted(args.paths[0])}), not {here}", file=err)
    if args.print_config:
        print_config(out, root)
        return EXIT_OK
    import asyncio

    from agentdiff.core.baselines.journal import recover_at_start
    from agentdiff.core.workbench.history import HISTORY_FILE, History
    from agentdiff.core.workbench.triage import Triage
    from agentdiff.core.workbench.watcher import watched_folders, watchfiles_source
    from agentdiff.core.workbench.workbench import Workbench

    from ..assist.activity import Activity
    from ..assist.server import serve
    from ..assist.session import AssistSession

    project = project_session(args, err)
    if project is None:
        return EXIT_USAGE
    config, paths, options, _, pool = project
    started = time.time()
    try:
        recover_at_start(root)
        workbench = Workbench(root, [p.resolve() for p in paths], pool, options, history=History(root / HISTORY_FILE))
        session = AssistSession(workbench, Triage.load(root), confirm_live_above=config.confirm_live_above, activity=Activity(root),
                                watching=not args.no_watch)
        changes = None if args.no_watch else watchfiles_source(watched_folders(root, [*workbench.paths, *options.agents_dirs]))

        async def watch() -> None:
            async for batch in changes():
                try:
                    session.triage.reload()  # labels written by the TUI or the CLI meanwhile (the filter's label:)
                    await workbench.on_changes(batch)
                except Exception as exc:  # noqa: BLE001 - a bad batch is said, and watching goes on
                    print(f"agentdiff mcp: a change could not be applied: {type(exc).__name__}: {exc}", file=sys.stderr)

        async def main() -> None:
            replays = [case_id for case_id in workbench.cases if workbench.replays(case_id)]
            session.load_kept()  # the kept runs' verdicts: what a first status or list_cases shows of cases not run yet
            if replays:  # recorded cases cost nothing: their verdicts are there when asked
                workbench.run(replays, "run as the server started")
            await serve(session, watch if changes is not None else None, lambda: _close(session, config.keep_runs, started),
                        in_process_cli(args.run_command))

        asyncio.run(main())
    finally:
        pool.close()
    return EXIT_OK


def _close(session, keep_runs: int, started: float) -> None:
    """The history saved, and the session's results kept as the TUI keeps its (`compare`, `gate`)."""
    from ..kept_session import keep_session

    workbench = session.workbench
    session.forget_files()
    if workbench.history is not None:
        workbench.history.close()
        if workbench.history.problem:
            print(f"warning: {one_line(workbench.history.problem)}", file=sys.stderr)
    keep_session(workbench, "mcp", keep_runs, started)


def in_process_cli(main: Callable[..., int]) -> Callable[[list[str]], tuple[int, str, str]]:
    """Run one of agentdiff's commands here through `main` (the command line's), its output and its
    messages captured (never a shell)."""
    def run(argv: list[str]) -> tuple[int, str, str]:
        from .endings import Terminated

        out, err = io.StringIO(), io.StringIO()
        try:
            code = main(argv, out=out, err=err)
        except Terminated:  # a signal to the server (a SystemExit too): it ends the server, not just the command
            raise
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 2
        return code, out.getvalue(), err.getvalue()
    return run
