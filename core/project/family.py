"""A format's family: the stages the pipeline asks of the cases one format defines, and the registry
it asks them of.

A case ref (`case_refs`) names its family (`ref.family`, a class attribute); `family_of(ref)` gives the
`CaseFamily` that knows that format's cases at every stage: where a case loads from and what a save of
it changes, how it runs and what it is diffed against, how it is re-scored, accepted and recorded, and
what a review of its baseline says. The workbench, baselines, reports, command line, MCP server and TUI
speak to this interface only.

The families themselves (`agentdiff.core.families`) sit above the floors they use (a family's run is
the run floor's, its accept the baselines floor's), so the registry names them by module and loads
them when first asked, as pytest loads its plugins: a new format is a module family of its own under
`core/formats/`, a family and a finder under `core/families/`, and a line in `REGISTERED` and in
`FINDERS` (docs/formats/families.md).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, ClassVar, Optional

#: Every family, by the name its refs give (`ref.family`, also the `kind` reports name), as `module:Class`.
REGISTERED: dict[str, str] = {
    "eval_set": "agentdiff.core.families.eval_set:EvalSetFamily",
    "agents_cli": "agentdiff.core.families.agents_cli:AgentsCliFamily",
    "conformance": "agentdiff.core.families.conformance:ConformanceFamily",
    "adk_test": "agentdiff.core.families.adk_test.family:AdkTestFamily",
    "traces": "agentdiff.core.families.traces.family:TracesFamily",
}


#: Families whose cases discovery finds with a finder of their own (`CaseFinder`), by name, as `module:Class`
#: (a light module: `list` loads it, not the family's run or accept). ADK's eval sets and conformance
#: folders and agents-cli's datasets are found by discovery's own walk (`discovery._walk`).
FINDERS: dict[str, str] = {
    "adk_test": "agentdiff.core.families.adk_test.cases:FixtureFinder",
    "traces": "agentdiff.core.families.traces.cases:TraceFinder",
}


class CaseFinder:
    """How discovery finds one family's cases: which files are its units, and how they load."""

    def looks_in(self, folder: Path) -> bool:
        """Whether a folder of the walk may hold its units (asked once a folder, before any of its files)."""
        return True

    def claims(self, path: Path) -> bool:
        """Whether a file is one of its units, by its name and place (nothing is read)."""
        raise NotImplementedError

    def load(self, units: list[Path], root: Path, errors: list, checks_near: Any) -> list:
        """The case refs of its units; what does not load goes to `errors` (`LoadError`: file, line,
        reason) and hides nothing else. `checks_near(folder)`: the nearest `agentdiff-checks.yaml`."""
        raise NotImplementedError


