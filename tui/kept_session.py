"""A long-lived session's results kept as a run (`compare`, `gate` read it): the TUI's when it quits,
`agentdiff mcp`'s when its client goes."""

from __future__ import annotations

from agentdiff.core.workbench.workbench import Workbench


def keep_session(workbench: Workbench, source: str, keep_runs: int, started: float) -> None:
    """Each case's last result in the session; marked partial when some case had no current verdict."""
    if keep_runs <= 0:
        return
    from agentdiff.core.reports.kept_runs import RunKeeper

    states = list(workbench.cases.values())
    ran = [state.run for state in states if state.run is not None and not state.running]
    keeper = RunKeeper(workbench.root, source, keep_runs, started)
    unfinished = sum(1 for state in states if state.run is None or state.running or state.stale)
    if unfinished:  # closed before every case had a fresh verdict: not a whole run to compare by default
        keeper.partial = f"{unfinished} of {len(states)} cases had no current verdict when the session closed"
    for run in ran:
        keeper.add(run)
    keeper.finish([run.result for run in ran], workbench.options.prices)
