"""What a change affects, wherever the changed file lives in the project: a shared module beside the
agents' packages (imported as a package with the project root on the path, or after a
`sys.path.insert`), seen by a run's record (every project file it imported or opened) and by the static
import graph (a case that never ran, a CI job on a fresh clone). Through the real code paths: the
worker, the workbench under the app with the real watcher, `agentdiff mcp`, `run --changed-since`,
`list --json`."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentdiff.core.project.import_graph import ImportGraph
from agentdiff.core.workbench.case_index import CaseIndex, CaseFiles
from agentdiff.core.workbench.changes import classify, static_candidates, static_dependents, unattached
from conftest import ROOT

AGENTDIFF = str(Path(sys.executable).parent / "agentdiff")
GIT = ["git", "-c", "user.email=a@b", "-c", "user.name=t", "-c", "init.defaultBranch=main"]

AGENT_A = """\
from common.rules import SUFFIX  # a package beside the agents: the project root is on the path


async def run_turn(ctx):
    return ctx.message + SUFFIX
"""
AGENT_B = """\
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
import rules  # noqa: E402


async def run_turn(ctx):
    return ctx.message + rules.SUFFIX
"""
AGENT_C = "async def run_turn(ctx):\n    return ctx.message\n"


def shared_project(root: Path) -> Path:
    """Agents `a`, `b` and `c` at the project root (each with two passing one-turn cases beside it);
    `a` and `b` import `common/rules.py`, `c` imports nothing of the project's."""
    (root / "common").mkdir(parents=True)
    (root / "common" / "__init__.py").write_text("")
    (root / "common" / "rules.py").write_text('SUFFIX = ""\n')
    (root / "pyproject.toml").write_text('[project]\nname = "shared-rules"\nversion = "0"\n')
    for name, code in (("a", AGENT_A), ("b", AGENT_B), ("c", AGENT_C)):
        folder = root / name
        folder.mkdir()
        (folder / "agent.py").write_text(code)
        cases = [{"eval_id": f"case_{i}", "conversation": [{"user_content": {"role": "user", "parts": [{"text": text}]},
                                                            "final_response": {"role": "model", "parts": [{"text": text}]}}]}
                 for i, text in enumerate(("hello", "bye"))]
        (folder / f"{name}.evalset.json").write_text(json.dumps({"eval_set_id": name, "eval_cases": cases}, indent=1))
    return root


def ids(*agents: str) -> set[str]:
    return {f"{a}/{a}.evalset.json::case_{i}" for a in agents for i in (0, 1)}


def break_the_rules(root: Path) -> None:
    """A save as editors make it (a new file renamed over the old): a poller never sees it half written."""
    saved = root / "common" / "rules.py.new"
    saved.write_text('SUFFIX = " and a long goodbye"  # every answer of a and b fails\n')
    os.replace(saved, root / "common" / "rules.py")


def git_commit(root: Path) -> None:
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "first"], cwd=root, check=True)


def agentdiff(root: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    env = {**os.environ, "AGENTDIFF_NO_COLOR": "1"}
    return subprocess.run([AGENTDIFF, *args], cwd=root, capture_output=True, text=True, timeout=timeout, env=env)


# --- the static import graph ----------------------------------------------------------------------


def test_the_import_graph_reaches_a_shared_module_however_it_is_imported(tmp_path):
    root = shared_project(tmp_path)
    graph = ImportGraph(root)
    rules = root / "common" / "rules.py"
    assert graph.depends(root / "a", rules) == "static"  # `from common.rules import …`
    assert graph.depends(root / "b", rules) == "static"  # `import rules` after `sys.path.insert(…parents[1] / "common")`
    assert graph.depends(root / "c", rules) is None
    assert root / "common" / "__init__.py" in graph.reach(root / "a").files  # importing common.rules runs it
    assert root / "common" / "__init__.py" not in graph.reach(root / "b").files  # b imports `rules` alone


def test_the_import_graph_follows_relative_src_layouts_and_names_data_files(tmp_path):
    pkg = tmp_path / "src" / "shop"
    (pkg / "tools").mkdir(parents=True)
    (tmp_path / "prompts").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "agent.py").write_text("from .tools import lookup\nfrom . import settings\n")
    (pkg / "tools" / "__init__.py").write_text("from .lookup import find  # noqa\n")
    (pkg / "tools" / "lookup.py").write_text("def find():\n    import importlib\n    return importlib.import_module('shop.db')\n")
    (pkg / "db.py").write_text("")
    (pkg / "settings.py").write_text("from pathlib import Path\nPROMPT = (Path(__file__).parents[2] / 'prompts' / 'system.md').read_text()\n")
    (tmp_path / "prompts" / "system.md").write_text("be brief")
    (tmp_path / "prompts" / "unused.md").write_text("")
    (tmp_path / "notes.md").write_text("")
    graph = ImportGraph(tmp_path)
    reach = graph.reach(pkg)
    assert {p.relative_to(tmp_path).as_posix() for p in reach.files} >= {
        "src/shop/agent.py", "src/shop/tools/__init__.py", "src/shop/tools/lookup.py", "src/shop/db.py", "src/shop/settings.py"}
    assert graph.depends(pkg, tmp_path / "prompts" / "system.md") == "named"  # its name is in the code
    assert graph.depends(pkg, tmp_path / "prompts" / "unused.md") == "named"  # so is its folder's: the safe side
    assert graph.depends(pkg, tmp_path / "notes.md") is None
    (pkg / "db.py").unlink()  # a module deleted that the code still imports by name
    assert ImportGraph(tmp_path).depends(pkg, pkg / "db.py") == "static"


