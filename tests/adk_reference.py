"""Produce reference results with ADK 2.13 itself (AgentEvaluator + LocalEvalSetResultsManager).

Tests use it to get eval results that ADK wrote and scored; run as a script it regenerates the
results bundled with the sample agents:

    .venv/bin/python tests/adk_reference.py
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parent.parent


def run_agent_evaluator(
    agent_module: str,
    eval_set: dict[str, Any],
    criteria: Optional[dict[str, Any]],
    agents_dir: Path,
    app_name: str,
    num_runs: int = 2,
    output_file: Optional[Path] = None,
) -> Path:
    """Run AgentEvaluator on `eval_set` and return the `*.evalset_result.json` ADK wrote."""
    import warnings

    warnings.filterwarnings("ignore")
    from google.adk.evaluation.agent_evaluator import AgentEvaluator
    from google.adk.evaluation.eval_config import EvalConfig
    from google.adk.evaluation.eval_set import EvalSet
    from google.adk.evaluation.local_eval_set_results_manager import (
        LocalEvalSetResultsManager,
    )

    history = agents_dir / app_name / ".adk" / "eval_history"
    before = set(history.glob("*.evalset_result.json")) if history.exists() else set()
    config = EvalConfig(criteria=criteria) if criteria is not None else EvalConfig(
        criteria={"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
    )

    async def evaluate() -> None:
        try:
            await AgentEvaluator.evaluate_eval_set(
                agent_module=agent_module,
                eval_set=EvalSet.model_validate(eval_set),
                eval_config=config,
                num_runs=num_runs,
                print_detailed_results=False,
                app_name=app_name,
                eval_set_results_manager=LocalEvalSetResultsManager(agents_dir=str(agents_dir)),
                output_file=str(output_file) if output_file else None,
            )
        except AssertionError:
            pass  # some cases fail on purpose; the results file is what we want

    asyncio.run(evaluate())
    written = sorted(set(history.glob("*.evalset_result.json")) - before)
    assert len(written) == 1, written
    return written[0]


def regenerate_sample_results() -> Path:
    agents = ROOT / "sample_agents"
    sys.path.insert(0, str(agents))
    folder = agents / "home_automation"
    history = folder / ".adk" / "eval_history"
    for old in history.glob("*.evalset_result.json"):
        old.unlink()
    eval_set = json.loads((folder / "home_automation.evalset.json").read_text())
    criteria = json.loads((folder / "test_config.json").read_text())["criteria"]
    return run_agent_evaluator("home_automation", eval_set, criteria, agents, "home_automation", num_runs=2)


if __name__ == "__main__":
    print(regenerate_sample_results())
