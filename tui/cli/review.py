"""`agentdiff review [PATHS]`: the failing cases one by one in the terminal, as `cargo insta review`
does it: each with the exact file change accepting it would make; `a` accept, `x` reject (keep the
baseline), `s` skip, `z` take back the previous decision, `q` quit; a summary at the end. Each accept is
its own journal entry (`agentdiff undo` takes it back). A flaky case asks which run to accept."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Callable, Optional, TextIO

from .color import ADDED, BOLD, DIM, REMOVED, paint, paint_status, wants_color
from .errors import EXIT_FAILED, EXIT_OK, UsageError, print_errors, quoted
from .options import add_color_option, add_run_options, run_now
from .selection import select_cases

NAME = "review"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="review the failing cases one by one: a accept, x reject, s skip, z back, q quit",
        description="Run the cases under PATHS, then walk the failing ones in the terminal, each with the exact file "
        "change accepting it would make: a accept (journaled), x reject (keep the baseline), s skip, z take back the "
        "previous decision, q quit. A flaky case first asks which run to accept. Needs a terminal. Exit 0 when every "
        "failing case got a decision, 1 when quit before.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATHS", help="files, folders or case ids (default: the configured paths, else .)")
    add_run_options(parser)
    add_color_option(parser)


def read_key() -> str:
    """One key press, without Enter."""
    import termios
    import tty

    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        return sys.stdin.read(1)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


def command(args: argparse.Namespace, out: TextIO, err: TextIO, key: Optional[Callable[[], str]] = None) -> int:

    from agentdiff.core.baselines.accept import AcceptRequest, plan_accepts, run_summaries
    from agentdiff.core.baselines.journal import BaselineConflict, BaselineWriteError, undo_last, write_baseline
    from agentdiff.core.project.config import load_project_config
    from agentdiff.core.scoring.results import CaseStatus

    if key is None:
        if not sys.stdin.isatty():
            raise UsageError("review needs a terminal to answer on; in a script, use `agentdiff accept --all-failed --yes`")
        key = read_key
    root = Path.cwd()
    config, config_errors = load_project_config(root)
    found, unknown = select_cases(args.paths, config)
    print_errors(list(config_errors) + found.errors, err)
    if unknown:
        raise UsageError(f"no case or folder matches {quoted(unknown[0])}")
    print("running the cases…", file=err)
    runs = [run for run in run_now(found.cases, args, config) if run.result.status is not CaseStatus.PASSED]
    if not runs:
        print("nothing to review: no case fails", file=out)
        return EXIT_OK
    decisions: list[tuple[int, str]] = []
    index = 0
    color = wants_color(args.color, out)
    while index < len(runs):
        run = runs[index]
        print(f"\n[{index + 1}/{len(runs)}] {paint(run.ref.id, BOLD, color)}: {paint_status(run.result.status.value, run.result.status, color)}",
              file=out)
        for line in _verdict_lines(run, color):  # as the TUI's header: the metrics against their thresholds, the divergence first
            print(line, file=out)
        repeat = None
        if run.result.disagreeing:
            from agentdiff.core.run.grid import majority_to_accept

            made = majority_to_accept(run)
            print("its runs disagree: which one is the new baseline?\n  " + "\n  ".join(run_summaries(run, answers=True)), file=out)
            if made is not None:
                print(f"  m: the majority run (run {made.majority + 1}, as {len(made.majority_runs)} of {made.runs} runs did)", file=out)
            choice = _ask(out, key, "run number (or m majority, s skip, q quit): " if made is not None else "run number (or s skip, q quit): ",
                          {str(n) for n in range(1, len(run.outputs) + 1)} | {"s", "q"} | ({"m"} if made is not None else set()))
            if choice == "m" and made is not None:
                choice = str(made.majority + 1)
            if choice == "q":
                break
            if choice == "s":
                decisions.append((index, "skipped"))
                index += 1
                continue
            repeat = int(choice) - 1
        try:
            run = dataclasses.replace(run, ref=_loaded_now(run.ref, root))  # an accept before may have changed its file
            plan = plan_accepts([AcceptRequest(run, repeat=repeat)], root)
            out.write(painted_preview(plan.preview, color))
        except Exception as exc:  # nothing to accept, a failed run: say so; x or s moves on
            plan = None
            print(f"cannot accept: {exc}", file=out)
        if plan is not None and plan.preview.count("\n") > 15:  # a long change: what it is about, again, beside the question
            first = run.diff.first_divergence if run.diff is not None else None
            print(paint(f"[{index + 1}/{len(runs)}] {run.ref.id}" + (f" · {first.summary}" if first else ""), BOLD, color), file=out)
        answer = _ask(out, key, "a accept · x reject · s skip · z back · q quit: ", {"a", "x", "s", "z", "q"})
        if answer == "q":
            break
        if answer == "z":
            if decisions:
                back, decision = decisions.pop()
                if decision == "accepted":
                    entry = undo_last(root)
                    print(f"undone: {entry.reason if entry else 'nothing'}", file=out)
                index = back
            continue
        if answer == "a":
            if plan is None:
                continue
            try:
                entry = write_baseline(plan.writes, root, plan.description)
            except (BaselineConflict, BaselineWriteError) as exc:
                print(f"not written: {exc}", file=out)
                continue
            print(f"written: {entry.reason}", file=out)
        decisions.append((index, {"a": "accepted", "x": "rejected", "s": "skipped"}[answer]))
        index += 1
    counts = {kind: sum(1 for _, d in decisions if d == kind) for kind in ("accepted", "rejected", "skipped")}
    print(f"\nreviewed {len(decisions)} of {len(runs)}: {counts['accepted']} accepted, {counts['rejected']} rejected, "
          f"{counts['skipped']} skipped", file=out)
    return EXIT_OK if len(decisions) == len(runs) else EXIT_FAILED


def _verdict_lines(run, color: bool) -> list[str]:
    """`response_match_score 0.41 < 0.8 · tool_trajectory_avg_score 1.00 ≥ 1`, then the first divergence
    (or the error), as the TUI's case header shows them."""
    from agentdiff.core.scoring.metrics import MetricStatus

    result, lines = run.result, []
    scored = []
    for metric in result.metrics:
        if metric.score is None or metric.threshold is None:
            continue
        failed = metric.status is MetricStatus.FAILED
        said = f"{metric.name} {metric.score:.2f} {'<' if failed else '≥'} {metric.threshold:g}"
        scored.append(paint(said, REMOVED if failed else DIM, color))
    if scored:
        lines.append("  " + " · ".join(scored))
    first = run.diff.first_divergence if run.diff is not None else None
    if result.error and first is None:
        lines.append("  " + paint(result.located_error.splitlines()[0], REMOVED, color))
    elif first is not None:
        lines.append("  " + paint(f"first divergence: {first.summary}", "33", color))
    return lines


