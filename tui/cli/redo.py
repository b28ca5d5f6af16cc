"""`agentdiff redo`: the workbench's `Z`: apply again what `undo` took back."""

from __future__ import annotations

import argparse
from typing import TextIO

from .undo import journal_step

NAME = "redo"


def add_parser(commands) -> None:
    commands.add_parser(NAME, help="redo what `undo` took back", description="Apply again, byte for byte, the step `undo` "
                        "(or z in the workbench) took back last. Exit 0 redone, 1 nothing to redo, 2 when a later edit blocks it.")


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentdiff.core.baselines.journal import redo_last

    return journal_step(redo_last, "redo", out)
