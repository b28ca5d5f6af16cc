"""Running an agents-cli dataset case: inference as `agents-cli eval generate` does it, graded by
its eval config's local metrics as `agents-cli eval grade` grades it, and diffed against its baseline.

* The run: the case's prompt sent to a new session, or a continuation's last user message sent to a
  session seeded with the events before it (`dataset_cases.history`), or a scenario played by ADK's
  user simulator as `eval dataset synthesize` plays it; `num_runs` repeats at once. In replay, the
  model is answered from the baseline's recorded calls.
* Its metrics: each local custom function is run in a worker on the `instance` agents-cli builds
  from the run's trace; the score is reported, and it passes or fails the case only where the
  metric has a `threshold`. Cloud metrics go through Google's eval SDK in the worker on the traced
  case, as `agents-cli eval grade` sends them; without a project or credentials they are `not
  evaluated`, saying what they need.
* Its baseline, once a run was accepted: the run is scored against it as an EvalSet case is against
  its expected turn, by ADK's default criteria (the tool calls exactly, `tool_trajectory_avg_score`
  1.0, and the answer's ROUGE-1 `response_match_score` ≥ 0.8), and diffed per layer. Without one the
  case is *new*: its run is shown, nothing diverges, and accepting it makes the baseline.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, Optional, Sequence

from agentdiff.core.diff.case import diff_case
from agentdiff.core.diff.explain import explain_scored
from agentdiff.core.formats.agents_cli.traces import normalized, snake_case
from agentdiff.core.formats.eval_config import EvalConfig, EvalMetric, default_eval_config, eval_metrics
from agentdiff.core.project.dataset_cases import SCENARIO_TURNS, JUDGE_KEY, REQUESTS_KEY, DatasetCaseRef, history, is_scenario, sent_message
from agentdiff.core.run.case_run import CaseRun, case_result, layer_summaries, shown_index, unrun
from agentdiff.core.run.conformance import replay_failed
from agentdiff.core.run.expected import accepted_events, load_baseline
from agentdiff.core.run.options import RunOptions
from agentdiff.core.run.scored import SIMULATED, rules_of, score_output
from agentdiff.core.run.usage import case_usage
from agentdiff.core.scoring.metrics import InvocationScore, MetricEvaluation, MetricStatus
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.scoring.verdicts import aggregate, case_verdict, final_status
from agentdiff.core.traces.agents_cli import baseline_output, run_view, scenario_case
from agentdiff.core.traces.from_run import invocations_from_output, split_turns, trace_from_output
from agentdiff.core.worker.agents_cli_trace import app_agents, generated_events, instance, trace_case
from agentdiff.core.worker.jobs import AgentRef, Job, Message, RunOutput
from agentdiff.core.run.cpu import cpu_step, small

NEW = "new: nothing accepted yet — accept this run (`a` in the TUI, `agentdiff accept ID`) to make it the baseline"
NO_RECORDINGS = ("replay needs recorded model calls, which an accepted baseline holds and this case has none of: "
                 "run it live (--mode live) and accept the run")
CLOUD = ("is run by Google's cloud eval service, through Google's eval SDK (`google-cloud-aiplatform[evaluation]`) in "
         "the project's environment: set GOOGLE_CLOUD_PROJECT and Google Cloud credentials")


def dataset_job(ref: DatasetCaseRef, agent: AgentRef, mode: str = "live") -> Job:
    if is_scenario(ref.written):  # ADK's user simulator plays it, as `eval dataset synthesize` does
        scenario = {"eval_case": ref.case.model_dump(mode="json", exclude_none=True),
                    "user_simulator_config": {"max_allowed_invocations": SCENARIO_TURNS}}
        return Job(case_id=ref.id, agent=agent, mode=mode, app_name="user_simulation_app",  # type: ignore[arg-type]
                   user_id="user_simulation_default_user", messages=[], scenario=scenario, app_info=True)
    return Job(case_id=ref.id, agent=agent, mode=mode, app_name=agent.name, user_id="eval-cli-user",  # type: ignore[arg-type]
               messages=[Message(content=sent_message(ref.written))], history=history(ref.written, "model"), app_info=True)


def messages_of(ref: DatasetCaseRef, out: RunOutput) -> list[Message]:
    """The user messages of one run: the case's, or those the user simulator wrote in it."""
    if is_scenario(ref.written):
        return [Message(content=content) for content in out.user_messages]
    return [Message(content=sent_message(ref.written))]


