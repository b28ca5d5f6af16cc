"""Journey checks on a case's runs: each declared check (`formats.checks_file`) becomes a metric row,
passed or failed, beside ADK's metrics; a failing one fails the case and is a divergence of its own,
at the tool call that broke it (`]` reaches it) with the check's line as its source (`e` opens it).

Checks run on every run in every mode, from what the runs did (their tool calls, tokens, seconds),
with no model call; a case's verdict is re-made when its checks change, like ADK's metrics. A check
fails the case when it fails in any repeat (what must never happen must not happen once).
"""

from __future__ import annotations

import ctypes
import dataclasses
import hashlib
import importlib.util
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from agentdiff.core.diff.model import CaseDiff, Divergence, LayerStatus, SourceLocation
from agentdiff.core.formats.checks_file import NODE_LISTS, PER_NODE_LIMITS, CheckSpec
from agentdiff.core.run.case_run import CaseRun, layer_summaries
from agentdiff.core.scoring.metrics import MetricStatus
from agentdiff.core.scoring.results import CaseStatus, MetricResult
from agentdiff.core.traces.from_run import split_turns
from agentdiff.core.traces.nodes import node_steps
from agentdiff.core.worker.jobs import RunOutput


@dataclass(frozen=True)
class JourneyTrace:
    """One run of a case, as a `python` check receives it.

    `tool_calls`: every call in order, each {"turn", "index" (within the turn), "agent", "name",
    "args", "response"}; `tokens`: the agent's model calls' (input + output); `seconds`: the run's
    wall time; `state`: the session state at the end; `events`: the session's events as ADK dumps
    them; `nodes`: in an ADK 2 workflow, every node run in order, each {"turn", "index" (within the
    turn), "path", "name", "route", "branch"}; `error`: why the run could not finish, if it did not."""

    case_id: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    tokens: int = 0
    seconds: float = 0.0
    state: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    error: Optional[str] = None
    nodes: list[dict[str, Any]] = field(default_factory=list)

    def calls(self, name: str) -> list[dict[str, Any]]:
        return [call for call in self.tool_calls if call["name"] == name]

    def runs_of(self, node: str) -> list[dict[str, Any]]:
        """The runs of a node, named by its name or its path."""
        return [step for step in self.nodes if node in (step["name"], step["path"])]


@dataclass(frozen=True)
class Breach:
    """How a run broke a check: the reason, and the tool call it happened at (turn, index in turn)."""

    reason: str
    turn: Optional[int] = None
    call: Optional[int] = None
    node: Optional[int] = None  # the node run it happened at (index in its turn)


def journey_trace(case_id: str, out: RunOutput) -> JourneyTrace:
    calls, per_turn = [], {}
    for tool in sorted(out.tools, key=lambda t: (t.turn, t.seq)):
        index = per_turn[tool.turn] = per_turn.get(tool.turn, -1) + 1
        calls.append({"turn": tool.turn, "index": index, "agent": tool.agent, "name": tool.name, "args": tool.args or {},
                      "response": tool.response})
    tokens = 0
    for exchange in out.exchanges:
        for response in exchange.responses:
            usage = response.get("usage_metadata") or {}
            tokens += int(usage.get("prompt_token_count") or 0) + int(usage.get("candidates_token_count") or 0)
    nodes = [{"turn": t, "index": i, "path": step.path, "name": step.name, "route": step.route, "branch": step.branch}
             for t, events in enumerate(split_turns(out.events)) for i, step in enumerate(node_steps(events))]
    return JourneyTrace(case_id, calls, tokens, out.seconds, dict(out.state), list(out.events), out.error, nodes)


def _at_node(step: dict[str, Any], reason: str) -> Breach:
    return Breach(f"{reason} (turn {step['turn'] + 1})", step["turn"], None, step["index"])


def _node_breach(spec: CheckSpec, trace: JourneyTrace) -> Optional[Breach]:
    kind, node, value = spec.kind, spec.tool, spec.value
    runs = trace.runs_of(node) if node else []
    if kind == "forbidden_nodes" and runs:
        return _at_node(runs[0], f"node {node} ran")
    if kind == "required_nodes" and not runs:
        return Breach(f"node {node} never ran" + (f" (what ran: {', '.join(dict.fromkeys(s['path'] for s in trace.nodes))})" if trace.nodes else ""))
    if kind == "max_node_visits" and len(runs) > value:
        return _at_node(runs[int(value)], f"node {node} ran {len(runs)} times, more than {value:g}")
    if kind == "required_route":
        if not runs:
            return Breach(f"node {node} never ran")
        for step in runs:
            if step["route"] != value:
                return _at_node(step, f"{node} took route {step['route']}, not {value}")
    return None


