"""A drop-in for ADK's `AgentEvaluator` in pytest suites: change one import line,

    from google.adk.evaluation.agent_evaluator import AgentEvaluator   # before
    from agentdiff.core.testing import AgentEvaluator                   # after

and the same calls (`evaluate`, `evaluate_eval_set`, `migrate_eval_data_to_new_schema`,
`find_config_for_test_file`), with ADK 2.13's signatures and defaults, give the same pass/fail and
the same scores (ADK's own scoring rules, `core.scoring`), run by agentdiff's worker pool (cases
concurrently, in processes of their own, a crash or hang contained as that case's error) instead of
in the test's process. A failing call raises `AssertionError` with, for each failed case, its failing
metric, its first divergence and the word diff of its answer: short enough to read in pytest's output.

The pool is started on first use and kept warm for the test session (closed at exit).
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import json
import os
from pathlib import Path
from typing import Any, Optional, Sequence

from agentdiff.core.formats.eval_config import EvalConfig, default_eval_config
from agentdiff.core.formats.eval_set_files import CONFIG_FILE_NAME, LoadedConfig, eval_set_from_data, load_config_file, load_eval_set
from agentdiff.core.formats.source_file import SourceText
from agentdiff.core.project.case_ids import case_keys
from agentdiff.core.project.discovery import EvalCaseRef, with_checks
from agentdiff.core.reports.csv_report import append_csv
from agentdiff.core.reports.diff_text import changed_lines, word_markup
from agentdiff.core.reports.text import case_problem
from agentdiff.core.run.case_run import CaseRun, summarised
from agentdiff.core.run.eval_case import run_eval_case
from agentdiff.core.run.journey import apply_checks
from agentdiff.core.run.options import RunOptions
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.worker.jobs import AgentRef

NUM_RUNS = 2  # ADK 2.13's default
_POOL: Any = None


def _pool():
    global _POOL
    if _POOL is None:
        from agentdiff.core.worker.pool import WorkerPool

        _POOL = WorkerPool()
        atexit.register(_POOL.close)
    return _POOL


def agent_ref(agent_module: str, agent_name: Optional[str] = None) -> AgentRef:
    """The agent package an ADK test names by module path (`home_automation_agent`,
    `tests.fixtures.home_automation_agent`), as a worker imports it."""
    spec = importlib.util.find_spec(agent_module)
    if spec is None:
        raise ModuleNotFoundError(f"no module named {agent_module!r} (agentdiff runs it from the folder it lives in)")
    entry = None
    if spec.submodule_search_locations:
        folder = Path(list(spec.submodule_search_locations)[0])
    elif spec.origin:
        folder = Path(spec.origin).parent  # a module inside its agent package (`pkg.agent`): the package
        if folder.name != agent_module.rsplit(".", 1)[0].rsplit(".", 1)[-1]:
            raise ImportError(f"{agent_module!r} is a single file; agentdiff runs agents that are packages (a folder with __init__.py)")
        if Path(spec.origin).stem != "agent":  # `pkg.test_billing_agent`, a module that defines `agent`: that one
            entry = Path(spec.origin).stem
    else:
        raise ImportError(f"cannot locate {agent_module!r}")
    return AgentRef(agents_dir=str(folder.parent.resolve()), name=folder.name, sub_agent=agent_name, entry=entry,
                    import_from=_imported_from(agent_module.rsplit(".", 1)[0] if entry else agent_module, folder))


def _imported_from(agent_module: str, folder: Path) -> Optional[str]:
    """For a dotted module, the `sys.path` folder its top package is found in, so the worker imports it
    by the same dotted name (its absolute imports of the project work as under pytest)."""
    parts = agent_module.split(".")
    if parts[-1] == "agent" and folder.name != "agent":
        parts = parts[:-1]
    if len(parts) < 2:
        return None
    base = folder.resolve()
    for _ in parts:
        base = base.parent
    return str(base) if base.joinpath(*parts) == folder.resolve() else None


def _config(test_file: str) -> LoadedConfig:
    path = Path(os.path.dirname(test_file)) / CONFIG_FILE_NAME
    if path.is_file():
        loaded, errors = load_config_file(path)
        if errors:
            raise ValueError("; ".join(str(e) for e in errors))
        return loaded
    return LoadedConfig(default_eval_config(), None)


def _as_data(value: Any) -> Any:
    """ADK's pydantic objects (an EvalSet, an EvalConfig) as plain data, in ADK's own field names."""
    dump = getattr(value, "model_dump", None)
    return dump(mode="json", by_alias=False, exclude_none=True) if dump else value


def _refs(loaded, config: LoadedConfig, initial_state: Optional[dict]) -> list[EvalCaseRef]:
    from agentdiff.core.formats.eval_set_files import legacy_criteria_errors

    refused = legacy_criteria_errors(loaded, config)
    if refused:  # as AgentEvaluator's `_validate_input` refuses a legacy file scored with other criteria
        raise ValueError(refused[0].message)
    refs = []
    if initial_state is not None:  # the cases without a session of their own start from it
        from agentdiff.core.formats.eval_set import SessionInput
        from agentdiff.core.formats.eval_set_files import LoadedEvalSet

        session = SessionInput(app_name="", user_id="", state=initial_state)
        cases = [case if case.session_input is not None else case.model_copy(update={"session_input": session}) for case in loaded.cases]
        loaded = LoadedEvalSet.of(loaded.source, loaded.eval_set.model_copy(update={"eval_cases": cases}), loaded.parsed, loaded.legacy)
    for position, key in enumerate(case_keys(loaded)):
        refs.append(EvalCaseRef(loaded, config, (), key, position=position))
    errors: list = []
    refs = with_checks(refs, Path.cwd(), errors)  # journey checks apply here as in every run
    if errors:
        raise ValueError("; ".join(str(e) for e in errors))
    return refs


async def _run(refs: Sequence[EvalCaseRef], agent: AgentRef, num_runs: int) -> list[CaseRun]:
    options = RunOptions(mode="live", num_runs=num_runs)
    pool = _pool()
    return list(await asyncio.gather(*(run_eval_case(ref, agent, pool, options) for ref in refs)))


def failure_message(runs: Sequence[CaseRun]) -> str:
    """Each failed case in a few lines: the failing metric, the first divergence, the answer's word diff."""
    lines = []
    for run in runs:
        result = run.result
        if result.status is CaseStatus.PASSED:
            continue
        problem = case_problem(result)
        lines.append(f"✗ {result.eval_id} ({result.status.value}): " + problem.replace("\n", "\n    "))
        first = run.diff.first_divergence if run.diff else None
        if first is not None and first.summary not in problem:
            lines.append(f"    first divergence: {first.summary}")
        for turn in run.diff.turns if run.diff else ():
            if turn.response is not None and not turn.response.same and turn.response.words:
                words = changed_lines(word_markup(turn.response.words))
                lines.append(f"    turn {turn.index + 1} answer: " + words.replace("\n", "\n      "))
                break
    return "\n".join(lines)


