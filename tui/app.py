"""The agentdiff app: a thin `App` whose screen is the workbench screen.

`create_app` is the one factory: the CLI calls it with the real worker pool and file watcher, tests
with fakes (a fake pool, a scripted change source, a fake editor, a frozen clock).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

from agentdiff.core.run.options import RunOptions
from agentdiff.core.workbench.history import HISTORY_FILE, History
from agentdiff.core.workbench.triage import Triage
from agentdiff.core.workbench.watcher import ChangeSource, watched_folders, watchfiles_source
from agentdiff.core.workbench.workbench import Workbench
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from .commands import KeyCommands
from .editor import Editor, default_editor
from .safe_text import pictured
from .screens.workbench_screen import WorkbenchScreen


@dataclass
class Services:
    """Everything the app does to the outside world, injectable."""

    pool: object
    changes: Optional[ChangeSource]
    editor: Editor = default_editor


def _terminal_driver():
    """The driver for a real terminal: on Linux and the BSDs, Textual's, made to end with its terminal
    (`terminal_driver`); elsewhere Textual's choice. (Tests' headless runs use Textual's headless one.)"""
    if os.name != "posix" or os.environ.get("TEXTUAL_DRIVER"):
        return None
    from .terminal_driver import SturdyLinuxDriver

    return SturdyLinuxDriver


class AgentdiffApp(App):
    CSS_PATH = "app.tcss"
    COMMANDS = App.COMMANDS | {KeyCommands}  # Textual's own commands, and every key of the workbench
    TITLE = "agentdiff"
    BINDINGS = [Binding("q", "quit", "Quit", tooltip="Quit")]

    def __init__(self, workbench: Workbench, services: Services, project: str, triage: Triage, stacked_below: int = 100,
                 keep_runs: int = 0, confirm_live_above: int = 50) -> None:
        super().__init__(driver_class=_terminal_driver())
        self.animation_level = "none"  # as lazygit: a key's effect is drawn at once, in one frame, not over 300 ms of frames
        self.keep_runs, self.started = keep_runs, time.time()
        self.workbench = workbench
        self.services = services
        self.main = WorkbenchScreen(workbench, services, project, triage, stacked_below, confirm_live_above)

    def get_default_screen(self) -> Screen:
        return self.main

    def on_mount(self) -> None:
        from .assist.activity import ActivityReader

        self._activity = ActivityReader(self.workbench.root)  # what an assistant (`agentdiff mcp`) does, said here
        self.set_interval(1.0, self._assistant_activity)

    def _assistant_activity(self) -> None:
        for item in self._activity.new()[-5:]:
            self.notify(f"{item['who']} {item['what']}", title="assistant", timeout=4)

    def notify(self, message: str, *, title: str = "", severity="information", timeout: Optional[float] = None, markup: bool = True) -> None:
        """Every notification is plain text with its control characters pictured: messages carry
        case ids, file names and agent output, which must neither be read as markup nor reach the
        terminal as escapes."""
        super().notify(pictured(message), title=pictured(title), severity=severity, timeout=timeout, markup=False)

    def action_help_quit(self) -> None:
        """Ctrl+C: say how to quit (Textual's own message, in plain text like every notification)."""
        for key, active in self.active_bindings.items():
            if active.binding.action in ("quit", "app.quit"):
                self.notify(f"Press {key} to quit the app", title="Do you want to quit?")
                return

    def on_unmount(self) -> None:
        self.workbench.cancel()
        if self.workbench.history is not None:
            self.workbench.history.prune(self.workbench.snapshots, time.time())  # (its digests: written and waiting alike)
            self.workbench.history.close()  # what waits, written
        self.keep_session()

    def keep_session(self) -> None:
        """The session's last result of each case that ran, as a kept run (`compare`, `gate`)."""
        from .kept_session import keep_session

        keep_session(self.workbench, "tui", self.keep_runs, self.started)


def create_app(
    root: Path,
    paths: Sequence[Path],
    *,
    pool: Optional[object] = None,
    changes: Optional[ChangeSource] = None,
    watch: bool = True,
    editor: Editor = default_editor,
    clock: Callable[[], float] = time.time,
    options: Optional[RunOptions] = None,
    project: Optional[str] = None,
    stacked_below: int = 100,
    keep_runs: int = 0,
    confirm_live_above: int = 50,
) -> AgentdiffApp:
    """The app, wired: real pool and watcher by default; tests pass fakes."""
    if pool is None:
        from agentdiff.core.worker.pool import WorkerPool

        pool = WorkerPool()
    if changes is None and watch:
        changes = watchfiles_source(watched_folders(root, [*paths, *(options.agents_dirs if options else ())]))
    from agentdiff.core.baselines.journal import recover_at_start

    recover_at_start(root)  # a write a crash interrupted is rolled back before the first run scores it
    history = History(root / HISTORY_FILE)
    history.read_last_seconds()  # in its own thread while the suite loads: the first run's ETA looks them up
    workbench = Workbench(root, list(paths), pool, options or RunOptions(), clock, history)
    return AgentdiffApp(workbench, Services(pool, changes, editor), project or root.name, Triage.load(root), stacked_below, keep_runs, confirm_live_above)