def _at(call: dict[str, Any], reason: str) -> Breach:
    return Breach(f"{reason} (turn {call['turn'] + 1}, call {call['index'] + 1})", call["turn"], call["index"])


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def evaluate(spec: CheckSpec, trace: JourneyTrace) -> Optional[Breach]:
    """None when the run keeps the check; else how it broke it."""
    kind, tool, value = spec.kind, spec.tool, spec.value
    if kind == "max_tool_calls" and len(trace.tool_calls) > value:
        return _at(trace.tool_calls[int(value)], f"{len(trace.tool_calls)} tool calls, more than {value:g}")
    if kind == "max_calls" and len(trace.calls(tool)) > value:
        return _at(trace.calls(tool)[value], f"{tool} called {len(trace.calls(tool))} times, more than {value}")
    if kind == "no_repeat" and len(trace.calls(tool)) > 1:
        first = trace.calls(tool)[0]
        return _at(trace.calls(tool)[1], f"{tool} called again; first in turn {first['turn'] + 1}, call {first['index'] + 1}")
    if kind == "forbidden" and trace.calls(tool):
        return _at(trace.calls(tool)[0], f"{tool} called")
    if kind == "order":
        first, then = value
        for call in trace.tool_calls:
            if call["name"] == first:
                return None
            if call["name"] == then:
                return _at(call, f"{then} called before any {first}")
    if kind == "required_args":
        for call in trace.calls(tool):
            missing = [name for name in value if _empty(call["args"].get(name))]
            if missing:
                return _at(call, f"{tool} called without {', '.join(missing)}")
    if kind == "max_tokens" and trace.tokens > value:
        return Breach(f"{trace.tokens:,} tokens, more than {value:,g}")
    if kind == "max_seconds" and trace.seconds > value:
        return Breach(f"{trace.seconds:.1f} s, more than {value:g} s")
    if kind == "python":
        return _python(spec, trace)
    if kind in (*NODE_LISTS, *PER_NODE_LIMITS, "required_route"):
        return _node_breach(spec, trace)
    return None


_MODULES: dict[tuple[str, int, int], Any] = {}
_LOCK = threading.Lock()
PYTHON_CHECK_SECONDS = 10.0  # a `python` check still running after this fails, and is not called again
_STUCK: set[tuple[tuple[str, int, int], str]] = set()  # (version of the file, function) that did not return


def _function(spec: CheckSpec) -> tuple[Callable[[JourneyTrace], Any], tuple[tuple[str, int, int], str]]:
    """`file.py:function` beside the checks file, imported once per version of the file; with
    that version and the function's name."""
    file, _, name = spec.value.partition(":")
    path = spec.module
    assert path is not None
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    with _LOCK:
        module = _MODULES.get(key)
        if module is None:
            unique = "agentdiff_checks_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
            loader = importlib.util.spec_from_file_location(unique, path)
            if loader is None or loader.loader is None:
                raise ImportError(f"cannot import {path}")
            module = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(module)
            _MODULES[key] = module
    function = getattr(module, name, None)
    if not callable(function):
        raise AttributeError(f"{file} has no function {name}")
    return function, (key, name)


class CheckStopped(BaseException):
    """Raised inside a `python` check that ran past its time."""


class _CheckThread(threading.Thread):
    """A check's call in a daemon thread that can be stopped once (`stop`): raised only while the
    call has not finished (under `_guard`), so never into a thread that has ended (whose id the system
    may have given another), and caught wherever it lands, never reported as an unhandled error."""

    def __init__(self, function: Callable[[JourneyTrace], Any], trace: JourneyTrace, name: str) -> None:
        super().__init__(name=name, daemon=True)
        self.function, self.trace = function, trace
        self.outcome: dict[str, Any] = {}
        self._guard = threading.Lock()
        self._done = False

    def run(self) -> None:
        try:
            try:
                self.outcome["answer"] = self.function(self.trace)
            except BaseException as exc:  # SystemExit included: a check cannot end agentdiff
                self.outcome["error"] = exc
            finally:
                while True:
                    try:
                        with self._guard:
                            self._done = True
                        break
                    except CheckStopped:  # it came as the call ended
                        continue
        except CheckStopped:  # it came in the except clause above
            pass

    def stop(self) -> None:
        """Raise `CheckStopped` in the call: one looping in Python code stops at its next step instead
        of holding a core until agentdiff ends (one blocked in a system call stops when it returns)."""
        with self._guard:
            if not self._done and self.ident is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.ident), ctypes.py_object(CheckStopped))