class CaseFamily:
    """The stages one format provides. Each takes a case ref of the family (and what that stage needs);
    the pipeline never asks which format it holds. Defaults are those most formats share."""

    name: ClassVar[str]
    #: Its cases' place in lists: families by this, then by category (a file's cases keep their order).
    listed_after: ClassVar[int] = 0
    #: Whether its cases replay recordings unless the run asks for live ones (and so cost no model call).
    replays: ClassVar[bool] = False
    #: Why an accept writes the whole case, never one turn or layer of it (None: a turn or layer may be chosen).
    accepted_whole: ClassVar[Optional[str]] = None
    #: Where its agent is named or placed (`named_agent`, `placed_agent`), as resolution reasons say it.
    agent_named_in: ClassVar[str] = ""
    #: Its metrics with no threshold are scores to show (agents-cli grades without thresholds), not ADK's
    #: informational counts.
    scores_without_threshold: ClassVar[bool] = False

    # --- discover and load -------------------------------------------------------------------------
    def unit(self, ref: Any) -> Path:
        """The file or folder the case loads from (as discovery found it, not resolved)."""
        raise NotImplementedError

    def group(self, ref: Any) -> str:
        """What lists and `doctor` group its cases by: the file they come from."""
        return ref.source

    def eval_key(self, ref: Any) -> Optional[str]:
        """A name besides its id and name that a query may give for it (an eval set's eval_id)."""
        return None

    def stands_in_for(self, ref: Any) -> Optional[str]:
        """The eval key of the case it stands in for until that case exists (a traced conversation, until
        it is accepted as an EvalSet case): discovery leaves it out once a case of that key is found."""
        return None

    def tree_group(self, ref: Any) -> str:
        """What the TUI's case tree groups it under, below its agent: its file's name."""
        return self.unit(ref).name

    def named_agent(self, ref: Any) -> Optional[str]:
        """The agent its own files name, if they name one: it runs with that agent (shown before it has run)."""
        return None

    def placed_agent(self, ref: Any) -> Any:
        """The agent its format fixes by where the case lies, if it does (`worker.jobs.AgentRef`; an `adk
        test` fixture's is the folder above its `tests/`, whatever else is configured, as ADK takes it)."""
        return None

    def project_agent(self, ref: Any, root: Path, tried: list[str]) -> Any:
        """Its agent by its project's own rule, when its format has one (`project.agents.AgentResolution`),
        asked after the configured mapping and `--agents`; None: ADK's rules for eval sets."""
        return None

    def watched(self, ref: Any, unit: Path) -> tuple[frozenset[Path], Optional[Path]]:
        """The files that define it (a save of one reloads it) and the config that scores it."""
        raise NotImplementedError

    def owned(self, ref: Any, unit: Path, resolve: Any) -> list[Path]:
        """The files whose change in a commit is its own (`reports.changed_since`; `resolve` resolves a
        path once per report); none: any file in its unit, a folder."""
        raise NotImplementedError

    def content(self, ref: Any) -> tuple[object, object]:
        """Its content in two halves: what its agent is given, and what it is judged by (a change of the
        first re-runs it, of the second re-scores its last run)."""
        raise NotImplementedError

    def editor_place(self, ref: Any) -> tuple[Path, Optional[int], Optional[int]]:
        """Where an editor opens it: file, line, column."""
        raise NotImplementedError

    def listed(self, ref: Any) -> str:
        """What `list` says of it after its name, bracketed."""
        raise NotImplementedError

    def described(self, ref: Any) -> dict[str, Any]:
        """What `list --json` says of it besides id, source, category and name (its `kind` first)."""
        raise NotImplementedError

    def names(self, ref: Any) -> tuple[Optional[str], str, Optional[str]]:
        """Its set's id, its own id within the set and its description, as results carry them."""
        raise NotImplementedError

    def registration(self, ref: Any) -> tuple[Path, str]:
        """The registration file beside its baseline (who accepted it, when, with what) and its key there."""
        raise NotImplementedError

    def baseline_digest(self, ref: Any) -> str:
        """What a sign-off is for: a digest of exactly what the case expects."""
        raise NotImplementedError

    # --- run ---------------------------------------------------------------------------------------
    def default_mode(self, ref: Any) -> str:
        return "replay" if self.replays else "live"

    def free(self, ref: Any, mode: Optional[str]) -> bool:
        """Whether a run in `mode` (None: its default) costs no model call."""
        return False

    def messages(self, ref: Any) -> list:
        """The user messages it sends, in order (`traces.Message`)."""
        raise NotImplementedError

    def messages_of(self, ref: Any, out: Any) -> list:
        """The user messages of one of its runs (a simulated user's are the run's own)."""
        return self.messages(ref)

    def baseline(self, ref: Any, mode: Optional[str] = None) -> Any:
        """What it is diffed against (`run.expected.Baseline`); `NotRecorded` when it has nothing yet."""
        raise NotImplementedError

    async def run(self, ref: Any, agent: Any, pool: Any, options: Any, mode: str) -> Any:
        """One case, start to verdict (`run.case_run.CaseRun`), its agent resolved."""
        raise NotImplementedError

    def rescore(self, ref: Any, previous: Any, judged: Any, options: Any) -> Any:
        """Its last runs scored and diffed again against the case as loaded now, without running it."""
        raise NotImplementedError

    def suite_pass_rule(self, ref: Any) -> tuple[Optional[float], Optional[float]]:
        """The minimum pass rate and confidence its own suite's file sets for its live repeats (None: not set)."""
        return None, None

    async def judge_again(self, ref: Any, previous: Any, pool: Any, options: Any) -> list:
        """Its judged metrics of the last runs, against the case as loaded now."""
        return []

    def spillable(self, run: Any) -> bool:
        """Whether a run of it may be kept on disk and read back when shown (`workbench.spill`)."""
        return False

    def sources(self, ref: Any) -> Any:
        """The files its baseline is located in (`diff.source_index.SourceIndex`), for a spilled run read back."""
        return self.baseline(ref).sources

    def failed_hint(self, run: Any) -> str:
        """What to do when the run to accept failed (appended to the error)."""
        return ""

    # --- baselines ---------------------------------------------------------------------------------
    def accepts(self, root: Path) -> "AcceptBatch":
        """A batch collecting accepts of its cases into file writes (`baselines.accept`)."""
        raise NotImplementedError

    async def record(self, ref: Any, agent: Any, pool: Any, options: Any, root: Path) -> tuple[Any, Any]:
        """A live run of it written as its baseline: (the run's output, the journal entry)."""
        raise NotImplementedError

    # --- reports -----------------------------------------------------------------------------------
    def baseline_change(self, ref: Any, root: Path, since: str, changed: set[Path], scratch: Path) -> Any:
        """How its baseline changed since `since` while it did not (`reports.baseline_review`), or None."""
        raise NotImplementedError

    def stored_actual(self, ref: Any, root: Path) -> Any:
        """The newest run of it that its format's own tool stored (`adk eval`'s history): (trace, file), or None."""
        return None

    def results_root(self, ref: Any) -> Optional[Path]:
        """Where its format's own tool keeps grade results that name its cases by eval id (agents-cli's
        project root), if it has such a tool."""
        return None

    def results_key(self, ref: Any) -> Optional[str]:
        """The name those grade results give it (`results_root`), if its format has them."""
        return None

    def kept_traces(self, run: Any) -> list[tuple[str, Any]]:
        """Traces a run of it leaves in its format's own trace files (`run --report`), if any."""
        return []


