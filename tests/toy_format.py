"""A format no one ships, added the way every format is: a finder and a family, registered by name
(`project.family.REGISTERED`, `FINDERS`). Nothing in the pipeline knows it.

A `*.toy.txt` file holds one case per line, `what the user says -> what the agent should answer`; its
cases load into the same case model as ADK's eval sets (so they run, score and diff as those do), and
an accept writes the run's answer back into the line, in place.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Optional

from agentdiff.core.baselines.journal import FileWrite
from agentdiff.core.families.eval_set import EvalSetFamily
from agentdiff.core.formats.eval_config import EvalConfig
from agentdiff.core.formats.eval_set import EvalCase, EvalSet, Invocation
from agentdiff.core.formats.eval_set_files import LoadedConfig, LoadedEvalSet
from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.formats.source_file import display_path, read_source
from agentdiff.core.project.case_refs import EvalCaseRef
from agentdiff.core.project.family import AcceptBatch, CaseFinder

SUFFIX = ".toy.txt"


@dataclass(frozen=True)
class ToyCaseRef(EvalCaseRef):
    family: ClassVar[str] = "toy"
    line: int = 0  # its line in the file (0-based)


class ToyFinder(CaseFinder):
    def claims(self, path: Path) -> bool:
        return path.name.endswith(SUFFIX)

    def load(self, units: list[Path], root: Path, errors: list, checks_near: Any) -> list:
        refs = []
        for path in units:
            source = read_source(path, display_path(path, root))
            cases, lines = [], []
            for number, text in enumerate(source.text.splitlines()):
                if not text.strip():
                    continue
                said, arrow, expected = text.partition(" -> ")
                if not arrow:
                    errors.append(LoadError(file=source.display, line=number + 1, message="a case is `what the user says -> the answer`"))
                    continue
                turn = Invocation.model_validate({"user_content": {"role": "user", "parts": [{"text": said}]},
                                                  "final_response": {"role": "model", "parts": [{"text": expected}]}})
                cases.append(EvalCase(eval_id=f"line_{number + 1}", conversation=[turn]))
                lines.append(number)
            loaded = LoadedEvalSet.of(source, EvalSet(eval_set_id=path.name.removesuffix(SUFFIX), eval_cases=cases))
            config = LoadedConfig(config=EvalConfig(criteria={"response_match_score": 1.0}), file=None)
            refs += [ToyCaseRef(loaded, config, key=case.eval_id, position=i, line=lines[i]) for i, case in enumerate(cases)]
        return refs


class ToyFamily(EvalSetFamily):
    name = "toy"
    accepted_whole = "a toy case is one line"

    def listed(self, ref: ToyCaseRef) -> str:
        return f"toy, line {ref.line + 1}"

    def described(self, ref: ToyCaseRef) -> dict[str, Any]:
        return {"kind": self.name, "line": ref.line + 1}

    def editor_place(self, ref: ToyCaseRef) -> tuple[Path, Optional[int], Optional[int]]:
        return ref.eval_set.source.path, ref.line + 1, 1

    def registration(self, ref: ToyCaseRef) -> tuple[Path, str]:
        return ref.eval_set.source.path.with_suffix(".record.json"), ref.eval_id

    def baseline_digest(self, ref: ToyCaseRef) -> str:
        return hashlib.sha256(ref.eval_set.source.text.splitlines()[ref.line].encode()).hexdigest()[:16]

    def accepts(self, root: Path) -> AcceptBatch:
        return ToyAccepts()

    def baseline_change(self, ref: ToyCaseRef, root: Path, since: str, changed: set[Path], scratch: Path) -> Any:
        return None


class ToyAccepts(AcceptBatch):
    def __init__(self) -> None:
        self.files: dict[Path, tuple[Any, list[str]]] = {}

    def add(self, request: Any, out: Any) -> bool:
        ref = request.run.ref
        source = ref.eval_set.source
        _, lines = self.files.setdefault(source.path, (source, source.text.splitlines()))
        answer = request.run.shown_record.actual[0].final_response.parts[0].text
        said = lines[ref.line].partition(" -> ")[0]
        if lines[ref.line] == f"{said} -> {answer}":
            return path.name.endswith(SUFFIX)
        lines[ref.line] = f"{said} -> {answer}"
        return True

    def writes(self, planned: list) -> list:
        return [FileWrite(path, "\n".join(lines) + "\n", source.sha256) for path, (source, lines) in self.files.items()]
