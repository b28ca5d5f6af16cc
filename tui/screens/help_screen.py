"""The help overlay: every key, what it does, and what replay and live mode can see."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS = [
    ("j / k, ↑ / ↓", "move in the case tree"),
    ("n / N", "next / previous failing case"),
    ("] / [", "next / previous divergence inside the case"),
    ("t / T", "next / previous turn"),
    ("1 2 3 4", "jump to the request / tool_calls / response / session layer (and focus it for accept)"),
    ("r / R", "re-run the selected case / all visible cases"),
    ("m", "switch replay ↔ live"),
    ("a / A", "accept the actual run as baseline (the case, or the focused turn or layer) / all visible failures; preview first"),
    ("z", "undo the last accept or re-record"),
    ("ctrl+r", "re-record the case live (runs the agent with its own model; confirm first)"),
    ("e", "open the file holding the expected value at its line in $VISUAL / $EDITOR"),
    ("/", "filter: words, status:failed, agent:x, label:x, layer:request; ! inverts a token"),
    ("f", "failures only"),
    ("l / c", "label the failure / comment on it (kept in agentdiff-triage.yaml)"),
    ("w", "pause / resume watching"),
    ("?", "this help"),
    ("ctrl+p", "command palette: every action"),
    ("q", "quit"),
]

MODES = (
    "Replay runs your agent's code with the recorded model answers: it sees prompts, tool declarations, "
    "model names, what tools write to state and tools that raise; it cannot see the model behaving "
    "differently. Live runs the model: it sees the model's behaviour."
)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [("escape", "dismiss", "Close"), ("question_mark", "dismiss", "Close"), ("q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        table = Table(show_header=True, header_style="bold", box=None, padding=(0, 2))
        table.add_column("key")
        table.add_column("action")
        for key, action in KEYS:
            table.add_row(key, action)
        with VerticalScroll(id="help-dialog"):
            yield Static(Text("agentdiff keys", style="bold"))
            yield Static(table)
            yield Static(Text("\n" + MODES, style="dim"))