def written_case(ref: DatasetCaseRef) -> dict[str, Any]:
    """The case as its dataset file holds it (either key spelling)."""
    assert ref.dataset is not None
    raw = ref.dataset.raw
    cases = raw.get("eval_cases", raw.get("evalCases")) or []
    return cases[ref.index]


def traced(ref: DatasetCaseRef, out: RunOutput) -> dict[str, Any]:
    """The case as `eval generate` would write it after this run (a scenario: as `eval dataset
    synthesize` writes it)."""
    if is_scenario(ref.written):
        turns = []
        events_by_turn = split_turns(out.events)
        for index, invocation in enumerate(invocations_from_output(out, messages_of(ref, out), rules_of([out]))):
            stamps = [e.get("timestamp") for e in (events_by_turn[index] if index < len(events_by_turn) else []) if e.get("timestamp")]
            dump = invocation.model_dump(mode="json", exclude_none=True)
            turns.append({"invocation_id": dump.get("invocation_id"), "time": stamps[0] if stamps else None,
                          "user_content": dump.get("user_content"), "final_response": dump.get("final_response"),
                          "events": [e for e in (dump.get("intermediate_data") or {}).get("invocation_events") or [] if e.get("content")]})
        return scenario_case(written_case(ref), turns)
    return normalized(trace_case(dumped_case(ref), generated_events(out.events), app_agents(out.app_agents), out.root_agent or "root_agent"))


def dumped_case(ref: DatasetCaseRef) -> dict[str, Any]:
    """The case as the SDK dumps it, before a run adds to it."""
    return normalized(snake_case(written_case(ref)))


def grade_job(ref: DatasetCaseRef, agent: AgentRef, graded: dict[str, Any], options: RunOptions,
              case: Optional[dict[str, Any]] = None) -> Job:
    """The job that grades one run: its local metrics on the `instance`, its cloud metrics (through
    Google's eval SDK, in the worker) on the traced `case`."""
    return Job(case_id=ref.id, agent=agent, mode="live", app_name=agent.name, messages=[],
               grade={**_grading(ref, options, cloud=case is not None), "instance": graded, "case": case})


def _grading(ref: DatasetCaseRef, options: RunOptions, cloud: bool = True) -> dict[str, Any]:
    """What grading needs besides the run; in a replay, the judge answers the baseline recorded, which
    alone answer the metrics' model calls."""
    assert ref.metrics is not None
    replay = options.mode == "replay"
    return {"metrics": [{"name": m.name, "source": m.source, "file": _metric_file(ref, m.source_file)} for m in ref.metrics.local],
            "cloud": [{"name": m.name, "entry": m.entry, "source": m.source} for m in ref.metrics.cloud] if cloud and not replay else [],
            "cache_dir": str(options.judge_cache) if options.judge_cache else None,
            "replay": replay, "judge_answers": recorded_judge_answers(ref) if replay else {}}


def recorded_judge_answers(ref: DatasetCaseRef) -> dict[str, Any]:
    """metric → request key → answer, as the accepted run's grading got them."""
    answers = (ref.baseline.model_extra or {}).get(JUDGE_KEY) if ref.baseline is not None else None
    return answers if isinstance(answers, dict) else {}


def judge_answers(graded: Optional[dict[str, Any]]) -> dict[str, Any]:
    """metric → request key → answer, of one run's grading (what accepting it records)."""
    return {name: result["judge_answers"] for name, result in (graded or {}).items()
            if isinstance(result, dict) and result.get("judge_answers")}


