"""Judged metrics, computed by ADK's own evaluators in the worker (the app never imports ADK).

A judge job carries the eval case as it is in its file, the judged criteria of its config, and the
actual invocations of one run. Here they become ADK's own objects, rubrics are attached as ADK's
LocalEvalService attaches them, and each metric's evaluator (from ADK's registry) scores the run:
the judge prompt, the parsing of the answer, the aggregation of samples and of invocations are
ADK's. An evaluator that raises is NOT_EVALUATED with the exception as the reason, where ADK logs it.

Around ADK, two things are added without changing what it computes:
* every model call an evaluator makes is answered from the judge cache when the exact request
  (model, contents, config, and which sample of that request it is) was answered before; otherwise it
  is made and its answer stored (one file per request, written atomically);
* each call's answer is kept with the invocation and sample it judged, so the judge's reasons and
  the split of samples can be shown.
"""

from __future__ import annotations

import contextvars
import hashlib
import importlib
import json
import os
import re
import tempfile
from collections import Counter
from typing import Any, Optional

#: Which (invocation, sample) of the run the current judge call is for.
_SLOT: contextvars.ContextVar[Optional[tuple[int, int]]] = contextvars.ContextVar("agentdiff_judge_slot", default=None)
#: The judge calls of the job this task runs (a worker may run several judge jobs at once).
_CALLS: contextvars.ContextVar[Optional["JudgeCalls"]] = contextvars.ContextVar("agentdiff_judge_calls", default=None)
_ROUTED: list[bool] = []
#: The judge calls of each judge job running in this worker, by `id(request)`: what a timed-out one waited for.
JUDGING: dict[int, "JudgeCalls"] = {}
_CALL_ID = re.compile(r"adk-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class JudgeCalls:
    """The judge calls of one job: answered from the cache or made, and recorded."""

    def __init__(self, cache_dir: Optional[str]):
        self.cache_dir = cache_dir
        self.seen: Counter[str] = Counter()
        self.calls: list[dict[str, Any]] = []
        self.asking = ""  # the model of the judge call in flight

    def waiting_on(self) -> str:
        """What a judge job that ran out of time was doing."""
        model = self.asking or "its model"
        return f"waiting for the judge ({model}; {len(self.calls)} judge calls answered)"

    def key(self, model: str, request: Any) -> str:
        config = request.config.model_dump(mode="json", exclude_none=True) if request.config is not None else None
        if isinstance(config, dict):
            config.pop("http_options", None)  # retry settings: how to ask, not what is asked
        contents = [c.model_dump(mode="json", exclude_none=True) for c in request.contents]
        base = json.dumps({"model": model, "contents": contents, "config": config}, sort_keys=True, default=str)
        base = _CALL_ID.sub("adk-<id>", base)  # ids ADK draws at random for each run's function calls
        sample = self.seen[base]  # the same request asked again (num_samples) is another sample
        self.seen[base] += 1
        return hashlib.sha256(f"{base}\n{sample}".encode()).hexdigest()

    def cached(self, key: str) -> Optional[str]:
        if not self.cache_dir:
            return None
        try:
            with open(os.path.join(self.cache_dir, key[:2], key + ".json"), encoding="utf-8") as handle:
                return handle.read()
        except (OSError, UnicodeDecodeError):
            return None

    def store(self, key: str, answer: str) -> None:
        if not self.cache_dir:
            return
        folder = os.path.join(self.cache_dir, key[:2])
        try:
            os.makedirs(folder, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(answer)
            os.replace(temporary, os.path.join(folder, key + ".json"))
        except OSError:
            pass  # a cache that cannot be written costs a call next time, nothing else

    def record(self, model: str, response: Any, cached: bool) -> None:
        text = None
        if response.content is not None and response.content.parts:
            text = "".join(part.text for part in response.content.parts if part.text and not part.thought)
        usage = response.usage_metadata
        self.calls.append({
            "slot": _SLOT.get(), "model": model, "cached": cached, "text": text,
            "error": response.error_message or response.error_code,
            "prompt_tokens": (usage.prompt_token_count or 0) if usage and not cached else 0,
            "output_tokens": (usage.candidates_token_count or 0) if usage and not cached else 0,
        })


def _answer(text: str, response_class: type) -> Any:
    """A cached answer, or None when the entry is unreadable (truncated, garbled, another schema): a
    miss, so the judge is asked again and the entry replaced — one bad file never disables the judge."""
    try:
        response = response_class.model_validate_json(text)
    except ValueError:  # pydantic's ValidationError, bad JSON
        return None
    return response if response.content is not None and response.content.parts else None


def _caching_class(llm_class: type) -> type:
    """A subclass of the judge's model class whose calls go through the job's `JudgeCalls`."""

    class Judge(llm_class):  # type: ignore[misc, valid-type]
        async def generate_content_async(self, llm_request: Any, stream: bool = False):  # type: ignore[override]
            from google.adk.models.llm_response import LlmResponse

            calls = _CALLS.get()
            if calls is None:  # not a judge job's call
                async for response in super().generate_content_async(llm_request, stream):
                    yield response
                return
            calls.asking = self.model
            key = calls.key(self.model, llm_request)
            hit = calls.cached(key)
            response = _answer(hit, LlmResponse) if hit is not None else None
            if response is not None:
                calls.record(self.model, response, cached=True)
                yield response
                return
            agen = super().generate_content_async(llm_request, stream)
            try:
                async for response in agen:
                    calls.record(self.model, response, cached=False)
                    if not response.error_code and not response.partial:
                        calls.store(key, response.model_dump_json(exclude_none=True))
                    yield response
            finally:
                await agen.aclose()

    Judge.__name__ = Judge.__qualname__ = f"Judged{llm_class.__name__}"
    return Judge


def _route_judges() -> None:
    """Models the evaluators build (through ADK's registry) answer through the judge cache."""
    if _ROUTED:
        return
    from google.adk.models.registry import LLMRegistry

    resolve = LLMRegistry.resolve
    made: dict[type, type] = {}

    def judged(model: str) -> type:
        llm_class = resolve(model)
        if llm_class not in made:
            made[llm_class] = _caching_class(llm_class)
        return made[llm_class]

    LLMRegistry.resolve = staticmethod(judged)  # type: ignore[method-assign]
    _ROUTED.append(True)


def _watch_samples(evaluator: Any, actual: list[Any], samples: list[list[dict[str, Any]]]) -> None:
    """For LLM-as-a-judge evaluators: note which invocation and sample each judge call is for, and
    each sample's score."""
    single = getattr(evaluator, "_evaluate_single_sample", None)
    if single is None:
        return

    async def one_sample(llm_request: Any, actual_invocation: Any, expected: Any) -> Any:
        index = next((i for i, inv in enumerate(actual) if inv is actual_invocation), -1)
        sample = len(samples[index]) if index >= 0 else 0
        entry: dict[str, Any] = {"score": None}
        if index >= 0:
            samples[index].append(entry)
        token = _SLOT.set((index, sample))
        try:
            result = await single(llm_request, actual_invocation, expected)
        finally:
            _SLOT.reset(token)
        entry["score"] = result.score
        return result

    evaluator._evaluate_single_sample = one_sample


def _attach_rubrics(eval_case: Any, actual: list[Any]) -> None:
    """Case-level rubrics to every actual invocation, then each expected invocation's to its actual
    one, as ADK's LocalEvalService does before scoring."""
    service = importlib.import_module("google.adk.evaluation.local_eval_service")
    to_all = getattr(service, "_copy_eval_case_rubrics_to_actual_invocations", None)
    per_turn = getattr(service, "_copy_invocation_rubrics_to_actual_invocations", None)
    if to_all is not None and per_turn is not None:
        to_all(eval_case, actual)
        per_turn(eval_case.conversation, actual)
        return
    for invocation in actual:  # ADK versions without the helpers: the same rule
        invocation.rubrics = list(invocation.rubrics or []) + list(eval_case.rubrics or [])
    for expected, invocation in zip(eval_case.conversation or [], actual):
        invocation.rubrics = list(invocation.rubrics or []) + list(expected.rubrics or [])


def _with_tool_objects(actual: list[Any]) -> None:
    """App details carry each agent's tools as genai `Tool`s at run time (judges read their
    `function_declarations`); from JSON they are dicts: make them `Tool`s again."""
    from google.genai import types

    for invocation in actual:
        for details in (invocation.app_details.agent_details.values() if invocation.app_details else ()):
            details.tool_declarations = [types.Tool.model_validate(t) if isinstance(t, dict) else t for t in details.tool_declarations]


def _usage_by_model(calls: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Tokens the judge calls spent, per model (answers from the cache spent none)."""
    usage: dict[str, dict[str, int]] = {}
    for call in calls:
        entry = usage.setdefault(call["model"], {"input": 0, "output": 0})
        entry["input"] += call["prompt_tokens"]
        entry["output"] += call["output_tokens"]
    return usage


def _status(value: Any) -> str:
    name = getattr(value, "name", str(value)).lower()
    return name if name in {"passed", "failed", "not_evaluated", "informational"} else "not_evaluated"


async def judge(request: dict[str, Any]) -> dict[str, Any]:
    """Score `request["actual"]` with each judged metric of `request["criteria"]`, as ADK does."""
    from google.adk.evaluation.eval_case import EvalCase, Invocation
    from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
    from google.adk.evaluation.metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY

    calls = JudgeCalls(request.get("cache_dir"))
    _route_judges()
    _CALLS.set(calls)
    JUDGING[id(request)] = calls
    eval_case = EvalCase.model_validate(request["eval_case"])
    config = EvalConfig.model_validate({"criteria": request["criteria"]})
    metrics = [m for m in get_eval_metrics_from_config(config) if m.metric_name in request["criteria"]]
    results: dict[str, Any] = {}
    for metric in metrics:
        actual = [Invocation.model_validate(inv) for inv in request["actual"]]
        _with_tool_objects(actual)
        _attach_rubrics(eval_case, actual)
        samples: list[list[dict[str, Any]]] = [[] for _ in actual]
        first_call = len(calls.calls)
        try:
            evaluator = DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(metric)
            _watch_samples(evaluator, actual, samples)
            outcome = evaluator.evaluate_invocations(
                actual_invocations=actual, expected_invocations=eval_case.conversation,
                conversation_scenario=eval_case.conversation_scenario,
            )
            if hasattr(outcome, "__await__"):
                outcome = await outcome
        except Exception as exc:  # as ADK's LocalEvalService: the metric is not evaluated
            results[metric.metric_name] = {"score": None, "status": "not_evaluated", "per_invocation": [],
                                           "reason": f"{type(exc).__name__}: {exc}", "calls": calls.calls[first_call:],
                                           "usage": _usage_by_model(calls.calls[first_call:])}
            continue
        mine = calls.calls[first_call:]
        per_invocation = []
        for index, result in enumerate(outcome.per_invocation_results):
            texts = [c for c in mine if c["slot"] and c["slot"][0] == index]
            for sample, entry in enumerate(samples[index] if index < len(samples) else []):
                said = [c for c in texts if c["slot"][1] == sample]
                entry["text"] = said[0]["text"] if said else None
                entry["cached"] = bool(said) and all(c["cached"] for c in said)
            per_invocation.append({
                "score": result.score, "status": _status(result.eval_status),
                "rubric_scores": [r.model_dump(mode="json", exclude_none=True) for r in result.rubric_scores or []],
                "samples": samples[index] if index < len(samples) else [],
            })
        results[metric.metric_name] = {
            "score": outcome.overall_score, "status": _status(outcome.overall_eval_status), "per_invocation": per_invocation,
            "rubric_scores": [r.model_dump(mode="json", exclude_none=True) for r in outcome.overall_rubric_scores or []],
            "calls": [c for c in mine if not c["slot"]],  # calls not tied to one sample (hallucinations_v1)
            "judge_calls": len(mine), "cache_hits": sum(1 for c in mine if c["cached"]),
            "prompt_tokens": sum(c["prompt_tokens"] for c in mine), "output_tokens": sum(c["output_tokens"] for c in mine),
            "usage": _usage_by_model(mine),
        }
        if outcome.overall_score is None and not any(c.get("text") for c in mine) and not _credentials():
            results[metric.metric_name]["reason"] = NO_CREDENTIALS
    return results


#: Why a judge gave no score when its model could not be reached for want of credentials.
NO_CREDENTIALS = ("the judge could not call its model: no Gemini credentials are set (GOOGLE_API_KEY, or "
                  "GOOGLE_GENAI_USE_ENTERPRISE=TRUE with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, in the environment or "
                  "the agent's .env); answers kept in .agentdiff/judge-cache/ need none")


def _credentials() -> bool:
    """Whether the judge's model client has credentials to call Gemini with (as google-genai looks for them)."""
    env = os.environ
    if env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY"):
        return True
    switched = any((env.get(name) or "").strip().lower() in ("1", "true", "yes") for name in ("GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_GENAI_USE_VERTEXAI"))
    return switched and bool(env.get("GOOGLE_CLOUD_PROJECT") or env.get("GOOGLE_APPLICATION_CREDENTIALS"))