# --- watch mode's policy --------------------------------------------------------------------------


def _index(root: Path, records: dict[str, list[Path]]) -> CaseIndex:
    index = CaseIndex()
    for agent in ("a", "b", "c"):
        for case_id in sorted(ids(agent)):
            index.put(CaseFiles(case_id, frozenset({root / agent / f"{agent}.evalset.json"}), None, root / agent,
                                frozenset(records.get(agent, ()))))
    return index


def test_a_change_re_runs_the_cases_that_recorded_it_and_the_unrun_cases_whose_agents_reach_it(tmp_path):
    root = shared_project(tmp_path)
    rules = root / "common" / "rules.py"
    # a and c ran (a imported rules.py); b never ran: only the import graph ties it to rules.py
    index = _index(root, {"a": [root / "a" / "agent.py", rules], "c": [root / "c" / "agent.py"]})
    asked = static_candidates([rules], index)
    static = static_dependents(asked, list(index.agent_dirs()), root)
    selections = classify([rules], index, root, static)
    reasons = {case_id: s.reason for s in selections for case_id in s.case_ids}
    assert set(reasons) == ids("a", "b")
    assert reasons["a/a.evalset.json::case_0"] == "re-run: common/rules.py changed (imported by its agent)"
    assert reasons["b/b.evalset.json::case_0"] == "re-run: common/rules.py changed (its agent's imports reach it)"

    # every case ran, and a new module only b's code reaches: b's cases, though no run imported it
    index = _index(root, {"a": [rules], "b": [root / "b" / "agent.py"], "c": [root / "c" / "agent.py"]})
    (root / "common" / "extra.py").write_text("")
    (root / "b" / "agent.py").write_text(AGENT_B + "from common import extra  # noqa\n")
    extra = root / "common" / "extra.py"
    static = static_dependents(static_candidates([extra], index), list(index.agent_dirs()), root)
    assert {i for s in classify([extra], index, root, static) for i in s.case_ids} == ids("b")

    # a module no agent reaches re-runs nothing, and says so
    (root / "scripts").mkdir()
    tool = root / "scripts" / "export.py"
    tool.write_text("print('x')\n")
    asked = static_candidates([tool], index)
    static = static_dependents(asked, list(index.agent_dirs()), root)
    selections = classify([tool], index, root, static)
    assert selections == [] and unattached(asked, static, selections, index, root) == [
        "scripts/export.py changed: no case's agent imports it, so nothing re-runs"]


# --- the worker's record --------------------------------------------------------------------------


