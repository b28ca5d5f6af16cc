"""`agentdiff mcp`'s server: the `session`'s tools over the Model Context Protocol (stdio), on the
official `mcp` SDK. Each tool's description is written for a model to read; a request that cannot
be met is a tool error saying what to do instead. The server reads and writes inside the project
only, never runs a shell, and ends when its client closes stdin (its workers with it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Annotated, Any, Awaitable, Callable, Literal, Optional

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as McpToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations

from agentdiff.core import __version__

from ..process_end import ending
from .answers import ToolError, bounded
from .prompts import add_prompts
from .schemas import (ApplyAnswer, CommandAnswer, DiffAnswer, ExplainAnswer, ListAnswer, PlanAnswer, RunAnswer, StatusAnswer,
                      StepAnswer)
from .session import AssistSession

INSTRUCTIONS = """agentdiff runs a project's ADK agent eval cases and shows, per layer (LLM request, tool calls,
response, session), how each run differs from its baseline. Watching is on: when you edit the agent's
code, prompt or an eval file, the cases the edit can affect re-run by themselves.
The loop: status (a case not run yet counts with its kept verdict) → explain a failing case → edit the
agent → run(which="affected") → gate() (this session against the last kept run: nothing else broke) →
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


def answer(value: dict) -> CallToolResult:
    """A tool's answer: compact JSON for the model to read, the same object as `structuredContent`."""
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(value, ensure_ascii=False, separators=(",", ":")))],
                          structured_content=value)


READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
RUN = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True)  # model calls
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)
LATEST_MAX = 200_000  # characters of the latest.json resource
JUDGE_WAIT = 50.0  # seconds gate and compare wait for the session's runs in flight
LayerName = Literal["request", "tool_calls", "response", "nodes", "session"]


