"""The workbench screen's layout keys and its fit to the terminal: a short terminal gets a compact
detail header (`i` shows the details), a narrow one stacks expected above actual, `+` maximises the
detail and `backslash` hides the tree."""

from __future__ import annotations

from textual import events


#: At most this many rows: the detail's header is one line or two, layers without divergences folded.
COMPACT_ROWS = 30


class LayoutActions:
    """Mixed into WorkbenchScreen: uses its `detail`, `tree`, `stacked_below` and `notify`."""

    maximised = False

    def action_plots(self) -> None:
        """`p`: the case's kept runs plotted, or back to its layers."""
        self.detail.plotting, self.detail.gridding = not self.detail.plotting, False
        self.detail.redraw()

    def action_grid(self) -> None:
        """`g`: a repeated case's runs side by side, or back to its layers."""
        self.detail.gridding, self.detail.plotting = not self.detail.gridding, False
        self.detail.redraw()

    def on_resize(self, event: events.Resize) -> None:
        self.fit_layout()

    def fit_layout(self) -> None:
        width, height = self.app.size
        detail = self.detail
        compact, stacked = height <= COMPACT_ROWS or self.maximised, width < self.stacked_below
        if (compact, stacked) != (detail.compact, detail.stacked):
            detail.compact, detail.stacked = compact, stacked
            detail.set_class(compact, "compact")
            detail.redraw()

    def action_details(self) -> None:
        detail = self.detail
        detail.details = not detail.details
        detail.redraw()
        if not detail.compact:
            self.notify("the header shows everything at this height: i matters at 30 rows or fewer", timeout=3)

    def action_maximise(self) -> None:
        """The detail alone: no tree, no header bar; keys still move between cases. Again: back."""
        self.maximised = not self.maximised
        self.tree.set_class(self.maximised or self.tree_hidden, "hidden")
        self.query_one("#header").set_class(self.maximised, "hidden")
        self.fit_layout()
        self._focus_tree()

    tree_hidden = False

    def action_toggle_tree(self) -> None:
        self.tree_hidden = not self.tree_hidden
        self.tree.set_class(self.tree_hidden or self.maximised, "hidden")
        self._focus_tree()

    def _focus_tree(self) -> None:
        """The tree takes the keys again when it shows; hidden, `j`/`k` still move (the screen's)."""
        if not (self.tree_hidden or self.maximised):
            self.call_after_refresh(self._tree_takes_keys)

    def _tree_takes_keys(self) -> None:
        # unless `/` opened the filter meanwhile (a burst typed right after `+`): its keys stay its text
        if not self.filter_bar.display:
            self.set_focus(self.tree)

    def action_tree_down(self) -> None:
        self.tree.action_cursor_down()

    def action_tree_up(self) -> None:
        self.tree.action_cursor_up()
