"""A fixture file as ADK's `adk test` reads it.

* A fixture is `<agent_dir>/tests/<name>.json` where `<agent_dir>` holds `agent.py`, `__init__.py` or
  `root_agent.yaml`; it is `{"events": [...]}` (a recorded session's events, in ADK's camelCase JSON),
  optionally with `"mocks": {"random.random": [...], "random.randint": [...]}`; other keys are kept.
* A fixture whose name ends in `_xfail` is expected to fail.
* A fixture with no events, or whose first event is not the user's text, is skipped by ADK.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.formats.load_error import LoadError, locate
from agentdiff.core.formats.source_file import SourceFileError, SourceText, parse_source, read_source

TESTS_DIR = "tests"
AGENT_MARKERS = ("agent.py", "__init__.py", "root_agent.yaml")
XFAIL_SUFFIX = "_xfail"


def agent_dir_of(path: Path) -> Path:
    """The agent folder a fixture belongs to, as ADK takes it: the folder holding its `tests/`."""
    return path.parent.parent


def is_fixture_path(path: Path) -> bool:
    """Whether `path` lies where `adk test` looks for fixtures (`<agent_dir>/tests/*.json`)."""
    if path.suffix != ".json" or path.parent.name != TESTS_DIR:
        return False
    agent_dir = agent_dir_of(path)
    return any((agent_dir / marker).exists() for marker in AGENT_MARKERS)


@dataclass(frozen=True)
class LoadedFixture:
    source: SourceText
    data: dict[str, Any]  # the file as read (its other keys kept for a rewrite)
    events: list[dict[str, Any]] = field(default_factory=list)
    mocks: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.source.path.stem

    @property
    def xfail(self) -> bool:
        return self.name.endswith(XFAIL_SUFFIX)

    @property
    def skipped(self) -> Optional[str]:
        """Why ADK would skip it (no events, or no user text first), if it would."""
        if not self.events:
            return "it has no events"
        first = self.events[0]
        parts = (first.get("content") or {}).get("parts") or [] if first.get("author") == "user" else []
        if not (parts and isinstance(parts[0], dict) and parts[0].get("text")):
            return "its first event is not the user's text"
        return None


def load_fixture(path: Path, display: Optional[str] = None) -> tuple[Optional[LoadedFixture], list[LoadError]]:
    display = display or str(path)
    try:
        source = read_source(path, display)
        data = parse_source(source, "json")  # bounded: depth, numbers, half surrogate pairs
    except SourceFileError as exc:
        return None, [exc.error]
    if not isinstance(data, dict):
        return None, [LoadError(file=display, line=1, message="an `adk test` fixture is a JSON object with `events`")]
    events = data.get("events", [])
    problem = _problem(events, data.get("mocks", {}))
    if problem is not None:
        where, message = problem
        found = locate(source.text, where, "json")
        return None, [LoadError(file=display, line=found[0] if found else None, column=found[1] if found else None, message=message)]
    return LoadedFixture(source, data, list(events), dict(data.get("mocks") or {})), []  # (null mocks: none, as ADK reads them)


def _problem(events: Any, mocks: Any) -> Optional[tuple[list[str | int], str]]:
    if not isinstance(events, list):
        return ["events"], "`events` is a list of the session's events"
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            return ["events", index], "an event is a JSON object"
        content = event.get("content")
        if content is not None and not isinstance(content, dict):
            return ["events", index, "content"], "an event's `content` is an object with `role` and `parts`"
        parts = content.get("parts") if isinstance(content, dict) else None
        if parts is not None and not (isinstance(parts, list) and all(isinstance(p, dict) for p in parts)):
            return ["events", index, "content", "parts"], "`parts` is a list of objects"
    if mocks is None:
        return None
    if not isinstance(mocks, dict):
        return ["mocks"], "`mocks` maps `random.random` or `random.randint` to the values they return"
    for key in ("random.random", "random.randint"):  # the two ADK reads; any other key is ignored, as ADK ignores it
        values = mocks.get(key)
        if key in mocks and not (isinstance(values, list) and all(isinstance(v, (int, float)) for v in values)):
            return ["mocks", key], f"`{key}` is a list of numbers"
    return None
