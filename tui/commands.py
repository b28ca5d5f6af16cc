"""The command palette's agentdiff commands: every key of the workbench, found by its title, its
short name or the words of its description (`mode` finds `m`), each run as if its key were pressed."""

from __future__ import annotations

from functools import partial
from typing import Iterator

from textual.command import DiscoveryHit, Hit, Hits, Provider


class KeyCommands(Provider):
    def _commands(self) -> Iterator[tuple[str, str, object]]:
        screen = self.app.main  # type: ignore[attr-defined]
        for binding in screen.BINDINGS:
            if binding.action in ("tree_down", "tree_up"):
                continue  # moving the cursor is no command
            title = binding.tooltip or binding.description
            yield title, f"{binding.description} · key {binding.key_display or binding.key}", partial(screen.run_action, binding.action)

    async def discover(self) -> Hits:
        for title, help, run in self._commands():
            yield DiscoveryHit(title, run, help=help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help, run in self._commands():
            score = max(matcher.match(title), 0.9 * matcher.match(help))
            if score > 0:
                yield Hit(score, matcher.highlight(title), run, text=title, help=help)
