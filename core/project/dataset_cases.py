"""agents-cli dataset cases as cases: where they are found, the metrics that grade them, the agent
that runs them and the baseline they are diffed against.

* Datasets are the `*.json` files under a `datasets/` folder whose parent holds agents-cli's eval
  config (`eval_config.yaml`, `.yml` or `.json`), or is `tests/eval` or `eval` of an agents-cli
  project (one with `agents-cli-manifest.yaml`, or `[tool.agents-cli]` in its pyproject).
  ADK eval set names (`*.test.json`, `*.evalset.json`) stay eval sets.
* Their metrics are that eval config's (`metrics_config`).
* Their agent is the manifest's `agent_directory` (default `app`), unless `agent_for` or `--agents`
  says otherwise (`agents.resolve_agent`).
* Their baselines are trace files, one per dataset, in a `baselines/` folder beside `datasets/`
  (`tests/eval/baselines/basic-dataset.json` for `tests/eval/datasets/basic-dataset.json`): agents-cli's
  own trace format, so `agents-cli eval grade --traces tests/eval/baselines/` grades them, and a pull
  request shows them as JSON. A case with none is *new* until a run of it is accepted.

A dataset case is an `EvalCaseRef` whose `case` is the EvalCase it sends (its user message, and the
`reference` as the expected final response), so ids, filters and reports treat both alike; what only
a dataset case has (the case as written, its metrics, its baseline) is on `DatasetCaseRef`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Optional, Sequence

from agentdiff.core.formats.agents_cli.dataset import LoadedDataset, load_dataset
from agentdiff.core.formats.agents_cli.manifest import Manifest, find_manifest
from agentdiff.core.formats.agents_cli.metrics_config import MetricsConfig, load_metrics_config
from agentdiff.core.formats.agents_cli.models import DatasetCase
from agentdiff.core.formats.checks_file import ChecksFile
from agentdiff.core.formats.eval_config import EvalConfig
from agentdiff.core.formats.eval_set import EvalCase, EvalSet, Invocation
from agentdiff.core.formats.eval_set_files import LoadedConfig, LoadedEvalSet
from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.formats.source_file import SourceText, display_path, resolved
from agentdiff.core.project.case_refs import EvalCaseRef

DATASETS_DIR = "datasets"
BASELINES_DIR = "baselines"
CONFIG_NAMES = ("eval_config.yaml", "eval_config.yml", "eval_config.json")
EVAL_SET_SUFFIXES = (".evalset.json", ".test.json")
RECORD_SUFFIX = ".agentdiff-record.json"  # agentdiff's registration beside a dataset (sign-offs): not a dataset
#: The extra key of a baseline case that holds the accepted run's LLM requests (agentdiff's: agents-cli
#: keeps an extra key as it is, and its metrics are given it in `instance`).
REQUESTS_KEY = "agentdiff_llm_requests"
#: Where a baseline entry keeps its local metrics' judge answers (metric → request key → google-genai's
#: answer), which a replay grades with.
JUDGE_KEY = "agentdiff_judge_answers"
#: The extra key of a baseline entry naming its dataset case, for a case whose eval_case_id is missing
#: or unusable in an id (its key is then `case_<n>`, its position in the dataset, not in the baseline file).
KEY_EXTRA = "agentdiff_case_key"


@dataclass(frozen=True)
class DatasetCaseRef(EvalCaseRef):
    """One case of an agents-cli dataset."""

    family: ClassVar[str] = "agents_cli"

    dataset: Optional[LoadedDataset] = None
    index: int = 0  # its position in the dataset's `eval_cases`
    metrics: Optional[MetricsConfig] = None
    metrics_errors: tuple[LoadError, ...] = ()
    manifest: Optional[Manifest] = None
    baseline_path: Optional[Path] = None  # the trace file its baseline lives in (which may not exist yet)
    baseline_display: str = ""
    baseline: Optional[DatasetCase] = None  # its accepted run, from that file (None: new)
    baseline_source: Optional[SourceText] = None  # that file as read (to locate values in it)
    baseline_index: Optional[int] = None  # its position in the baseline file

    @property
    def written(self) -> DatasetCase:
        """The case as its dataset holds it."""
        assert self.dataset is not None
        return self.dataset.cases[self.index]


def is_dataset_file(path: Path, root: Path, known: Optional[dict[Path, bool]] = None) -> bool:
    """Whether a `.json` file is an agents-cli dataset by where it lies (`known`: what was decided
    for each eval folder already, so a folder of many files is looked at once)."""
    if path.suffix != ".json" or path.name.endswith((*EVAL_SET_SUFFIXES, RECORD_SUFFIX)):
        return False
    eval_dir = _eval_dir(path)
    if eval_dir is None:
        return False
    if known is None:
        return _is_eval_dir(eval_dir, root)
    if eval_dir not in known:
        known[eval_dir] = _is_eval_dir(eval_dir, root)
    return known[eval_dir]


def _is_eval_dir(eval_dir: Path, root: Path) -> bool:
    if any((eval_dir / name).is_file() for name in CONFIG_NAMES):
        return True
    manifest, _ = find_manifest(eval_dir, root if resolved(root) in (resolved(eval_dir), *map(resolved, eval_dir.parents)) else None)
    if manifest is None:
        return False
    inside = resolved(eval_dir)
    return inside in (resolved(manifest.root / "tests" / "eval"), resolved(manifest.root / "eval"))


def _eval_dir(path: Path) -> Optional[Path]:
    """The folder holding the `datasets/` folder `path` lies in, if it lies in one (looked for above the
    folder agentdiff runs in too: `agentdiff` in `tests/eval/datasets/`)."""
    for folder in path.absolute().parents:
        if folder.name == DATASETS_DIR:
            return folder.parent
    return None


def baseline_file(dataset: Path) -> Path:
    """Where a dataset's accepted runs live: `<eval>/baselines/<its path under datasets/>`."""
    for folder in dataset.absolute().parents:
        if folder.name == DATASETS_DIR:
            return folder.parent / BASELINES_DIR / dataset.absolute().relative_to(folder)
    return dataset.parent / BASELINES_DIR / dataset.name