def _report(runs: Sequence[CaseRun], print_detailed_results: bool, output_file: Optional[str]) -> None:
    if print_detailed_results:
        for run in runs:
            result = run.result
            metrics = ", ".join(f"{m.name} {m.score if m.score is not None else '-'}/{m.threshold}" for m in result.metrics if m.threshold is not None)
            print(f"{'✓' if result.status is CaseStatus.PASSED else '✗'} {result.eval_id}: {result.status.value} ({metrics})")
    if output_file:
        append_csv([run.result for run in runs], Path(output_file))


def _check(runs: Sequence[CaseRun], what: str) -> None:
    __tracebackhide__ = True  # pytest shows the message, not this frame's locals
    failed = [run for run in runs if run.result.status is not CaseStatus.PASSED]
    if failed:
        raise AssertionError(f"{len(failed)} of {len(runs)} eval case(s) of {what} did not pass:\n{failure_message(runs)}")


def _save(manager: Any, app_name: Optional[str], eval_set_id: str, runs: Sequence[CaseRun]) -> None:
    if manager is None:
        return
    from agentdiff.core.reports.adk_results_writer import adk_case_results

    manager.save_eval_set_result(app_name, eval_set_id, adk_case_results(runs))


def _refuse(app_name: Optional[str], manager: Any, artifact_service: Any) -> None:
    """The arguments both entry points refuse, in ADK's words where ADK refuses them."""
    if manager is not None and not app_name:
        raise ValueError("app_name is required when eval_set_results_manager is provided.")
    if artifact_service is not None:
        raise NotImplementedError("agentdiff runs each case in a worker process: an artifact_service object cannot be passed to it")


async def _evaluate(refs: Sequence[EvalCaseRef], agent: AgentRef, num_runs: int, print_detailed_results: bool, output_file: Optional[str],
                    manager: Any, app_name: Optional[str], what: str, eval_set_id: Optional[str] = None) -> None:
    """Run, report, save and judge one eval set's cases as ADK's evaluator does."""
    __tracebackhide__ = True
    runs = [summarised(apply_checks(run)) for run in await _run(refs, agent, num_runs)]
    _report(runs, print_detailed_results, output_file)
    _save(manager, app_name, eval_set_id or what, runs)
    _check(runs, what)


