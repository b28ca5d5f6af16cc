"""What knowing a change's impact costs (issue: change impact you can trust).

* The record a run keeps: the worker's scan of `sys.modules` at the end of each run (the first in a
  process pays for every module loaded; the next only for the new ones) and its audit hook on every
  `open`, measured in a worker process with ADK and a sample agent loaded, beside the CPU of one run of
  that sample case in the same process.
* The static import graph: built for the samples and for a generated project of 5,000 cases (50 agent
  packages × 100 cases, each agent importing a shared package of 20 modules and a module of its own),
  with `--changed-since` choosing the cases a change to one shared module affects, beside `agentdiff
  list` on the same project (discovery alone) in the same sitting.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AGENTDIFF = str(Path(sys.executable).parent / "agentdiff")

_WORKER_SCRIPT = textwrap.dedent("""
    import json, os, sys, time
    from agentdiff.core.worker import warm  # noqa: F401 - ADK loaded, as the worker server has it
    from agentdiff.core.worker import child
    from agentdiff.core.worker.jobs import AgentRef, Job, Message

    samples = sys.argv[1]
    child.prime()  # as the worker server does before it forks
    job = Job(case_id="x", agent=AgentRef(agents_dir=samples, name="home_automation"), mode="live", app_name="home_automation",
              messages=[Message(content={"role": "user", "parts": [{"text": "Turn on the kitchen light"}]})])
    path = os.path.join(samples, "home_automation", "prompt.md")

    def opens(n):
        began = time.perf_counter()
        for _ in range(n):
            with open(path, "rb"):
                pass
        return (time.perf_counter() - began) / n

    bare = min(opens(2000) for _ in range(3))
    facts = []
    for _ in range(12):  # each in a process forked from this warm one, as the worker server forks a batch
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            began = time.process_time()
            child._Record().files()  # the first scan a worker makes
            first = time.process_time() - began
            outs = []
            cpu = time.process_time()
            child.execute_batch([job], 60, lambda i, out: outs.append(out))  # its record: one hook, a scan per run
            run = time.process_time() - cpu
            record = child._Record()
            record.files()
            began = time.process_time()
            record.files()  # a later run's scan in the same process
            again = time.process_time() - began
            hooked = min(opens(2000) for _ in range(3))
            os.write(write, json.dumps({"run": run, "first": first, "again": again, "hooked": hooked, "error": outs[0].error,
                                        "modules": len(sys.modules)}).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as pipe:
            facts.append(json.loads(pipe.read()))
        os.waitpid(pid, 0)
    assert not any(f["error"] for f in facts), facts[0]["error"]
    median = lambda key: sorted(f[key] for f in facts)[len(facts) // 2]
    print(json.dumps({"modules": facts[0]["modules"], "run_cpu": median("run"), "first": median("first"), "again": median("again"),
                      "open_bare": bare, "open_hooked": median("hooked")}))
""")


def _record_rows() -> list[tuple[str, str, str]]:
    samples = Path(tempfile.mkdtemp(prefix="agentdiff-bench-impact-")) / "sample_agents"
    shutil.copytree(ROOT / "sample_agents", samples, ignore=shutil.ignore_patterns("__pycache__", ".agentdiff"))
    try:
        done = subprocess.run([sys.executable, "-c", _WORKER_SCRIPT, str(samples)], capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            return [("record", "failed", done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "")]
        said = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(samples.parent, ignore_errors=True)
    run = said["run_cpu"]
    return [
        ("record: one sample run's CPU in a forked worker, record included (kitchen light, median of 12)", f"{run * 1000:.1f} ms", "the reference"),
        (f"record: a forked worker's first scan of sys.modules ({said['modules']:,} modules, ADK loaded before the fork)", f"{said['first'] * 1000:.2f} ms",
         f"{said['first'] / run:.1%} of a run; once per batch's process"),
        ("record: each later scan (the next run of the batch)", f"{said['again'] * 1000:.3f} ms", f"{said['again'] / run:.2%} of a run"),
        ("record: the audit hook on one open()", f"{(said['open_hooked'] - said['open_bare']) * 1e6:.1f} µs",
         f"open() alone {said['open_bare'] * 1e6:.1f} µs"),
    ]


def _graph_project(root: Path, agents: int, per_agent: int) -> None:
    common = root / "common"
    common.mkdir(parents=True)
    (common / "__init__.py").write_text("")
    for m in range(20):
        (common / f"helper_{m:02d}.py").write_text(f"from common import helper_{(m + 1) % 20:02d}  # noqa\nVALUE = {m}\n")
    (root / "pyproject.toml").write_text('[project]\nname = "many"\nversion = "0"\n')
    for a in range(agents):
        folder = root / "agents" / f"agent_{a:02d}"
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text("from . import agent  # noqa\n")
        (folder / "tools.py").write_text(f"from common import helper_{a % 20:02d}  # noqa\n")
        (folder / "agent.py").write_text("from . import tools  # noqa\nasync def run_turn(ctx):\n    return ctx.message\n")
        cases = [{"eval_id": f"case_{i:03d}", "conversation": [{"user_content": {"role": "user", "parts": [{"text": f"hi {i}"}]},
                                                                "final_response": {"role": "model", "parts": [{"text": f"hi {i}"}]}}]}
                 for i in range(per_agent)]
        (folder / f"agent_{a:02d}.evalset.json").write_text(json.dumps({"eval_set_id": f"agent_{a:02d}", "eval_cases": cases}))


def _timed(argv: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    began = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)
    return time.perf_counter() - began, done


def _graph_rows() -> list[tuple[str, str, str]]:
    sys.path.insert(0, str(ROOT))
    from agentdiff.core.project import import_graph
    from agentdiff.core.project.discovery import discover
    from agentdiff.core.reports.changed_since import depends_on

    rows = []
    for label, make in (("samples (29 cases, 6 agents)", None), ("5,000 cases (50 agents x 100)", (50, 100))):
        top = Path(tempfile.mkdtemp(prefix="agentdiff-bench-graph-"))
        try:
            root = top / "project"
            if make is None:
                shutil.copytree(ROOT / "sample_agents", root, ignore=shutil.ignore_patterns("__pycache__", ".agentdiff"))
            else:
                _graph_project(root, *make)
            refs = discover([root], root).cases
            builds = []
            for _ in range(5):
                import_graph._CACHE.clear()  # every file parsed again: a CI job's cold build
                began = time.perf_counter()
                depends_on(refs, root)
                builds.append(time.perf_counter() - began)
            for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "-c", "user.email=a@b", "-c", "user.name=b", "commit", "-qm", "x"]):
                subprocess.run(cmd, cwd=root, check=True)
            shared = root / "demo_model.py" if make is None else root / "common" / "helper_07.py"
            shared.write_text(shared.read_text() + "# edited\n")
            lists = [_timed([AGENTDIFF, "list"], root)[0] for _ in range(3)]
            chose = []
            for _ in range(3):
                seconds, done = _timed([AGENTDIFF, "list", "--json"], root)
                chose.append(seconds)
            said = json.loads(done.stdout)
            with_deps = sum(1 for c in said["cases"] if any(shared.relative_to(root).as_posix() in paths for paths in c["depends_on"].values()))
            select_s, selected = _timed([sys.executable, "-c", _SELECT, str(root)], root)
            count = selected.stdout.strip().splitlines()[-1] if selected.returncode == 0 else selected.stderr[-200:]
        finally:
            shutil.rmtree(top, ignore_errors=True)
        rows += [
            (f"graph, {label}: every case's agent reach, cold (median of 5)", f"{statistics.median(builds) * 1000:.0f} ms",
             f"{len(refs):,} cases"),
            (f"graph, {label}: `agentdiff list` (discovery alone, median of 3)", f"{statistics.median(lists):.2f} s", "the reference"),
            (f"graph, {label}: `agentdiff list --json` with depends_on (median of 3)", f"{statistics.median(chose):.2f} s",
             f"{statistics.median(chose) / statistics.median(lists):.2f}x list; {with_deps:,} cases depend on the edited module"),
            (f"graph, {label}: --changed-since choosing, one shared module edited (process)", f"{select_s:.2f} s", f"{count} cases chosen"),
        ]
    return rows


_SELECT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from agentdiff.core.project.discovery import discover
    from agentdiff.core.reports.changed_since import changed_impact
    root = Path(sys.argv[1])
    print(len(changed_impact(discover([root], root).cases, root, "HEAD").chosen))
""")


def impact_benchmark() -> list[tuple[str, str, str]]:
    return _record_rows() + _graph_rows()
