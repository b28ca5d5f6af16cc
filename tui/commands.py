"""The command palette's agentdiff commands: every key of the workbench, found by its title, its
short name or the words of its description (`mode` finds `m`), each run as if its key were pressed."""

from __future__ import annotations

from functools import partial
from typing import Iterator

from textual.command import DiscoveryHit, Hit, Hits, Provider


class KeyCommands(Provider):
    def _commands(self) -> Iterator[tuple[str, str, object]]:
        for _, title, help, run in self._named():
            yield title, help, run

    def _named(self) -> Iterator[tuple[str, str, str, object]]:
        """(the key's short name, its title, its help line, what it runs) for every key of the workbench."""
        screen = self.app.main  # type: ignore[attr-defined]
        for binding in screen.BINDINGS:
            if binding.action in ("tree_down", "tree_up"):
                continue  # moving the cursor is no command
            # the short name and its key as the title (what a list of commands reads by); the help line says what it does
            title = f"{binding.description} · key {binding.key_display or binding.key}"
            yield binding.description, title, binding.tooltip or binding.description, partial(screen.run_action, binding.action)

    async def discover(self) -> Hits:
        for title, help, run in self._commands():
            yield DiscoveryHit(title, run, help=help)

    async def search(self, query: str) -> Hits:
        """A key whose short name starts with the query first ("accept": Accept, Accept all), then the
        best matches of the short names, then of the titles and help lines (which mention other keys'
        words: "focus it for accept")."""
        matcher = self.matcher(query)
        wanted = query.strip().lower()
        for name, title, help, run in self._named():
            score = max(matcher.match(name), 0.6 * matcher.match(title), 0.5 * matcher.match(help))
            if wanted and name.lower().startswith(wanted):
                score = 1.0 + score
            if score > 0:
                yield Hit(score, matcher.highlight(title), run, text=title, help=help)
