"""Model calls that survive rate limits and transient failures, in the worker.

* Retries: a call that fails before its first response with 429 (`RESOURCE_EXHAUSTED`), 408, 500,
  502, 503, 504 or a dropped connection is made again (up to `ATTEMPTS` failures other than rate limits,
  `RATE_LIMITED_ATTEMPTS` attempts in all; the run's timeout bounds it too), after the server's
  `Retry-After` (or its `RetryInfo` delay) when it gives one, else an exponential backoff with full
  jitter. A call that still fails says which call it was, how many attempts it took and the last error.
* Adaptive concurrency: the runs of a worker share one limit per model. It starts open; a 429 halves
  it (from the calls then in flight, at most once per `COOL_DOWN` seconds, so one burst of 429s is
  one step), each success raises it by 1/limit (about one more call per round). So a large `--jobs`
  finds the quota's level instead of becoming a wall of errors.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import re
import time
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Optional

ATTEMPTS = 6
#: A rate limit clears as the quota refills: it is waited out longer than other failures.
RATE_LIMITED_ATTEMPTS = 20
BASE_DELAY = 1.0
MAX_DELAY = 30.0
COOL_DOWN = 0.5
_TRANSIENT_CODES = {408, 429, 500, 502, 503, 504}
_CONNECTION_ERRORS = {"ConnectError", "ConnectTimeout", "ReadError", "ReadTimeout", "WriteError", "RemoteProtocolError",
                      "PoolTimeout", "ServerDisconnectedError", "ClientConnectionError", "ClientOSError"}


class ModelCallFailed(RuntimeError):
    """A model call that failed for good: which call, after how many attempts, the last error."""


def transient(exc: BaseException) -> Optional[str]:
    """How a transient failure reads ("429 RESOURCE_EXHAUSTED", "ConnectError"), or None for one
    that another attempt would not change."""
    code = getattr(exc, "code", None)
    if isinstance(code, int) and code in _TRANSIENT_CODES:
        return f"{code} {getattr(exc, 'status', '') or ''}".strip()
    if any(cls.__name__ in _CONNECTION_ERRORS for cls in type(exc).__mro__) or isinstance(exc, ConnectionError):
        return type(exc).__name__  # httpx's and aiohttp's connection errors (and their subclasses)
    return None


def retry_after(exc: BaseException) -> Optional[float]:
    """The wait the server asked for: a `Retry-After` header (seconds or a date), or the `retryDelay`
    of a `RetryInfo` in the error's details ("7s")."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value) if value else None
            if when is not None:
                return max(0.0, when.timestamp() - time.time())
    found = re.search(r'"retryDelay"\s*:\s*"([\d.]+)s"', json.dumps(getattr(exc, "details", None), default=str))
    return float(found.group(1)) if found else None


def backoff(attempt: int, asked: Optional[float]) -> float:
    """Seconds to wait before attempt `attempt + 1`: what the server asked (plus a little jitter, so
    the callers it turned away do not return at once), else full-jitter exponential backoff."""
    if asked is not None:
        return asked + random.uniform(0, max(0.1, asked * 0.5))
    return random.uniform(0, min(MAX_DELAY, BASE_DELAY * 2 ** (attempt - 1)))


class Limiter:
    """Calls in flight for one model: additive increase, multiplicative decrease on 429."""

    def __init__(self) -> None:
        self.limit = float("inf")
        self.in_flight = 0
        self._changed = asyncio.Condition()
        self._last_cut = 0.0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self._changed:
            await self._changed.wait_for(lambda: self.in_flight < self.allowed)
            self.in_flight += 1
        try:
            yield
        finally:
            async with self._changed:
                self.in_flight -= 1
                self._changed.notify_all()

    @property
    def allowed(self) -> float:
        return self.limit if self.limit == float("inf") else max(1, int(self.limit))

    def throttled(self) -> None:
        now = time.monotonic()
        if now - self._last_cut >= COOL_DOWN:
            self._last_cut = now
            self.limit = max(1.0, min(self.limit, self.in_flight) / 2)

    def succeeded(self) -> None:
        if self.limit != float("inf"):
            self.limit += 1 / self.limit


_LIMITERS: dict[str, Limiter] = {}


def limiter_for(model: str) -> Limiter:
    if model not in _LIMITERS:
        _LIMITERS[model] = Limiter()
    return _LIMITERS[model]


async def call_with_retries(call: Any, model: str, what: str, exchange: Any) -> AsyncIterator[Any]:
    """Yield the responses of `call()` (an async generator of responses), retrying transient failures
    that come before the first response; `exchange.attempts` counts the attempts made."""
    limiter = limiter_for(model)
    last, attempt, failures = "", 0, 0
    while True:
        attempt += 1
        exchange.attempts = attempt
        started = False
        try:
            async with limiter.slot():
                async for response in call():
                    started = True
                    yield response
            limiter.succeeded()
            return
        except Exception as exc:
            reason = transient(exc)
            if started or reason is None:
                raise
            said = str(exc).splitlines()[-1] if str(exc) else type(exc).__name__
            last = exchange.last_failure = (said if said.startswith(reason) else f"{reason}: {said}")[:300]
            rate_limited = reason.startswith("429")
            if rate_limited:
                limiter.throttled()
            else:
                failures += 1
            if failures >= ATTEMPTS or attempt >= RATE_LIMITED_ATTEMPTS:
                raise ModelCallFailed(f"{what} failed after {attempt} attempts; the last: {last}") from None
            await asyncio.sleep(backoff(min(attempt, 6), retry_after(exc)))
