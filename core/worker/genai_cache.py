"""The judge cache for model calls a local custom metric makes through google-genai (the scaffold's
`response_quality.py` judges with `genai.Client().models.generate_content`).

While a grade job runs, every `generateContent` call google-genai makes is answered from the judge
cache (`.agentdiff/judge-cache/`) when the exact request (its path and body, and which repeat of that
request it is) was answered before; otherwise it is made and its answer stored, one file per request,
written atomically. The SDK parses a cached answer as it parses a fresh one (`response.parsed`
included): only the HTTP exchange is skipped.

google-genai is imported here only inside functions: this module runs in workers.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from typing import Any, Iterator, Optional

from .judge import JudgeCalls

_CALLS: contextvars.ContextVar[Optional[JudgeCalls]] = contextvars.ContextVar("agentdiff_genai_calls", default=None)
_PATCHED: list[bool] = []


@contextlib.contextmanager
def cached_calls(cache_dir: Optional[str]) -> Iterator[JudgeCalls]:
    """Within: google-genai's model calls of this context go through the cache in `cache_dir`."""
    calls = JudgeCalls(cache_dir)
    _patch()
    token = _CALLS.set(calls)
    try:
        yield calls
    finally:
        _CALLS.reset(token)


def _key(calls: JudgeCalls, method: str, path: str, body: dict[str, Any]) -> str:
    import hashlib

    base = json.dumps({"method": method, "path": path, "body": body}, sort_keys=True, default=str)
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
        hit = calls.cached(key)
        if hit is not None:
            calls.calls.append({"cached": True, "path": path})
            return response_class(headers={}, body=hit)
        answer = request(self, http_method, path, request_dict, http_options)
        calls.calls.append({"cached": False, "path": path})
        if answer.body:
            calls.store(key, answer.body)
        return answer

    async def cached_async_request(self: Any, http_method: str, path: str, request_dict: dict, http_options: Any = None) -> Any:
        calls = _CALLS.get()
        if calls is None or ":generateContent" not in path:
            return await async_request(self, http_method, path, request_dict, http_options)
        key = _key(calls, http_method, path, request_dict)
        hit = calls.cached(key)
        if hit is not None:
            calls.calls.append({"cached": True, "path": path})
            return response_class(headers={}, body=hit)
        answer = await async_request(self, http_method, path, request_dict, http_options)
        calls.calls.append({"cached": False, "path": path})
        if answer.body:
            calls.store(key, answer.body)
        return answer

    client.request, client.async_request = cached_request, cached_async_request
    _PATCHED.append(True)
