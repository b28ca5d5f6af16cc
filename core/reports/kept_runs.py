"""Kept runs: every `run` and every TUI session writes its results under `.agentdiff/runs/`, so any
two can be compared later (`compare`, `gate`).

Each run is a folder named by when it started (`20261130-221503-0424f2a`: the second, its
milliseconds, a random tag) holding `report.json` (the
JSON report, with a `run` block: when, what ran it, the git commit and whether the tree was dirty,
each agent's models and prompt and tool-source hashes) and `traces.jsonl.gz` (each case's actual
trace). Only the newest `keep_runs` (default 20) are kept.

A RUN, wherever a command takes one, is a JSON report file, a kept run's folder, its name or a unique
beginning of it, `latest` or `previous`.
"""

from __future__ import annotations

import calendar
import gzip
import json
import os
import re
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence


from agentdiff.core.baselines.journal import atomic_write
from agentdiff.core.formats.agents_cli.grade_results import is_grade_results, load_grade_results
from agentdiff.core.formats.set_aside import linked_state, made_state_dir, set_aside
from agentdiff.core.formats.source_file import display_path, read_text_regular
from agentdiff.core.reports.agents_cli_runs import report_from_grade_results
from agentdiff.core.reports.json_report import write_json
from agentdiff.core.reports.report_shape import report_problem
from agentdiff.core.run.case_run import CaseRun

RUNS_DIR = Path(".agentdiff") / "runs"
REPORT = "report.json"
TRACES = "traces.jsonl.gz"
DEFAULT_KEEP = 20


class RunNotFound(Exception):
    """A RUN names nothing readable: the message says what was looked for."""


@dataclass(frozen=True)
class KeptRun:
    """A run's report as read: from a kept run's folder, or any JSON report file."""

    name: str  # the folder's name, or the file as given
    path: Path  # its report.json
    report: dict[str, Any]

    @property
    def meta(self) -> dict[str, Any]:
        return self.report.get("run") or {}

    @property
    def cases(self) -> dict[str, dict[str, Any]]:
        return {case["id"]: case for case in self.report.get("cases", []) if isinstance(case, dict) and "id" in case}

    @property
    def load_errors(self) -> list[str]:
        """The files of the run that did not load, as `file:line: message`."""
        said = []
        for error in self.report.get("load_errors") or []:
            where = error.get("file", "?") + (f":{error['line']}" if error.get("line") else "")
            said.append(f"{where}: {error.get('message', '')}")
        return said

    @property
    def partial(self) -> bool:
        """A shard or a subset (`--changed-since`): not a whole run to compare by default."""
        return bool(self.meta.get("shard") or self.meta.get("partial"))

    @property
    def branch(self) -> Optional[str]:
        return (self.meta.get("git") or {}).get("branch")


def git_state(root: Path) -> Optional[dict[str, Any]]:
    """The commit, branch and dirtiness of the project's git tree, and where the project lies in
    it; None outside git (or no git)."""
    def git(*args: str) -> Optional[str]:
        try:
            done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=5)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    if git("rev-parse", "--is-inside-work-tree") != "true":
        return None
    status = git("status", "--porcelain", "--untracked-files=no")
    # a repository without a commit yet has a branch but no commit
    return {"commit": git("rev-parse", "HEAD"), "branch": git("symbolic-ref", "--short", "-q", "HEAD"), "dirty": bool(status),
            "prefix": git("rev-parse", "--show-prefix") or ""}  # the project's folder in the repository ("" at its top)


