"""The judge cache for model calls a local custom metric makes through google-genai (the scaffold's
`response_quality.py` judges with `genai.Client().models.generate_content`).

While a grade job runs, every `generateContent` call google-genai makes is answered from the judge
cache (`.agentdiff/judge-cache/`) when the same request (its path and body, and which repeat of that
request it is) was answered before; otherwise it is made and its answer stored, one file per request,
written atomically. The SDK parses a cached answer as it parses a fresh one (`response.parsed`
included): only the HTTP exchange is skipped. What differs on every run of an agent and is no part of
the question — the times ADK stamps on events and the ids it draws for function calls, which a judge
given the whole trace sees — is left out of the request's key.

Each answer is also kept with the grade (`answers`), so accepting the run records them beside its
baseline; in a replay only those recorded answers are used (never the cache, so a laptop and CI agree),
and a request they do not hold fails the metric, saying why, instead of calling a model.

google-genai is imported here only inside functions: this module runs in workers.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import re
from typing import Any, Iterator, Optional

from .judge import JudgeCalls

_CALLS: contextvars.ContextVar[Optional["GenaiCalls"]] = contextvars.ContextVar("agentdiff_genai_calls", default=None)
_PATCHED: list[bool] = []
# the time ADK stamps on an event, as a judge given the trace sees it (`'event_time': '2026-…Z'`, JSON or repr):
# only that, never a time the agent said
_TIME = re.compile(r"""(event_time\\?['"]?\s*:\s*\\?['"]?)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?""")
_CALL_ID = re.compile(r"adk-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
NOT_RECORDED = ("its judge was asked something the baseline holds no answer to (the metric's prompt, the case's "
                "reference or the run changed since the accept; a case's first accept sets its reference): "
                "run it live and accept the run to record the judge's answers; a replay calls no model")


class NotRecorded(RuntimeError):
    """A replay's judge call whose answer the baseline does not hold."""


class GenaiCalls(JudgeCalls):
    """The google-genai calls of one metric's grading: `recorded` answers (a baseline's, by key) and
    the cache answer them, and every answer given is kept in `answers`."""

    def __init__(self, cache_dir: Optional[str], recorded: Optional[dict[str, Any]] = None, replay: bool = False):
        super().__init__(None if replay else cache_dir)
        self.recorded = recorded or {}
        self.replay = replay
        self.answers: dict[str, Any] = {}
        self.refused = 0  # replayed requests with no recorded answer

    def answer(self, key: str, path: str) -> Optional[str]:
        """The answer already known for the request, or None (in a replay: NotRecorded)."""
        hit = self.recorded.get(key)
        text = json.dumps(hit) if isinstance(hit, dict) else self.cached(key)
        if text is None:
            if self.replay:
                self.refused += 1
                raise NotRecorded(NOT_RECORDED)
            return None
        self.calls.append({"cached": True, "path": path})
        self.kept(key, text)
        return text

    def answered(self, key: str, path: str, body: Optional[str]) -> None:
        self.calls.append({"cached": False, "path": path})
        if body:
            self.store(key, body)
            self.kept(key, body)

    def kept(self, key: str, text: str) -> None:
        try:
            self.answers[key] = json.loads(text)
        except ValueError:  # an answer that is no JSON is not kept for replay
            pass


@contextlib.contextmanager
def cached_calls(cache_dir: Optional[str], recorded: Optional[dict[str, Any]] = None,
                 replay: bool = False) -> Iterator[GenaiCalls]:
    """Within: google-genai's model calls of this context are answered from `recorded`, then the cache
    in `cache_dir` (in a `replay`, from `recorded` only)."""
    calls = GenaiCalls(cache_dir, recorded, replay)
    _patch()
    token = _CALLS.set(calls)
    try:
        yield calls
    finally:
        _CALLS.reset(token)


def new_attempt() -> None:
    """The metric is tried again (a transient failure): its requests count from the first again, so a
    retried question keeps the key a replay asks it by."""
    calls = _CALLS.get()
    if calls is not None:
        calls.seen.clear()


def _key(calls: GenaiCalls, method: str, path: str, body: dict[str, Any]) -> str:
    import hashlib

    base = json.dumps({"method": method, "path": path, "body": body}, sort_keys=True, default=str)
    base = _CALL_ID.sub("adk-<id>", _TIME.sub(r"\1<time>", base))
    sample = calls.seen[base]
    calls.seen[base] += 1
    return hashlib.sha256(f"genai\n{base}\n{sample}".encode()).hexdigest()


def _patch() -> None:
    if _PATCHED:
        return
    try:
        from google.genai import _api_client
    except ImportError:  # no google-genai in this project: nothing can call it
        _PATCHED.append(True)
        return
    client, response_class = _api_client.BaseApiClient, _api_client.SdkHttpResponse
    request, async_request = client.request, client.async_request

    def cached_request(self: Any, http_method: str, path: str, request_dict: dict, http_options: Any = None) -> Any:
        calls = _CALLS.get()
        if calls is None or ":generateContent" not in path:
            return request(self, http_method, path, request_dict, http_options)
        key = _key(calls, http_method, path, request_dict)
        hit = calls.answer(key, path)
        if hit is not None:
            return response_class(headers={}, body=hit)
        answer = request(self, http_method, path, request_dict, http_options)
        calls.answered(key, path, answer.body)
        return answer

    async def cached_async_request(self: Any, http_method: str, path: str, request_dict: dict, http_options: Any = None) -> Any:
        calls = _CALLS.get()
        if calls is None or ":generateContent" not in path:
            return await async_request(self, http_method, path, request_dict, http_options)
        key = _key(calls, http_method, path, request_dict)
        hit = calls.answer(key, path)
        if hit is not None:
            return response_class(headers={}, body=hit)
        answer = await async_request(self, http_method, path, request_dict, http_options)
        calls.answered(key, path, answer.body)
        return answer

    client.request, client.async_request = cached_request, cached_async_request
    _PATCHED.append(True)