def _metric_file(ref: DatasetCaseRef, relative: Optional[str]) -> Optional[str]:
    if relative is None or ref.metrics is None or ref.metrics.path is None:
        return None
    return str((ref.metrics.path.parent / relative).resolve())


async def run_dataset_case(ref: DatasetCaseRef, agent: AgentRef, pool, options: RunOptions) -> CaseRun:
    if ref.metrics_errors:
        return unrun(ref, agent, "live", CaseStatus.ERROR, "its eval config did not load: " + "; ".join(map(str, ref.metrics_errors)))
    job = dataset_job(ref, agent)
    if ref.metrics is not None and ref.metrics.metrics and not is_scenario(ref.written):  # graded where it ran
        job = job.model_copy(update={"then_grade": {**_grading(ref, options), "case": dumped_case(ref)}})
    if options.mode == "replay":  # the model answered from the baseline's recorded calls, the tools from its events
        recordings = baseline_recordings(ref) if not is_scenario(ref.written) else []
        if not recordings:
            return unrun(ref, agent, "replay", CaseStatus.NOT_EVALUATED, NO_RECORDINGS)
        job = job.model_copy(update={"mode": "replay", "recordings": recordings})
    outputs = await asyncio.gather(*(pool.run(job.model_copy(update={"repeat": options.first_repeat + r}), options.timeout) for r in range(max(1, options.num_runs))))
    grades = await grade_outputs(ref, agent, outputs, pool, options)
    return await cpu_step(small(outputs), score_dataset_case, ref, agent, outputs, grades, job.mode)


async def grade_outputs(ref: DatasetCaseRef, agent: AgentRef, outputs: Sequence[RunOutput], pool, options: RunOptions,
                        again: bool = False) -> list[Optional[dict[str, Any]]]:
    """Each run's metric results: as its worker graded it, or (`again`, or where it did not) graded
    now against the case and the eval config as loaded now."""
    return list(await asyncio.gather(*(_grade(ref, agent, out, pool, options, again) for out in outputs)))


async def _grade(ref: DatasetCaseRef, agent: AgentRef, out: RunOutput, pool, options: RunOptions, again: bool) -> Optional[dict[str, Any]]:
    """The metrics' results for one run (None when it failed or there are none)."""
    if out.error is not None or ref.metrics is None or not ref.metrics.metrics:
        return None
    if out.judged is not None and not again:
        return out.judged
    case = traced(ref, out)
    return await grade_instance(ref, agent, instance(case), pool, options, case)


async def grade_instance(ref: DatasetCaseRef, agent: AgentRef, graded: Optional[dict[str, Any]], pool, options: RunOptions,
                         case: Optional[dict[str, Any]] = None) -> Optional[dict[str, Any]]:
    """The metrics' results for one `instance` (the cloud ones too when the traced `case` is given;
    None: the case has no metrics to grade)."""
    wanted = (ref.metrics.local + (ref.metrics.cloud if case is not None else ())) if ref.metrics else ()
    if not wanted:
        return None
    if graded is None:  # as the SDK: a case whose run gave no text has no response to grade
        message = f"No response found for candidate 0 in EvalCase {ref.written.eval_case_id}."
        return {m.name: {"score": None, "explanation": None, "error_message": message} for m in wanted}
    answer = await pool.run(grade_job(ref, agent, graded, options, case), options.timeout)
    if answer.judged is None:
        why = answer.error or "the metrics' process gave no answer"
        return {m.name: {"score": None, "explanation": None, "error_message": why} for m in wanted}
    return answer.judged


