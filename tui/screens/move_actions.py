"""The workbench screen's moves: the next and previous failure (n, N) in screen order, divergence
([, ]), turn (t, T) and layer (1–5)."""

from __future__ import annotations


class MoveActions:
    """Mixed into WorkbenchScreen: uses its `workbench`, `tree`, `detail`, `view` and `current`."""

    def _move_to_failure(self, step: int) -> None:
        ids = self.tree.visible_ids
        if not ids:
            return
        current = self.tree.current_case_id
        start = ids.index(current) if current in ids else -1
        for offset in range(1, len(ids) + 1):
            position = start + step * offset
            case_id = ids[position % len(ids)]
            state = self.workbench.cases.get(case_id)
            if state is not None and state.failing:
                self.tree.select_case(case_id)
                if start >= 0 and not 0 <= position < len(ids):  # as vim's search says it hit the end
                    self.notify("wrapped to the first failure" if step > 0 else "wrapped to the last failure", timeout=2)
                return
        self.notify("no failing case")

    def action_next_failure(self) -> None:
        self._move_to_failure(1)

    def action_previous_failure(self) -> None:
        self._move_to_failure(-1)

    def _move_divergence(self, step: int) -> None:
        divergences = self._divergences()
        if not divergences:
            self.notify("no divergences in this case")
            return
        index = (self.view.divergence + step) % len(divergences)
        current = divergences[index]
        self.view = self.view._replace(divergence=index, turn=current.turn)
        self.detail.scroll_to_layer(current.layer)

    def action_next_divergence(self) -> None:
        self._move_divergence(1)

    def action_previous_divergence(self) -> None:
        self._move_divergence(-1)

    def _move_turn(self, step: int) -> None:
        """`t` / `T`: the next / previous turn, focused for accept; the first press on a case focuses
        the turn on screen (a case opens on its first divergent turn: that is the one to focus)."""
        state = self.current
        turns = len(state.run.diff.turns) if state and state.run and state.run.diff else 0
        if turns:
            self.view = self.view_at_turn((self.view.turn + (step if self.view.turn_focused else 0)) % turns)

    def view_at_turn(self, turn: int):
        """The view on `turn`, at its first divergence when the one shown is elsewhere (the line and
        the markers then speak of the turn shown); a turn with none keeps the one shown."""
        divergences = self._divergences()
        view = self.view._replace(turn=turn, turn_focused=True)
        current = divergences[view.divergence] if 0 <= view.divergence < len(divergences) else None
        first = next((i for i, d in enumerate(divergences) if d.turn == turn), None)
        if first is not None and (current is None or current.turn != turn):
            view = view._replace(divergence=first)
        return view

    def action_next_turn(self) -> None:
        self._move_turn(1)

    def action_previous_turn(self) -> None:
        self._move_turn(-1)

    def action_layer(self, layer: str) -> None:
        self.view = self.view._replace(layer=layer)
        self.detail.scroll_to_layer(layer)

    def action_scroll_detail(self, direction: int) -> None:
        """ctrl+d / ctrl+u: the detail's layers half a page down or up, as vim and lazygit scroll."""
        layers = self.detail.query_one("#layers")
        layers.scroll_relative(y=direction * max(1, layers.size.height // 2), animate=False)

    def action_timeline(self) -> None:
        """`6`: the turn's calls on a time axis, unfolded and brought into view; again, once in view: folded
        (open, below the screen on another case: brought into view)."""
        detail = self.detail
        if detail.timeline_open and not detail.layer_in_view("timeline"):
            detail.scroll_to_layer("timeline")
            return
        detail.timeline_open = not detail.timeline_open
        detail.redraw()
        if detail.timeline_open:  # once it is laid out unfolded: its top at the top of the layers
            detail.call_after_refresh(detail.scroll_to_layer, "timeline")

    def action_next_run(self, step: int = 1) -> None:
        """A case run more than once: show its next run's actual side (the diff, the divergence line,
        `e` and `a` follow it)."""
        state = self.current
        run = state.run if state is not None else None
        if run is None or len(run.outputs) < 2 or run.restage is None:
            self.notify("o steps through the runs of a case run more than once (repeats); this one ran once", timeout=3)
            return
        state.run = run.showing((run.shown + step) % len(run.outputs))
        self._show_selected()

    def on_case_tree_case_selected(self, message) -> None:
        # a key alone: the detail follows at once, in the cursor's frame; keys repeating: the tree moves
        # at once and the detail follows when they stop (30 ms after the last)
        burst = self._detail_timer is not None
        if burst:
            self._detail_timer.stop()
        else:
            self._show_selected()
        self._detail_timer = self.set_timer(0.03, lambda: self._burst_over(burst))

    def _burst_over(self, missed: bool) -> None:
        self._detail_timer = None
        if missed:
            self._show_selected()
