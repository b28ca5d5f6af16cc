"""The pytest plugin: eval files and conformance cases as test items, one per case.

Registered through the `pytest11` entry point, it does nothing until enabled: `pytest --agentdiff`
(or `-p agentdiff` where plugins are not loaded on their own). Then every `*.evalset.json` and
`*.test.json` under the paths pytest collects, every conformance case folder (`spec.yaml`) and every
agents-cli dataset (`tests/eval/datasets/*.json`) and every `adk test` fixture (`<agent>/tests/*.json`), is a collector of test items named by case (`-k dim_living_room` selects one); each item runs its case
through agentdiff's worker pool (`--agentdiff-mode`, `--agentdiff-num-runs`) and fails with the same
message as the `AgentEvaluator` drop-in. `-x`, `--lf` and `--junitxml` work as for any test.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Optional

import pytest

from agentdiff.core.formats.conformance import SPEC_FILE
from agentdiff.core.project.dataset_cases import is_dataset_file
from agentdiff.core.project.discovery import discover, is_eval_set_file
from agentdiff.core.project.family import claimed
from agentdiff.core.run.options import RunOptions
from agentdiff.core.scoring.results import CaseStatus

PLUGIN = "agentdiff"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentdiff", "agentdiff: eval sets and conformance cases as tests")
    group.addoption("--agentdiff", action="store_true", default=False, help="collect eval files and conformance cases as test items")
    group.addoption("--agentdiff-mode", choices=("replay", "live"), default=None,
                    help="replay conformance cases (default) or run every case live")
    group.addoption("--agentdiff-num-runs", type=int, default=None, help="repeats of each case (default: the project's num_runs, else 1)")


def _enabled(config: pytest.Config) -> bool:
    plugins = getattr(config.option, "plugins", None) or []
    return bool(config.getoption("--agentdiff")) or PLUGIN in plugins


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "agentdiff: an eval or conformance case collected by agentdiff")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Optional[pytest.Collector]:
    if not _enabled(parent.config):
        return None
    if is_eval_set_file(file_path.name) or file_path.name == SPEC_FILE:
        return CaseFile.from_parent(parent, path=file_path)
    if file_path.suffix == ".json" and is_dataset_file(file_path, Path(str(parent.config.rootpath))):  # an agents-cli dataset
        return CaseFile.from_parent(parent, path=file_path)
    if claimed(file_path) is not None:  # a format found by a finder of its own (an `adk test` fixture)
        return CaseFile.from_parent(parent, path=file_path)
    return None


class _Session:
    """The pool, the options and the agent memo shared by every item of the pytest session."""

    def __init__(self, config: pytest.Config) -> None:
        from agentdiff.core.project.agent_memo import AgentMemo
        from agentdiff.core.project.config import load_project_config
        from agentdiff.core.scoring.pass_rate import PassRules

        self.root = Path(str(config.rootpath))
        project, _ = load_project_config(self.root)
        self.options = RunOptions(
            mode=config.getoption("--agentdiff-mode") or project.mode,
            num_runs=config.getoption("--agentdiff-num-runs") or project.num_runs,
            timeout=project.timeout, agents_dirs=project.agents, mapping=project.agent_for,
            pass_rules=PassRules(min_pass_rate=project.min_pass_rate, confidence=project.confidence, pass_hat_k=project.pass_hat_k,
                                 for_cases=project.min_pass_rate_for),
        )
        self.agents = AgentMemo(self.root)
        self._pool: Any = None

    def pool(self):
        if self._pool is None:
            from agentdiff.core.worker.pool import WorkerPool

            self._pool = WorkerPool(timeout=self.options.timeout)
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()


_SESSION_KEY = pytest.StashKey[_Session]()


def _session(config: pytest.Config) -> _Session:
    if _SESSION_KEY not in config.stash:
        config.stash[_SESSION_KEY] = _Session(config)
    return config.stash[_SESSION_KEY]


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SESSION_KEY in config.stash:
        config.stash[_SESSION_KEY].close()


class CaseFile(pytest.File):
    """An eval set file (its cases), or a conformance case folder's `spec.yaml` (its one case)."""

    def collect(self):
        root = Path(str(self.config.rootpath))
        found = discover([self.path.parent if self.path.name == SPEC_FILE else self.path], root)
        if found.errors:
            raise self.CollectError("\n".join(str(error) for error in found.errors))
        for ref in found.cases:
            if self.path.name == SPEC_FILE and ref.source != f"{ref.id}/{SPEC_FILE}":
                continue
            yield CaseItem.from_parent(self, name=ref.name, ref=ref)

    class CollectError(Exception):
        pass

    def repr_failure(self, excinfo, style=None):  # a load error: its file, line and reason, not a traceback
        if isinstance(excinfo.value, self.CollectError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class CaseFailed(Exception):
    pass


class CaseItem(pytest.Item):
    def __init__(self, *, ref, **kwargs) -> None:
        super().__init__(**kwargs)
        self.ref = ref
        self.add_marker(pytest.mark.agentdiff)

    def runtest(self) -> None:
        from agentdiff.core.run.runner import run_case
        from agentdiff.core.testing import failure_message

        session = _session(self.config)
        run = asyncio.run(run_case(self.ref, session.pool(), session.options, session.root, session.agents))
        if run.result.status is not CaseStatus.PASSED:
            raise CaseFailed(failure_message([run]))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, self.name
