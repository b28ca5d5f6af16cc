from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
REF_AGENTS = TESTS / "fixtures" / "ref_agents"
NATIVE_AGENTS = TESTS / "fixtures" / "native_agents"

sys.path.insert(0, str(TESTS))

# what reading big eval set files found (`core.formats.read_cache`) is kept for this session alone, never
# in the user's own cache folder; the commands tests start inherit it
os.environ["AGENTDIFF_CACHE_DIR"] = tempfile.mkdtemp(prefix="agentdiff-test-cache-")

pytest_plugins = ["pytester"]  # the agentdiff pytest plugin is tested through pytest's own pytester


@pytest.fixture(autouse=True)
def _no_notices_carried_over():
    """agentdiff's once-said notices live in the process (each command says those it has at its end):
    one a test leaves unsaid must not reach the next command a later test runs in this process."""
    from agentdiff.core.formats.set_aside import take_notices

    take_notices()
    yield
    take_notices()


def turn(script: str, expected_calls: list[dict] | None = None, expected_text: str | None = "", static: bool = True) -> dict:
    """An expected invocation whose user message scripts what the reference agent will do."""
    invocation: dict = {"user_content": {"role": "user", "parts": [{"text": script}]}}
    if expected_text is not None:
        invocation["final_response"] = {"role": "model", "parts": [{"text": expected_text}]}
    if expected_calls is not None:
        invocation["intermediate_data"] = {"tool_uses": expected_calls} if static else {
            "invocation_events": [
                {"author": "ref_agent", "content": {"role": "model", "parts": [{"function_call": c} for c in expected_calls]}}
            ]
        }
    return invocation


W = {"name": "get_weather", "args": {"city": "Paris"}}
L = {"name": "lookup", "args": {"key": "a", "count": 1}}
N = {"name": "noop", "args": {}}

REFERENCE_CASES = [
    ("same", [turn('call get_weather {"city": "Paris"}\nsay The weather in Paris is sunny.', [W], "It is sunny in Paris.")]),
    ("swapped", [turn('call lookup {"key": "a", "count": 1}\ncall get_weather {"city": "Paris"}\nsay done', [W, L], "done")]),
    ("extra_middle_call", [turn('call get_weather {"city": "Paris"}\ncall noop {}\ncall lookup {"key": "a", "count": 1}\nsay ok', [W, L], "ok")]),
    ("missing_duplicate", [turn("call noop {}\nsay fine", [N, N], "fine")]),
    ("float_equals_int", [turn('call lookup {"key": "a", "count": 1}\nsay one', [{"name": "lookup", "args": {"key": "a", "count": 1.0}}], "one")]),
    ("string_is_not_int", [turn('call lookup {"key": "a", "count": 1}\nsay one', [{"name": "lookup", "args": {"key": "a", "count": "1"}}], "one")]),
    ("empty_vs_empty", [turn("nothing", [], "")]),
    ("args_empty_vs_null", [turn("call noop {}\nsay x", [{"name": "noop"}], "x")]),
    ("thought_parts", [turn("think Let me think\nsay It is sunny", [], "It is sunny")]),
    ("cjk", [turn("say 天气很好", None, "天气好")]),
    ("cafe", [turn("say café au lait", [], "cafe au lait")]),
    ("stemming", [turn("say He was running fast", [], "He runs fast")]),
    ("events_expected", [turn('call get_weather {"city": "Paris"}\nsay sunny', [W], "sunny", static=False)]),
    ("three_turns", [
        turn('call get_weather {"city": "Paris"}\nsay a', [W], "a"),
        turn("call noop {}\nsay b", [L], "b"),
        turn('call lookup {"key": "a", "count": 1}\nsay c', [L], "c"),
    ]),
]

REFERENCE_CONFIGS = {
    "exact": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.5},
    "in_order": {
        "tool_trajectory_avg_score": {"threshold": 0.5, "match_type": "IN_ORDER"},
        "response_match_score": {"threshold": 0.8},
        "no_such_metric": 0.5,
        "tool_call_count_v1": 1.0,
    },
    "any_order": {
        "tool_trajectory_avg_score": {"threshold": 1.0, "matchType": "any-order", "ignoreArgs": True},
        "response_match_score": "0.3",
    },
    "bad_match_type": {"tool_trajectory_avg_score": {"threshold": 1, "match_type": "FUZZY"}, "response_match_score": 0.6},
}


