"""The session as a run that `compare` and `gate` read: each case's result in this session, else its
kept verdict, written to a report file inside the project (`.agentdiff/sessions/`), removed when the
server ends."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any


class CurrentState:
    """(A mixin of `AssistSession`: `workbench`, `kept` and `ready` are its.)"""

    def report(self) -> dict[str, Any]:
        """The session's last result of each case, as `run --json` reports them."""
        from agentdiff.core.reports.json_report import report_dict

        results = [s.run.result for s in self.workbench.cases.values() if s.run is not None]
        return report_dict(results, prices=self.workbench.options.prices, load_errors=self.workbench.errors)

    async def current_state(self) -> tuple[Path, str]:
        """The session as a run `compare` and `gate` read (a report file, rewritten at each call): each
        case's result in this session, else its kept verdict (marked `carried_from`: not run since);
        and a line that says what it holds."""
        from agentdiff.core.baselines.file_writes import atomic_write
        from agentdiff.core.formats.set_aside import made_state_dir

        await self.ready()
        report = self.report()
        ran = len(report["cases"])
        carried = [{**kept.case, "carried_from": kept.run} for i, s in self.workbench.cases.items()
                   if s.run is None and (kept := self.kept.verdicts.get(i)) is not None and kept.case is not None]
        report["cases"] += carried
        report["run"] = {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "source": "mcp", "session": True,
                         **({"partial": f"{ran} case(s) run in this session"} if ran < len(self.workbench.cases) and not carried else {})}
        path = self.session_file
        made_state_dir(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(atomic_write, path, json.dumps(report, separators=(",", ":")), False)
        unrun = len(self.workbench.cases) - ran - len(carried)
        said = (f"this session's current state: {ran} case(s) as run in this session"
                + (f", {len(carried)} carried from kept runs (not run since)" if carried else "")
                + (f", {unrun} never run (left out)" if unrun else ""))
        return path, said

    @property
    def session_file(self) -> Path:
        """Where `current_state` writes (removed when the server ends)."""
        return self.workbench.root / ".agentdiff" / "sessions" / f"mcp-{os.getpid()}.json"

