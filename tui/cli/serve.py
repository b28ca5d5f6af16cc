"""`agentdiff serve [PATHS…] [--host H] [--port N]`: the workbench in a browser tab, through
textual-serve: each tab gets the same app as `agentdiff watch` in a process of its own. Bound to
127.0.0.1 unless `--host` says otherwise, with a warning then: anyone who can reach the address can
accept and edit baselines."""

from __future__ import annotations

import argparse
import os
import secrets
import shlex
import sys
from pathlib import Path
from typing import Callable, Optional, TextIO

from .errors import EXIT_OK, EXIT_USAGE, exists, quoted
from .options import add_run_options

NAME = "serve"


def exposure_warning(host: str) -> Optional[str]:
    """What to say when `host` lets other machines in (anything but a loopback address)."""
    import ipaddress

    if host == "localhost":
        return None
    try:
        if ipaddress.ip_address(host).is_loopback:
            return None
    except ValueError:
        pass  # a host name: it may resolve to anything
    return f"warning: serving on {host}: anyone who can reach it can run your agents, accept and edit baselines"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        NAME, help="the workbench in a browser (textual-serve), on 127.0.0.1 by default",
        description="Serve the workbench (the same app as `agentdiff watch PATHS`) to a browser: each tab runs it in a "
        "process of its own, in this folder. Bound to 127.0.0.1 unless --host names another address (then anyone who "
        "can reach it can edit baselines).",
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="folders of cases and agents (default: the configured paths, else .)")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="the port (default 8000)")
    add_run_options(parser, repeats=True)


def watch_command(args: argparse.Namespace) -> str:
    """The `agentdiff watch` command line each tab runs: the same paths and run options."""
    argv = [sys.executable, "-m", "agentdiff.tui.cli", "watch", *map(str, args.paths)]
    for flag, value in (("--mode", getattr(args, "mode", None)), ("--num-runs", args.num_runs), ("--jobs", args.jobs),
                        ("--timeout", args.timeout), ("--python", args.python), ("--streaming-mode", args.streaming_mode),
                        ("--min-pass-rate", args.min_pass_rate), ("--confidence", args.confidence)):
        if value is not None:
            argv += [flag, str(value)]
    for k in args.pass_hat_k:
        argv += ["--pass-hat-k", str(k)]
    for agents in args.agents:
        argv += ["--agents", str(agents)]
    if args.run_tools:
        argv.append("--run-tools")
    if args.no_judge_cache:
        argv.append("--no-judge-cache")
    return shlex.join(argv)


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    missing = [p for p in args.paths if not exists(p)]
    if missing:
        print(f"error: no such folder: {quoted(missing[0])}", file=err)
        return EXIT_USAGE
    warning = exposure_warning(args.host)
    if warning:
        print(warning, file=err)
    token = secrets.token_urlsafe(18)
    where = url_of("127.0.0.1" if wildcard(args.host) else args.host, args.port)
    also = " — or this machine's other addresses, on every interface" if wildcard(args.host) else ""
    banner = f"serving the workbench on {where}/?token={token} (open this address{also}; Ctrl+C stops)"
    server = guarded_server(watch_command(args), args.host, args.port, token, lambda: print(banner, file=err, flush=True))
    server.serve()
    return EXIT_OK


COOKIE = "agentdiff_token"


def wildcard(host: str) -> bool:
    """Whether `host` binds every interface (0.0.0.0, ::, or empty)."""
    return host in ("", "0.0.0.0", "::", "[::]")


def authority(host: str, port: int) -> str:
    """`host:port` as a URL and a Host header write it: an IPv6 address in brackets."""
    host = host.strip("[]")
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def url_of(host: str, port: int) -> str:
    return f"http://{authority(host, port)}"


def _machine_names(port: int) -> set[str]:
    """This machine's names, as a browser on another machine may address it: its host names (short and
    fully qualified) and the addresses they resolve to."""
    import socket

    names: set[str] = set()
    for name in {socket.gethostname(), socket.getfqdn()} - {""}:
        names.add(authority(name, port))
        try:
            names |= {authority(info[4][0], port) for info in socket.getaddrinfo(name, None)}
        except OSError:
            pass
    return names


