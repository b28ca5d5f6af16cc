"""Finding the cases under some paths: EvalSet files and conformance case folders.

* `*.evalset.json` and `*.test.json` are eval sets; `test_config.json` beside one is its config.
* A folder holding `spec.yaml` is a conformance case (`<category>/<name>/spec.yaml`).
* `*.evalset_result.json` files are results, not cases, and are skipped, as are hidden folders
  (`.git`, `.venv`, `.adk`, `.agentdiff`), `node_modules` and `__pycache__`.
* `*.json` files under a `datasets/` folder of agents-cli's eval layout are agents-cli datasets
  (`dataset_cases`), each of their cases a `DatasetCaseRef`.
* Eval files the project's own tests name (`AgentEvaluator.evaluate("pkg", "eval/data/x.json")`, read
  by `agent_hints`, never run) or its `adk eval` commands name (`eval_commands`), and the `*.json`
  files beside a `test_config.json`, are eval sets whatever their names (`named_eval_files`); when
  nothing is found, the JSON files that would load as eval sets are named in `notes`.

Every file is loaded independently: one bad file becomes a LoadError and hides nothing else.
Results come back sorted, so the same tree always lists the same way.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.formats.adk_results import RESULT_SUFFIX
from agentdiff.core.formats.conformance import (
    SPEC_FILE,
    load_conformance_case,
)
from agentdiff.core.formats.eval_set_files import (
    CONFIG_FILE_NAME,
    LoadedConfig,
    LoadedEvalSet,
    legacy_criteria_errors,
    load_config_file,
    load_eval_config,
    load_eval_set,
)
from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.formats.source_file import display_path, missing_reason, resolved
from agentdiff.core.project.case_ids import CaseIds, case_keys
from agentdiff.core.project.case_refs import CaseRef, ConformanceCaseRef, EvalCaseRef  # noqa: F401 - discovery's words
from agentdiff.core.project.checks_near import (  # noqa: F401 - discovery's words
    ChecksFinder,
    checks_file_for,
    with_checks,
)
from agentdiff.core.project.collector import held_off
from agentdiff.core.project.eval_commands import commanded_config, commanded_configs
from agentdiff.core.project.conformance_dirs import not_a_case
from agentdiff.core.project.named_eval_files import (  # noqa: F401 - is_eval_set_file and the suffixes are discovery's words
    EVAL_SET_SUFFIXES,
    SKIPPED_DIRS,
    hinted_files,
    is_eval_set_file,
    unread_eval_sets,
)
from agentdiff.core.project.warm_reads import ReadAhead
from agentdiff.core.project.family import FINDERS, CaseFamily, family_named, family_of, finders

DATASETS_DIR = "datasets"  # agents-cli's datasets folder (`dataset_cases`)




@dataclass
class Discovery:
    cases: list[CaseRef] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    eval_sets: list[LoadedEvalSet] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # files that look like cases but are not read as ones, and why
    #: The units (resolved) of the families whose cases stand in for others (`CaseFamily.stands_in_for`), cases or none in them.
    standing: list[Path] = field(default_factory=list)

    def find(self, case_id: str) -> Optional[CaseRef]:
        return next((case for case in self.cases if case.id == case_id), None)

    def resolve(self, query: str) -> list[CaseRef]:
        """The cases a user means by `query`: an exact id; else every case whose id ends with it at a
        boundary (after a `/` or a `::`: `one` never names `::none`), or whose name (the id's key, or
        case folder) or eval_id is it."""
        exact = self.find(query.rstrip("/"))
        if exact is not None:
            return [exact]
        query = query.rstrip("/")
        tails = ("/" + query, "::" + query) if not query.startswith(("/", "::")) else (query,)
        return [case for case in self.cases if case.id.endswith(tails) or case.name == query or _eval_id(case) == query]


def _eval_id(ref: CaseRef) -> Optional[str]:
    return family_of(ref).eval_key(ref)


def case_units(path: Path) -> list[Path]:
    """The eval set files and conformance case folders under `path` (a folder that appeared, say)."""
    datasets: list[Path] = []
    claimed: dict[int, list[Path]] = {}
    files, dirs = _walk(path, datasets=datasets, claimed=claimed)
    return [*files, *dirs, *(file for file in datasets if _is_dataset(file, path)), *(u for units in claimed.values() for u in units)]


def _walk(path: Path, errors: Optional[list[LoadError]] = None, root: Optional[Path] = None,
          datasets: Optional[list[Path]] = None, beside: Optional[list[Path]] = None,
          claimed: Optional[dict[int, list[Path]]] = None) -> tuple[list[Path], list[Path]]:
    """Eval set files and conformance case folders under `path` (a file or a folder); `datasets`
    collects the `.json` files under `datasets/` folders (agents-cli datasets, where they lie in its
    layout), `beside` the other `.json` files beside a `test_config.json` (eval sets whatever their
    names, if they load as ones), `claimed` the units of the registered finders (`family.FINDERS`), by
    finder. Anything else named (a device, a FIFO) is read as a file, so it is a load error rather than
    nothing."""
    extra = finders() if claimed is not None and FINDERS else []
    if not path.is_dir():
        for number, finder in enumerate(extra):
            if finder.claims(path):
                claimed.setdefault(number, []).append(path)  # type: ignore[union-attr]
                return [], []
        if path.name == SPEC_FILE:
            return [], [path.parent]
        if datasets is not None and path.suffix == ".json" and not is_eval_set_file(path.name) and _is_dataset(path, root or path.parent):
            datasets.append(path)
            return [], []
        return [path], []
    eval_files: list[Path] = []
    case_dirs: list[Path] = []

    def unreadable(exc: OSError) -> None:  # a folder that cannot be listed (no permission, a path too long)
        if errors is not None:
            where = display_path(Path(exc.filename), root) if exc.filename else display_path(path, root)
            errors.append(LoadError(file=where[:300], message=f"cannot read folder: {exc.strerror or exc}"))

    above = datasets is not None and DATASETS_DIR not in path.parts and _in_datasets_folder(path)  # `agentdiff` in `…/datasets/`
    for folder, dirs, files in os.walk(path, onerror=unreadable):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        here = Path(folder)
        if extra:  # a file a finder claims is its unit alone
            mine = set()
            for number, finder in enumerate(extra):
                if not finder.looks_in(here):
                    continue
                for name in files:
                    if name not in mine and finder.claims(here / name):
                        claimed.setdefault(number, []).append(here / name)  # type: ignore[union-attr]
                        mine.add(name)
            files = [name for name in files if name not in mine]
        if SPEC_FILE in files:
            case_dirs.append(here)
        eval_files.extend(here / name for name in sorted(files) if is_eval_set_file(name))
        if beside is not None and CONFIG_FILE_NAME in files and DATASETS_DIR not in here.parts:
            beside.extend(here / name for name in sorted(files) if name.endswith(".json") and not is_eval_set_file(name)
                          and name != CONFIG_FILE_NAME and not name.endswith(RESULT_SUFFIX))
        if datasets is not None and (DATASETS_DIR in here.parts or above):
            datasets.extend(here / name for name in sorted(files) if name.endswith(".json") and not is_eval_set_file(name))
    return eval_files, case_dirs


def discover(paths: Sequence[Path], root: Optional[Path] = None, stand_ins: bool = True) -> Discovery:
    """Every case under `paths`; `stand_ins=False`: none of the families whose cases stand in for others
    (`CaseFamily.stands_in_for`: their files are not read), for what asks of the cases written down only."""
    with held_off():  # a suite's objects made and kept, not walked by each collection as they are made
        return _discover(paths, root or Path.cwd(), stand_ins)


def _discover(paths: Sequence[Path], root: Path, stand_ins: bool = True) -> Discovery:
    found = Discovery()
    eval_files: list[Path] = []
    case_dirs: list[Path] = []
    searched: list[Path] = []
    datasets: list[Path] = []
    beside: list[Path] = []
    claimed: dict[int, list[Path]] = {}  # the units of each registered finder
    for path in paths:
        try:
            there = path.exists()
        except (OSError, ValueError):  # a name the system cannot look up (too long, a NUL in it)
            there = False
        if not there:
            try:
                message = missing_reason(path)
            except OSError:
                message = "no such file or folder"
            found.errors.append(LoadError(file=display_path(path, root)[:200], message=message))
            continue
        files, dirs = _walk(path, found.errors, root, datasets, beside, claimed)
        eval_files += files
        case_dirs += dirs
        searched.append(resolved(path))
    named, in_named_dirs = hinted_files(root, searched, {resolved(f) for f in eval_files})
    in_named_dirs += [f for f in beside if resolved(f) not in {resolved(n) for n in named}]
    checks = ChecksFinder(root, found.errors)
    files = _unique(eval_files + named + in_named_dirs)
    ahead = ReadAhead([file for file in files if _utf8_name(file)])  # big files new to the cache, on every core
    try:
        _load_eval_sets(found, files, set(in_named_dirs), root, checks, ahead)
    finally:
        ahead.close()
    named_dirs = {resolved(p.parent if p.name == SPEC_FILE else p) for p in paths}
    for case_dir in _unique(case_dirs):
        why = not_a_case(case_dir, root, named_dirs)
        if why is not None:  # an OpenAPI `spec.yaml` in docs/, say: ADK would not run it either
            found.notes.append(f"{display_path(case_dir, root)}/{SPEC_FILE}: {why}")
            continue
        if not _utf8_name(case_dir):
            found.errors.append(LoadError(file=_bytes_shown(display_path(case_dir, root)), message="its name is not valid UTF-8: rename the folder"))
            continue
        case, errors = load_conformance_case(case_dir, display_path(case_dir, root))
        found.errors.extend(errors)
        if case is not None:
            checks_file = checks.near(case_dir)
            specs = checks_file.for_case((case.category,), (case.name, case.display)) if checks_file is not None else ()
            found.cases.append(ConformanceCaseRef(case, specs))
    if datasets:
        from agentdiff.core.project.dataset_cases import dataset_cases_in

        found.cases.extend(dataset_cases_in(_unique([f for f in datasets if _utf8_name(f)]), root, found.errors, checks.near))
    names = list(FINDERS)
    for number, units in sorted(claimed.items()):  # the formats found by finders of their own
        standing = stands_in(names[number])
        if standing and not stand_ins:
            continue
        found.cases.extend(finders()[number].load(_unique([u for u in units if _utf8_name(u)]), root, found.errors, checks.near))
        if standing:
            found.standing += [resolved(u) for u in units]
    found.cases.sort(key=lambda ref: (family_of(ref).listed_after, ref.category))  # stable: file order kept
    found.cases, clashes = _without_clashes(_without_stand_ins(found.cases))
    found.errors.extend(clashes)
    found.errors.sort(key=lambda e: (e.file, e.line or 0))
    if not found.cases and not found.errors and searched:  # eval sets named otherwise: say how to include them
        found.notes += unread_eval_sets(searched, root)
    if not found.cases and not found.errors:  # a folder of an agents-cli project with none of its cases below it
        found.notes += _project_above(root)
    return found


def _project_above(root: Path) -> list[str]:
    from agentdiff.core.formats.agents_cli.manifest import find_manifest

    here = root.absolute()
    manifest, _ = find_manifest(here.parent) if here.parent != here else (None, [])
    if manifest is None or (here / "agents-cli-manifest.yaml").exists():
        return []
    where = os.path.relpath(manifest.root, here)
    return [f"this folder is inside the agents-cli project at {where} (its agents-cli-manifest.yaml), whose cases are under its "
            f"tests/eval/datasets/: run agentdiff there (cd {where}), or name them (agentdiff run {where}/tests/eval)"]


def _load_eval_sets(found: Discovery, files: list[Path], optional: set[Path], root: Path, checks: ChecksFinder,
                    ahead: ReadAhead) -> None:
    """Each eval set file's cases into `found`, its errors too (a file in `optional` only when it reads as one)."""
    configs: dict[Path, tuple[LoadedConfig, list[LoadError]]] = {}
    commanded = commanded_configs(root) if files else ()  # `adk eval … --config_file_path X` the project runs
    for file in files:
        if not _utf8_name(file):  # ids, reports and the workers' messages are UTF-8: a name that is not cannot be a case's
            found.errors.append(LoadError(file=_bytes_shown(display_path(file, root)), message="its name is not valid UTF-8: rename the file"))
            continue
        ahead.wait(file)
        loaded, errors = load_eval_set(file, display_path(file, root))
        if file in optional and (errors or loaded is None or not loaded.cases.runnable):
            continue  # a JSON file in a folder the tests name that is not an eval set (or is `[]`): not a case file
        found.errors.extend(errors)
        if loaded is None:
            continue
        found.eval_sets.append(loaded)
        given = commanded_config(file, commanded) if commanded else None
        key = given or file.parent
        if key not in configs:
            configs[key] = load_config_file(given, root) if given else load_eval_config(file, root)
            found.errors.extend(configs[key][1])
        config, config_errors = configs[key]
        refused = legacy_criteria_errors(loaded, config)  # as AgentEvaluator refuses such a file whole
        found.errors.extend(refused)
        checks_file = checks.near(file.parent)
        shared_errors = tuple(config_errors) + tuple(refused)
        for position, (eval_id, key) in enumerate(zip(loaded.cases.eval_ids, case_keys(loaded))):
            ref = EvalCaseRef(loaded, config, shared_errors, key, position=position)
            if checks_file is not None:
                specs = checks_file.for_case((file.name, loaded.eval_set_id), (eval_id, ref.name, ref.id))
                ref = dataclasses.replace(ref, checks=specs)
            found.cases.append(ref)