def _python(spec: CheckSpec, trace: JourneyTrace) -> Optional[Breach]:
    """A function's verdict: None or True passes; False or a string (the reason) fails, as does an
    AssertionError (its message); any other exception fails, naming it. It runs in a thread of its
    own: one that has not returned after `PYTHON_CHECK_SECONDS` fails and is stopped, and that version
    of it is not called again (a daemon thread: it cannot hold agentdiff's exit)."""
    try:
        function, version = _function(spec)
    except Exception as exc:  # the check's own bug: a failing check that says so, never a crash
        return Breach(f"the check raised {type(exc).__name__}: {exc}")
    if version in _STUCK:
        return Breach(f"an earlier call of the check did not finish within {PYTHON_CHECK_SECONDS:g} s (save its file to call it again)")
    thread = _CheckThread(function, trace, f"agentdiff-check {spec.value}")
    thread.start()
    thread.join(PYTHON_CHECK_SECONDS)
    if thread.is_alive():
        with _LOCK:
            _STUCK.add(version)
        thread.stop()
        return Breach(f"the check did not finish within {PYTHON_CHECK_SECONDS:g} s")
    error = thread.outcome.get("error")
    if isinstance(error, AssertionError):
        return Breach(str(error) or "assertion failed")
    if error is not None:
        return Breach(f"the check raised {type(error).__name__}: {error}")
    answer = thread.outcome.get("answer")
    if answer is None or answer is True:
        return None
    return Breach(answer if isinstance(answer, str) and answer else "the check returned False")


def apply_checks(run: CaseRun) -> CaseRun:
    """The run with its case's journey checks as metric rows, its verdict failed by a failing one,
    and each failing check of the shown repeat a divergence."""
    specs = run.ref.checks
    if not specs or not run.outputs:
        return run
    traces = [journey_trace(run.ref.id, out) for out in run.outputs]
    metrics, found = [], []
    broken_runs: set[int] = set()  # the repeats a check failed in: they fail, as ADK's records say
    for spec in specs:
        breaches = [evaluate(spec, trace) for trace in traces]
        broken_runs |= {i for i, breach in enumerate(breaches) if breach is not None}
        failed = [b for b in breaches if b is not None]
        shown = breaches[run.shown] if run.shown < len(breaches) else None
        first = shown or (failed[0] if failed else None)
        reason = first.reason if first else None
        if reason and len(traces) > 1:
            reason += f" ({len(failed)} of {len(traces)} runs)"
        metrics.append(MetricResult(
            name=f"check: {spec.label}", score=round(1 - len(failed) / len(traces), 4), threshold=1.0,
            status=MetricStatus.FAILED if failed else MetricStatus.PASSED, reason=reason,
            details={"check": spec.kind, "source": spec.source},
        ))
        if shown is not None:
            found.append((spec, shown))
    result = run.result
    status = result.status
    if found or any(m.status is MetricStatus.FAILED for m in metrics):
        status = CaseStatus.FAILED if status is not CaseStatus.ERROR else status
    lead_is_check = result.status is CaseStatus.PASSED and status is CaseStatus.FAILED
    diff = _with_divergences(run.diff, found, lead_is_check) if run.diff is not None and found else run.diff
    records = tuple(dataclasses.replace(record, status=CaseStatus.FAILED) if i in broken_runs and record.status is CaseStatus.PASSED
                    else record for i, record in enumerate(result.runs))
    layers = layer_summaries(diff) if found and diff is not None and result.layers else result.layers
    result = dataclasses.replace(result, metrics=(*result.metrics, *metrics), status=status, runs=records, layers=layers)
    return dataclasses.replace(run, result=result, diff=diff)


def _with_divergences(diff: CaseDiff, found: list[tuple[CheckSpec, Breach]], lead: bool) -> CaseDiff:
    added = []
    for spec, breach in found:
        turn = breach.turn if breach.turn is not None else max(len(diff.turns) - 1, 0)
        workflow = any(status.layer == "nodes" for status in diff.layers)
        is_node = spec.kind in (*NODE_LISTS, *PER_NODE_LIMITS, "required_route") and workflow
        layer = "nodes" if is_node else "tool_calls" if breach.call is not None else "response"
        row = 0
        if breach.call is not None and turn < len(diff.turns):
            row = next((r for r, call in enumerate(diff.turns[turn].tool_calls) if call.actual_index == breach.call), 0)
        if breach.node is not None and turn < len(diff.turns):
            row = next((r for r, step in enumerate(diff.turns[turn].nodes) if step.actual_index == breach.node), 0)
        added.append(Divergence(
            layer=layer, turn=turn, index=breach.call if breach.node is None else breach.node, path="", kind="check",  # type: ignore[arg-type]
            summary=f"turn {turn + 1} · check {spec.label}: {breach.reason}",
            source=SourceLocation(spec.file, spec.line), row=row,
        ))
    layers = []
    for status in diff.layers:
        mine = [d for d in added if d.layer == status.layer]
        if mine and (status.status != "absent" or status.layer == "nodes"):  # what ran is there without a baseline
            status = LayerStatus(status.layer, "changed", status.count + len(mine), status.summary or mine[0].summary, status.reason)
        layers.append(status)
    divergences = (*added, *diff.divergences) if lead else (*diff.divergences, *added)
    return dataclasses.replace(diff, divergences=divergences, layers=tuple(layers), lead=added[0] if lead else diff.lead)