def agents_cli_metrics(ref: DatasetCaseRef, graded: Optional[dict[str, Any]], turns: int) -> tuple[MetricEvaluation, ...]:
    """The eval config's metrics for one run, in its order."""
    out = []
    for spec in ref.metrics.metrics if ref.metrics else ():
        metric = EvalMetric(metric_name=spec.name, threshold=spec.threshold,
                            criterion={"threshold": spec.threshold} if spec.threshold is not None else None)
        result = (graded or {}).get(spec.name)
        if result is None and spec.where == "cloud":
            out.append(MetricEvaluation(metric, None, MetricStatus.NOT_EVALUATED, reason=f"`{spec.name}` {CLOUD}"))
            continue
        result = result or {"error_message": "not graded"}
        score = result.get("score")
        details = {key: result[key] for key in ("explanation", "where", "traceback", "judge_calls", "cache_hits", "rubric_verdicts", "retried") if result.get(key) is not None}
        if result.get("error_message") or not isinstance(score, (int, float)):
            reason = result.get("error_message") or f"no score ({score!r})"
            if result.get("where"):
                reason = f"{result['where']}: {reason}"
            out.append(MetricEvaluation(metric, None, MetricStatus.NOT_EVALUATED, (InvocationScore(None, MetricStatus.NOT_EVALUATED),) * turns,
                                        reason=reason, details=details or None))
            continue
        status = MetricStatus.INFORMATIONAL if spec.threshold is None else (
            MetricStatus.PASSED if score >= spec.threshold else MetricStatus.FAILED)
        out.append(MetricEvaluation(metric, float(score), status, (InvocationScore(float(score), status),) * turns, details=details or None))
    return tuple(out)


def score_dataset_case(ref: DatasetCaseRef, agent: AgentRef, outputs: Sequence[RunOutput], grades: Sequence[Optional[dict[str, Any]]] = (),
                       mode: str = "live") -> CaseRun:
    """The outputs of a dataset case's repeats, graded and diffed against its baseline. A replay also
    fails, as ADK's replay does, on any request, tool-call or session divergence, or a run past the
    recording."""
    message = sent_message(ref.written)
    messages = [Message(content=message)]
    rules = rules_of(outputs)
    if is_scenario(ref.written):
        return _score_scenario(ref, agent, outputs, grades, rules)
    outputs = [_agent_error(out) for out in outputs]
    baseline = load_baseline(ref)
    if not any(out.exchanges for out in outputs):  # a run from a trace file, which keeps no requests: no request layer
        turns = tuple(turn.model_copy(update={"llm": ()}) for turn in baseline.trace.turns)
        baseline = dataclasses.replace(baseline, trace=baseline.trace.model_copy(update={"turns": turns}))
    expected = None
    config: EvalConfig = EvalConfig(criteria={})
    if ref.baseline is not None:
        accepted = baseline_output(message, accepted_events(ref), ())
        expected = invocations_from_output(accepted, messages, rules)
        config = default_eval_config()
    gating = eval_metrics(config, rules)
    views = [run_view(out, message) for out in outputs]
    runs = []
    for i, out in enumerate(outputs):
        record = score_output(out, messages, expected or [], gating, rules)
        if record.error is None:
            extra = agents_cli_metrics(ref, grades[i] if i < len(grades) else None, len(record.actual))
            metrics = record.metrics + extra
            record = dataclasses.replace(record, expected=tuple(expected) if expected else None, metrics=metrics,
                                         status=final_status(m.status for m in metrics))
        runs.append(record)
    results = aggregate(runs)
    status, reason = case_verdict(runs, results)
    shown = shown_index(runs)
    trace = trace_from_output(views[shown], messages)
    diff = None
    if status is not CaseStatus.ERROR:
        diff = diff_case(baseline.trace, trace, baseline.criteria, ref.id, baseline.sources)
        if ref.baseline is None:  # what the run did is shown; nothing was expected, so nothing diverges
            layers = tuple(dataclasses.replace(layer, summary="new: nothing accepted yet") if layer.status == "changed" else layer
                           for layer in diff.layers)
            turns = tuple(dataclasses.replace(turn, trajectory_matches=None) for turn in diff.turns)  # nothing to match yet
            diff = dataclasses.replace(diff, divergences=(), layers=layers, turns=turns, notes=(*diff.notes, NEW))
            if status not in (CaseStatus.FAILED, CaseStatus.FLAKY):
                status, reason = CaseStatus.NEW, NEW
        else:
            diff = explain_scored(diff, results, runs[shown])
            if mode == "replay" and status is CaseStatus.PASSED and replay_failed(diff):
                first = diff.first_divergence
                status, reason = CaseStatus.FAILED, f"replay: {first.summary if first else 'the run differs from its baseline'}"
    layers = layer_summaries(diff) if ref.baseline is not None else ()
    result = case_result(ref, agent, mode, status, metrics=results, error=reason, runs=tuple(runs), layers=layers,
                         scored_as=None if status is CaseStatus.ERROR else rules.label, usage=case_usage(outputs))
    return CaseRun(ref, result, agent, diff, baseline, trace, tuple(outputs), shown)


