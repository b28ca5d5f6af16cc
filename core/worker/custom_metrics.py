"""agents-cli's local custom metrics, run in the project's interpreter as agents-cli runs them.

Each metric's source (`custom_function`, or the text of its `custom_function_file`) is executed once
per worker process, in a fresh namespace, as agents-cli executes it once when it loads the config (so
what it sets up at import, a client per thread say, serves every case), and must define
`evaluate(instance)`; what it returns is read as the agents-cli SDK reads it: a dict with a `score`
(and an optional `explanation`), a bare number (a bool counts), or the SDK's `EvalCaseMetricResult`. A metric that cannot load, raises
or returns anything else is an error for that case, with the file and line where it happened; the
other metrics still run. A transient failure (a connection error, a timeout, HTTP 408, 429 or 5xx) is
tried again as agents-cli tries it. The calls run on a pool of threads (as agents-cli's SDK runs them), so a slow
one is stopped by the job's timeout like any run.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import math
import random
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional, Union

#: Each metric's `evaluate` (or the error loading it gave), by its name, file and source.
_LOADED: dict[tuple[str, str, str], Union[Callable[[Any], Any], dict[str, Any]]] = {}
_LOADING = threading.Lock()
_THREADS: list[ThreadPoolExecutor] = []
THREADS = 32  # calls graded at once in a worker (the SDK's own pool allows 100, at 15 a second)
# agents-cli's retry of a transient failure: at most 5 tries within 120 s, waits of up to 8 s between
TRIES, MAX_SECONDS, MAX_WAIT = 5, 120.0, 8.0
RETRIED_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


def _executor() -> ThreadPoolExecutor:
    if not _THREADS:
        _THREADS.append(ThreadPoolExecutor(THREADS, thread_name_prefix="agentdiff-metric"))
    return _THREADS[0]


async def grade(request: dict[str, Any]) -> dict[str, Any]:
    """name → {score, explanation, error_message} for each metric of the request (with how many
    model calls it made through google-genai, how many of them the judge cache answered, and their
    answers); its cloud metrics are sent to Google's eval service meanwhile (`cloud_metrics`). The
    request's `judge_answers` (metric → key → answer, from a baseline) answer first; in a `replay`
    they alone do."""
    from .cloud_metrics import grade_cloud
    from .genai_cache import NOT_RECORDED, cached_calls

    cloud = asyncio.get_running_loop().run_in_executor(_executor(), grade_cloud, request)  # beside the local ones
    results: dict[str, Any] = {}
    recorded = request.get("judge_answers") or {}
    for metric in request.get("metrics") or []:
        with cached_calls(request.get("cache_dir"), recorded.get(metric["name"]), bool(request.get("replay"))) as calls:
            context = contextvars.copy_context()  # the cache's, as to_thread carries it
            results[metric["name"]] = await asyncio.get_running_loop().run_in_executor(
                _executor(), context.run, _one, metric, copy.deepcopy(request.get("instance") or {}))  # each call its own, as the SDK
        if calls.calls:
            results[metric["name"]] |= {"judge_calls": len(calls.calls), "cache_hits": sum(c["cached"] for c in calls.calls)}
        if calls.refused:  # even where the metric caught the refusal and scored anyway
            result = results[metric["name"]]
            results[metric["name"]] = {"score": None, "explanation": None, "error_message": NOT_RECORDED,
                                       **({"where": result["where"]} if result.get("where") else {})}
        if calls.answers:  # what accepting this run records for replay
            results[metric["name"]]["judge_answers"] = calls.answers
    return results | await cloud


def _load(metric: dict[str, Any], filename: str) -> Union[Callable[[Any], Any], dict[str, Any]]:
    """The metric's `evaluate`, executed once per worker; or the error result its loading gave."""
    key = (metric["name"], filename, metric.get("source") or "")
    with _LOADING:
        if key not in _LOADED:
            namespace: dict[str, Any] = {}
            try:
                exec(compile(key[2], filename, "exec"), namespace)  # noqa: S102 - the project's own metric
                evaluate = namespace.get("evaluate")
                _LOADED[key] = evaluate if callable(evaluate) else _error(
                    f"custom_function for metric '{metric['name']}' must define a callable named 'evaluate(instance)'")
            except BaseException as exc:  # a syntax error, or one at import
                _LOADED[key] = _error(f"Failed to load custom_function for metric '{metric['name']}': {type(exc).__name__}: {exc}", exc, filename)
        return _LOADED[key]


