"""Eval sets whose names say nothing (`eval/golden_evalset.json`, `eval/data/*_eval.json`): loaded where
the project says they are eval sets, and pointed out where it does not.

* The files and folders the project's tests and `adk eval` commands name (`agent_hints`), when inside
  the paths searched: a file named so is loaded (a bad one is a load error); in a folder named so, its
  `*.json` files that load as an eval set (at most `MAX_HINTED_FILES`; others are skipped silently).
* (`discovery` adds the `*.json` files beside a `test_config.json`, loaded the same way.)
* When nothing was found, `unread_eval_sets` finds the JSON files that would load as eval sets, for a
  note saying how to include them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from agentdiff.core.formats.adk_results import RESULT_SUFFIX
from agentdiff.core.formats.checks_file import CHECKS_FILE
from agentdiff.core.formats.eval_set_files import CONFIG_FILE_NAME, FALLBACK_CONFIG_NAME, load_eval_set
from agentdiff.core.formats.source_file import display_path
from agentdiff.core.project.family import claimed
from agentdiff.core.project.agent_hints import hinted_eval_paths

EVAL_SET_SUFFIXES = (".evalset.json", ".test.json")
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__"})
MAX_HINTED_FILES = 200
#: The look for unread eval sets: at most this many files walked, each at most this big.
MAX_LOOKED_AT, MAX_LOOK_BYTES = 5000, 5_000_000


def is_eval_set_file(name: str) -> bool:
    return name.endswith(EVAL_SET_SUFFIXES)


def is_case_file(path: Path) -> bool:
    """A file cases load from or are scored with: a conformance spec or recording, an eval set, a config,
    a checks file."""
    name = path.name
    return name in ("spec.yaml", CONFIG_FILE_NAME, FALLBACK_CONFIG_NAME, CHECKS_FILE) or is_eval_set_file(name) \
        or (name.startswith("generated-") and name.endswith(".yaml")) or claimed(path) is not None


def _is_candidate(path: Path, root: Path, searched: Sequence[Path], known: set[Path]) -> bool:
    """A file the usual walk did not find, inside a searched path, not in a skipped folder, and not a
    config or results file."""
    name = path.name
    if path in known or is_eval_set_file(name) or name == CONFIG_FILE_NAME or name.endswith(RESULT_SUFFIX):
        return False
    inside = [top for top in searched if path == top or top in path.parents]
    if not inside:
        return False
    below = path.relative_to(inside[0]).parts[:-1]
    return not any(part.startswith(".") or part in SKIPPED_DIRS for part in below)


def hinted_files(root: Path, searched: Sequence[Path], known: set[Path]) -> tuple[list[Path], list[Path]]:
    """The eval files the project's tests name that the walk missed, and the `*.json` files in the
    folders they name (loaded only if they turn out to be eval sets), each bounded."""
    if not searched:
        return [], []
    named: list[Path] = []
    in_dirs: list[Path] = []
    for path in hinted_eval_paths(root):
        if path.is_file():
            if _is_candidate(path, root, searched, known):
                named.append(path)
            continue
        if not path.is_dir():
            continue
        seen = 0
        for folder, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
            seen += len(files)
            if seen > 20 * MAX_HINTED_FILES or len(in_dirs) >= MAX_HINTED_FILES:
                break
            for file in sorted(files):
                candidate = Path(folder) / file
                if file.endswith(".json") and len(in_dirs) < MAX_HINTED_FILES and _is_candidate(candidate, root, searched, known):
                    in_dirs.append(candidate)
    in_dirs = [f for f in dict.fromkeys(in_dirs) if f not in named]
    return list(dict.fromkeys(named)), in_dirs


def unread_eval_sets(searched: Sequence[Path], root: Path, limit: int = 5) -> list[str]:
    """Notes for the `*.json` files under `searched` that load as eval sets but were not read (their
    names end otherwise, and nothing names them): what each holds and how to include it."""
    found: list[tuple[str, int]] = []
    walked = 0
    for top in searched:
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
            for name in sorted(files):
                walked += 1
                if walked > MAX_LOOKED_AT or len(found) >= limit:
                    break
                path = Path(folder) / name
                if not name.endswith(".json") or is_eval_set_file(name) or name == CONFIG_FILE_NAME or name.endswith(RESULT_SUFFIX):
                    continue
                try:
                    if path.stat().st_size > MAX_LOOK_BYTES or b"eval_cases" not in path.read_bytes():
                        continue
                except OSError:
                    continue
                loaded, errors = load_eval_set(path, display_path(path, root))
                if loaded is not None and not errors:
                    found.append((display_path(path, root), len(loaded.cases)))
    if not found:
        return []
    paths = ", ".join(f'"{shown}"' for shown, _ in found)
    notes = [f"{shown}: an eval set ({count} case{'' if count == 1 else 's'}) not read: its name does not end in .test.json or .evalset.json, and no "
             "test_config.json beside it, test or `adk eval` command names it" for shown, count in found]
    notes.append(f"to include {'it' if len(found) == 1 else 'them'}, add `paths = [{paths}]` under [tool.agentdiff] in pyproject.toml "
                 "(or name the files *.evalset.json, or pass them: agentdiff run PATH)")
    return notes