class AcceptBatch:
    """Accepts of one family's cases, gathered (several cases may share a file) and then written."""

    def add(self, request: Any, out: Any) -> bool:
        """Take one accept; whether it changes a file."""
        raise NotImplementedError

    def writes(self, planned: list) -> list:
        """The file writes of every accept taken (`planned`: the writes of the plan so far)."""
        raise NotImplementedError


_LOADED: dict[str, CaseFamily] = {}


def family_named(name: str) -> CaseFamily:
    family = _LOADED.get(name)
    if family is None:
        module, _, cls = REGISTERED[name].partition(":")
        family = _LOADED[name] = getattr(importlib.import_module(module), cls)()
    return family


def family_of(ref: Any) -> CaseFamily:
    """The family of a case ref."""
    family = _LOADED.get(ref.family)
    return family if family is not None else family_named(ref.family)


_FINDERS: dict[str, CaseFinder] = {}


def finders() -> list[CaseFinder]:
    """The registered finders (`FINDERS`), each loaded once."""
    found = []
    for target in FINDERS.values():
        finder = _FINDERS.get(target)
        if finder is None:
            module, _, cls = target.partition(":")
            finder = _FINDERS[target] = getattr(importlib.import_module(module), cls)()
        found.append(finder)
    return found


def claimed(path: Path) -> Optional[CaseFinder]:
    """The finder whose unit `path` is, if any."""
    return next((finder for finder in finders() if finder.claims(path)), None) if FINDERS else None


def families() -> list[CaseFamily]:
    """Every registered family, in the order lists show their cases."""
    return [family_named(name) for name in REGISTERED]