def dataset_cases_in(files: Sequence[Path], root: Path, errors: list[LoadError],
                     checks_near: Callable[[Path], Optional[ChecksFile]]) -> list[DatasetCaseRef]:
    """The cases of the candidate files that lie in agents-cli's layout (each eval folder looked at
    once), with the journey checks of the nearest `agentdiff-checks.yaml` (`checks_near(folder)`),
    keyed by the dataset's file name and the case's key or id."""
    known: dict[Path, bool] = {}
    chosen = [file for file in files if is_dataset_file(file, root, known)]
    if not chosen:
        return []
    cases, problems = find_dataset_cases(chosen, root)
    errors.extend(problems)
    out = []
    for ref in cases:
        found = checks_near(ref.eval_set.source.path.parent)
        if found is not None:
            keys = (ref.eval_set.source.path.name, ref.eval_set.eval_set_id)
            ref = dataclasses.replace(ref, checks=found.for_case(keys, (ref.name, ref.id)))
        out.append(ref)
    return out


def find_dataset_cases(files: Sequence[Path], root: Path) -> tuple[list[DatasetCaseRef], list[LoadError]]:
    """The cases of the dataset files, each file loaded independently (a bad one is a load error and
    hides nothing else); configs, manifests and baseline files read once each."""
    cases: list[DatasetCaseRef] = []
    errors: list[LoadError] = []
    configs: dict[Path, tuple[Optional[MetricsConfig], tuple[LoadError, ...]]] = {}
    manifests: dict[Path, Optional[Manifest]] = {}
    for file in files:
        loaded, problems = load_dataset(file, display_path(file, root))
        errors.extend(problems)
        if loaded is None:
            continue
        eval_dir = _eval_dir(file) or file.parent
        if eval_dir not in manifests:
            manifest, manifest_errors = find_manifest(eval_dir.absolute())  # above the folder agentdiff runs in too
            errors.extend(manifest_errors)
            manifests[eval_dir] = manifest
        manifest = manifests[eval_dir]
        if eval_dir not in configs:
            configs[eval_dir] = _metrics_for(eval_dir, root)
            errors.extend(configs[eval_dir][1])
        metrics, metric_errors = configs[eval_dir]
        baseline_path = baseline_file(file)
        baseline_display = display_path(baseline_path, root)
        accepted, baseline_source, baseline_errors = _baselines(baseline_path, baseline_display)
        errors.extend(baseline_errors)
        eval_set = _as_eval_set(loaded)
        for index, (written, key) in enumerate(zip(loaded.cases, loaded.keys)):
            found = accepted.get(key)
            cases.append(DatasetCaseRef(
                eval_set=eval_set, position=index, config=_NO_ADK_CONFIG, key=key,
                dataset=loaded, index=index, metrics=metrics, metrics_errors=metric_errors, manifest=manifest,
                baseline_path=baseline_path, baseline_display=baseline_display, baseline_source=baseline_source,
                baseline=found[1] if found else None, baseline_index=found[0] if found else None,
            ))
    return cases, errors


