"""`agentdiff receive [FOLDER] [--host H] [--port 4318]`: an OTLP/HTTP trace receiver. Point `adk web`'s
(or any ADK app's) OTLP exporter at it (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:4318/v1/traces`),
talk to the agent, and each export it sends is appended to FOLDER/traces.json as one OTLP/JSON line, ready
for `agentdiff import` and `agentdiff score`. Bound to 127.0.0.1 unless `--host` says otherwise; a request
must name this server by its own address, and a browser's must come from it (serve's rules: no DNS
rebinding, no other web page posting to it)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Callable, TextIO

from .errors import EXIT_OK
from .serve import exposure_warning, server_names, url_of, wildcard

NAME = "receive"
MAX_BODY = 64 * 1024 * 1024
TRACES_FILE = "traces.json"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="receive OpenTelemetry traces over OTLP/HTTP (from adk web, an ADK app) into a folder, on 127.0.0.1:4318",
        description="An OTLP/HTTP receiver (POST /v1/traces, protobuf or JSON, gzip or not): each export is appended to "
        "FOLDER/traces.json as one OTLP/JSON line, as a collector's file exporter writes them, for `agentdiff import` and "
        "`agentdiff score`. Bound to 127.0.0.1 unless --host names another address.",
    )
    parser.add_argument("folder", nargs="?", type=Path, default=Path("traces"), metavar="FOLDER", help="where traces go (default: traces)")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=4318, help="the port (default 4318, OTLP/HTTP's)")


def _append(path: Path, line: str) -> None:
    """One line at the end of the file, in one write (two exports arriving together never interleave)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        os.write(fd, (line + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def make_app(folder: Path, host: str, port: int, say: Callable[[str], None]):
    from aiohttp import web
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    from agentdiff.core.formats.otlp.spans import export_line
    from agentdiff.core.traces.otlp import content_left_out

    names = server_names(host, port)

    @web.middleware
    async def guard(request: web.Request, handler):
        origin = request.headers.get("Origin")
        if request.host not in names or (origin is not None and origin.split("://", 1)[-1] not in names):
            raise web.HTTPForbidden(text="agentdiff receive: not this server's address")
        return await handler(request)

    async def traces(request: web.Request) -> web.Response:
        kind = request.content_type
        if kind not in ("application/x-protobuf", "application/json"):
            raise web.HTTPUnsupportedMediaType(text="agentdiff receive: OTLP/HTTP is application/x-protobuf or application/json")
        if request.content_length is not None and request.content_length > MAX_BODY:
            raise web.HTTPRequestEntityTooLarge(max_size=MAX_BODY, actual_size=request.content_length)
        try:  # aiohttp has inflated a gzip or deflate body already, within client_max_size
            line, spans, conversations = export_line(await request.read(), kind == "application/json")
        except (ValueError, OSError) as exc:
            raise web.HTTPBadRequest(text=f"agentdiff receive: {exc}") from None
        count = len(spans)
        if count:  # an export with no span adds nothing
            _append(folder / TRACES_FILE, line)
        left_out = content_left_out(spans)
        say(f"received {count} span{'s' if count != 1 else ''}" + (f" of {', '.join(conversations[:5])}" if conversations else "")
            + f" → {folder / TRACES_FILE}" + (f"; their model calls hold no message content, so they cannot become cases: {left_out}"
                                               if left_out else ""))
        if kind == "application/json":
            return web.json_response({})
        return web.Response(body=ExportTraceServiceResponse().SerializeToString(), content_type="application/x-protobuf")

    async def other_signal(request: web.Request) -> web.Response:
        """Metrics and logs (an exporter given OTEL_EXPORTER_OTLP_ENDPOINT sends all three): taken, not kept."""
        await request.read()
        if request.content_type == "application/json":
            return web.json_response({})
        return web.Response(body=b"", content_type="application/x-protobuf")

    app = web.Application(middlewares=[guard], client_max_size=MAX_BODY)
    app.router.add_post("/v1/traces", traces)
    app.router.add_post("/v1/metrics", other_signal)
    app.router.add_post("/v1/logs", other_signal)
    return app


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from aiohttp import web

    warning = exposure_warning(args.host)
    if warning:
        print(warning.replace("run your agents, accept and edit baselines", "send traces into the folder"), file=err)
    args.folder.mkdir(parents=True, exist_ok=True)
    say = lambda what: print(what, file=err, flush=True)  # noqa: E731
    app = make_app(args.folder, args.host, args.port, say)

    def listening(_said: str) -> None:  # called once the socket listens (aiohttp's own banner, replaced)
        where = url_of("127.0.0.1" if wildcard(args.host) else args.host, args.port)
        say(f"receiving OTLP traces on {where}/v1/traces into {args.folder}/{TRACES_FILE} (Ctrl+C stops); point an exporter at it: "
            f"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={where}/v1/traces")

    web.run_app(app, host=args.host or None, port=args.port, print=listening, handle_signals=True)
    return EXIT_OK
