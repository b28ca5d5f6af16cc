"""Which cases a command means: the cases under paths and the cases case ids name (`run`,
`record`), and the one case a query names (`diff`)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence, TextIO

from agentdiff.core.project.discovery import discover

from .errors import exists, print_errors, quoted


def select_cases(args_paths: Sequence[str], config):
    """Cases from paths and case ids; returns (a Discovery of the cases and load errors, unknown arguments)."""
    from agentdiff.core.project.discovery import Discovery

    selected = Discovery()
    unknown: list[str] = []
    paths = [Path(p) for p in args_paths if exists(p)]
    queries = [p for p in args_paths if not exists(p)]
    if paths or not queries:
        found = discover(paths or list(config.paths) or [Path(".")], root=Path.cwd())
        selected.cases += found.cases
        selected.errors += found.errors
        selected.notes += found.notes
    if queries:
        everything = discover(list(config.paths) or [Path(".")], root=Path.cwd())
        for query in queries:
            matches = everything.resolve(query)  # every case the query names: ids, eval_ids, case folders
            if matches:
                selected.cases += matches
            else:
                unknown.append(query)
    seen: set[str] = set()
    selected.cases = [c for c in selected.cases if not (c.id in seen or seen.add(c.id))]
    return selected, unknown


def similar_ids(query: str, ids: Sequence[str], most: int = 8) -> list[str]:
    """The case ids a mistyped query probably meant: those holding it (case-insensitively), else the
    closest by spelling; at most `most`."""
    import difflib

    lowered = query.lower()
    holding = [case_id for case_id in ids if lowered in case_id.lower()]
    if holding:
        return holding[:most]
    names = {case_id.rsplit("::", 1)[-1].rsplit("/", 1)[-1]: case_id for case_id in ids}
    return [names[name] for name in difflib.get_close_matches(query, list(names), n=most, cutoff=0.6)]


def find_case(query: str, paths: Sequence[Path], err: TextIO):
    """The one case `query` names, or None after saying why on `err`."""
    file_part = query.split("::", 1)[0] if "::" in query else None
    search = list(paths) or ([Path(file_part)] if file_part and exists(file_part) else [Path(".")])
    found = discover(search, root=Path.cwd())
    matches = found.resolve(query)
    if len(matches) == 1:
        return matches[0]
    if not matches:
        print_errors(found.errors, err)
        alike = similar_ids(query, [ref.id for ref in found.cases])
        if alike:  # as git's "did you mean": the ids that hold it, else the nearest
            print(f"error: no case matches {quoted(query)}; did you mean one of these?", file=err)
            for case_id in alike:
                print(f"  {case_id}", file=err)
        else:
            print(f"error: no case matches {quoted(query)} (see `agentdiff list`)", file=err)
    else:
        print(f"error: {query!r} matches {len(matches)} cases; use one of:", file=err)
        for ref in matches:
            print(f"  {ref.id}", file=err)
    return None