class AgentEvaluator:
    """ADK 2.13's `AgentEvaluator`, run by agentdiff (see the module's doc)."""

    @staticmethod
    def find_config_for_test_file(test_file: str) -> EvalConfig:
        """The `test_config.json` in the test file's folder, else ADK's default criteria."""
        return _config(test_file).config

    @staticmethod
    async def evaluate_eval_set(
        agent_module: str,
        eval_set: Any,
        criteria: Optional[dict[str, float]] = None,
        eval_config: Optional[Any] = None,
        num_runs: int = NUM_RUNS,
        agent_name: Optional[str] = None,
        print_detailed_results: bool = True,
        artifact_service: Optional[Any] = None,
        output_file: Optional[str] = None,
        app_name: Optional[str] = None,
        eval_set_results_manager: Optional[Any] = None,
    ) -> None:
        __tracebackhide__ = True
        if criteria is not None and eval_config is not None:
            raise ValueError("Either eval_config or criteria should be specified.")  # as ADK
        _refuse(app_name, eval_set_results_manager, artifact_service)
        data = _as_data(eval_set)
        config = EvalConfig.model_validate({"criteria": criteria} if criteria is not None else _as_data(eval_config)) \
            if criteria is not None or eval_config is not None else default_eval_config()
        text = json.dumps(data)
        source = SourceText(Path(f"{data.get('eval_set_id', 'eval_set')}.evalset.json"), f"{data.get('eval_set_id', 'eval_set')}.evalset.json",
                            text, "")
        loaded, errors = eval_set_from_data(source, data)
        if loaded is None:
            raise ValueError("; ".join(str(e) for e in errors))
        await _evaluate(_refs(loaded, LoadedConfig(config, None), None), agent_ref(agent_module, agent_name), num_runs,
                        print_detailed_results, output_file, eval_set_results_manager, app_name, loaded.eval_set_id)

    @staticmethod
    async def evaluate(
        agent_module: str,
        eval_dataset_file_path_or_dir: str,
        num_runs: int = NUM_RUNS,
        agent_name: Optional[str] = None,
        initial_session_file: Optional[str] = None,
        print_detailed_results: bool = True,
        artifact_service: Optional[Any] = None,
        output_file: Optional[str] = None,
        app_name: Optional[str] = None,
        eval_set_results_manager: Optional[Any] = None,
    ) -> None:
        __tracebackhide__ = True
        if num_runs < 1:
            raise ValueError(f"`num_runs` must be at least 1, got {num_runs}.")
        _refuse(app_name, eval_set_results_manager, artifact_service)
        test_files = []
        if isinstance(eval_dataset_file_path_or_dir, str) and os.path.isdir(eval_dataset_file_path_or_dir):
            for root, _, files in os.walk(eval_dataset_file_path_or_dir):
                test_files += [os.path.join(root, name) for name in files if name.endswith(".test.json")]
        else:
            test_files = [eval_dataset_file_path_or_dir]
        if not test_files:
            raise ValueError(f"No `*.test.json` eval files found in {eval_dataset_file_path_or_dir}, so there is nothing to evaluate.")
        initial_state = None
        if initial_session_file:
            with open(initial_session_file, encoding="utf-8") as file:
                initial_state = json.load(file).get("state", {})
        agent = agent_ref(agent_module, agent_name)
        for test_file in test_files:
            loaded, errors = load_eval_set(Path(test_file), test_file)
            if loaded is None:
                raise ValueError("; ".join(str(e) for e in errors))
            await _evaluate(_refs(loaded, _config(test_file), initial_state), agent, num_runs, print_detailed_results, output_file,
                            eval_set_results_manager, app_name, test_file, loaded.eval_set_id)

    @staticmethod
    def migrate_eval_data_to_new_schema(old_eval_data_file: str, new_eval_data_file: str, initial_session_file: Optional[str] = None) -> None:
        """An old-format eval file (a list of rows) written as an EvalSet, as ADK migrates it."""
        if not old_eval_data_file or not new_eval_data_file:
            raise ValueError("One of old_eval_data_file or new_eval_data_file is empty.")
        loaded, errors = load_eval_set(Path(old_eval_data_file), old_eval_data_file)
        if loaded is None:
            raise ValueError("; ".join(str(e) for e in errors))
        eval_set = loaded.eval_set
        if initial_session_file:
            from agentdiff.core.formats.eval_set import SessionInput

            with open(initial_session_file, encoding="utf-8") as file:
                session = json.load(file)
            cases = [case.model_copy(update={"session_input": SessionInput(app_name=session.get("app_name", ""), user_id=session.get("user_id", ""),
                                                                           state=session.get("state", {}))}) for case in eval_set.eval_cases]
            eval_set = eval_set.model_copy(update={"eval_cases": cases})
        with open(new_eval_data_file, "w", encoding="utf-8") as file:
            file.write(eval_set.model_dump_json(indent=2))


__all__ = ["AgentEvaluator", "NUM_RUNS", "agent_ref", "failure_message"]