def _in_datasets_folder(path: Path) -> bool:
    """Whether `path` lies in an agents-cli eval folder's `datasets/` (looked for above it: the folder
    agentdiff runs in may be that one)."""
    from agentdiff.core.project.dataset_cases import is_dataset_file

    return is_dataset_file(path.absolute() / "x.json", path)


def _is_dataset(path: Path, root: Path) -> bool:
    from agentdiff.core.project.dataset_cases import is_dataset_file

    return is_dataset_file(path, root)


def _bytes_shown(name: str) -> str:
    """A name as the file system's bytes, those that are not UTF-8 written `\\xff`."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def _utf8_name(path: Path) -> bool:
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:  # bytes the file system gave that are not UTF-8 (kept as surrogates)
        return False
    return True


def stands_in(name: str) -> bool:
    """Whether the cases of a family stand in for others (`CaseFamily.stands_in_for`)."""
    return type(family_named(name)).stands_in_for is not CaseFamily.stands_in_for


def _without_stand_ins(cases: list[CaseRef]) -> list[CaseRef]:
    """The cases without those standing in for a case found here (`CaseFamily.stands_in_for`: a traced
    conversation accepted into an eval set other than its own target, by `agentdiff import --into`)."""
    standing = {name for name in {ref.family for ref in cases} if stands_in(name)}
    if not standing:
        return cases
    keys = {key for ref in cases if ref.family not in standing and (key := family_of(ref).eval_key(ref)) is not None}
    return [ref for ref in cases if ref.family not in standing or family_of(ref).stands_in_for(ref) not in keys]


def _without_clashes(cases: list[CaseRef]) -> tuple[list[CaseRef], list[LoadError]]:
    """Two cases with one id (a file name holding `::`, say) cannot both be run, reported or
    accepted by it: the first keeps it, the other is a load error naming both, so it is never lost
    without a word (a run that silently ran one of them would pass over the other)."""
    first: dict[str, CaseRef] = {}
    kept, errors = [], []
    for ref in cases:
        other = first.setdefault(ref.id, ref)
        if other is ref:
            kept.append(ref)
            continue
        errors.append(LoadError(file=ref.source, message=f"its case {ref.name!r} has the id {ref.id!r}, which {other.source} "
                                f"has too: rename one (a `::` in a file name reads as an id's separator)"))
    return kept, errors


def find_eval_sets(root: Path) -> CaseIds:
    """The eval set files under `root` (the project root), for naming stored results by their cases' ids."""
    beside: list[Path] = []
    eval_files, _ = _walk(root, beside=beside)
    named, in_named_dirs = hinted_files(root, [root.resolve()], {resolved(f) for f in eval_files})
    loaded = (load_eval_set(file, display_path(file, root))[0] for file in _unique(eval_files + named + in_named_dirs + beside))
    return CaseIds(eval_set for eval_set in loaded if eval_set is not None)


def _unique(paths: list[Path]) -> list[Path]:
    seen: set[Path] = set()
    out: list[Path] = []
    for path in sorted(paths):
        key = resolved(path)
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out
