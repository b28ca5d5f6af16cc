"""`agentdiff mcp`'s server: the `session`'s tools over the Model Context Protocol (stdio), on the
official `mcp` SDK. Each tool's description is written for a model to read; a request that cannot
be met is a tool error saying what to do instead. The server reads and writes inside the project
only, never runs a shell, and ends when its client closes stdin (its workers with it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, Awaitable, Callable, Literal, Optional

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as McpToolError

from ..process_end import ending
from .answers import ToolError, bounded
from .session import AssistSession

INSTRUCTIONS = """agentdiff runs a project's ADK agent eval cases and shows, per layer (LLM request, tool calls,
response, session), how each run differs from its baseline. Watching is on: when you edit the agent's
code, prompt or an eval file, the cases the edit can affect re-run by themselves.
The loop: status → explain a failing case → edit → run(which="affected") → check no other case broke →
accept only with the plan shown to the user (accept, then apply). Never lower a threshold or edit an
expected value by hand to make a case pass; undo() takes back the last accept."""


def _client_name(ctx: Any) -> str:
    try:
        params = ctx.session.client_params
        info = getattr(params, "client_info", None) if params is not None else None
        name = getattr(info, "name", None)
        return str(name)[:80] if name else "assistant"
    except Exception:  # noqa: BLE001 - a client that said nothing of itself is just "assistant"
        return "assistant"


def build_server(session: AssistSession, cli: Callable[[list[str]], tuple[int, str, str]]) -> Any:
    """The MCP server over `session`; `cli(argv)` runs one of agentdiff's own commands in this process
    (compare, gate, failures, doctor) and returns its exit code and output."""
    server = MCPServer("agentdiff", instructions=INSTRUCTIONS)
    client = {"name": "assistant"}
    session.client = lambda: client["name"]

    async def call(ctx: Context, work: Callable[[], Any]) -> Any:
        client["name"] = _client_name(ctx)
        try:
            result = work()
            if isinstance(result, Awaitable):
                result = await result
            return result
        except ToolError as exc:
            raise McpToolError(str(exc)) from None

    @server.tool(description="Counts of the cases by status, what is running, the cases whose verdict changed since your "
                 "last status call (with why each ran), the stale ones, and files that failed to load. Call it first, "
                 "and after an edit.")
    async def status(ctx: Context) -> dict:
        return await call(ctx, session.status)

    @server.tool(description="The cases matching a filter, each with its status, why it last ran and what diverged first. "
                 "Filter words: text in the id; status:failed,error; agent:NAME; label:NAME; mode:live; layer:tool_calls; "
                 "! negates a word. Empty: every case. Pages with offset.")
    async def list_cases(ctx: Context, filter: str = "", limit: int = 200, offset: int = 0) -> dict:
        return await call(ctx, lambda: session.list_cases(filter, limit, offset))

    @server.tool(description="Run cases and wait for their verdicts (up to timeout seconds; what is still running is "
                 "listed). Either cases=[ids] or which='affected' (the cases an edit made stale, and those already "
                 "re-running because of it), 'failed' or 'all'. mode='replay' or 'live' sets the mode from now on. "
                 "Running more live cases than the project's confirm_live_above needs confirm= the estimate the error gives.")
    async def run(ctx: Context, cases: Optional[list[str]] = None, which: Optional[Literal["affected", "failed", "all"]] = None,
                  mode: Optional[Literal["replay", "live"]] = None, timeout: float = 50.0, confirm: Optional[str] = None) -> dict:
        return await call(ctx, lambda: session.run(cases, which, mode, timeout, confirm))

    @server.tool(description="A case's diff as `agentdiff diff --json` gives it: the first divergence, each layer's "
                 "status, the divergences with the expected value's file and line, and the turns (a few per page: "
                 "page=N for more; turn= (from 1) and layer= narrow it). Judge reasons are in the metrics of explain.")
    async def diff(ctx: Context, case: str, turn: Optional[int] = None,
                   layer: Optional[Literal["request", "tool_calls", "response", "nodes", "session"]] = None, page: int = 0) -> dict:
        return await call(ctx, lambda: session.diff(case, turn, layer, page))

    @server.tool(description="The shortest useful answer about one case: what diverged first and where in the files "
                 "(the expected value's file and line), its error with the project's file and line, the failing "
                 "metrics with their reasons, and the files its agent read that changed since it last passed.")
    async def explain(ctx: Context, case: str) -> dict:
        return await call(ctx, lambda: session.explain(case))

    @server.tool(description="Plan accepting a case's last run as its baseline (the whole case, a turn (from 1), or one "
                 "layer of a turn; run=N for repeat N of a flaky case). Returns the exact file change as a diff and a plan_digest. "
                 "Nothing is written: show the plan to the user, then apply(plan_digest).")
    async def accept(ctx: Context, case: str, turn: Optional[int] = None,
                     layer: Optional[Literal["tool_calls", "response"]] = None, run: Optional[int] = None) -> dict:
        return await call(ctx, lambda: session.accept(case, turn, layer, run))

    @server.tool(description="Write a planned accept (one journal step, which undo, `agentdiff undo` and the TUI's z "
                 "take back). Refused when a file changed since the plan: plan again.")
    async def apply(ctx: Context, plan_digest: str) -> dict:
        return await call(ctx, lambda: session.apply(plan_digest))

    @server.tool(description="Take back the last accept or record (anyone's: yours, the TUI's, the CLI's), byte for byte.")
    async def undo(ctx: Context) -> dict:
        return await call(ctx, lambda: session.step("undo"))

    @server.tool(description="Put back what the last undo took back.")
    async def redo(ctx: Context) -> dict:
        return await call(ctx, lambda: session.step("redo"))

    def command(name: str, argv: list[str], parse: bool) -> Callable[[], Awaitable[dict]]:
        async def work() -> dict:
            code, out, err = await asyncio.to_thread(cli, argv)  # doctor imports each agent: never on the loop
            said = {"exit_code": code, **({"messages": err[-4000:]} if err.strip() else {})}
            if parse:
                with contextlib.suppress(ValueError):
                    return {**said, "result": bounded(json.loads(out))}
            return {**said, "output": out[-20000:]}
        return work

    def kept(*values: Optional[str]) -> list[str]:
        """Run names as the CLI takes them; a report file only inside the project, never an option."""
        out = []
        root = session.workbench.root
        for value in values:
            if not value:
                continue
            if not isinstance(value, str) or value.startswith("-") or "\x00" in value or len(value) > 500:
                raise ToolError(f"{value!r} is not a kept run: give its name (from compare's answer), latest or previous")
            named = root / value
            if ("/" in value or value.endswith(".json") or named.exists() or named.is_symlink()) and not session.owns(named):
                raise ToolError(f"{value!r} is outside the project: only the project's own files are read")
            out.append(value)
        return out

    @server.tool(description="Compare two kept runs (default: the last two) case by case: fixed, broken, still failing, "
                 "new. Kept runs are those of `agentdiff run`, the TUI and this server's earlier sessions (a session is "
                 "kept when it ends).")
    async def compare(ctx: Context, base: Optional[str] = None, head: Optional[str] = None) -> dict:
        if head and not base:
            raise McpToolError("give `base` with `head` (compare's BASE comes first)")
        return await call(ctx, lambda: command("compare", ["compare", *kept(base, head), "--json"], True)())

    @server.tool(description="The release gate over a kept run (default: the newest): pass or fail, with each rule's result.")
    async def gate(ctx: Context, run: Optional[str] = None, baseline: Optional[str] = None) -> dict:
        return await call(ctx, lambda: command("gate", ["gate", *(["--baseline", *kept(baseline)] if baseline else []), *kept(run)], False)())

    @server.tool(description="The project's failure dictionary: each named failure, its description, how blocking it is, "
                 "and the cases bound to it.")
    async def failures(ctx: Context) -> dict:
        return await call(ctx, command("failures", ["failures"], False))

    @server.tool(description="What the project's agents need to run: their Python and ADK, whether each agent imports, its "
                 "models (LiteLLM provider, key, base URL), and which credentials are set (names only).")
    async def doctor(ctx: Context) -> dict:
        return await call(ctx, command("doctor", ["doctor"], False))

    @server.resource("agentdiff://report/latest.json", name="latest results",
                     description="The session's last result of each case, as `agentdiff run --json` reports them.",
                     mime_type="application/json")
    def latest() -> str:
        return json.dumps(session.report())

    return server


async def serve(session: AssistSession, watch: Optional[Callable[[], Awaitable[None]]], on_close: Callable[[], None],
                cli: Callable[[list[str]], tuple[int, str, str]]) -> None:
    """Until the client closes stdin: the server, with the watcher beside it; `cli` runs one of agentdiff's
    own commands in this process (the command line's, handed down: the server does not import it)."""
    server = build_server(session, cli)
    watcher = asyncio.create_task(watch()) if watch is not None else None
    try:
        await server.run_stdio_async()
    finally:
        try:
            if watcher is not None:
                watcher.cancel()
            session.workbench.cancel()
            on_close()  # the history written (it may wait on another session's lock) and the session kept
        finally:
            # the client is gone (or a signal came): the process ends, within DEADLINE seconds whatever holds
            # it (a command still working in a thread, which Python's exit would wait for)
            ending(0)
