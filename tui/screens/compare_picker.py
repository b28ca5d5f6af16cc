"""The run picker of `B`: compare the workbench with a kept run (its regressions marked in the tree,
its actual beside the current one in the detail), with agents-cli's grade results of the project
(their scores beside the current ones), with a trace file of the project (scored first, with no agent
call), or with the baselines again."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.reports.agents_cli_runs import grade_result_files
from agentdiff.core.reports.kept_runs import kept_runs
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from .dialog import Dialog

BASELINES = "-"  # the option that goes back to comparing with the baselines
TRACES = "traces:"  # an option's id that names a trace file: its conversations are scored first


class ComparePicker(Dialog[Optional[str]]):
    """Returns a kept run's folder, BASELINES, or None when closed."""

    BINDINGS = [("escape", "dismiss", "Close"), ("q", "dismiss", "Close"), ("j", "down", "Down"), ("k", "up", "Up")]

    def __init__(self, root: Path, current: Optional[str], agents_cli_roots: Sequence[Path] = (), traces: Sequence[Path] = ()) -> None:
        super().__init__()
        self.root, self.current, self.agents_cli_roots, self.traces = root, current, agents_cli_roots, traces

    def compose(self) -> ComposeResult:
        options = [Option(Text("the baselines (expected | actual)", style="bold" if self.current is None else ""), id=BASELINES)]
        for run in kept_runs(self.root):
            folder = run.path.parent
            summary = run.report.get("summary") or {}
            git = run.meta.get("git") or {}
            where = f"{git.get('branch') or '?'}@{(git.get('commit') or '')[:7]}{' dirty' if git.get('dirty') else ''}" if git else "no git"
            label = Text(f"{run.name}  {run.meta.get('source', '?'):<4} {where}  ✓ {summary.get('passed', 0)} ✗ {summary.get('failed', 0)}"
                         f" ! {summary.get('error', 0)} of {summary.get('total', 0)}", style="bold" if str(folder) == self.current else "")
            options.append(Option(label, id=str(folder)))
        for path in grade_result_files(self.agents_cli_roots):  # agents-cli's: scores, no verdicts
            shown_path = path.relative_to(self.root) if path.is_relative_to(self.root) else path
            options.append(Option(Text(f"{shown_path}  agents-cli eval grade: its scores beside the current ones",
                                       style="bold" if str(path) == self.current else ""), id=str(path)))
        for path in self.traces:  # OpenTelemetry traces: scored when chosen, then kept as a run
            shown_path = path.relative_to(self.root) if path.is_relative_to(self.root) else path
            options.append(Option(Text(f"{shown_path}  traced conversations: scored now, with no agent call, then compared"), id=TRACES + str(path)))
        with Vertical(id="prompt-dialog"):
            yield Static("Compare with a kept run (B)", classes="prompt-question")
            yield OptionList(*options, id="runs")
            yield Static("enter chooses · esc closes · runs are kept by agentdiff run and each TUI session; grade results are agents-cli's; "
                         "trace files are scored when chosen", classes="prompt-hint")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_down(self) -> None:
        self.query_one(OptionList).action_cursor_down()

    def action_up(self) -> None:
        self.query_one(OptionList).action_cursor_up()
