"""`run --until-confident [--max-runs M]`: the inconclusive cases of a run given more runs until each
verdict settles (`core.run.until_confident`), what they may spend said first, each look said as it comes."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Callable, Optional, Sequence, TextIO

from agentdiff.core.project.family import family_of

from agentdiff.core.scoring.confidence import MAX_RUNS

from .options import num_runs


def add_confident_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--until-confident", action="store_true",
                        help="give inconclusive cases more runs, doubling them, until each verdict settles or --max-runs "
                        "(every look is held to a stricter level so the run stays as sure as --confidence says)")
    parser.add_argument("--max-runs", type=num_runs, default=None, metavar="M",
                        help=f"with --until-confident: the most runs a case gets (default {MAX_RUNS})")


def confident_options(args: argparse.Namespace, options, err: TextIO, refs: Sequence = ()):
    """`options` as `--until-confident` runs them (each look at its stricter level); None on a usage error.
    `refs`: the cases to run, whose own suites may set a minimum (`test_config.json`)."""
    from agentdiff.core.run.until_confident import with_looks

    most = args.max_runs or MAX_RUNS
    if args.max_runs is not None and not args.until_confident:
        print("error: --max-runs goes with --until-confident", file=err)
        return None
    if not args.until_confident:
        return options
    if most < options.num_runs:
        print(f"error: --max-runs {most} is fewer than the {options.num_runs} runs each case makes (--num-runs)", file=err)
        return None
    if not options.pass_rules.any_minimum and not any(family_of(ref).suite_pass_rule(ref)[0] is not None for ref in refs):
        print("note: --until-confident settles cases held to a minimum pass rate; none is set here (min_pass_rate in "
              "[tool.agentdiff] or a test_config.json, or --min-pass-rate)", file=err)
    return with_looks(options, most)


async def settle_held(unsettled: list, pool, options, most: int, prices: Optional[dict], progress,
                      finish: Callable[[object, float, int], None]) -> None:
    """The runs held back as inconclusive (`(case run, seconds, rank)`), settled side by side, then finished."""
    from agentdiff.core.run.until_confident import plan, settle_all

    if not unsettled:
        return
    progress.keep(f"until confident: {plan([run for run, _, _ in unsettled], most, prices).line()}")
    began = time.perf_counter()

    def looked(run) -> None:
        progress.keep(f"  {run.ref.id}: {run.result.pass_rate.words if run.result.pass_rate else run.result.status.value}")

    settled = await settle_all([run for run, _, _ in unsettled], pool, options, Path.cwd(), most, looked=looked)
    for case_run, (_, seconds, rank) in zip(settled, unsettled):
        finish(case_run, seconds + time.perf_counter() - began, rank)
