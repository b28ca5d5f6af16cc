"""The session as a run that `compare` and `gate` read, written to a report file inside the project
(`.agentdiff/sessions/`, removed when the server ends): `session`, each case's result now (else its
kept verdict); `start`, each case's first result in this session (else its kept verdict), the base
when no run was kept before."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any, Optional


class CurrentState:
    """(A mixin of `AssistSession`: `workbench`, `kept`, `ready`, `_edits_seen` and `_wait` are its.)"""

    _first: Optional[dict[str, Any]] = None  # case → its first result in this session

    def note_first(self, case_ids: Any) -> None:
        """The first result of each of `case_ids` in this session, kept (the `start` side)."""
        if self._first is None:
            self._first = {}
        for case_id in case_ids:
            state = self.workbench.cases.get(case_id)
            if state is not None and state.run is not None and case_id not in self._first:
                self._first[case_id] = state.run.result

    def report(self) -> dict[str, Any]:
        """The session's last result of each case, as `run --json` reports them."""
        from agentdiff.core.reports.json_report import report_dict

        results = [s.run.result for s in self.workbench.cases.values() if s.run is not None]
        return report_dict(results, prices=self.workbench.options.prices, load_errors=self.workbench.errors)

    async def current_state(self, side: str = "session") -> tuple[Path, str]:
        """`side` (session or start) as a report file, rewritten at each call, with a line that says what
        it holds. A case with no result of this session carries its kept verdict (`carried_from`)."""
        from agentdiff.core.baselines.file_writes import atomic_write
        from agentdiff.core.formats.set_aside import made_state_dir
        from agentdiff.core.reports.json_report import report_dict

        await self.ready()
        first = self._first or {}
        results = ([s.run.result for s in self.workbench.cases.values() if s.run is not None] if side == "session"
                   else [first[i] for i in self.workbench.cases if i in first])
        report = report_dict(results, prices=self.workbench.options.prices, load_errors=self.workbench.errors)
        ran = {case["id"] for case in report["cases"]}
        carried = [{**kept.case, "carried_from": kept.run} for i in self.workbench.cases
                   if i not in ran and (kept := self.kept.verdicts.get(i)) is not None and kept.case is not None]
        report["cases"] += carried
        report["run"] = {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "source": "mcp", "session": side}
        path = self.session_file.with_name(f"{self.session_file.stem}-{side}.json")
        made_state_dir(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(atomic_write, path, json.dumps(report, separators=(",", ":")), False)
        unrun = len(self.workbench.cases) - len(ran) - len(carried)
        what = "current state" if side == "session" else "start (each case's first result in it)"
        said = (f"this session's {what}: {len(ran)} case(s) as run in this session"
                + (f", {len(carried)} carried from kept runs (not run since)" if carried else "")
                + (f", {unrun} never run (left out)" if unrun else ""))
        return path, said

    def _edited_since(self, mark: float, every: bool = False) -> list[Path]:
        """The files some case depends on that changed since `mark` (the first one, unless `every`)."""
        found = []
        for path in self.workbench.index.paths():
            try:
                if path.stat().st_mtime >= mark:
                    found.append(path)
                    if not every:
                        break
            except OSError:
                continue
        return found

    async def settled(self, timeout: float) -> tuple[list[str], list[str]]:
        """Before a judgement of the current state: an edit just saved seen, and the runs in flight waited
        for (up to `timeout`); (the cases still running, the stale ones not re-run)."""
        await self._edits_seen()
        busy = [i for i, s in self.workbench.cases.items() if s.running or self.workbench.busy(i)]
        if busy:
            await self._wait(busy, timeout, None)
        states = self.workbench.cases.items()
        return ([i for i, s in states if s.running or self.workbench.busy(i)],
                [i for i, s in states if s.stale and not s.running and not self.workbench.busy(i)])

    @property
    def session_file(self) -> Path:
        """Where `current_state` writes (with `-session` or `-start`; removed when the server ends)."""
        return self.workbench.root / ".agentdiff" / "sessions" / f"mcp-{os.getpid()}.json"

    def forget_files(self) -> None:
        for side in ("session", "start"):
            try:
                self.session_file.with_name(f"{self.session_file.stem}-{side}.json").unlink(missing_ok=True)
            except OSError:
                pass
