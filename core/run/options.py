"""How cases run: the mode, repeats, timeouts, agents dirs, and the live criteria of conformance cases."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Optional

from agentdiff.core.formats.conformance import StreamingMode
from agentdiff.core.formats.eval_config import EvalConfig, MatchType
from agentdiff.core.scoring.pass_rate import PassRules

Mode = Literal["replay", "live"]


@dataclass(frozen=True)
class RunOptions:
    mode: Optional[Mode] = None  # None: replay for conformance cases, live for EvalSet cases
    num_runs: int = 1
    first_repeat: int = 0  # the number of its first repeat (a run-until-confident's later runs go on counting)
    timeout: Optional[float] = None  # per run; None: the pool's
    run_tools: bool = False
    streaming: Optional[StreamingMode] = None  # conformance: one mode; None: every recorded mode
    agents_dirs: tuple[Path, ...] = ()
    mapping: dict[str, str] = field(default_factory=dict)
    live_trajectory: MatchType = MatchType.IN_ORDER  # conformance cases in live mode
    live_response_threshold: float = 0.8
    judge_cache: Optional[Path] = None  # where judge answers are kept (None: every judge call is made)
    prices: dict[str, dict[str, float]] = field(default_factory=dict)  # per million tokens, by model: for costs shown
    strict_node_order: bool = False  # a workflow's parallel branches compared in the order they ran
    pass_rules: PassRules = field(default_factory=PassRules)  # what live repeats are held to (`scoring.pass_rate`)

    def with_mode(self, mode: Optional[Mode]) -> "RunOptions":
        return dataclasses.replace(self, mode=mode)


def live_config(options: RunOptions) -> EvalConfig:
    """The criteria a conformance case is scored with in live mode."""
    return EvalConfig.model_validate(
        {
            "criteria": {
                "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": options.live_trajectory.name},
                "response_match_score": options.live_response_threshold,
            }
        }
    )