def test_a_module_imported_before_the_fork_is_recorded_with_what_the_run_opened(tmp_path):
    """The worker server forks each batch from a process that may hold modules already (shared helpers
    preloaded): such a module is never opened during the run, and is recorded all the same."""
    root = shared_project(tmp_path)
    (root / "a" / "agent.py").write_text(AGENT_A + "\nNOTE = (__import__('pathlib').Path(__file__).parent / 'note.txt').read_text()\n")
    (root / "a" / "note.txt").write_text("hi")
    script = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(root)!r})
        import common.rules  # imported before the batch, as the warm server's preloads are
        from agentdiff.core.worker.child import execute_batch, prime
        prime()  # as the server does before it forks: the record reads only the modules loaded after
        from agentdiff.core.worker.jobs import AgentRef, Job, Message
        job = Job(case_id="x", agent=AgentRef(agents_dir={str(root)!r}, name="a"), mode="live", app_name="a",
                  messages=[Message(content={{"role": "user", "parts": [{{"text": "hello"}}]}})])
        outs = []
        execute_batch([job], 30, lambda index, out: outs.append(out))
        print(json.dumps({{"error": outs[0].error, "files": outs[0].files_read}}))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    said = json.loads(done.stdout.strip().splitlines()[-1])
    files = {os.path.relpath(p, root) for p in said["files"] if p.startswith(str(root))}
    assert said["error"] is None and {"common/rules.py", "common/__init__.py", "a/agent.py", "a/note.txt"} <= files, said
    assert not any("site-packages" in p or p.startswith(sys.base_prefix + os.sep + "lib") for p in said["files"]), said


# --- through the app, the MCP server and the command line -------------------------------------------


class CountingPool:
    """The real pool, counting the case ids of the runs it was given."""

    def __init__(self, pool) -> None:
        self.pool, self.ran = pool, []

    async def run(self, job, timeout=None):
        self.ran.append(job.case_id)
        return await self.pool.run(job, timeout)


async def save_until_seen(pilot, root: Path, pool: CountingPool, attempts: int = 5) -> None:
    """Breaks the rules until the watcher's runs start. A poller keeps a file's time in whole seconds and
    takes its first look at the tree when its task first runs: a save in the second the file was last
    written, or before that first look, is not seen. Each try is dated a second later than the last."""
    rules = root / "common" / "rules.py"
    first = rules.stat().st_mtime
    for attempt in range(1, attempts + 1):
        break_the_rules(root)
        os.utime(rules, (first + 2 * attempt, first + 2 * attempt))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        while not pool.ran and loop.time() < deadline:
            await pilot.pause(0.05)
        if pool.ran:
            return
    raise AssertionError(f"the watcher saw none of {attempts} saves of {rules}")


async def test_watch_mode_re_runs_exactly_the_cases_whose_agents_import_a_changed_shared_module(tmp_path, worker_pool):
    from agentdiff.core.workbench.watcher import watched_folders, watchfiles_source
    from agentdiff.tui.app import create_app
    from tui_support import FakeEditor, settle, until

    root = shared_project(tmp_path / "project")
    pool = CountingPool(worker_pool)
    changes = watchfiles_source(watched_folders(root, [root / "a", root / "b", root / "c"]), force_polling=True)
    app = create_app(root, [root / "a", root / "b", root / "c"], pool=pool, changes=changes, editor=FakeEditor(),
                     clock=lambda: 1_800_000_000.0, project="shared")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot, timeout=60)
        cases = app.workbench.cases
        assert {i for i, s in cases.items() if s.status is not None and s.status.value == "passed"} == ids("a", "b", "c"), \
            {i: (s.status, s.run.result.error if s.run else None, s.running) for i, s in cases.items()}
        assert str(root / "common" / "rules.py") in cases["b/b.evalset.json::case_0"].run.files_read
        pool.ran.clear()
        await save_until_seen(pilot, root, pool)  # outside every watched path but the project root
        await until(pilot, lambda: all(cases[i].status is not None and cases[i].status.value == "failed" for i in ids("a", "b")),
                    timeout=60, what="a's and b's cases to fail on the new rules",
                    state=lambda: ({i: (s.status, s.reason, s.running, s.stale, s.run.result.error if s.run else None)
                                    for i, s in cases.items()}, pool.ran, app.workbench.paused))
        await settle(app, pilot, timeout=60)
        assert set(pool.ran) == ids("a", "b")
        assert cases["a/a.evalset.json::case_0"].reason == "re-run: common/rules.py changed (imported by its agent)"
        assert all(cases[i].status.value == "passed" for i in ids("c"))


