"""The cases discovery finds, as the pipeline refers to them: a case of an eval set file (`EvalCaseRef`,
with the config that scores it) and a conformance case (`ConformanceCaseRef`). An agents-cli dataset's
case is an `EvalCaseRef` too (`dataset_cases.DatasetCaseRef`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Optional, Union

from agentdiff.core.formats.checks_file import CheckSpec
from agentdiff.core.formats.conformance import SPEC_FILE, ConformanceCase
from agentdiff.core.formats.eval_set import EvalCase
from agentdiff.core.formats.eval_set_files import LoadedConfig, LoadedEvalSet
from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.project.case_ids import eval_case_id


@dataclass(frozen=True)
class EvalCaseRef:
    """One case of an eval set file, with the config that scores it.

    `key` names the case in its id (`case_ids.case_keys`): its eval_id, or `case_<n>` when that is a path."""

    family: ClassVar[str] = "eval_set"  # its stages (`family.family_of`)

    eval_set: LoadedEvalSet
    config: LoadedConfig
    config_errors: tuple[LoadError, ...] = ()
    key: str = ""
    checks: tuple[CheckSpec, ...] = ()  # its journey checks (`agentdiff-checks.yaml`)
    position: int = 0  # its place in the file's `eval_cases`
    id: str = field(init=False, repr=False, compare=False)  # `<file>::<key>`

    @property
    def case(self) -> EvalCase:
        """Its model, built from the file's text when the set is kept compact (`eval_cases.EvalCases`)."""
        return self.eval_set.cases[self.position]

    @property
    def eval_id(self) -> str:
        return self.eval_set.cases.eval_ids[self.position]

    @property
    def app_name(self) -> Optional[str]:
        """Its `session_input.app_name`, known without its model."""
        return self.eval_set.cases.app_name(self.position)

    @property
    def turns(self) -> Optional[int]:
        """How many turns its conversation has (None: a scenario, the user simulated), known without its model."""
        return self.eval_set.cases.turns[self.position]

    def __post_init__(self) -> None:
        # made once, a plain attribute: the list, the index, results and the history share one string
        object.__setattr__(self, "id", eval_case_id(self.eval_set.source.display, self.key or self.eval_id))

    @property
    def source(self) -> str:
        return self.eval_set.source.display

    @property
    def category(self) -> str:
        return self.source

    @property
    def name(self) -> str:
        return self.key or self.eval_id


@dataclass(frozen=True)
class ConformanceCaseRef:
    family: ClassVar[str] = "conformance"
    case: ConformanceCase
    checks: tuple[CheckSpec, ...] = ()  # its journey checks (`agentdiff-checks.yaml`)

    @property
    def id(self) -> str:
        return self.case.display

    @property
    def source(self) -> str:
        return f"{self.case.display}/{SPEC_FILE}"

    @property
    def category(self) -> str:
        return self.case.category

    @property
    def name(self) -> str:
        return self.case.name


CaseRef = Union[EvalCaseRef, ConformanceCaseRef]