def bare_refs(loaded: LoadedDataset) -> list[DatasetCaseRef]:
    """The cases of a loaded file with nothing around them (no metrics, manifest or baseline)."""
    eval_set = _as_eval_set(loaded)
    return [DatasetCaseRef(eval_set=eval_set, position=i, config=_NO_ADK_CONFIG, key=key, dataset=loaded, index=i)
            for i, key in enumerate(loaded.keys)]


_NO_ADK_CONFIG = LoadedConfig(config=EvalConfig(criteria={}), file=None)


def _metrics_for(eval_dir: Path, root: Path) -> tuple[Optional[MetricsConfig], tuple[LoadError, ...]]:
    for name in CONFIG_NAMES:
        path = eval_dir / name
        if path.is_file():
            config, errors = load_metrics_config(path, display_path(path, root))
            return config, tuple(errors)
    return None, ()


def _baselines(path: Path, display: str) -> tuple[dict[str, tuple[int, DatasetCase]], Optional[SourceText], list[LoadError]]:
    """The accepted runs in a baseline file, by case key, and the file as read (none when there is no
    file yet)."""
    if not path.is_file():
        return {}, None, []
    loaded, errors = load_dataset(path, display, trace=True)
    if loaded is None:
        return {}, None, errors
    return {entry_key(case, key): (index, case) for index, (case, key) in enumerate(zip(loaded.cases, loaded.keys))}, loaded.source, []


def entry_key(case: DatasetCase, key: str) -> str:
    """The dataset case a baseline entry is of: the key it was accepted under (`agentdiff_case_key`,
    written when the case has no usable eval_case_id), else its own key."""
    recorded = (case.model_extra or {}).get(KEY_EXTRA)
    return recorded if isinstance(recorded, str) and recorded else key


#: The turns ADK's user simulator may play, as `agents-cli eval dataset synthesize` defaults `--max-turns`.
SCENARIO_TURNS = 5


def is_scenario(case: DatasetCase) -> bool:
    """A case the user simulator plays: a `user_scenario` with neither a prompt nor turns."""
    return case.user_scenario is not None and case.prompt is None and not case.turns


def sent_message(case: DatasetCase) -> dict[str, Any]:
    """The user message a case sends, as `eval generate` sends it: its prompt, or the content of a
    continuation's trailing user event."""
    events = case.events()
    content = case.prompt if case.prompt is not None else (events[-1].content if events else None)
    if content is None:  # only in a trace (`case_problem` refuses such a case to run)
        return {"role": "user", "parts": []}
    return {"role": "user", **content.model_dump(mode="json", exclude_none=True)}


def history(case: DatasetCase, root_agent: str) -> list[dict[str, Any]]:
    """The events a continuation's session starts with, as `eval generate` seeds them: every event
    before the trailing user message (an author `model` written as the root agent), and that
    message's state delta, if any, without its content."""
    events = case.events()
    if case.prompt is not None or not events:  # a prompt, or a scenario: no history
        return []
    seeded = []
    for event in events[:-1]:
        seeded.append({"author": root_agent if event.author == "model" else (event.author or ""),
                       "content": event.content.model_dump(mode="json", exclude_none=True) if event.content else None,
                       "state_delta": event.state_delta})
    if events[-1].state_delta:
        seeded.append({"author": "user", "content": None, "state_delta": events[-1].state_delta})
    return seeded


def _as_eval_set(loaded: LoadedDataset) -> LoadedEvalSet:
    """The dataset as the EvalSet of the messages its cases send (each one's `reference` its expected
    final response): what ids, filters and reports read."""
    cases = []
    for written, key in zip(loaded.cases, loaded.keys):
        if is_scenario(written):
            assert written.user_scenario is not None
            scenario = {"starting_prompt": written.user_scenario.starting_prompt, "conversation_plan": written.user_scenario.conversation_plan}
            cases.append(EvalCase.model_validate({"eval_id": key, "conversation_scenario": scenario}))
            continue
        reference = written.reference.response if written.reference is not None else None
        invocation = Invocation.model_validate({
            "user_content": sent_message(written),
            "final_response": reference.model_dump(mode="json", exclude_none=True) if reference is not None else None,
        })
        cases.append(EvalCase(eval_id=key, conversation=[invocation]))
    name = loaded.source.path.name.removesuffix(".json")
    return LoadedEvalSet.of(loaded.source, EvalSet(eval_set_id=name, eval_cases=cases), parsed=loaded.raw)


def dataset_shape(ref: DatasetCaseRef) -> str:
    """`prompt`, `continuation` or `scenario`: what the case sends."""
    if is_scenario(ref.written):
        return "scenario"
    return "prompt" if ref.written.prompt is not None else "continuation"
