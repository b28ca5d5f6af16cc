"""The runs of a repeated case side by side: for each turn and layer, the distinct things its runs did
(the tool calls they made, the answer they gave), how many runs did each, and which one the baseline
expects; and the majority run, the one whose whole trajectory the most runs share (what to accept when
the runs disagree and most of them are right)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from agentdiff.core.traces.model import Trace, Turn

LAYERS = ("tool_calls", "response")


@dataclass(frozen=True, slots=True)
class Variant:
    text: str  # as it reads: `get_weather(city="Rome")`, or the answer
    runs: tuple[int, ...]  # 0-based, of the runs that did it
    baseline: bool = False  # what the baseline expects


@dataclass(frozen=True, slots=True)
class LayerVariants:
    turn: int  # 0-based
    layer: str  # tool_calls | response
    variants: tuple[Variant, ...]  # the most runs first

    @property
    def agree(self) -> bool:
        return len(self.variants) == 1


@dataclass(frozen=True, slots=True)
class Grid:
    runs: int
    rows: tuple[LayerVariants, ...]
    majority: int  # the run whose whole trajectory the most runs share (ties: the earliest)
    majority_runs: tuple[int, ...]  # the runs that share it

    @property
    def distinct(self) -> int:
        """How many different trajectories the runs took."""
        return len({_whole(self, run) for run in range(self.runs)})


def _calls(turn: Optional[Turn]) -> str:
    if turn is None:
        return "(no turn)"
    if not turn.tool_calls:
        return "(no tool call)"
    return "; ".join(f"{call.name}({', '.join(f'{k}={json.dumps(v, ensure_ascii=False, sort_keys=True)}' for k, v in (call.args or {}).items())})"
                     for call in turn.tool_calls)


def _answer(turn: Optional[Turn]) -> str:
    if turn is None:
        return "(no turn)"
    if turn.error:
        return f"(error: {turn.error})"
    return turn.final_response if turn.final_response is not None else "(no answer)"


def _read(layer: str, turn: Optional[Turn]) -> str:
    return _calls(turn) if layer == "tool_calls" else _answer(turn)


def _turn(trace: Optional[Trace], index: int) -> Optional[Turn]:
    if trace is None:
        return None
    return next((turn for turn in trace.turns if turn.index == index), None)


def _whole(grid: Grid, run: int) -> tuple[str, ...]:
    return tuple(next(v.text for v in row.variants if run in v.runs) for row in grid.rows)


def grid(traces: Sequence[Trace], baseline: Optional[Trace] = None) -> Grid:
    """The variants of `traces` (one per run, in run order) per turn and layer, the baseline's marked."""
    turns = sorted({turn.index for trace in traces for turn in trace.turns})
    rows = []
    for index in turns:
        for layer in LAYERS:
            read = [_read(layer, _turn(trace, index)) for trace in traces]
            counts = Counter(read)
            expected = _read(layer, _turn(baseline, index)) if baseline is not None and _turn(baseline, index) is not None else None
            order = sorted(counts, key=lambda text: (-counts[text], read.index(text)))
            rows.append(LayerVariants(index, layer, tuple(Variant(text, tuple(i for i, r in enumerate(read) if r == text), text == expected)
                                                          for text in order)))
    made = Grid(len(traces), tuple(rows), 0, ())
    wholes = [_whole(made, run) for run in range(len(traces))]
    tally = Counter(wholes)
    best = max(range(len(traces)), key=lambda run: (tally[wholes[run]], -run)) if traces else 0
    return Grid(len(traces), tuple(rows), best, tuple(run for run in range(len(traces)) if wholes[run] == wholes[best]) if traces else ())


def grid_dict(made: Grid) -> dict[str, Any]:
    """The grid as `diff --json` and the MCP `diff` give it (runs 1-based, as everywhere users see them)."""
    return {
        "runs": made.runs,
        "distinct": made.distinct,
        "majority_run": made.majority + 1,
        "majority_runs": [run + 1 for run in made.majority_runs],
        "rows": [{"turn_index": row.turn, "layer": row.layer,
                  "variants": [{"text": v.text, "runs": [run + 1 for run in v.runs], "count": len(v.runs), "baseline": v.baseline}
                               for v in row.variants]} for row in made.rows],
    }

