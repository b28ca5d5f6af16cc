"""What the case tree shows of each case, and the facts the filter matches against."""

from __future__ import annotations

import os
from typing import Optional, Sequence

from agentdiff.core.project.family import family_of
from agentdiff.core.reports.compare import category
from agentdiff.core.workbench.events import CaseState
from agentdiff.core.workbench.triage import Triage

from rich.text import Text

from .case_filter import CaseFacts
from .glyphs import glyph
from .widgets.case_tree import CaseRow


def case_row(state: CaseState, triage: Triage, now: float = 0.0, by_cluster: bool = False, base: Optional[dict] = None,
             agent_label: Optional[str] = None, look_alike: Optional[str] = None) -> CaseRow:
    """`now` (the workbench's clock): a running case shows how long it has been running. `by_cluster`:
    failing cases under their failure cluster (then their agent), the others under their verdict.
    `base`: the cases of a kept run compared with (`B`), by id: the row says what changed since.
    `agent_label`: its agent as found before it runs, named as its run will name it (so the case need
    not move in the tree when it has run)."""
    ref = state.ref
    if state.run is not None and state.run.agent is not None:
        agent = state.run.agent.label
    else:
        family = family_of(ref)
        agent = family.named_agent(ref) or agent_label or os.path.basename(os.path.dirname(str(family.unit(ref))))  # no agent found: its folder (a Path's parent costs 30 µs)
    group = family_of(ref).tree_group(ref)
    elapsed = now - state.started if state.running and state.started is not None else None
    if by_cluster:
        cluster = state.run.result.cluster if state.run is not None else None
        top = f"✗ {cluster}" if cluster else ("✓ passing" if state.status is not None and not state.failing
                                              else "(not run)" if state.status is None else "other failures")
        agent, group = top, agent
    since = None
    if base is not None and state.status is not None:  # compared with a kept run (B)
        since = category((base.get(ref.id) or {}).get("status"), state.status.value)
    return CaseRow(state, agent, group, triage.label_of(ref.id), elapsed, since, look_alike)


def case_facts(row: CaseRow) -> CaseFacts:
    state = row.state
    status = "running" if state.running else "stale" if state.stale else (state.status.value if state.status else "not run")
    layers = state.run.changed_layers if state.run else ()
    mode = state.run.result.mode if state.run else ""
    return CaseFacts(state.ref.id, status, row.agent, row.label or "", mode, layers)


def group_summary(title: str, states: list[CaseState], folded: bool) -> Text:
    """What the detail shows for a group's or agent's row: its cases by verdict, and those failing."""
    text = Text(title, style="bold")
    text.append(f"\n{len(states)} case{'s' if len(states) != 1 else ''}:")
    counts: dict[tuple[str, str], int] = {}
    for state in states:
        mark = glyph(state.status, state.running, state.stale)
        counts[mark] = counts.get(mark, 0) + 1
    for (mark, style), count in counts.items():
        text.append(f"  {mark} {count}", style=style)
    failing = [state.ref.name for state in states if state.failing]
    if failing:
        text.append(f"\nfailing: {', '.join(failing[:12])}{' …' if len(failing) > 12 else ''}", style="red")
    text.append("\nspace or → unfolds the group" if folded else "\nh or ← folds it · j/k move between cases", style="dim")
    return text


class LookAlikes:
    """The case ids a reader could take for another's (`core.project.look_alikes`, marked ≈ in the tree),
    found again only when the cases change."""

    def __init__(self) -> None:
        self._for: tuple = ()
        self.notes: dict[str, str] = {}

    def update(self, cases: dict) -> None:
        ids = tuple(cases)
        if ids != self._for:
            from agentdiff.core.project.look_alikes import look_alikes

            self._for, self.notes = ids, look_alikes(state.ref for state in cases.values())


def startup_notices(triage: Triage, alike: dict[str, str], unread: Sequence[str] = ()) -> list[str]:
    """What the workbench says once when it opens: state files set aside or rolled back, ids that look
    alike, a failure dictionary that cannot be read, and with no case found, discovery's notes (eval
    sets named otherwise, and how to include them)."""
    from agentdiff.core.formats.set_aside import take_notices

    said = take_notices()
    if unread:
        said.append("no cases found. " + "\n".join(unread))
    if alike:
        said.append(f"{len(alike)} case id(s) look like another's (marked ≈; `agentdiff list` says why): rename them so each reads as itself")
    if triage.error:
        said.append(f"{triage.error}: labels and notes are not shown or written until it is fixed")
    return said


def no_cases_hint() -> Text:
    """The detail of a workbench with no case yet: what it reads, and that cases appear as they are saved."""
    return (Text("No cases here yet.\n", style="bold")
            + Text("agentdiff reads ADK eval sets (*.evalset.json, *.test.json) and their test_config.json, conformance cases "
                   "(spec.yaml), adk test fixtures (tests/*.json), agents-cli datasets, and OpenTelemetry trace files "
                   "(traces.json): each shows here as it is saved.\n\n", style="dim")
            + Text("From conversations: run `agentdiff receive` in this folder and point an ADK app's OTLP exporter at it "
                   "(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:4318/v1/traces); each conversation arrives as a new case, "
                   "and a makes it one. See the README's quick start.", style="dim"))


def load_error_summary(error) -> Text:
    """The detail for a file that failed to load: where and why, whole."""
    return (Text("⚠ could not load this file\n", style="bold red") + Text(str(error), style="red")
            + Text("\n\nits cases are not run until it loads; e opens it at that line", style="dim"))
