"""A fake Gemini API on loopback, for tests: agents, judges and simulated users reach it through
google-genai's real HTTP client (`GOOGLE_GEMINI_BASE_URL`, a dummy `GOOGLE_API_KEY`).

It speaks `POST /{version}/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`.
Each test scripts it with `respond(call) -> Reply`: text, function calls, an HTTP error (429, 503…,
with `Retry-After`), a delay, or a malformed body. Every call is recorded in `server.calls`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator, Optional
from contextlib import contextmanager

_PATH = re.compile(r"^/(?P<version>[^/]+)/models/(?P<model>[^:/]+):(?P<method>generateContent|streamGenerateContent)")


@dataclass
class Call:
    """One request the server received."""

    model: str
    body: dict[str, Any]
    stream: bool
    started: float = 0.0

    @property
    def prompt(self) -> str:
        """All the text of the request's contents and system instruction, joined."""
        texts = []
        for content in [self.body.get("systemInstruction") or {}, *(self.body.get("contents") or [])]:
            texts += [part.get("text", "") for part in content.get("parts") or [] if isinstance(part, dict)]
        return "\n".join(texts)

    @property
    def last_user_text(self) -> str:
        users = [c for c in self.body.get("contents") or [] if c.get("role") == "user"]
        parts = users[-1].get("parts") if users else []
        return "".join(part.get("text", "") for part in parts or [] if isinstance(part, dict))


@dataclass
class Reply:
    """What the server answers to one call."""

    text: Optional[str] = None
    function_calls: list[dict[str, Any]] = field(default_factory=list)  # [{"name": …, "args": {…}}]
    status: int = 200
    retry_after: Optional[float] = None
    delay: float = 0.0
    malformed: bool = False
    prompt_tokens: int = 10
    output_tokens: int = 5

    def body(self, model: str) -> dict[str, Any]:
        parts: list[dict[str, Any]] = [{"functionCall": call} for call in self.function_calls]
        if self.text is not None:
            parts.append({"text": self.text})
        return {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": self.prompt_tokens, "candidatesTokenCount": self.output_tokens,
                              "totalTokenCount": self.prompt_tokens + self.output_tokens},
            "modelVersion": model,
        }


_STATUS_NAMES = {400: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # as many connections at once as a pool of runs opens (the default, 5, queues them by seconds)


class LoopbackFake:
    """A fake HTTP service on loopback, served from a thread: `start()`, `url`, `close()`. A subclass
    gives `_handler()`."""

    def __init__(self, name: str) -> None:
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, name=name, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self):
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError


class FakeGemini(LoopbackFake):
    def __init__(self, respond: Callable[[Call], Reply]):
        self.respond = respond
        self.calls: list[Call] = []
        self.in_flight = 0
        self.most_in_flight = 0
        super().__init__("fake-gemini")

    @property
    def env(self) -> dict[str, str]:
        """The environment that points google-genai (agents, judges, simulators) here."""
        return {"GOOGLE_GEMINI_BASE_URL": self.url, "GOOGLE_API_KEY": "fake-key", "GOOGLE_GENAI_USE_VERTEXAI": "0"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                match = _PATH.match(self.path)
                size = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(size) if size else b""
                if match is None:
                    return self._send(404, {"error": {"code": 404, "message": f"no route {self.path}", "status": "NOT_FOUND"}})
                call = Call(match["model"], json.loads(raw or b"{}"), match["method"] == "streamGenerateContent", time.monotonic())
                with fake._lock:
                    fake.calls.append(call)
                    fake.in_flight += 1
                    fake.most_in_flight = max(fake.most_in_flight, fake.in_flight)
                try:
                    reply = fake.respond(call)
                    if reply.delay:
                        time.sleep(reply.delay)
                    self._answer(call, reply)
                finally:
                    with fake._lock:
                        fake.in_flight -= 1

            def _answer(self, call: Call, reply: Reply) -> None:
                if reply.status != 200:
                    headers = {"Retry-After": f"{reply.retry_after:g}"} if reply.retry_after is not None else {}
                    status = _STATUS_NAMES.get(reply.status, "UNKNOWN")
                    return self._send(reply.status, {"error": {"code": reply.status, "message": f"fake {status}", "status": status}}, headers)
                if reply.malformed:
                    return self._send_raw(200, b'{"candidates": [', "application/json")
                body = reply.body(call.model)
                if call.stream:
                    return self._send_raw(200, b"data: " + json.dumps(body).encode() + b"\r\n\r\n", "text/event-stream")
                return self._send(200, body)

            def _send(self, status: int, body: dict[str, Any], headers: Optional[dict[str, str]] = None) -> None:
                self._send_raw(status, json.dumps(body).encode(), "application/json", headers)

            def _send_raw(self, status: int, data: bytes, kind: str, headers: Optional[dict[str, str]] = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler


@contextmanager
def fake_gemini(respond: Callable[[Call], Reply], monkeypatch=None) -> Iterator[FakeGemini]:
    """A running fake server; with `monkeypatch`, its environment is set for this test (workers
    forked afterwards inherit it)."""
    server = FakeGemini(respond).start()
    try:
        if monkeypatch is not None:
            for key, value in server.env.items():
                monkeypatch.setenv(key, value)
        yield server
    finally:
        server.close()
