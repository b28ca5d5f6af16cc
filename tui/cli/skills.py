"""`agentdiff skills install [--claude] [--codex] [--gemini] [--all] [--project]`: a skill (`SKILL.md`)
that teaches a coding agent the eval loop through `agentdiff mcp`, written where each assistant looks
for skills: Claude Code's `.claude/skills/`, Codex's `.agents/skills/`, Gemini CLI's `.gemini/skills/`,
in the home folder, or with `--project` in the project (to commit, for everyone who clones it)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TextIO

from .errors import EXIT_OK, EXIT_USAGE

NAME = "skills"
SKILL_NAME = "agentdiff-eval-loop"
FOLDERS = {"claude": Path(".claude") / "skills", "codex": Path(".agents") / "skills", "gemini": Path(".gemini") / "skills"}

SKILL = """---
name: agentdiff-eval-loop
description: Fix or change an ADK agent (its prompt, tools or code) against its eval cases without breaking
  others, through the agentdiff MCP server. Use when asked to make an eval case pass, to check an agent
  change against the project's evals, or to update a case's baseline.
---

# The eval loop with agentdiff

agentdiff runs this project's ADK eval cases (EvalSet files, conformance cases, agents-cli datasets) and
shows per layer (LLM request, tool calls, response, session) how each run differs from its baseline. Its
MCP server (`agentdiff mcp`) watches the files: an edit re-runs the cases it can affect by itself.

## The loop

1. `status` — the counts, what is running, what changed since you last looked, files that failed to load.
2. `explain(case)` on the failing case — what diverged first, the expected value's file and line, the
   failing metrics with the judge's reasons, and what changed since the case last passed.
   `diff(case, turn=…, layer=…)` for the whole picture, a few turns per page.
3. Edit the agent (its instruction, a tool, its code) — not the eval file.
4. `run(which="affected")` — the cases your edit can affect, with their verdicts and why each ran.
5. Check nothing else broke: `status` again (`changed_since_last_status`), or
   `list_cases("status:failed,error")`. Fix regressions before you go on.
6. Only when the user agrees that the new behaviour is right: `accept(case, …)` returns a plan — the
   exact change to the eval file, as a diff. Show it to the user. `apply(plan_digest)` writes it as one
   journal step; `undo()` (or `agentdiff undo`, or the TUI's `z`) takes it back.

## Rules

- Never lower a threshold, loosen a criterion, or edit an expected value by hand to make a case pass.
  A baseline changes only through `accept` with its plan shown.
- Running many cases live costs model quota: when `run` asks for `confirm`, tell the user the estimate
  it gives and ask before confirming. Prefer `mode="replay"` where cases are recorded.
- `doctor` says why agents cannot run (their Python, a missing package, a model's credentials).
- A case is named by its id from `list_cases`, its end after `/` or `::`, or its eval_id.
"""


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="install a skill that teaches a coding agent the eval loop through `agentdiff mcp`",
        description="Write the agentdiff skill (SKILL.md) where Claude Code, Codex and Gemini CLI look for skills: in "
        "the home folder, or with --project in this project. Without an assistant flag, for all three.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    install = actions.add_parser("install", help="write the skill")
    for name in FOLDERS:
        install.add_argument(f"--{name}", action="store_true", help=f"for {'Claude Code' if name == 'claude' else name.title() + (' CLI' if name == 'gemini' else '')}")
    install.add_argument("--all", action="store_true", help="for all three (the default)")
    install.add_argument("--project", action="store_true", help="in this project's folders (to commit), not the home folder")
    actions.add_parser("show", help="print the skill")


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.action == "show":
        out.write(SKILL)
        return EXIT_OK
    chosen = [name for name in FOLDERS if getattr(args, name)] if not args.all else list(FOLDERS)
    base = Path.cwd() if args.project else Path.home()
    for name in chosen or list(FOLDERS):
        target = base / FOLDERS[name] / SKILL_NAME / "SKILL.md"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink():
                print(f"error: {target} is a symbolic link; not written through", file=err)
                return EXIT_USAGE
            temp = target.with_name(f".{target.name}.agentdiff.tmp")
            temp.write_text(SKILL, encoding="utf-8")
            os.replace(temp, target)
        except OSError as exc:
            print(f"error: could not write {target}: {exc.strerror or exc}", file=err)
            return EXIT_USAGE
        shown = target.relative_to(base) if args.project else Path("~") / target.relative_to(base)
        print(f"wrote {shown}", file=out)
    print("then connect the server: `agentdiff mcp --print-config` prints each assistant's snippet", file=out)
    return EXIT_OK
