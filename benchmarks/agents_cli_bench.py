"""The agents-cli benchmark (registered in run.py as `agents-cli`).

100 dataset cases of a project `agents-cli create` makes, its Gemini model answered by the fake Gemini
server after 100 ms per call (a tool call, then the answer: two calls per case), run by agentdiff's
worker pool and by `agents-cli eval generate` against ADK's API server on the same project (each with
its own start paid separately); then save → verdicts of the affected cases in the TUI on the
weather_desk sample (4 cases), with the real watcher and worker pool.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _respond(call):
    from fake_gemini import Reply

    if any("functionResponse" in part for content in call.body.get("contents", []) for part in content.get("parts", [])):
        return Reply(text="It's 60 degrees and foggy in San Francisco.", delay=0.1)
    return Reply(function_calls=[{"name": "get_weather", "args": {"query": "San Francisco"}}], delay=0.1)


def _project(agents_cli: Path, folder: Path, cases: int, url: str) -> Path:
    subprocess.run([str(agents_cli), "create", "demo", "-y", "-d", "none"], cwd=folder, check=True, capture_output=True, timeout=300)
    project = folder / "demo"
    dataset = {"eval_cases": [{"eval_case_id": f"weather_{i}", "prompt": {"role": "user", "parts": [{"text": f"Weather in San Francisco, day {i}?"}]}}
                              for i in range(cases)]}
    (project / "tests" / "eval" / "datasets" / "basic-dataset.json").write_text(json.dumps(dataset, indent=2))
    (project / ".env").write_text(f"GOOGLE_GEMINI_BASE_URL={url}\nGOOGLE_API_KEY=fake-key\nGOOGLE_GENAI_USE_VERTEXAI=0\nGOOGLE_GENAI_USE_ENTERPRISE=false\n")
    return project


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def agents_cli_benchmark() -> list[tuple[str, str, str]]:
    from adk_envs import agents_cli_bin
    from fake_gemini import FakeGemini

    from agentdiff.core.project.discovery import discover
    from agentdiff.core.run.options import RunOptions
    from agentdiff.core.run.runner import run_cases
    from agentdiff.core.worker.pool import WorkerPool

    agents_cli = agents_cli_bin()
    cases, rows = 100, []
    server = FakeGemini(_respond).start()
    os.environ.update({**server.env, "GOOGLE_GENAI_USE_ENTERPRISE": "false"})
    folder = Path(tempfile.mkdtemp(prefix="agentdiff-bench-"))
    try:
        project = _project(agents_cli, folder, cases, server.url)
        config = project / "tests" / "eval" / "eval_config.yaml"
        scaffold_config = config.read_text()

        def ours(graded: bool) -> tuple[float, float, int]:
            """(seconds, worker server start, cases run): the scaffold's metrics graded, or none."""
            config.write_text(scaffold_config if graded else
                              "metrics_to_run: [cloud_only]\ncustom_metrics:\n  - name: cloud_only\n    prompt_template: 'x {response}'\n")
            refs = discover([project], project).cases
            assert len(refs) == cases, len(refs)
            pool = WorkerPool(timeout=120)
            start = time.perf_counter()
            asyncio.run(pool.start())
            started = time.perf_counter() - start

            async def every() -> list:
                return [run.result async for run in run_cases(refs, pool, RunOptions(), project)]

            start = time.perf_counter()
            results = asyncio.run(every())
            seconds = time.perf_counter() - start
            pool.close()
            return seconds, started, sum(r.status.value == "new" for r in results)

        agentdiff_seconds, pool_start, new = ours(graded=False)
        graded_seconds, _, graded_new = ours(graded=True)

        port = _free_port()
        api = subprocess.Popen([str(Path(sys.executable).parent / "adk"), "api_server", "--host", "127.0.0.1", "--port", str(port), "."],
                               cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        start = time.perf_counter()
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/list-apps", timeout=2)
                break
            except OSError:
                time.sleep(0.1)
        api_start = time.perf_counter() - start
        start = time.perf_counter()
        done = subprocess.run([str(agents_cli), "eval", "generate", "--url", f"http://127.0.0.1:{port}", "--app-name", "app",
                               "-o", str(folder / "generated") + "/"], cwd=project, capture_output=True, text=True, timeout=1800)
        generate_seconds = time.perf_counter() - start
        api.terminate()
        api.wait(10)
        trace = next((folder / "generated").glob("*.json")) if done.returncode == 0 else None
        generated = len(json.loads(trace.read_text())["eval_cases"]) if trace else 0
        adc = folder / "adc.json"  # eval grade builds Cloud clients even for local metrics: credentials never used
        adc.write_text(json.dumps({"type": "authorized_user", "client_id": "x", "client_secret": "x", "refresh_token": "x"}))
        start = time.perf_counter()
        graded = subprocess.run([str(agents_cli), "eval", "grade", "--traces", str(trace), "--output", str(folder / "grades")], cwd=project,
                                capture_output=True, text=True, timeout=1800,
                                env={**os.environ, "GOOGLE_APPLICATION_CREDENTIALS": str(adc), "GOOGLE_CLOUD_PROJECT": "offline"})
        grade_seconds = time.perf_counter() - start
        rows += [
            (f"agents-cli: agents-cli eval generate, {cases} cases, 100 ms per model call", f"{generate_seconds:.1f} s",
             f"{generated}/{cases} generated; + {api_start:.1f} s API server start"),
            ("agents-cli: agentdiff run, the same cases, inference only (no local metric)", f"{agentdiff_seconds:.1f} s",
             f"{new}/{cases} run (new: no baselines yet); + {pool_start:.1f} s worker server start"),
            ("agents-cli: speed-up, inference", f"{generate_seconds / agentdiff_seconds:.1f}x", "target >= 10x"),
            ("agents-cli: agents-cli eval generate, then eval grade (the scaffold's judge metric)", f"{generate_seconds + grade_seconds:.1f} s",
             f"grade {grade_seconds:.1f} s, exit {graded.returncode}"),
            ("agents-cli: agentdiff run with the scaffold's judge metric graded", f"{graded_seconds:.1f} s", f"{graded_new}/{cases} run and graded"),
            ("agents-cli: speed-up, inference and grading", f"{(generate_seconds + grade_seconds) / graded_seconds:.1f}x", ""),
        ]
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)
    rows.append(_save_to_verdicts())
    return rows


def _save_to_verdicts() -> tuple[str, str, str]:
    """The weather_desk sample in the real app: its prompt saved, until the affected cases' new
    verdicts are in (median of 8, alternating an edit that fails a case and the original)."""
    from save_to_verdict import save_to_verdict_times

    times = save_to_verdict_times("weather_desk", "app/prompt.md", "sample_agents/weather_desk/tests/eval/datasets/basic-dataset.json::capital_lookup",
                                  'reply "The capital of France is Paris."', 'reply "Paris, of course."', every_case=True)
    return ("agents-cli: save -> verdicts of the affected cases, weather_desk sample (4 cases, median of 8)",
            f"{statistics.median(times) * 1000:.0f} ms", "target <= 300 ms")