def painted_preview(preview: str, color: bool) -> str:
    """The accept's file diff, coloured as git colours a diff on a terminal."""
    if not color:
        return preview
    out = []
    for line in preview.splitlines(keepends=True):
        if line.startswith(("+++", "---")):
            out.append(paint(line.rstrip("\n"), BOLD, True) + "\n")
        elif line.startswith("+"):
            out.append(paint(line.rstrip("\n"), ADDED, True) + "\n")
        elif line.startswith("-"):
            out.append(paint(line.rstrip("\n"), REMOVED, True) + "\n")
        elif line.startswith("@@"):
            out.append(paint(line.rstrip("\n"), "36", True) + "\n")
        else:
            out.append(line)
    return "".join(out)


def _loaded_now(ref, root: Path):
    """The case as its file says now (the run's copy was read before any accept of this review)."""
    from agentdiff.core.project.discovery import discover
    from agentdiff.core.project.family import family_of

    unit = family_of(ref).unit(ref)
    return next((found for found in discover([unit], root).cases if found.id == ref.id), ref)


def _ask(out: TextIO, key: Callable[[], str], question: str, allowed: set[str]) -> str:
    out.write(question)
    out.flush()
    while True:
        pressed = key()
        if pressed in allowed:
            out.write(pressed + "\n")
            return pressed
        if pressed == "":  # end of input
            out.write("q\n")
            return "q"
