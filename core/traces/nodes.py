"""What ran in an ADK 2 workflow, from a turn's events: one step per node run (its path, the route it
took, its output, its parallel branch) and the workflow's own output.

ADK stamps every event a workflow node emits with `node_info.path` (`flow@1/inner@1/writer@1`: each
node with its run number), a route on `actions.route`, a value on `output` (or, with
`node_info.message_as_output`, the event's content is the output), and `node_info.output_for`: the
node paths whose output the event is. The workflow's own output is the event whose `output_for`
holds the root's path (`flow@1`). Agents that are not workflows have no node paths: no steps.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from agentdiff.core.traces.model import NodeStep


def _bare(path: str) -> str:
    """`flow@1/inner@1/writer@1` → `inner/writer` (below the root, without run numbers)."""
    return "/".join(part.split("@", 1)[0] for part in path.split("/")[1:])


def node_path(event: dict[str, Any]) -> Optional[str]:
    """The path of the workflow node that wrote an event (`inner/writer`); None for the root's own
    events and for an agent that is not a workflow."""
    path = _info(event).get("path")
    return _bare(path) if isinstance(path, str) and "/" in path else None


_CAMEL = {"outputFor": "output_for", "messageAsOutput": "message_as_output"}


def _info(event: dict[str, Any]) -> dict[str, Any]:
    """The event's `node_info` (as ADK dumps it, or by its JSON aliases)."""
    info = event.get("node_info", event.get("nodeInfo"))
    return {_CAMEL.get(k, k): v for k, v in info.items()} if isinstance(info, dict) else {}


def events_by_turn(events: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A session's events per turn: a user-authored event starts one (events before the first
    message belong to the first turn)."""
    turns: list[list[dict[str, Any]]] = []
    seen_user = False
    for event in events:
        if event.get("author") == "user":
            if seen_user or not turns:
                turns.append([])
            seen_user = True
        elif not turns:
            turns.append([])
        turns[-1].append(event)
    return turns


def _content_output(event: dict[str, Any]) -> Any:
    content = event.get("content")
    if not isinstance(content, dict):
        return None
    texts = [p["text"] for p in content.get("parts") or [] if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")]
    return "".join(texts) if texts else None


def _output_of(event: dict[str, Any]) -> Any:
    info = _info(event)
    if event.get("output") is not None:
        return event["output"]
    return _content_output(event) if info.get("message_as_output") else None


def node_steps(events: Sequence[dict[str, Any]]) -> tuple[NodeStep, ...]:
    """The node runs of a turn, in the order each first emitted an event; the root (a workflow's own
    path, one segment) is not a step. Each step's route is the last one its events set."""
    steps: dict[str, dict[str, Any]] = {}
    for seq, event in enumerate(events):
        run = str(_info(event).get("path") or "")
        if "/" not in run:
            continue
        step = steps.setdefault(run, {"seq": seq, "route": None, "output": None, "has_output": False, "message": False,
                                      "branch": event.get("branch"), "author": str(event.get("author") or "")})
        actions = event.get("actions")
        route = actions.get("route") if isinstance(actions, dict) else None
        if route is not None:
            step["route"] = route
        outputs = _info(event).get("output_for") or []
        message = bool(_info(event).get("message_as_output")) and event.get("output") is None
        for other in outputs:  # a node's output can be the event of a node inside it
            if "/" in other and other in steps:
                steps[other].update(output=_output_of(event), has_output=True, message=message)
    return tuple(
        NodeStep(path=_bare(run), run=run.rsplit("/", 1)[-1], route=s["route"], output=s["output"], has_output=s["has_output"],
                 message_output=s["message"], branch=s["branch"], author=s["author"], seq=s["seq"])
        for run, s in steps.items()
    )


def without_transfers(trace: Any, parents: Sequence[str]) -> Any:
    """`trace` without the steps that are a sub-agent's run under an agent that is not a workflow
    (their parent's path, "" for the root, in `parents`): ADK 2 stamps those with node paths too, and
    nodes are a workflow's."""
    if not parents or not any(turn.nodes for turn in trace.turns):
        return trace
    hidden = set(parents)
    turns = tuple(turn.model_copy(update={"nodes": tuple(step for step in turn.nodes if step.path.rpartition("/")[0] not in hidden)})
                  for turn in trace.turns)
    return trace.model_copy(update={"turns": turns})


def workflow_output(events: Sequence[dict[str, Any]]) -> tuple[bool, Any]:
    """(whether the turn has one, the workflow's own output): the last event whose `output_for`
    names the root's path."""
    found: tuple[bool, Any] = (False, None)
    for event in events:
        for path in _info(event).get("output_for") or []:
            if isinstance(path, str) and "/" not in path:
                found = (True, _output_of(event))
    return found


def parallel_canonical(steps: Sequence[NodeStep]) -> list[NodeStep]:
    """The steps with each stretch of parallel branches (consecutive steps that have a branch) in
    branch order, each branch's own steps in their order: parallel branches finish in any order, and
    that order says nothing about the workflow."""
    out: list[NodeStep] = []
    stretch: list[NodeStep] = []
    for step in [*steps, None]:
        if step is not None and step.branch:
            stretch.append(step)
            continue
        if stretch:
            order = {branch: i for i, branch in enumerate(sorted({s.branch or "" for s in stretch}))}
            out += sorted(stretch, key=lambda s: order[s.branch or ""])  # stable: a branch keeps its order
            stretch = []
        if step is not None:
            out.append(step)
    return out


def visits(steps: Sequence[NodeStep]) -> dict[str, int]:
    """How many times each node ran (by its name and by its path)."""
    counts: dict[str, int] = {}
    for step in steps:
        for key in dict.fromkeys((step.name, step.path)):
            counts[key] = counts.get(key, 0) + 1
    return counts


def routes(steps: Sequence[NodeStep]) -> list[tuple[str, Optional[Any]]]:
    """(node name, route) of each step that took one."""
    return [(step.name, step.route) for step in steps if step.route is not None]
