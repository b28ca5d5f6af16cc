"""A traced conversation as a pending case, and the finder that discovery asks for them.

A trace file (`traces.json` as `agentdiff receive` writes it, `*.traces.json`, `*.otlp.json`, `*.otlp`,
and their `.jsonl` forms) holds conversations of an ADK agent (`traces.otlp`). Each one with its content,
not yet made a case, is a case of its own: id `<file>::<session id>`, category its agent, nothing
expected until it is accepted (insta's new snapshots), which adds it to its target EvalSet file
(`target_of`) as a case expecting what it did. One the target holds already, or that agentdiff's own
`run --report otlp` wrote (a run of a case), is none. A file named so that holds no OTLP traces is
none of ours; one whose conversations left their content out is a load error saying how to keep it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Optional

from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.formats.otlp.names import holds_traces, is_trace_file_name
from agentdiff.core.formats.eval_set_files import CONFIG_FILE_NAME
from agentdiff.core.formats.source_file import display_path
from agentdiff.core.project.case_ids import eval_case_id
from agentdiff.core.project.family import CaseFinder

from .agents import agent_folder, start

if TYPE_CHECKING:
    from agentdiff.core.traces.otlp import Conversation

#: The EvalSet file a traced conversation is accepted into, in its agent's folder (else beside the trace).
TARGET_NAME = "traced.evalset.json"
_DATASETS = "datasets"  # agents-cli's datasets' folder (`project.dataset_cases.DATASETS_DIR`)


@dataclass(frozen=True)
class TracedCaseRef:
    family: ClassVar[str] = "traces"
    conversation: "Conversation"
    key: str  # its session id, as an eval_id (`otlp_cases.case_id_of`)
    path: Path  # the trace file
    display: str
    target: Path  # the EvalSet file accepting it adds it to
    agent_dir: Optional[Path] = None  # its agent's package, when found (`agent_folder`)
    target_display: str = ""  # the target as the project shows it
    line: Optional[int] = None
    checks: tuple = ()
    digest: str = ""
    id: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", eval_case_id(self.display, self.name))

    @property
    def source(self) -> str:
        return self.display

    @property
    def category(self) -> str:
        """Its agent's folder, as the case it becomes is listed under; else the traced agent's name."""
        return self.agent_dir.name if self.agent_dir is not None else self.conversation.agent or "traced"

    @property
    def name(self) -> str:
        return self.key


def target_of(path: Path, agent: str, root: Path) -> Path:
    """Where a conversation of this trace file is accepted into (`placed`)."""
    return placed(path, agent, root)[0]


def placed(path: Path, agent: str, root: Path) -> tuple[Path, Optional[Path]]:
    """Where a conversation of this trace file is accepted into, and its agent's package (`agent_folder`,
    looked for once): in an agents-cli project whose agent made it, its `traced-dataset.json`
    (`datasets`); else `traced.evalset.json` in that package, else beside the trace (inside the project;
    else at the project's root)."""
    from .datasets import dataset_target

    here = start(path, root)
    folder = agent_folder(here, agent, root)
    dataset = dataset_target(here, folder)  # an agents-cli project's own agent: its datasets
    return dataset or (folder if folder is not None else here) / TARGET_NAME, folder


def eval_ids_in(target: Path) -> set[str]:
    """The ids of the cases of an EvalSet file or an agents-cli dataset (none when it is missing or does
    not read: its own load says why)."""
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return set()
    cases = (data.get("eval_cases") or data.get("evalCases")) if isinstance(data, dict) else None
    return {str(next((c[k] for k in ("eval_id", "evalId", "eval_case_id", "evalCaseId") if c.get(k)), None))
            for c in cases or () if isinstance(c, dict)}


class TraceFinder(CaseFinder):
    def claims(self, path: Path) -> bool:
        # not an agents-cli dataset, nor an eval set beside its test_config.json, that happens to be named so
        return is_trace_file_name(path.name) and path.parent.name != _DATASETS and not (path.parent / CONFIG_FILE_NAME).exists()

    def load(self, units: list[Path], root: Path, errors: list, checks_near: Any) -> list:
        """The pending conversations of every trace file given, read together (a conversation whose turns
        a collector wrote into two files is one), each the case of the file its first turn is in."""
        from agentdiff.core.traces.otlp_cases import case_id_of, unusable

        files = {display_path(path, root): path for path in units if holds_traces(path)}  # a file of that name that is not OTLP: none of ours
        found, problems = _conversations(tuple(files.values()), root)
        errors.extend(problems)
        refs = []
        left_out: dict[tuple[str, str], list] = {}
        imported: dict[Path, set[str]] = {}
        targets_shown: dict[Path, str] = {}
        agents: dict[tuple[Path, str], tuple[Path, Optional[Path]]] = {}
        for conversation in found:
            shown, _, line = conversation.where.rpartition(":")
            path = files.get(shown)
            if path is None or conversation.case is not None:
                continue  # agentdiff's own export of a case's run (`run --report otlp`): that case's, not a new one
            why = unusable(conversation)
            if why is not None:
                left_out.setdefault((shown, why), []).append(conversation)
                continue
            key = (path, conversation.agent)
            if key not in agents:
                agents[key] = placed(path, conversation.agent, root)
            target, agent_dir = agents[key]
            if target not in imported:
                imported[target] = eval_ids_in(target)
                targets_shown[target] = display_path(target, root)
            if case_id_of(conversation) in imported[target]:
                continue  # accepted already: the EvalSet case is it now
            refs.append(TracedCaseRef(conversation, case_id_of(conversation), path, shown, target, agent_dir, targets_shown[target],
                                      int(line) if line.isdigit() else None, digest=_digest(conversation)))
        for (shown, why), left in left_out.items():
            first = left[0].where.rpartition(":")[2]
            errors.append(LoadError(file=shown, line=int(first) if first.isdigit() else None,
                                    message=f"{len(left)} traced conversation{'s' if len(left) != 1 else ''} left out "
                                    f"({', '.join(c.id for c in left[:3])}{'…' if len(left) > 3 else ''}): {why}"))
        return refs


#: The trace files read last, by path, size and time (a workbench reads them again with every reload: a
#: big one is parsed once until it changes, and then only the exports appended to it), and the
#: conversations of the last set read together.
_READ: dict[tuple[Path, Path], tuple[tuple[int, int], Any]] = {}
_JOINED: dict[tuple, tuple[list, list]] = {}


def _conversations(paths: tuple[Path, ...], root: Path) -> tuple[list, list]:
    from agentdiff.core.formats.otlp.spans import read_on
    from agentdiff.core.traces.otlp import conversations

    spans, errors, stamps = [], [], []
    for path in paths:
        try:
            stat = path.stat()
            stamp = (stat.st_size, stat.st_mtime_ns)
        except OSError:
            stamp = (-1, -1)
        known = _READ.get((path, root))  # (its errors name it as the project shows it)
        if known is None or known[0] != stamp or stamp == (-1, -1):
            if len(_READ) >= 64:
                _READ.clear()
            known = _READ[(path, root)] = (stamp, read_on(path, root, known[1] if known is not None else None))
        spans += known[1].spans
        errors += known[1].errors
        stamps.append((path, stamp))
    key = (root, tuple(stamps))
    joined = _JOINED.get(key)  # (a reload runs in a thread: what is made here is what is returned)
    if joined is None:
        joined = (conversations(spans), errors)
        _JOINED.clear()
        _JOINED[key] = joined
    return joined


def _digest(conversation: Any) -> str:
    return hashlib.sha256(conversation.trace.model_dump_json().encode()).hexdigest()[:16]