def server_names(host: str, port: int) -> set[str]:
    """The `host:port` names a request may give a server bound to `host` (its Host header, a browser's
    Origin): its own; on loopback (or every interface) any of loopback's; on every interface, the
    machine's names too."""
    names = {authority(host, port)}
    if exposure_warning(host) is None or wildcard(host):
        names |= {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
    if wildcard(host):
        names |= _machine_names(port)
    return names


def guarded_server(command: str, host: str, port: int, token: str, listening: Callable[[], None] = lambda: None):
    """textual-serve's server with a guard: a page, file or socket is served only to a request naming
    this server by its own address (no DNS rebinding), from its own pages (the Origin a browser sends),
    with the token of the address printed at start (then kept in a same-site cookie). Another web page
    the user has open can therefore neither start a workbench nor type into one. Bound to every
    interface (`0.0.0.0`, `::`), its own addresses are loopback's, the machine's names, and the address
    each connection arrived on; a foreign name is still refused. Folder listings are never served."""
    from aiohttp import web
    from textual_serve.server import Server

    names = server_names(host, port)

    def own_names(request: web.Request) -> set[str]:
        if not wildcard(host):
            return names
        local = request.transport.get_extra_info("sockname") if request.transport is not None else None
        return names | {authority(str(local[0]).removeprefix("::ffff:"), port), authority(str(local[0]), port)} if local else names

    @web.middleware
    async def guard(request: web.Request, handler):
        allowed = own_names(request)
        origin = request.headers.get("Origin")
        if request.host not in allowed or (origin is not None and origin.split("://", 1)[-1] not in allowed):
            raise web.HTTPForbidden(text="agentdiff serve: not this server's address")
        given = request.query.get("token") or request.cookies.get(COOKIE)
        if not given or not secrets.compare_digest(given, token):
            raise web.HTTPForbidden(text="agentdiff serve: open the address with its token, as printed when it started")
        if request.path.startswith("/static") and request.path.endswith("/"):
            raise web.HTTPNotFound(text="agentdiff serve: folders are not listed")
        response = await handler(request)
        if request.query.get("token") and isinstance(response, web.Response):
            response.set_cookie(COOKIE, token, httponly=True, samesite="Strict")
        return response

    class GuardedServer(Server):
        async def on_startup(self, app: web.Application) -> None:
            listening()  # the address with its token, once listening (textual-serve's own, without it, answers 403)

        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(guard)
            return app

        async def handle_index(self, request: web.Request):
            # the page's socket and files at the address the browser used (the guard checked it is
            # ours), not the bound one: `0.0.0.0` is no address a browser can reach
            bound, self.public_url = self.public_url, f"http://{request.host}"
            try:
                return await super().handle_index(request)
            finally:
                self.public_url = bound

    import textual_serve.server

    textual_serve.server.AppService = bounded_app_service()  # each tab: sizes bounded, its process ended with it
    return GuardedServer(command, host=host, port=port, title="agentdiff", public_url=url_of(host, port))


#: A tab's terminal at most (a browser's window at a tiny font is well inside): a size past it is taken as it.
MAX_WIDTH, MAX_HEIGHT = 1000, 500
#: Seconds a tab's process has to quit when its socket closes before it is killed, its group with it.
QUIT_SECONDS = 5.0


def clamped(value: object, most: int, default: int) -> int:
    """A terminal dimension a client sent, as a size the app can draw: a whole number from 1 to `most`."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return default
    try:
        number = float(value)
    except (ValueError, OverflowError):  # not a number, or an integer past a float's range: as big as allowed
        return most if isinstance(value, int) else default
    if number != number:  # NaN
        return default
    return max(1, min(most, int(number) if abs(number) < 1e18 else (most if number > 0 else 1)))


def bounded_app_service():
    """textual-serve's tab, bounded: a size a client sends is clamped (a `resize` to 1e9 × 1e9 would have
    the app lay out a billion cells), the app runs in a process group of its own, and when the tab's
    socket closes the app has `QUIT_SECONDS` to quit before its whole group is killed."""
    import asyncio
    import signal

    from textual_serve.app_service import AppService

    class BoundedAppService(AppService):
        async def _open_app_process(self, width: int = 80, height: int = 24):
            environment = self._build_environment(width=clamped(width, MAX_WIDTH, 80), height=clamped(height, MAX_HEIGHT, 24))
            self._process = process = await asyncio.create_subprocess_shell(
                self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                env=environment, start_new_session=True)
            self._stdin = process.stdin
            return process

        async def set_terminal_size(self, width: int, height: int) -> None:
            await super().set_terminal_size(clamped(width, MAX_WIDTH, 80), clamped(height, MAX_HEIGHT, 24))

        async def stop(self) -> None:
            try:
                await asyncio.wait_for(asyncio.shield(super().stop()), QUIT_SECONDS)
            except Exception:  # noqa: BLE001 - it did not quit as asked (or the socket is gone): ended below
                pass
            process = self._process
            if process is not None:  # what the app left in its group (an editor, its workers) goes too
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except OSError:
                    pass

    return BoundedAppService