def reference_eval_set() -> dict:
    return {
        "eval_set_id": "reference",
        "eval_cases": [{"eval_id": eval_id, "conversation": conversation} for eval_id, conversation in REFERENCE_CASES],
    }


@pytest.fixture(scope="session")
def adk_reference_runs(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """ADK's own results (and CSV) for the reference cases under each reference config."""
    pytest.importorskip("google.adk.evaluation.agent_evaluator")
    from adk_reference import run_agent_evaluator

    sys.path.insert(0, str(REF_AGENTS))
    base = tmp_path_factory.mktemp("adk_reference")
    runs = {}
    for name, criteria in REFERENCE_CONFIGS.items():
        csv_path = base / f"{name}.csv"
        results = run_agent_evaluator(
            "ref_agent", reference_eval_set(), criteria, base / name, "ref_agent", num_runs=2, output_file=csv_path
        )
        runs[name] = (results, csv_path)
    return runs


@pytest.fixture(scope="session")
def worker_pool():
    """One warm worker server for the whole session (it takes about two seconds to start)."""
    from agentdiff.core.worker.pool import WorkerPool

    pool = WorkerPool(jobs=4, timeout=60)
    yield pool
    pool.close()


#: Tests that take a minute or more: started first, so none of them is left to run alone at the end
#: when the suite is spread over CPUs (a worker that is done takes tests from the others' ends).
#: Those that need an oracle's environment come after the others, by when its making (started at
#: collection) is done.
SLOW_FIRST = ("test_judged_metrics.py::test_judged_metrics_score_as_adk_scores_them", "test_pytest_plugin.py::test_k_x_and_lf",
              "test_adk_reference.py", "test_tool_install.py", "test_adk_versions.py", "test_agents_cli_oracle.py")


def pytest_collection_modifyitems(session, config, items):
    def rank(item) -> int:
        return next((i for i, slow in enumerate(SLOW_FIRST) if slow in item.nodeid), len(SLOW_FIRST))

    items.sort(key=rank)  # stable: the rest keep their order


_making: list = []  # the background processes making the oracle environments the collected tests need


def pytest_collection_finish(session):
    """When a collected test needs the oldest ADK's project environment, start making it at once
    (pip, mostly waiting on the network), so it is ready by the time that test runs."""
    import subprocess

    from adk_envs import AGENTS_CLI, ENVS, OLDEST

    wanted = {"oldest_adk_python": (ENVS / "adk" / OLDEST, OLDEST),
              "agents_cli": (ENVS / "agents-cli" / AGENTS_CLI, "agents-cli")}
    for fixture, (folder, argument) in wanted.items():
        needed = any(fixture in getattr(item, "fixturenames", ()) for item in session.items)
        if needed and not (folder / "ready").exists():
            _making.append(subprocess.Popen([sys.executable, str(TESTS / "adk_envs.py"), argument],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))


def pytest_sessionfinish(session, exitstatus):
    import os

    for making in _making:
        if making.poll() is not None:
            continue
        if os.environ.get("PYTEST_XDIST_WORKER") and exitstatus != pytest.ExitCode.INTERRUPTED:
            making.wait()  # another worker may be waiting on it (under its lock): let it finish
        else:  # never outlive the session
            making.terminate()
            making.wait()


@pytest.fixture(scope="session")
def oldest_adk_python() -> Path:
    """The Python of a project environment with the oldest supported ADK (and nothing of agentdiff)."""
    from adk_envs import OLDEST, ensure_env

    return ensure_env(OLDEST)  # under the maker's lock: waits for the one started at collection


@pytest.fixture(scope="session")
def agents_cli() -> Path:
    """The `agents-cli` command of Google's google-agents-cli, in an environment of its own."""
    from adk_envs import agents_cli_bin

    return agents_cli_bin()
