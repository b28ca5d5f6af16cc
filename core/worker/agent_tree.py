"""The agents under an ADK root agent, as ADK will run them: every LlmAgent (to instrument its model),
and the agents that are not workflows whose sub-agents ADK 2 stamps with node paths (a sub-agent's
run, not a workflow's node)."""

from __future__ import annotations

from typing import Any


def llm_agents(agent: Any) -> list[Any]:
    """Every LlmAgent under `agent`: its sub-agents, the nodes of its workflow graphs (nested ones,
    parallel workers' nodes) and the agents its agent tools run. (One a node creates as it runs is
    instrumented at its first model call: `TracePlugin.before_model_callback`.)"""
    from google.adk.agents.llm_agent import LlmAgent

    found, stack, seen = [], [agent], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, LlmAgent):
            found.append(node)
        graph = getattr(node, "graph", None)
        stack.extend(reversed([*(getattr(node, "sub_agents", None) or []), *(getattr(graph, "nodes", None) or []),
                               getattr(node, "node", None), *(getattr(tool, "agent", None) for tool in _tools_of(node))]))
    return found


def transfer_parents(agent: Any) -> list[str]:
    """The agents under `agent` that are not workflows and have sub-agents, by their node path below it
    ("" for `agent` itself): ADK 2 gives their sub-agents node paths as it gives a workflow's nodes. A
    workflow's own graph is not walked: its nodes are its nodes."""
    try:
        from google.adk.workflow import Workflow
    except ImportError:  # an ADK with no workflows gives no node paths
        return []
    found: list[str] = []
    stack = [(agent, "")]
    while stack:
        node, path = stack.pop()
        subs = getattr(node, "sub_agents", None) or []
        if isinstance(node, Workflow) or not subs:
            continue
        found.append(path)
        stack.extend((sub, f"{path}/{sub.name}".lstrip("/")) for sub in subs if getattr(sub, "name", None))
    return found


def _tools_of(node: Any) -> list[Any]:
    tools = getattr(node, "tools", None)
    return list(tools) if isinstance(tools, (list, tuple)) else []
