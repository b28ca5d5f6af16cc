"""Which folders holding a `spec.yaml` are conformance cases: where ADK would run them.

`adk conformance test` looks under `tests/` by default and skips a case with no recordings beside it,
so a `spec.yaml` elsewhere — an OpenAPI document in `docs/api/`, a service's own spec — is never one of
its cases. Here a folder is a case when its `spec.yaml` has recordings beside it, lies under a `tests/`
or `conformance/` folder, was named by the user, or reads as a conformance spec (a mapping with `agent`
and only the spec's keys: a case not recorded yet, anywhere). Anything else is skipped, with a note
saying why, and never a load error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import yaml
from agentdiff.core.formats.conformance import SPEC_FILE, recordings_file

#: The keys of ADK's TestSpec (`extra="forbid"`).
SPEC_KEYS = frozenset({"description", "agent", "initial_state", "user_messages"})
#: Folders a conformance case is looked for under (ADK's default path, and the usual name for the suite).
CASE_FOLDERS = frozenset({"tests", "conformance"})
MAX_SPEC_BYTES = 1_000_000  # a larger spec.yaml outside those folders is not read to decide: skipped


def not_a_case(case_dir: Path, root: Path, named: set[Path]) -> Optional[str]:
    """None when `case_dir` is a conformance case; else why its `spec.yaml` is not read as one."""
    if case_dir.resolve() in named or any((case_dir / recordings_file(mode)).exists() for mode in ("none", "sse")):
        return None
    try:
        parts = case_dir.resolve().relative_to(root.resolve()).parts
    except ValueError:
        parts = case_dir.parts
    if CASE_FOLDERS & set(parts):
        return None
    spec = case_dir / SPEC_FILE
    try:
        if spec.stat().st_size > MAX_SPEC_BYTES:
            return "too large to be a conformance spec, and outside tests/ with no recordings beside it"
        data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return "not a conformance spec (it does not read as YAML), and outside tests/ with no recordings beside it"
    if isinstance(data, dict) and "agent" in data and set(map(str, data)) <= SPEC_KEYS:
        return None
    keys = ", ".join(sorted(map(str, data))[:4]) if isinstance(data, dict) else type(data).__name__
    return (f"not a conformance case: outside tests/, no recordings beside it, and its keys ({keys}) are not a spec's "
            "(description, agent, initial_state, user_messages); name its folder in `paths` to run it")