class RunKeeper:
    """Writes one kept run as its cases finish: each case's trace goes to disk at once (a long run
    holds none in memory); `finish` writes the report and drops the oldest runs beyond `keep`.
    Nothing is kept when nothing ran, and a project that cannot be written still runs."""

    def __init__(self, root: Path, source: str, keep: int = DEFAULT_KEEP, started: Optional[float] = None) -> None:
        self.root, self.source, self.keep = root, source, keep
        self.started = started if started is not None else time.time()
        self.folder: Optional[Path] = None
        self._traces: Optional[Any] = None
        self._agents: dict[str, Any] = {}
        self._files: dict[str, tuple[str, ...]] = {}
        self._shown_paths: dict[str, str] = {}  # a file read → its path as the report shows it
        self._shown_sets: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._broken = keep <= 0

    def _shown(self, file: str) -> str:
        shown = self._shown_paths.get(file)
        if shown is None:
            shown = self._shown_paths[file] = display_path(Path(file), self.root)
        return shown

    def add(self, run: CaseRun) -> None:
        if self._broken:
            return
        try:
            if self._traces is None:
                self._open()
                if self._traces is None:
                    return
            if run.trace is not None:
                self._traces.write(json.dumps({"id": run.ref.id, "trace": run.trace.model_dump(mode="json")}) + "\n")
        except OSError as exc:
            self._give_up(exc)
            return
        _merge_agent(self._agents, run)
        if run.files_read:  # what `run --changed-since` looks for; every case of a file reads the same few
            files = tuple(sorted(self._shown(f) for f in run.files_read))
            self._files[run.ref.id] = self._shown_sets.setdefault(files, files)  # one tuple for them all

    shard: Optional[str] = None  # "K/N" when the run was one shard of a suite
    partial: Optional[str] = None  # why the run holds only some of the cases (--changed-since, …)

    def finish(self, results: Sequence[Any], prices=None, agents_python: Optional[dict[str, Any]] = None,
               load_errors: Sequence[Any] = ()) -> Optional[Path]:
        """The report of `results` (the cases' results, in the order to list them); the folder, or None.
        A run whose files did not load is kept even when no case ran: the gate must see it."""
        if self._broken:
            return None
        if self._traces is None and load_errors:
            self._open()
        if self._broken or self._traces is None or self.folder is None:
            return None
        run = {
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.started)),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "source": self.source,
            "git": git_state(self.root),
            "agents": self._agents,
            "files_read": self._files,
            **({"shard": self.shard} if self.shard else {}),
            **({"partial": self.partial} if self.partial else {}),
        }
        try:
            self._traces.close()
            atomic_write(self.folder / REPORT, lambda out: write_json(out, results, agents_python, prices, load_errors, indent=1, more={"run": run}),
                         durable=False)  # written a case at a time: never the whole report in memory
        except (OSError, ValueError) as exc:
            self._give_up(exc)
            return None
        prune(self.root, self.keep)
        return self.folder

    def discard(self) -> None:
        """An interrupted run: nothing is kept."""
        if self._traces is not None and self.folder is not None and not (self.folder / REPORT).exists():
            self._give_up()

    def _open(self) -> None:
        linked = linked_state(self.root, "runs")
        if linked is not None:
            self.problem, self._broken = linked, True
            return
        try:
            stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(self.started))  # UTC: names sort as time goes
            millis = int(self.started * 1000) % 1000  # two runs in one second still sort by when they started
            self.folder = self.root / RUNS_DIR / f"{stamp}-{millis:03d}{secrets.token_hex(2)}"
            made_state_dir(self.folder)
            self.folder.mkdir(parents=True)
            self._traces = gzip.open(self.folder / TRACES, "wt", encoding="utf-8")
        except OSError as exc:
            self._give_up(exc)

    #: why the run could not be kept (a full disk, a read-only project), for the command to say
    problem: Optional[str] = None

    def _give_up(self, exc: Optional[BaseException] = None) -> None:
        if exc is not None and self.problem is None:
            self.problem = (getattr(exc, "strerror", None) or str(exc)) if isinstance(exc, OSError) else str(exc)
            state = self.root / RUNS_DIR.parent
            if os.path.lexists(state) and not state.is_dir():
                self.problem = f"{RUNS_DIR.parent.as_posix()} is a file, not a folder: move it away"
        self._broken = True
        if self._traces is not None:
            try:
                self._traces.close()
            except OSError:
                pass
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def _merge_agent(agents: dict[str, Any], run: CaseRun) -> None:
    """Each agent's models and its instruction and tool-source hashes, as its runs reported them."""
    if run.agent is None:
        return
    for out in run.outputs:
        if out.agent_info:
            info = agents.setdefault(run.agent.label, {})
            for key in ("models", "instructions", "tools"):
                info.setdefault(key, {}).update(out.agent_info.get(key) or {})
            if out.adk_version:
                info["adk"] = out.adk_version


def kept(root: Path) -> list[Path]:
    """The kept runs' folders, oldest first: only folders as agentdiff names them (`<UTC time>-<ms><tag>`),
    not symlinks, and not from the future — a folder committed or planted to sort last would otherwise
    be `latest`, the run the gate checks (none through a symlinked `.agentdiff/runs`)."""
    if linked_state(root, "runs") is not None:
        return []
    try:
        folders = [p for p in (root / RUNS_DIR).iterdir() if _ours(p) and (p / REPORT).is_file()]
    except OSError:
        return []
    return sorted(folders, key=lambda p: p.name)


_RUN_NAME = re.compile(r"^(\d{8}-\d{6})-\d{3}[0-9a-f]{4}$")


def _ours(folder: Path) -> bool:
    named = _RUN_NAME.match(folder.name)
    if named is None or folder.is_symlink():
        return False
    try:
        started = calendar.timegm(time.strptime(named.group(1), "%Y%m%d-%H%M%S"))
    except ValueError:
        return False
    return started <= time.time() + 3600  # an hour's clock drift at most