def _agent_error(out: RunOutput) -> RunOutput:
    """A run one of whose events carries ADK's error (`error_code`, `error_message`: a model that
    stopped for safety, say) failed, as `eval generate` fails it ("Agent returned an error: …")."""
    if out.error is not None:
        return out
    for event in out.events:
        if event.get("author") != "user" and (event.get("error_code") or event.get("error_message")):
            said = ": ".join(str(event[key]) for key in ("error_code", "error_message") if event.get(key))
            return out.model_copy(update={"error": f"Agent returned an error: {said}"})
    return out


def _score_scenario(ref: DatasetCaseRef, agent: AgentRef, outputs: Sequence[RunOutput], grades: Sequence[Optional[dict[str, Any]]],
                    rules) -> CaseRun:
    """A played scenario: its turns are the simulator's, so nothing in them was expected and nothing
    diverges; the eval config's metrics with a threshold decide, and with no baseline it is new."""
    runs = []
    for i, out in enumerate(outputs):
        record = score_output(out, messages_of(ref, out), None, eval_metrics(EvalConfig(criteria={}), rules), rules)
        if record.error is None:
            metrics = record.metrics + agents_cli_metrics(ref, grades[i] if i < len(grades) else None, len(record.actual))
            record = dataclasses.replace(record, metrics=metrics, status=final_status(m.status for m in metrics))
        runs.append(record)
    results = aggregate(runs)
    status, reason = case_verdict(runs, results)
    shown = shown_index(runs)
    trace = trace_from_output(outputs[shown], messages_of(ref, outputs[shown]))
    baseline = load_baseline(ref)
    diff = None
    if status is not CaseStatus.ERROR:
        diff = diff_case(baseline.trace.model_copy(update={"turns": ()}), trace, baseline.criteria, ref.id, baseline.sources)
        diff = dataclasses.replace(diff, divergences=(), notes=(*diff.notes, SIMULATED))
        if ref.baseline is None and status not in (CaseStatus.FAILED, CaseStatus.FLAKY):
            status, reason = CaseStatus.NEW, NEW
    result = case_result(ref, agent, "live", status, metrics=results, error=reason, runs=tuple(runs),
                         scored_as=None if status is CaseStatus.ERROR else rules.label, usage=case_usage(outputs))
    return CaseRun(ref, result, agent, diff, baseline, trace, tuple(outputs), shown)


def baseline_recordings(ref: DatasetCaseRef) -> list[dict[str, Any]]:
    """The accepted run's model calls (from `agentdiff_llm_requests`) and tool calls (from its events)
    as the recordings a replay is answered from; none when it has no model calls recorded."""
    exchanges = (ref.baseline.model_extra or {}).get(REQUESTS_KEY) if ref.baseline is not None else None
    if not isinstance(exchanges, list) or not exchanges:
        return []
    recordings = [{"user_message_index": 0, "agent_name": x.get("agent", ""),
                   "llm_recording": {"llm_request": x.get("request") or {}, "llm_responses": x.get("responses") or []}}
                  for x in exchanges if isinstance(x, dict) and x.get("responses")]
    for event in accepted_events(ref):
        for part in (event.get("content") or {}).get("parts") or []:
            response = part.get("function_response") if isinstance(part, dict) else None
            if isinstance(response, dict):
                call = {key: response[key] for key in ("id", "name") if response.get(key) is not None}
                recordings.append({"user_message_index": 0, "agent_name": event.get("author", ""),
                                   "tool_recording": {"tool_call": call, "tool_response": response}})
    return recordings


