"""The case tree: agent → source file or category → case, with verdict glyph, score, re-run reason
and triage label. Attributes down: the app sets the cases and the filter; messages up: selecting a
case posts `CaseTree.CaseSelected`."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.workbench.events import CaseState
from agentdiff.core.workbench.history import headline_score
from agentdiff.core.workbench.progress import duration_text
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ..glyphs import glyph
from ..safe_text import shown as safe
from .lazy_rows import CaseNodes, Leaves, lay_out


@dataclass(frozen=True)
class CaseRow:
    """What the tree shows of one case (computed by the app from the workbench)."""

    state: CaseState
    agent: str
    group: str
    label: Optional[str] = None
    elapsed: Optional[float] = None  # seconds, while it runs
    since: Optional[str] = None  # against the run compared with (B): regressed, fixed, newly flaky, …
    look_alike: Optional[str] = None  # why its id could be taken for another's (`core.project.look_alikes`)


SINCE = {"regressed": "↓ regressed", "newly erroring": "↓ newly erroring", "newly flaky": "↓ newly flaky", "fixed": "↑ fixed",
         "added": "+ new since"}


MIN_NAME = 8  # cells a case's name keeps, however narrow the tree, before what follows it is cut


class CaseTree(Tree[str]):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", tooltip="Next case in the tree (also ↓); an unfolded group's row is passed over"),
        Binding("k", "cursor_up", "Up", tooltip="Previous case in the tree (also ↑)"),
        Binding("h", "fold", "Fold", tooltip="Fold the group of the case under the cursor (also ←); space folds or unfolds", show=False),
        Binding("left", "fold", "Fold", show=False),
        Binding("right", "unfold", "Unfold", tooltip="Unfold the group under the cursor (→)", show=False),
    ]

    # --- moving: the cursor lands on cases; an unfolded group's or agent's row is only a heading ---

    def _is_stop(self, line: int) -> bool:
        node = self._tree_lines[line].path[-1]
        return bool(node.data) or not (node.allow_expand and node.is_expanded)

    def _step(self, step: int) -> None:
        line = self.cursor_line if self.cursor_line != -1 else (-1 if step > 0 else self.last_line + 1)
        while 0 <= line + step <= self.last_line:
            line += step
            if self._is_stop(line):
                self.cursor_line = line
                self.scroll_to_line(line, animate=False)
                return

    def action_cursor_down(self) -> None:
        self._step(1)

    def action_cursor_up(self) -> None:
        self._step(-1)

    def action_fold(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        group = node if node.allow_expand and node.is_expanded else node.parent
        if group is not None and group is not self.root:
            group.collapse()
            self.move_cursor(group)

    def action_toggle_node(self) -> None:
        """Space: a folded group unfolds (the cursor on its first case); on a case, its group folds."""
        node = self.cursor_node
        if node is not None and node.allow_expand and not node.is_expanded:
            self.action_unfold()
        else:
            self.action_fold()

    def action_unfold(self) -> None:
        node = self.cursor_node
        if node is not None and node.allow_expand and not node.is_expanded:
            node.expand()
            self.call_after_refresh(self.action_cursor_down)

    def cases_under(self, node: TreeNode[str]) -> list[str]:
        """The ids of the cases shown under a group or agent row, in screen order."""
        found, stack = [], [node]
        while stack:
            current = stack.pop()
            if current.data:
                found.append(current.data)
            elif isinstance(current._children, Leaves):
                found.extend(current._children.ids)
            else:
                stack.extend(reversed(current.children))
        return found

    class CaseSelected(Message):
        def __init__(self, case_id: Optional[str]) -> None:
            super().__init__()
            self.case_id = case_id

    def __init__(self, **kwargs) -> None:
        self._leaf_groups: list[TreeNode[str]] = []  # the groups of cases (their rows made when looked at)
        super().__init__("cases", **kwargs)
        self.show_root = False
        self.guide_depth = 2
        self._case_nodes = CaseNodes()
        self._error_nodes: dict[int, object] = {}  # a load error's row → the error
        self._case_rows: dict[str, CaseRow] = {}
        self._group_nodes: dict[tuple[str, str], TreeNode[str]] = {}
        self._agent_nodes: dict[str, TreeNode[str]] = {}
        self.visible_ids: list[str] = []

    def process_label(self, label) -> Text:
        """Our labels are one-line Texts made for the tree alone: taken as they are (Textual's own
        copies and splits each one, which costs more than the rest of building the node)."""
        if isinstance(label, Text) and "\n" not in label.plain:
            return label
        return super().process_label(label)

    def set_cases(self, rows: list[CaseRow], visible: Callable[[CaseRow], bool], errors: Sequence[object] = (), keep_if_same: bool = False) -> None:
        """Rebuild the tree with the rows that pass `visible`, keeping the cursor on its case; files
        that failed to load are entries of their own, with file, line and reason. `keep_if_same` (the
        filter, as it is typed): nothing is rebuilt when the same cases would show in the same order."""
        shown = self._ordered(rows, visible)
        if keep_if_same and not errors and [row.state.ref.id for row in shown] == self.visible_ids:
            return
        self._invalidate = lambda: None  # Tree internals (Textual is pinned): once at the end, not once a node
        try:
            self._fill(rows, shown, errors)
        finally:
            del self._invalidate
        self._invalidate()

    @staticmethod
    def _ordered(rows: list[CaseRow], visible: Callable[[CaseRow], bool]) -> list[CaseRow]:
        """Screen order, the same in every view: agents and their groups in the order they first come
        among all the rows (filtered or not), the cases of a group in their own order. `n`, `N` and
        the cursor follow `visible_ids`, which is this order."""
        agent_rank: dict[str, int] = {}
        group_rank: dict[tuple[str, str], int] = {}
        for row in rows:
            agent_rank.setdefault(row.agent, len(agent_rank))
            group_rank.setdefault((row.agent, row.group), len(group_rank))
        return sorted((row for row in rows if visible(row)), key=lambda r: (agent_rank[r.agent], group_rank[(r.agent, r.group)]))

    def _fill(self, rows: list[CaseRow], shown: list[CaseRow], errors: Sequence[object]) -> None:
        current = self.current_case_id
        was_open = {key: node.is_expanded for key, node in self._group_nodes.items()}  # as the user left them
        agent_open = {key: node.is_expanded for key, node in self._agent_nodes.items()}
        cursor = self.cursor_node  # a group's or an agent's row: the cursor stays on it
        on_row = next((key for key, node in (*self._group_nodes.items(), *self._agent_nodes.items()) if node is cursor), None)
        self.clear()
        self._error_nodes = {}
        if errors:
            group = self.root.add(Text(f"⚠ {len(errors)} file(s) failed to load", style="bold red"), data="", expand=True)
            for error in errors:
                self._error_nodes[group.add_leaf(safe(Text(str(error), style="red")), data="").id] = error
        before, old_rows = self.visible_ids, self._case_rows
        self._case_rows, self.visible_ids = {r.state.ref.id: r for r in rows}, []
        members: dict[tuple[str, str], list[str]] = {}
        groups: dict[tuple[str, str], TreeNode[str]] = {}
        agents: dict[str, TreeNode[str]] = {}
        # a large suite opens with its groups folded, except those holding a failure or the cursor
        fold = len(shown) > self.UNFOLDED
        wanted = {(r.agent, r.group) for r in shown if r.state.failing or r.state.ref.id == current} if fold else set()
        for row in shown:
            agent = agents.get(row.agent)
            if agent is None:
                expand = agent_open.get(row.agent, True) or any(key[0] == row.agent for key in wanted)
                agent = agents[row.agent] = self.root.add(safe(Text(row.agent or "(no agent)", style="bold")), data="", expand=expand)
            group = groups.get((row.agent, row.group))
            if group is None:
                key = (row.agent, row.group)
                expand = key in wanted or was_open.get(key, not fold)
                group = groups[key] = agent.add(safe(Text(row.group, style="italic")), data="", expand=expand)
                members[key] = []
            members[(row.agent, row.group)].append(row.state.ref.id)
        self._case_nodes = CaseNodes()
        where = self._case_nodes.where
        for key, group in groups.items():
            ids = members[key]
            leaves = group._children = Leaves(self, group, ids)  # type: ignore[assignment]
            where.update(zip(ids, ((leaves, i) for i in range(len(ids)))))
            self.visible_ids += ids
        self._group_nodes, self._agent_nodes, self._leaf_groups = groups, agents, list(groups.values())
        row_node = (groups.get(on_row) or agents.get(on_row)) if on_row is not None and current is None else None
        if row_node is not None:
            self.call_after_refresh(self._move_to, row_node)
            return
        gone = old_rows.get(current) if current is not None else None
        target = current if current in self._case_nodes else self._instead_of(current, gone.state.ref.name if gone else None, before)
        if target is not None:  # the tree lays its lines out on the next refresh
            self.call_after_refresh(self.select_case, target)

    def _instead_of(self, gone: Optional[str], name: Optional[str], before: list[str]) -> Optional[str]:
        """Where the cursor goes when its case is gone: to the case of the same name (a traced conversation
        accepted into an eval set), else to the row that took its place, else to the first."""
        if not self.visible_ids:
            return None
        if gone is not None:
            same = next((i for i in self.visible_ids if self._case_rows[i].state.ref.name == name), None) if name else None
            if same is not None:
                return same
            if gone in before:
                return self.visible_ids[min(before.index(gone), len(self.visible_ids) - 1)]
        return self.visible_ids[0]

    def moved(self, rows: list[CaseRow]) -> bool:
        """Whether any of these rows belongs under another agent or group than the tree shows it (a
        case's agent is known once it runs; its cluster when it fails): a relabel will not do."""
        for row in rows:
            held = self._case_rows.get(row.state.ref.id)
            if held is not None and (held.agent, held.group) != (row.agent, row.group):
                return True
        return False

    def appearing(self, rows: list[CaseRow], visible: Callable[[CaseRow], bool]) -> bool:
        """Whether any of these rows, its run done, now passes the filter but is not in the tree (a
        case that errors while `status:error` is typed): only a rebuild shows it. A case that only
        started running waits for its verdict (with `f`, rows would come and go every second)."""
        return any(not row.state.running and row.state.ref.id not in self._case_nodes and visible(row) for row in rows)

    UNFOLDED = 1000  # more visible cases than this: groups start folded

    def update_case(self, row: CaseRow) -> None:
        self.update_cases([row])

    def update_cases(self, rows: Sequence[CaseRow]) -> None:
        """New rows for these cases: each labelled again when next drawn (a run of 50,000 cases starting
        draws a screenful), one repaint of what is on screen, and never a lay-out of the tree's lines.
        A node's `_updates` is in the key of its line's cached strip: only the changed rows are drawn."""
        made = self._case_nodes.made
        for row in rows:
            self._case_rows[row.state.ref.id] = row
            node = made(row.state.ref.id)
            if node is not None:
                node.relabel()
        if rows:
            self.refresh()

    def rows_first(self, case_ids: set[str], count: int) -> set[str]:
        """Up to `count` of these cases (more if need be): those with rows made (drawn, looked at) first."""
        made = {node.data for group in self._leaf_groups for node in group._children.made.values()} & case_ids  # type: ignore[attr-defined]
        return made | set(itertools.islice(case_ids - made, max(0, count - len(made))))

    def action_toggle_expand_all(self) -> None:
        """Textual's shift+space: on a case, its siblings are cases, which never unfold (and walking
        them would make every row of the group)."""
        if self.current_case_id is None:
            super().action_toggle_expand_all()

    def render_label(self, node: TreeNode[str], base_style, style) -> Text:
        """A case's row fitted to the tree's width as lazygit fits a file's: its name gives way, cut with
        an ellipsis, so its score (and what follows, as far as it fits) stays whole."""
        text = super().render_label(node, base_style, style)
        row = self._case_rows.get(node.data) if node.data else None
        depth, parent = 0, node.parent
        while parent is not None and parent.parent is not None:
            depth, parent = depth + 1, parent.parent
        width = self.scrollable_content_region.width - depth * self.guide_depth - 1
        if width <= 0 or text.cell_len <= width:
            return text
        if row is None:  # a group's row: cut with an ellipsis
            text.truncate(width, overflow="ellipsis")
            return text
        name = row.state.ref.name
        start = text.plain.find(name)
        if start < 0:
            return text
        head, rest = text[:start], text[start + len(name):]
        room = width - head.cell_len - min(rest.cell_len, max(0, width - head.cell_len - MIN_NAME))
        shown = text[start:start + len(name)]
        if shown.cell_len > room:
            shown = shown[:max(1, room - 1)] + Text("…", style="dim")
        fitted = head + shown + rest
        if fitted.cell_len > width:
            fitted.truncate(width, overflow="ellipsis")
        return fitted

    def label_of(self, case_id: str) -> Text:
        """A case's label, from its row (a row made when first read: `lazy_rows.CaseNode`)."""
        row = self._case_rows.get(case_id)
        return self.process_label(self._label(row)) if row is not None else Text(case_id)

    def _build(self) -> None:
        """Lay the lines out (Textual's own would walk every case: `lazy_rows`). The tree is never
        scrolled sideways (`overflow-x: hidden`), so its width is the widget's, not its longest row's."""
        lines = lay_out(self.root._children, self._leaf_groups)
        self._tree_lines_cached = lines  # type: ignore[assignment]
        self.virtual_size = Size(self.size.width, len(lines))
        if self.cursor_line != -1:
            if self.cursor_node is not None:  # on a case of a group folded meanwhile: on the group's row
                node = self.cursor_node
                self.cursor_line = node._line if node._line >= 0 or node.parent is None else node.parent._line
            if self.cursor_line >= len(lines):
                self.cursor_line = -1

    @staticmethod
    def _label(row: CaseRow) -> Text:
        state = row.state
        mark, style = glyph(state.status, state.running, state.stale)
        text = Text()
        text.append(f"{mark} ", style=style)
        text.append(state.ref.name)
        if row.look_alike:
            text.append(" ≈", style="bold yellow")  # its id looks like another's
        if state.run is not None:
            shown = score_text(state.run.result)
            if shown:
                text.append(f"  {shown}", style="dim")
        if row.label:
            text.append(f"  [{row.label}]", style="magenta")
        if row.since and row.since != "unchanged":
            text.append(f"  {SINCE.get(row.since, row.since)}", style="red" if row.since in ("regressed", "newly erroring", "newly flaky") else "green")
        if row.elapsed is not None:
            text.append(f"  {duration_text(row.elapsed)}", style="cyan")
        if state.reason and (state.running or state.stale):
            text.append(f"  {state.reason}", style="dim italic")
        return safe(text)

    def current_load_error(self) -> Optional[object]:
        """The load error whose row the cursor is on (`LoadError`: file, line, reason)."""
        node = self.cursor_node
        return self._error_nodes.get(node.id) if node is not None else None

    @property
    def current_case_id(self) -> Optional[str]:
        node = self.cursor_node  # a node of a tree since cleared is no case of this one
        return node.data if node is not None and node.data and self._case_nodes.get(node.data) is node else None

    def select_case(self, case_id: str) -> None:
        node = self._case_nodes.get(case_id)
        if node is None:
            return
        if node.parent is not None and not node.parent.is_expanded:
            node.parent.expand()  # its line exists once the tree has laid the group out again
            self.call_after_refresh(self._move_to, node)
        else:
            self._move_to(node)

    def _move_to(self, node: TreeNode[str]) -> None:
        self.move_cursor(node)
        self.scroll_to_node(node, animate=False)
        self.post_message(self.CaseSelected(node.data or None))  # also when the cursor line did not move

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        self.post_message(self.CaseSelected(event.node.data or None))


def score_text(result) -> str:
    """The score a case row shows: a flaky case's pass fraction (`1/3 runs`); else the score of the
    metric that failed it (the first failing, which decides the verdict as in ADK); else the worst
    gating score; "" when none was scored (a replay, an error) or nothing was expected yet (a new
    case: its scores say nothing of a baseline)."""
    if result.status is CaseStatus.NEW:
        return ""
    if result.pass_rate is not None and (result.pass_rate.min_pass_rate is not None or result.status is CaseStatus.FLAKY):
        return f"{result.pass_rate.passes}/{result.pass_rate.runs} runs"
    if result.status is CaseStatus.FLAKY and result.runs:
        passed = sum(run.status is CaseStatus.PASSED for run in result.runs)
        return f"{passed}/{len(result.runs)} runs"
    score = headline_score(result)
    return f"{score:.2f}" if score is not None else ""