def prune(root: Path, keep: int) -> None:
    """The oldest runs beyond `keep`, and folders an interrupted run left without a report once they
    are a day old (a run still going may be writing a younger one)."""
    if linked_state(root, "runs") is not None:
        return
    for folder in kept(root)[:-keep] if keep > 0 else []:
        shutil.rmtree(folder, ignore_errors=True)
    try:
        leftovers = [p for p in (root / RUNS_DIR).iterdir() if p.is_dir() and not (p / REPORT).exists()]
    except OSError:
        return
    for folder in leftovers:
        try:
            if time.time() - folder.stat().st_mtime > 86_400:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue


def read_run(path: Path, name: Optional[str] = None) -> KeptRun:
    report_path = path / REPORT if path.is_dir() else path
    try:
        report = json.loads(read_text_regular(report_path))
    except (OSError, ValueError) as exc:
        raise RunNotFound(f"{name or path}: not a readable JSON report ({exc})")
    except RecursionError:
        raise RunNotFound(f"{name or path}: not a readable JSON report (nested too deeply)")
    if not path.is_dir() and is_grade_results(report):  # agents-cli's `eval grade` results: compared as a run
        loaded, errors = load_grade_results(report_path, str(name or path))
        if loaded is None:
            raise RunNotFound(f"{errors[0]}")
        report = report_from_grade_results(loaded)
    problem = report_problem(report)
    if problem is not None:
        raise RunNotFound(f"{name or path}: {problem}")
    return KeptRun(name or (path.name if path.is_dir() else str(path)), report_path, report)


def read_kept(root: Path, folder: Path) -> Optional[KeptRun]:
    """A kept run found by looking (not named by the user), or None when its report cannot be read: the
    folder is then set aside, with a notice, so it fails no later command."""
    try:
        return read_run(folder)
    except RunNotFound as exc:
        set_aside(folder, root, str(exc).split(": ", 1)[-1], then="; it is left out of comparisons")
        return None


def kept_runs(root: Path) -> list[KeptRun]:
    """The kept runs that can be read, newest first (the others set aside)."""
    return [run for run in (read_kept(root, folder) for folder in reversed(kept(root))) if run is not None]


def find_run(root: Path, given: str) -> KeptRun:
    """A RUN as the user named it (see the module's doc)."""
    runs = kept(root)
    if given in ("latest", "previous"):  # whole runs: shards and subsets are named explicitly
        whole = [run for run in reversed(kept_runs(root)) if not run.partial]
        index = -1 if given == "latest" else -2
        if len(whole) < -index:
            raise RunNotFound(f"no {given} run: {len(whole)} whole run(s) kept under {RUNS_DIR} (`agentdiff run` keeps one; "
                              "shards and --changed-since runs are named by their folder)")
        return whole[index]
    path = Path(given)
    if path.exists():
        return read_run(path.resolve(), given)
    matches = [p for p in runs if p.name.startswith(given)]
    if len(matches) == 1:
        return read_run(matches[0])
    if matches:
        raise RunNotFound(f"{given!r} names {len(matches)} kept runs: {', '.join(p.name for p in matches[:5])}")
    raise RunNotFound(f"no such run: {given!r} is neither a JSON report file nor a kept run under {RUNS_DIR}")


def default_pair(root: Path, base: Optional[str], head: Optional[str]) -> tuple[KeptRun, KeptRun]:
    """BASE and HEAD as given, else: HEAD the latest kept run; BASE the latest kept run on the main
    branch (main or master) before it, else the one before it."""
    head_run = find_run(root, head or "latest")
    if base:
        return find_run(root, base), head_run
    folders = [folder.resolve() for folder in kept(root)]
    head_folder = head_run.path.parent.resolve() if head_run.path.parent.resolve() in folders else None
    earlier = [p for p in folders if p != head_folder and (head_folder is None or p.name < head_folder.name)]
    if not earlier:
        raise RunNotFound(f"nothing to compare {head_run.name} with: name a BASE (a kept run or a JSON report file)")
    reports = [run for run in (read_kept(root, p) for p in earlier) if run is not None and not run.partial]
    if not reports:
        raise RunNotFound(f"nothing to compare {head_run.name} with: no whole run kept before it; name a BASE")
    on_main = [r for r in reports if r.branch in ("main", "master")]
    return (on_main or reports)[-1], head_run


def load_traces(run: KeptRun) -> dict[str, Any]:
    """A kept run's actual traces by case id (as JSON data); empty for a report file without them."""
    path = run.path.parent / TRACES
    traces: dict[str, Any] = {}
    try:
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            for line in lines:
                try:
                    item = json.loads(line)
                except ValueError:
                    continue
                if isinstance(item, dict) and "id" in item:
                    traces[item["id"]] = item.get("trace")
    except (OSError, EOFError):
        return {}
    return traces