async def test_the_mcp_server_runs_the_cases_a_shared_module_affects(tmp_path):
    from mcp_support import mcp_session

    root = shared_project(tmp_path)
    async with mcp_session(root) as call:
        first = await call("run", which="all", timeout=120)
        assert "still_running" not in first and first["ran"] == first["done"] == 6, first
        break_the_rules(root)
        affected = await call("run", which="affected", timeout=120)
        assert {case["id"] for case in affected["cases"]} == ids("a", "b"), affected
        assert all(case["status"] == "failed" for case in affected["cases"]), affected


def test_changed_since_on_a_fresh_clone_selects_what_the_shared_module_reaches_and_kept_runs_agree(tmp_path):
    origin = shared_project(tmp_path / "origin")
    git_commit(origin)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    assert not (clone / ".agentdiff").exists()  # what a CI job starts from
    break_the_rules(clone)
    done = agentdiff(clone, "run", "--changed-since", "HEAD", "--json")
    ran = {case["id"] for case in json.loads(done.stdout)["cases"]}
    assert ran == ids("a", "b"), done.stderr
    assert "a/a.evalset.json::case_0: its agent's code imports common/rules.py, and it changed" in done.stderr
    assert done.returncode == 1  # the new rules fail them

    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=clone, check=True)
    assert agentdiff(clone, "run").returncode == 0  # a kept run: every case's record
    break_the_rules(clone)
    again = agentdiff(clone, "run", "--changed-since", "HEAD", "--json")
    assert {case["id"] for case in json.loads(again.stdout)["cases"]} == ids("a", "b"), again.stderr


def test_changed_since_says_what_it_cannot_tie_to_a_case_and_strict_runs_everything(tmp_path):
    root = shared_project(tmp_path)
    git_commit(root)
    (root / "README.md").write_text("docs\n")  # plainly not the agents': no word
    (root / "deploy").mkdir()
    (root / "deploy" / "settings.toml").write_text("region = 'eu'\n")  # nothing names it: said
    done = agentdiff(root, "run", "--changed-since", "HEAD")
    assert done.returncode == 0 and "no case is affected by the changes since HEAD" in done.stderr
    assert "warning: 1 changed file(s) tied to no case: deploy/settings.toml" in done.stderr and "README" not in done.stderr
    strict = agentdiff(root, "run", "--changed-since", "HEAD", "--changed-since-strict", "--json")
    assert "--changed-since-strict: running all 6 cases" in strict.stderr
    assert {case["id"] for case in json.loads(strict.stdout)["cases"]} == ids("a", "b", "c")
    assert agentdiff(root, "run", "--changed-since-strict").returncode == 2


def test_list_json_says_what_each_case_depends_on_and_how_it_was_found(tmp_path):
    root = shared_project(tmp_path)
    listed = {c["id"]: c["depends_on"] for c in json.loads(agentdiff(root, "list", "--json").stdout)["cases"]}
    assert "common/rules.py" in listed["a/a.evalset.json::case_0"]["static"]
    assert listed["c/c.evalset.json::case_0"] == {"static": ["c/agent.py"]}
    assert agentdiff(root, "run").returncode == 0
    listed = {c["id"]: c["depends_on"] for c in json.loads(agentdiff(root, "list", "--json").stdout)["cases"]}
    assert "common/rules.py" in listed["b/b.evalset.json::case_1"]["imported"]


@pytest.mark.adk
def test_the_samples_weather_desk_cases_depend_on_the_shared_demo_model(tmp_path):
    """weather_desk imports `sample_agents/demo_model.py` after a `sys.path.insert`, outside its own
    folder: its cases are chosen when the model changes, by the graph on a fresh clone and by a kept run."""
    pytest.importorskip("google.adk")
    root = tmp_path / "samples"
    shutil.copytree(ROOT / "sample_agents", root, ignore=shutil.ignore_patterns("__pycache__", ".agentdiff"))
    git_commit(root)
    with (root / "demo_model.py").open("a") as model:
        model.write("# edited\n")
    listed = agentdiff(root, "list", "--json")
    weather = {c["id"] for c in json.loads(listed.stdout)["cases"] if c["id"].startswith("weather_desk/")}
    done = agentdiff(root, "run", "--changed-since", "HEAD", "--json", "weather_desk")
    assert weather and {c["id"] for c in json.loads(done.stdout)["cases"]} == weather, done.stderr
    kept = json.loads(next((root / ".agentdiff" / "runs").glob("*/report.json")).read_text())
    assert all("demo_model.py" in files for case_id, files in kept["run"]["files_read"].items() if case_id in weather), kept["run"]
