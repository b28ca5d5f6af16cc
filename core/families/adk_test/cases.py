"""An `adk test` fixture as a case, and the finder that discovery asks for them.

A fixture is `<agent_dir>/tests/<name>.json` (`formats.adk_test.fixture`); its case id is the file's
path and the fixture's name (`my_agent/tests/greeting.json::greeting`), its category its agent's
folder, and its agent that folder, as ADK takes it. An eval set kept in a `tests/` folder (named
`*.test.json` or `*.evalset.json`, or beside a `test_config.json`) stays an eval set, and a JSON file
there with no `events` (an eval set a test names, a report, an array) is no fixture; one that does not
parse is a load error only when it names `events`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from agentdiff.core.formats.adk_test.fixture import TESTS_DIR, LoadedFixture, agent_dir_of, is_fixture_path, load_fixture
from agentdiff.core.formats.checks_file import CheckSpec
from agentdiff.core.formats.eval_set_files import CONFIG_FILE_NAME, FALLBACK_CONFIG_NAME
from agentdiff.core.formats.source_file import display_path
from agentdiff.core.project.case_ids import eval_case_id
from agentdiff.core.project.family import CaseFinder
from agentdiff.core.project.named_eval_files import is_eval_set_file


@dataclass(frozen=True)
class FixtureCaseRef:
    family: ClassVar[str] = "adk_test"
    fixture: LoadedFixture
    agent_dir: Path
    agent_display: str
    checks: tuple[CheckSpec, ...] = ()
    id: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", eval_case_id(self.fixture.source.display, self.fixture.name))

    @property
    def source(self) -> str:
        return self.fixture.source.display

    @property
    def category(self) -> str:
        return self.agent_display

    @property
    def name(self) -> str:
        return self.fixture.name


class FixtureFinder(CaseFinder):
    def looks_in(self, folder: Path) -> bool:
        return folder.name == TESTS_DIR

    def claims(self, path: Path) -> bool:
        name = path.name
        if is_eval_set_file(name) or name in (CONFIG_FILE_NAME, FALLBACK_CONFIG_NAME):
            return False
        return is_fixture_path(path) and not (path.parent / CONFIG_FILE_NAME).exists()

    def load(self, units: list[Path], root: Path, errors: list, checks_near: Any) -> list:
        refs = []
        for path in units:
            fixture, problems = load_fixture(path, display_path(path, root))
            if fixture is None:
                if _said_events(path):  # a fixture gone wrong; any other JSON kept in tests/ is none of ours
                    errors.extend(problems)
                continue
            if "events" not in fixture.data:
                continue  # an eval set kept in tests/, or a report: no session to replay (`adk test` skips it too)
            agent_dir = agent_dir_of(path)
            checks = checks_near(path.parent)
            specs = checks.for_case((agent_dir.name, path.name), (fixture.name,)) if checks is not None else ()
            refs.append(FixtureCaseRef(fixture, agent_dir, display_path(agent_dir, root), specs))
        return refs


def _said_events(path: Path) -> bool:
    """Whether a file that does not load as a fixture was meant as one: it names `events`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        try:
            return '"events"' in path.read_text(encoding="utf-8", errors="replace")[:1_000_000]
        except OSError:
            return False
    return isinstance(data, dict) and "events" in data
