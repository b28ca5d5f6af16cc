"""The detail's turn tabs."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import Tab, Tabs


class TurnTabs(Tabs):
    """The turn tabs: a tab the user clicks, or moves to with the tabs' own keys, is a turn chosen
    (`Chosen`); one activated by a redraw is not."""

    class Chosen(Message):
        def __init__(self, tab_id: str) -> None:
            super().__init__()
            self.tab_id = tab_id

    async def _on_tab_clicked(self, event: Tab.Clicked) -> None:
        await super()._on_tab_clicked(event)
        if event.tab.id:
            self.post_message(self.Chosen(event.tab.id))

    def _move_tab(self, direction: int) -> None:
        super()._move_tab(direction)
        if self.active:
            self.post_message(self.Chosen(self.active))
