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
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Optional

from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.formats.otlp.names import holds_traces, is_trace_file_name
from agentdiff.core.formats.source_file import display_path
from agentdiff.core.project.case_ids import eval_case_id
from agentdiff.core.project.family import CaseFinder

if TYPE_CHECKING:
    from agentdiff.core.traces.otlp import Conversation

#: The EvalSet file a traced conversation is accepted into, in its agent's folder (else beside the trace).
TARGET_NAME = "traced.evalset.json"
_MARKERS = ("pyproject.toml", ".git", ".agentdiff")  # a project's root: no agent is looked for above it


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


def target_of(path: Path, agent: str) -> Path:
    """Where a conversation of this trace file is accepted into: in an agents-cli project whose agent made
    it, its `traced-dataset.json` (`datasets`); else `traced.evalset.json` in its agent's folder
    (`agent_folder`), else beside the trace."""
    from .datasets import dataset_target

    dataset = dataset_target(path, agent)  # an agents-cli project's own agent: its datasets
    if dataset is not None:
        return dataset
    here = Path(os.path.abspath(path)).parent
    folder = agent_folder(here, agent)
    return (folder if folder is not None else here) / TARGET_NAME


def agent_folder(here: Path, agent: str) -> Optional[Path]:
    """The agent package a traced agent is, looked for from `here` up to the project's root: the one named
    as the agent (ADK's app name is its folder's); else the one whose code names it (`name="…"`: an
    agent's name is often not its folder's); else the project's only agent package. None: not found."""
    from agentdiff.core.project.agents import is_agent_dir, valid_agent_name

    packages: list[Path] = []
    for folder in (here, *here.parents):
        if agent and valid_agent_name(agent) and is_agent_dir(folder / agent):
            return folder / agent
        try:
            packages += sorted(child for child in folder.iterdir() if not child.name.startswith(".") and is_agent_dir(child))
        except OSError:
            pass
        if any((folder / marker).exists() for marker in _MARKERS):
            break
    packages = list(dict.fromkeys(packages))
    naming = [p for p in packages if agent and _names(p, agent)]
    if len(naming) == 1:
        return naming[0]
    return packages[0] if len(packages) == 1 else None


def _names(package: Path, agent: str) -> bool:
    """Whether a package's agent code names the agent (as a string: `name="support"`, `name: support`)."""
    for file in ("agent.py", "__init__.py", "root_agent.yaml"):
        try:
            text = (package / file).read_text(encoding="utf-8", errors="replace")[:1_000_000]
        except OSError:
            continue
        if f'"{agent}"' in text or f"'{agent}'" in text or f"name: {agent}" in text:
            return True
    return False


def eval_ids_in(target: Path) -> set[str]:
    """The ids the cases of an EvalSet file (or an agents-cli dataset) have (none when it is missing or does not read: its own load says why)."""
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return set()
    cases = data.get("eval_cases") if isinstance(data, dict) else None
    return {str(c.get("eval_id") or c.get("eval_case_id") or c.get("evalCaseId")) for c in cases or () if isinstance(c, dict)}


class TraceFinder(CaseFinder):
    def claims(self, path: Path) -> bool:
        return is_trace_file_name(path.name)

    def load(self, units: list[Path], root: Path, errors: list, checks_near: Any) -> list:
        from agentdiff.core.formats.otlp.spans import read_spans  # only when a project has trace files
        from agentdiff.core.traces.otlp import conversations
        from agentdiff.core.traces.otlp_cases import case_id_of, unusable

        refs = []
        for path in units:
            if not holds_traces(path):
                continue  # a file of that name that is not OTLP: none of ours
            spans, problems = read_spans(path, root)
            errors.extend(problems)
            shown = display_path(path, root)
            left_out: dict[str, list] = {}
            imported: dict[Path, set[str]] = {}
            found_agents: dict[str, tuple[Path, Optional[Path]]] = {}
            for conversation in conversations(spans):
                if conversation.case is not None:
                    continue  # agentdiff's own export of a case's run (`run --report otlp`): that case's, not a new one
                why = unusable(conversation)
                if why is not None:
                    left_out.setdefault(why, []).append(conversation)
                    continue
                agent = conversation.agent
                if agent not in found_agents:
                    found_agents[agent] = (target_of(path, agent), agent_folder(Path(os.path.abspath(path)).parent, agent))
                target, agent_dir = found_agents[agent]
                if target not in imported:
                    imported[target] = eval_ids_in(target)
                if case_id_of(conversation) in imported[target]:
                    continue  # accepted already: the EvalSet case is it now
                line = conversation.where.rpartition(":")[2]
                text = conversation.trace.model_dump_json()
                refs.append(TracedCaseRef(conversation, case_id_of(conversation), path, shown, target, agent_dir, display_path(target, root),
                                          int(line) if line.isdigit() else None,
                                          digest=hashlib.sha256(text.encode()).hexdigest()[:16]))
            for why, left in left_out.items():
                first = left[0].where.rpartition(":")[2]
                errors.append(LoadError(file=shown, line=int(first) if first.isdigit() else None,
                                        message=f"{len(left)} traced conversation{'s' if len(left) != 1 else ''} left out "
                                        f"({', '.join(c.id for c in left[:3])}{'…' if len(left) > 3 else ''}): {why}"))
        return refs
