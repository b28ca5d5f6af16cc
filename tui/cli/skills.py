"""`agentdiff skills install [--claude] [--codex] [--gemini] [--copilot] [--all] [--project] [--no-mcp] [--force]`:
the skill (`SKILL.md`) that teaches a coding agent the eval loop, and the MCP configuration that
connects it to `agentdiff mcp`, written where each assistant looks: in the home folder, or with
`--project` in the project (to commit, for everyone who clones it). An edited skill or a different
`agentdiff` entry is left as it is, and said (`--force` replaces it, the old copy kept as `.orig`)."""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
from pathlib import Path
from typing import TextIO

from .client_config import Written, install_config, install_skill
from .errors import EXIT_OK, EXIT_USAGE
from .skill_text import SKILL, SKILL_NAME

NAME = "skills"
ASSISTANTS = {"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI", "copilot": "GitHub Copilot"}
SKILL_FOLDERS = {  # (in the project, in the home folder)
    "claude": (Path(".claude") / "skills", Path(".claude") / "skills"),
    "codex": (Path(".agents") / "skills", Path(".agents") / "skills"),
    "gemini": (Path(".gemini") / "skills", Path(".gemini") / "skills"),
    "copilot": (Path(".github") / "skills", Path(".copilot") / "skills"),
}


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="install the skill and the MCP configuration that connect a coding agent to `agentdiff mcp`",
        description="Write the agentdiff skill (SKILL.md) and the MCP server's entry in each assistant's configuration "
        "(Claude Code, Codex, Gemini CLI, GitHub Copilot): in the home folder, or with --project in this project. Without "
        "an assistant flag, for all four. An edited skill or a different agentdiff entry is left as it is unless --force.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    install = actions.add_parser("install", help="write the skill and the MCP configuration")
    for name, title in ASSISTANTS.items():
        install.add_argument(f"--{name}", action="store_true", help=f"for {title}")
    install.add_argument("--all", action="store_true", help="for all four (the default)")
    install.add_argument("--project", action="store_true", help="in this project's folders (to commit), not the home folder")
    install.add_argument("--no-mcp", action="store_true", help="the skill only: no MCP configuration")
    install.add_argument("--force", action="store_true", help="replace an edited skill or a different agentdiff entry (the old copy kept as .orig)")
    actions.add_parser("show", help="print the skill")


def server_command(root: Path, project: bool) -> list[str]:
    """How an assistant starts the server: in a project's committed file, the project's own `.venv`
    relative to its root, else `agentdiff` when it is on PATH; in the home folder, this one by its path."""
    here = Path(sys.executable).parent / "agentdiff"
    if project:
        try:
            return [str(here.relative_to(root.resolve())), "mcp"]
        except ValueError:
            pass
        found = shutil.which("agentdiff")
        if found and Path(found).resolve() == here.resolve():
            return ["agentdiff", "mcp"]
    return [str(here) if here.is_file() else sys.executable, *([] if here.is_file() else ["-m", "agentdiff.tui.cli"]), "mcp"]


def _said(written: Written, base: Path, project: bool) -> str:
    shown = written.path.relative_to(base) if project else Path("~") / written.path.relative_to(base)
    if written.what == "left":
        why = "it was edited since agentdiff wrote it" if written.path.name == "SKILL.md" else "its agentdiff entry is not this one"
        return f"left {shown} as it is: {why}; --force replaces it (the old copy kept as {shown.name}.orig)"
    return f"{written.what} {shown}"


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.action == "show":
        out.write(SKILL)
        return EXIT_OK
    chosen = [name for name in ASSISTANTS if getattr(args, name)] if not args.all else list(ASSISTANTS)
    base = Path.cwd() if args.project else Path.home()
    serving = server_command(Path.cwd(), args.project)
    configured: set[Path] = set()
    for name in chosen or list(ASSISTANTS):
        target = base / SKILL_FOLDERS[name][0 if args.project else 1] / SKILL_NAME / "SKILL.md"
        try:
            print(_said(install_skill(target, SKILL, args.force), base, args.project), file=out)
            if args.no_mcp:
                continue
            written = install_config(name, base, args.project, serving, args.force)
            if written is None:
                print(f"for Claude Code everywhere: claude mcp add --scope user {shlex.join(['agentdiff', '--', *serving])}", file=out)
            elif written.path not in configured:  # Claude Code and Copilot share the project's .mcp.json
                configured.add(written.path)
                print(_said(written, base, args.project), file=out)
        except (OSError, ValueError) as exc:
            print(f"error: {exc}", file=err)
            return EXIT_USAGE
    if args.project and not args.no_mcp:
        print("Codex reads .codex/config.toml only in a project it trusts; Gemini CLI and Copilot may ask to trust the folder", file=out)
    return EXIT_OK
