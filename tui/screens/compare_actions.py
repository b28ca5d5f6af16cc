"""The workbench screen's `B`: compare with a kept run, agents-cli's grade results, or a trace file of the
project, whose traced conversations are scored first, with no agent call, and kept as a run."""

from __future__ import annotations

from pathlib import Path

from textual import work

from ..versus import Versus, agents_cli_roots, ids_by_eval_id


class CompareActions:
    """Mixed into WorkbenchScreen: uses its `workbench`, `detail`, `versus`, `notify`, `_row`,
    `_rebuild_tree` and `_show_selected`."""

    def action_compare_with(self) -> None:
        from agentdiff.core.formats.otlp.names import is_trace_file_name

        from .compare_picker import BASELINES, TRACES, ComparePicker

        def chosen(folder) -> None:
            if folder is None:
                return
            if folder.startswith(TRACES):
                self.compare_with_traces(Path(folder[len(TRACES):]))
            else:
                self.compare_with(None if folder == BASELINES else folder)

        roots = agents_cli_roots(self.workbench.root, self.workbench.cases.values())
        traces = sorted(p for p in self.workbench.standing if is_trace_file_name(p.name) and p.is_file())  # the project's, as loaded
        self.app.push_screen(ComparePicker(self.workbench.root, str(self.versus.folder) if self.versus else None, roots, traces), chosen)

    def compare_with(self, folder) -> None:
        """Compare with the kept run (or grade results) at `folder`; None: with the baselines again."""
        from agentdiff.core.reports.kept_runs import RunNotFound

        try:
            self.versus = None if folder is None else Versus.load(str(folder), ids_by_eval_id(self.workbench.cases.values()))
        except RunNotFound as exc:  # pruned meanwhile, by a run elsewhere
            self.notify(f"cannot compare: {exc}", severity="error")
            return
        self.detail.versus = self.versus
        self._rebuild_tree()
        self._show_selected()
        if self.versus is not None and self.versus.scores_only:
            self.notify(f"{self.versus.name}: agents-cli's scores of {len(self.versus.cases)} case(s) shown beside the current ones "
                        "(grade results hold no verdicts or traces); B again to change", timeout=4)
        elif self.versus is not None:
            regressed = sum(1 for state in self.workbench.cases.values() if self._row(state).since in ("regressed", "newly erroring"))
            self.notify(f"compared with {self.versus.name}: {regressed} case(s) regressed since; B again to change", timeout=4)

    @work(group="traces", exclusive=True)
    async def compare_with_traces(self, path: Path) -> None:
        """Score the traced conversations of a trace file against the cases they map to (no agent call),
        keep them as a run, and compare with it."""
        from agentdiff.core.formats.source_file import display_path
        from agentdiff.core.reports.traced_runs import score_trace_files

        wb = self.workbench
        keep = getattr(self.app, "keep_runs", 0)
        shown = display_path(path, wb.root)
        if keep <= 0:
            self.notify(f"{shown}: runs are not kept here (keep_runs = 0): score it with `agentdiff score {shown}`", severity="error")
            return
        self.notify(f"scoring the traced conversations of {shown} (no agent call)…", timeout=3)
        scored = await score_trace_files([path], [s.ref for s in wb.cases.values()], wb.pool, wb.options, wb.root, keep)
        if scored.kept is None:
            why = scored.errors[0].message if scored.errors else "no conversation in it maps to a case here"
            self.notify(f"{shown}: nothing scored: {why}", severity="error", timeout=8)
            return
        if scored.errors:
            self.notify(f"{shown}: {len(scored.errors)} conversation(s) not scored: {scored.errors[0].message}", severity="warning", timeout=6)
        self.compare_with(scored.kept)
