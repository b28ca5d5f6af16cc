"""ADK's own scores for an eval set, from whichever ADK version runs this script.

    ENV/bin/python tests/adk_version_reference.py AGENTS_DIR AGENT EVAL_SET.json CONFIGS.json OUT.json

CONFIGS.json maps a name to `criteria`. For each, runs the agent on every case once through ADK's
evaluation service, as `AgentEvaluator` does (`_get_eval_results_by_eval_id`, present from 1.19 to
2.13), and writes for each case its status and every metric's overall and per-invocation scores
and statuses, under the config's name. It imports nothing of agentdiff:
it runs in a project environment that has only ADK.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import warnings
from importlib import metadata


async def main(agents_dir: str, agent: str, eval_set_path: str, configs_path: str, out_path: str) -> None:
    warnings.filterwarnings("ignore")
    sys.path.insert(0, agents_dir)
    from google.adk.evaluation import agent_evaluator
    from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
    from google.adk.evaluation.eval_set import EvalSet

    AgentEvaluator, UserSimulatorProvider = agent_evaluator.AgentEvaluator, agent_evaluator.UserSimulatorProvider

    root_agent = importlib.import_module(f"{agent}.agent").root_agent
    with open(eval_set_path, encoding="utf-8") as f:
        eval_set = EvalSet.model_validate_json(f.read())
    with open(configs_path, encoding="utf-8") as f:
        configs = json.load(f)

    def metric(result) -> dict:
        return {"name": result.metric_name, "score": result.score, "status": result.eval_status.name.lower()}

    import inspect

    collect = AgentEvaluator._get_eval_results_by_eval_id  # noqa: SLF001 - AgentEvaluator's own path
    extra = {"app_name": agent} if "app_name" in inspect.signature(collect).parameters else {}  # from 2.x
    scored = {}
    for name, criteria in configs.items():
        config = EvalConfig.model_validate({"criteria": criteria})
        results = await collect(root_agent, eval_set, get_eval_metrics_from_config(config), 1,
                                UserSimulatorProvider(user_simulator_config=config.user_simulator_config), **extra)
        scored[name] = {
            eval_id: {
                "status": case.final_eval_status.name.lower(),
                "metrics": [metric(m) for m in case.overall_eval_metric_results],
                "per_invocation": [[metric(m) for m in pair.eval_metric_results] for pair in case.eval_metric_result_per_invocation],
            }
            for eval_id, (case,) in results.items()
        }
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump({"adk_version": metadata.version("google-adk"), "configs": scored}, f, indent=1)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