def _one(metric: dict[str, Any], instance: dict[str, Any]) -> dict[str, Any]:
    filename = metric.get("file") or f"<custom_function {metric['name']}>"
    evaluate = _load(metric, filename)
    if isinstance(evaluate, dict):
        return dict(evaluate)
    started, attempt = time.monotonic(), 1
    while True:
        try:
            value = evaluate(copy.deepcopy(instance) if attempt > 1 else instance)
            break
        except Exception as exc:  # the metric's own failure: a transient one is tried again, as agents-cli does
            if not _transient(exc) or attempt >= TRIES or time.monotonic() - started > MAX_SECONDS:
                return _error(f"CustomFunctionError(evaluate): {exc}", exc, filename) | ({"retried": attempt - 1} if attempt > 1 else {})
            time.sleep(random.uniform(0, min(MAX_WAIT, 2.0 ** (attempt - 1))))  # full jitter: every worker calls one endpoint
            attempt += 1
            from .genai_cache import new_attempt

            new_attempt()
        except BaseException as exc:  # SystemExit, KeyboardInterrupt from the metric: never tried again
            return _error(f"CustomFunctionError(evaluate): {exc}", exc, filename)
    return _read(value, evaluate) | ({"retried": attempt - 1} if attempt > 1 else {})


def _transient(exc: Optional[BaseException]) -> bool:
    """A failure agents-cli tries again (`with_transient_retry`): a connection error or a timeout, or
    an HTTP status of 408, 429 or 5xx that is retried, anywhere in the exception's chain."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return True
        code = getattr(exc, "code", None) or getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
        if isinstance(code, int) and code in RETRIED_STATUSES:
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _read(value: Any, function: Any) -> dict[str, Any]:
    if type(value).__name__ == "EvalCaseMetricResult" and hasattr(value, "score"):  # the SDK's own result, taken as it is
        if getattr(value, "error_message", None):
            return _error(str(value.error_message))
        value = {"score": value.score, "explanation": getattr(value, "explanation", None)}
    if isinstance(value, dict) and "score" in value:
        score, explanation = value["score"], value.get("explanation")
    elif isinstance(value, (int, float)):
        score, explanation = value, None
    else:
        return _error(f"CustomFunctionError({function!r}): Returned unexpected type {type(value)}")
    if explanation is not None and not isinstance(explanation, str):
        return _error(f"the explanation must be text, not {type(explanation).__name__}")
    if score is None:
        return {"score": None, "explanation": explanation, "error_message": None}
    try:
        number = float(score)
    except (TypeError, ValueError):
        return _error(f"the score must be a number, not {score!r}")
    return {"score": number if math.isfinite(number) else str(number), "explanation": explanation, "error_message": None}


def _error(message: str, exc: Optional[BaseException] = None, filename: Optional[str] = None) -> dict[str, Any]:
    out: dict[str, Any] = {"score": None, "explanation": None, "error_message": message}
    if exc is not None and filename is not None:
        where = _where(exc, filename)
        if where is not None:
            out["where"] = where
            out["traceback"] = "".join(traceback.format_exception(exc)[-12:])
    return out


def _where(exc: BaseException, filename: str) -> Optional[str]:
    """`file:line` of the innermost frame in the metric's own source."""
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        return f"{filename}:{exc.lineno}"
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == filename]
    return f"{filename}:{frames[-1].lineno}" if frames else None