def build_server(session: AssistSession, cli: Callable[[list[str]], tuple[int, str, str]]) -> Any:
    """The MCP server over `session`; `cli(argv)` runs one of agentdiff's own commands in this process
    (compare, gate, failures, doctor) and returns its exit code and output."""
    server = MCPServer("agentdiff", version=__version__, instructions=INSTRUCTIONS)
    client = {"name": "assistant"}
    session.client = lambda: client["name"]

    async def call(ctx: Context, work: Callable[[], Any]) -> CallToolResult:
        client["name"] = _client_name(ctx)
        await session.ready()  # the kept runs' verdicts, read as the server started
        try:
            result = work()
            if isinstance(result, Awaitable):
                result = await result
            return answer(result)
        except ToolError as exc:
            raise McpToolError(str(exc)) from None

    @server.tool(annotations=READ, description="Start here. Counts of the cases by status (a case not run in this session counts with "
                 "its kept verdict, from the last run that ran it), what is running, the verdicts that changed since your last status "
                 "(with why each ran), the stale ones, files that failed to load, and what run(which='all') would cost.")
    async def status(ctx: Context) -> Annotated[CallToolResult, StatusAnswer]:
        return await call(ctx, session.status)

    @server.tool(annotations=READ, description="The cases matching a filter, each with its status, why it last ran and what diverged "
                 "first (a kept verdict says from which run and when). Filter words: text in the id; status:failed,error; agent:NAME; "
                 "label:NAME; mode:live; layer:tool_calls; ! negates a word. Empty: every case. Pages with offset.")
    async def list_cases(ctx: Context, filter: str = "", limit: int = 200, offset: int = 0) -> Annotated[CallToolResult, ListAnswer]:
        return await call(ctx, lambda: session.list_cases(filter, limit, offset))

    @server.tool(annotations=RUN, description="Run cases and wait for their verdicts (up to timeout seconds, with progress "
                 "notifications; what still runs is listed and goes on). Either cases=[ids] or which='affected' (what your edits made "
                 "stale or re-ran), 'failed' or 'all'. Leave mode out: each case runs its own way (recorded cases replay, others live); "
                 "mode='replay' or 'live' applies to this call only. Running more live cases than the project's confirm_live_above "
                 "needs confirm= the estimate the error gives.")
    async def run(ctx: Context, cases: Optional[list[str]] = None, which: Optional[Literal["affected", "failed", "all"]] = None,
                  mode: Optional[Literal["replay", "live"]] = None, timeout: float = 50.0,
                  confirm: Optional[str] = None) -> Annotated[CallToolResult, RunAnswer]:
        async def progress(done: int, total: int, message: str) -> None:
            await ctx.report_progress(done, total, message)
        return await call(ctx, lambda: session.run(cases, which, mode, timeout, confirm, progress))

    @server.tool(annotations=READ, description="A case's diff: the first divergence, each layer's status, the divergences with the "
                 "expected value's file and line, and the turns (from 1), each with the layers that changed (layers='all': every "
                 "layer). Long texts come as their changed lines. A few turns per page (page=2…); turn= and layer= narrow it.")
    async def diff(ctx: Context, case: str, turn: Optional[int] = None, layer: Optional[LayerName] = None, page: int = 1,
                   layers: Literal["changed", "all"] = "changed") -> Annotated[CallToolResult, DiffAnswer]:
        return await call(ctx, lambda: session.diff(case, turn, layer, page, layers))

    @server.tool(annotations=READ, description="The shortest useful answer about one case: what diverged first and where in the files "
                 "(the expected value's file and line), its error with the project's file and line, the failing metrics with their "
                 "reasons, and the files its agent read that changed since it last passed.")
    async def explain(ctx: Context, case: str) -> Annotated[CallToolResult, ExplainAnswer]:
        return await call(ctx, lambda: session.explain(case))

    @server.tool(annotations=READ, description="Plan accepting a case's last run as its baseline (the whole case, a turn (from 1), or "
                 "one layer of a turn; run=N for repeat N of a flaky case). Returns the exact file change as a diff and a plan_digest. "
                 "Nothing is written: show the plan to the user, then apply(plan_digest).")
    async def accept(ctx: Context, case: str, turn: Optional[int] = None, layer: Optional[Literal["tool_calls", "response"]] = None,
                     run: Optional[int] = None) -> Annotated[CallToolResult, PlanAnswer]:
        return await call(ctx, lambda: session.accept(case, turn, layer, run))

    @server.tool(annotations=WRITE, description="Write a planned accept (one journal step, which undo, `agentdiff undo` and the TUI's "
                 "z take back). Refused when a file changed since the plan: plan again.")
    async def apply(ctx: Context, plan_digest: str) -> Annotated[CallToolResult, ApplyAnswer]:
        return await call(ctx, lambda: session.apply(plan_digest))

    @server.tool(annotations=WRITE, description="Take back the last accept or record (anyone's: yours, the TUI's, the CLI's), byte "
                 "for byte.")
    async def undo(ctx: Context) -> Annotated[CallToolResult, StepAnswer]:
        return await call(ctx, lambda: session.step("undo"))

    @server.tool(annotations=WRITE, description="Put back what the last undo took back.")
    async def redo(ctx: Context) -> Annotated[CallToolResult, StepAnswer]:
        return await call(ctx, lambda: session.step("redo"))

    @server.tool(annotations=WRITE, description="When a later edit blocks undo: forget the journal's newest step (its files stay as "
                 "they are) so older steps can be undone. Without confirm it shows the step; drop(confirm=its id) forgets it, once "
                 "the user agrees.")
    async def drop(ctx: Context, confirm: Optional[str] = None) -> Annotated[CallToolResult, StepAnswer]:
        return await call(ctx, lambda: session.drop(confirm))

    def command(argv: list[str], parse: bool, compared: Optional[str] = None) -> Callable[[], Awaitable[dict]]:
        async def work() -> dict:
            code, out, err = await asyncio.to_thread(cli, argv)  # doctor imports each agent: never on the loop
            said = {"exit_code": code, **({"compared": compared} if compared else {}), **({"messages": err[-4000:]} if err.strip() else {})}
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
                raise ToolError(f"{value!r} is not a kept run: give its name (from compare's answer), latest, previous or session")
            named = root / value
            if ("/" in value or value.endswith(".json") or named.exists() or named.is_symlink()) and not session.owns(named):
                raise ToolError(f"{value!r} is outside the project: only the project's own files are read")
            out.append(value)
        return out

    async def side(value: Optional[str], judged: dict) -> tuple[Optional[str], Optional[str]]:
        """A run as the CLI takes it, and what it is when it is this session's (session, start). Before
        the session is judged, the runs in flight are waited for; the stale ones are said (`judged`)."""
        if value not in ("session", "start"):
            return (kept(value)[0] if value else None), None
        if value == "session" and "stale" not in judged:
            running, stale = await session.settled(JUDGE_WAIT)
            if running:
                raise ToolError(f"{len(running)} case(s) still running after {JUDGE_WAIT:g} s ({', '.join(running[:3])}…): their "
                                "verdicts are not in yet; call again when run(which='affected') has returned")
            judged["stale"] = stale
        path, said = await session.current_state(value)
        return str(path), said

    async def pair(base: Optional[str], head: Optional[str], head_said: Optional[str]) -> tuple[list[str], str]:
        """BASE and HEAD's report files, and which they are. With no base given and no run kept before
        (a project's first session), the base is this session's start."""
        from agentdiff.core.reports.kept_runs import RunNotFound, default_pair

        root, base_said = session.workbench.root, None
        try:
            base_run, head_run = default_pair(root, base, head)
        except RunNotFound as exc:
            if base is not None:
                raise ToolError(f"{exc}: kept runs are named by compare's answer, or latest, previous, session, start") from None
            base, base_said = await side("start", {})
            base_run, head_run = default_pair(root, base, head)

        def shown(path) -> str:  # the commands run in the project's root: its own files by their short path
            return str(path.resolve().relative_to(root.resolve())) if session.owns(path) else str(path)

        return [shown(base_run.path), shown(head_run.path)], (f"{base_said or base_run.name} (as base) against "
                                                          f"{head_said or head_run.name} (as head)")

    def by_category(result: dict) -> dict:
        """Compare's cases as an assistant acts on them: the ids of each category but unchanged."""
        cases: dict[str, list[str]] = {}
        for case in result.get("cases") or ():
            if isinstance(case, dict) and case.get("category") not in (None, "unchanged"):
                cases.setdefault(str(case["category"]), []).append(str(case.get("id")))
        return cases

    def stale_said(judged: dict) -> dict:
        stale = judged.get("stale") or []
        return {"not_judged": {"stale": stale[:50], "why": "changed since they last ran and not run again: their verdicts are "
                               "old. run(which='affected'), then ask again"}} if stale else {}

    @server.tool(annotations=READ, description="Compare two runs case by case: fixed, broken, still failing, new. head defaults to "
                 "'session': this session's current state (its cases as run in it, once the runs in flight are done; the others as "
                 "their kept runs left them). base defaults to the latest kept run before it (none kept: 'start', each case's first "
                 "result in this session). Runs: a kept run's name, latest, previous, session or start. Each case: its category, "
                 "verdicts and first divergence; the unchanged ones are counted, and listed only with unchanged=true.")
    async def compare(ctx: Context, base: Optional[str] = None, head: Optional[str] = "session",
                      unchanged: bool = False) -> Annotated[CallToolResult, CommandAnswer]:
        async def work() -> dict:
            judged: dict = {}
            (base_arg, _), (head_arg, head_said) = await side(base, judged), await side(head or "session", judged)
            argv, compared = await pair(base_arg, head_arg, head_said)
            said = await command(["compare", *argv, "--json"], True, compared)()
            result = said.get("result")
            if isinstance(result, dict):
                for key in ("base", "head", "totals"):  # the runs are named in `compared`
                    result.pop(key, None)
                result["cases"] = [{k: v for k, v in c.items() if k in ("id", "category", "base", "head", "first_divergence") and v is not None}
                                   for c in result.get("cases") or () if isinstance(c, dict) and (unchanged or c.get("category") != "unchanged")]
            return {**said, **stale_said(judged)}
        return await call(ctx, work)

    @server.tool(annotations=READ, description="The release gate (the rules of [tool.agentdiff.gate]; with none, no case may regress): "
                 "pass (exit_code 0) or fail, with each rule's result and the cases by category (regressed, still failing, fixed…). "
                 "run defaults to 'session' (this session's current state, once its runs in flight are done); baseline to the latest "
                 "kept run before it (none kept: 'start'). A case that failed in the baseline too is still failing, not a regression: "
                 "name a baseline you trust (a kept run's name) when the latest may hold one.")
    async def gate(ctx: Context, run: Optional[str] = "session", baseline: Optional[str] = None) -> Annotated[CallToolResult, CommandAnswer]:
        async def work() -> dict:
            judged: dict = {}
            (base_arg, _), (head_arg, head_said) = await side(baseline, judged), await side(run or "session", judged)
            argv, compared = await pair(base_arg, head_arg, head_said)
            said = await command(["gate", "--baseline", argv[0], argv[1]], False, compared)()
            listed = await command(["compare", *argv, "--json"], True)()
            cases = by_category(listed.get("result") or {})
            return {**said, **({"cases": cases} if cases else {}), **stale_said(judged)}
        return await call(ctx, work)

    @server.tool(annotations=READ, description="The project's failure dictionary: each named failure, its description, how blocking "
                 "it is, and the cases bound to it.")
    async def failures(ctx: Context) -> Annotated[CallToolResult, CommandAnswer]:
        return await call(ctx, command(["failures"], False))

    @server.tool(annotations=READ, description="What the project's agents need to run: their Python and ADK, whether each agent "
                 "imports, its models (LiteLLM provider, key, base URL), and which credentials are set (names only).")
    async def doctor(ctx: Context) -> Annotated[CallToolResult, CommandAnswer]:
        return await call(ctx, command(["doctor"], False))

    @server.resource("agentdiff://report/latest.json", name="latest results",
                     description="The session's last result of each case, as `agentdiff run --json` reports them.",
                     mime_type="application/json")
    def latest() -> str:
        return latest_text(session.report())

    add_prompts(server)
    return server


def latest_text(report: dict, limit: int = LATEST_MAX) -> str:
    """The report as compact JSON; past `limit` characters each case's id, status, error and first divergence
    only (said in `cut`), and past it again, fewer cases."""
    text = json.dumps(report, ensure_ascii=False, separators=(",", ":"))
    if len(text) <= limit:
        return text
    cases = [{k: v for k, v in case.items() if k in ("id", "status", "mode", "error", "seconds") and v is not None}
             | ({"first_divergence": first} if (first := next((l.get("first_divergence") for l in case.get("layers") or ()
                                                                 if l.get("first_divergence")), None)) else {})
             for case in report.get("cases") or ()]
    short = {**report, "cases": cases, "cut": f"the whole report is {len(text):,} characters: each case's id, status, error and first "
             "divergence only; diff(case) and explain(case) give one case whole"}
    while len(text := json.dumps(short, ensure_ascii=False, separators=(",", ":"))) > limit and len(short["cases"]) > 1:
        short["cases"] = short["cases"][: len(short["cases"]) // 2]
        short["more_cases"] = len(cases) - len(short["cases"])
    return text


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
