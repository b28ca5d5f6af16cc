"""Traced conversations scored per second (`agentdiff score TRACES`, no agent call) against agentevals
(`agentevals run`, the tool that scores ADK's metrics from traces) on the same files, and against a re-run of
the same cases (`agentdiff run`, the agent called), in the same run, on what ADK 2.13 itself emitted.

The weather agent of the tests (`tests/fixtures/otlp`) runs its four conversations under ADK with schema 2
and content capture; their lines are repeated under new session ids up to `AGENTDIFF_BENCH_CONVERSATIONS`
(default 400), imported as cases, then scored from the traces and run again. Every command is timed whole
(process start included), as a user meets it, the median of three.

agentevals-cli is installed once into an environment of its own (`$AGENTDIFF_ORACLE_ENVS/agentevals`, else
`~/.cache/agentdiff/oracle-envs/agentevals`: about 1 GB, a minute and a half), never into agentdiff's. It
maps a trace to its expected case by the first user message, so it is given the same traces and an eval set
of the four distinct cases (given the 400, it finds each message ambiguous and scores none). Both run the
offline metrics: tool trajectory and ROUGE-1 response match."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
ENVS = Path(os.environ.get("AGENTDIFF_ORACLE_ENVS") or Path.home() / ".cache" / "agentdiff" / "oracle-envs")
AGENTEVALS = "agentevals-cli==0.11.0"
FIXTURES = ROOT / "tests" / "fixtures" / "otlp"
AGENTDIFF = str(Path(sys.executable).parent / "agentdiff")


def _emit(folder: Path) -> Path:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ADK_", "OTEL_"))}
    env.update(ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN="2", OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="SPAN_ONLY")
    subprocess.run([sys.executable, str(FIXTURES / "emit_spans.py"), str(folder)], env=env, check=True, capture_output=True, timeout=300)
    return folder / "traces.json"


def _many(lines: list[str], wanted: int) -> str:
    """The exported lines again and again, each copy's session ids (and trace ids) made its own."""
    out, n = [], 0
    while len(out) < wanted:
        for line in lines:
            if len(out) >= wanted:
                break
            n += 1
            copy = line.replace('"stringValue": "sess-', f'"stringValue": "c{n}-sess-')
            data = json.loads(copy)
            for resource in data["resourceSpans"]:
                for scope in resource["scopeSpans"]:
                    for span in scope["spans"]:
                        span["traceId"] = span["traceId"][:-8] + f"{n:08d}"[-8:]  # base64 stays base64: 8 digits are valid characters
            out.append(json.dumps(data))
    return "\n".join(out) + "\n"


def _agentevals() -> Path | None:
    """agentevals' command, in an environment of its own (made once); None when it does not install here."""
    env = ENVS / "agentevals"
    command = env / "bin" / "agentevals"
    if not command.exists():
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
        done = subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "-q", AGENTEVALS], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"agentevals did not install: {done.stderr[-500:]}", file=sys.stderr)
            return None
    return command


def _distinct_cases(eval_set: Path, out: Path) -> Path:
    """The eval set with one case a first user message (agentevals' key for a trace's case)."""
    data = json.loads(eval_set.read_text())
    seen: dict[str, dict] = {}
    for case in data["eval_cases"]:
        seen.setdefault(case["conversation"][0]["user_content"]["parts"][0]["text"], case)
    out.write_text(json.dumps({**data, "eval_cases": list(seen.values())}))
    return out


def _scored_by_agentevals(said: str) -> int:
    """The traces agentevals gave a score (one it found no case for, or could not read, has none)."""
    try:
        traces = json.loads(said)["traces"]
    except (ValueError, KeyError, TypeError):
        return 0
    return sum(1 for t in traces if any(m.get("score") is not None for m in t.get("metrics") or []))


def _median_seconds(command: list[str], cwd: Path, env: dict[str, str] | None = None,
                    before: Callable[[], None] = lambda: None) -> tuple[float, subprocess.CompletedProcess]:
    times, done = [], None
    for _ in range(3):
        before()
        started = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})})
        times.append(time.perf_counter() - started)
    return sorted(times)[1], done


def otlp_benchmark() -> list[tuple[str, str, str]]:
    wanted = int(os.environ.get("AGENTDIFF_BENCH_CONVERSATIONS", "400"))
    with tempfile.TemporaryDirectory(prefix="agentdiff-otlp-bench-") as folder:
        root = Path(folder)
        import shutil

        shutil.copytree(FIXTURES / "weather_agent", root / "weather_agent", ignore=shutil.ignore_patterns("__pycache__"))
        lines = _emit(root / "emitted").read_text().splitlines()
        traces = root / "traces.json"
        traces.write_text(_many(lines, wanted))
        subprocess.run([AGENTDIFF, "import", str(traces), "--into", "weather_agent/traced.evalset.json", "--yes"], cwd=root,
                       check=True, capture_output=True)
        agentevals = _agentevals()
        cold = {"AGENTDIFF_NO_CACHE": "1"}  # every export parsed, as agentevals does each time
        score_seconds, scored = _median_seconds([AGENTDIFF, "score", str(traces), "--json"], root, cold)
        warm_score_seconds, _ = _median_seconds([AGENTDIFF, "score", str(traces), "--json"], root)
        list_cold, _ = _median_seconds([AGENTDIFF, "list", "traces.json"], root, cold)
        list_warm, _ = _median_seconds([AGENTDIFF, "list", "traces.json"], root)
        arriving = iter(_many(lines, wanted + 3).splitlines()[-3:])  # three exports more (their own ids), one before each

        def one_more() -> None:
            with traces.open("a", encoding="utf-8") as file:
                file.write(next(arriving) + "\n")

        list_on, _ = _median_seconds([AGENTDIFF, "list", "traces.json"], root, before=one_more)
        megabytes = traces.stat().st_size / 1e6
        run_seconds, ran = _median_seconds([AGENTDIFF, "run", "weather_agent", "--json"], root)
        n_scored = len(json.loads(scored.stdout)["cases"])
        n_ran = len(json.loads(ran.stdout)["cases"])
        rows = []
        if agentevals is not None:
            distinct = _distinct_cases(root / "weather_agent" / "traced.evalset.json", root / "distinct.evalset.json")
            other_seconds, other = _median_seconds([str(agentevals), "run", str(traces), "-e", str(distinct), "-m", "tool_trajectory_avg_score",
                                                    "-m", "response_match_score", "-o", "json"], root)
            n_other = _scored_by_agentevals(other.stdout)  # (it exits 1 when a metric fails, as sess-error's does)
            rows += [("otlp: agentevals run on the same traces (agentevals-cli 0.11.0)",
                      f"{n_other / other_seconds:,.0f} a second ({n_other} in {other_seconds:.1f} s)", "reference: agentdiff score, below"),
                     ("otlp: agentdiff score ÷ agentevals run, per conversation",
                      f"{(n_scored / score_seconds) / (n_other / other_seconds):.1f}×" if n_other else "agentevals scored none", "≥ 1×")]
    return [
        ("otlp: conversations scored from their traces (no agent call; every export parsed)",
         f"{n_scored / score_seconds:,.0f} a second ({n_scored} in {score_seconds:.1f} s)", "reference: agentevals and the same cases run again, below"),
        ("otlp: the same, the file's read kept from an earlier command", f"{n_scored / warm_score_seconds:,.0f} a second ({warm_score_seconds:.1f} s)", "faster than parsing"),
        (f"otlp: agentdiff list of the trace file ({megabytes:.1f} MB): parsed, kept, kept and one export appended",
         f"{list_cold:.2f} s, {list_warm:.2f} s, {list_on:.2f} s", "kept well under parsed"),
        *rows,
        ("otlp: the same cases run again (the agent called, offline model)", f"{n_ran / run_seconds:,.0f} a second ({n_ran} in {run_seconds:.1f} s)", ""),
        ("otlp: score ÷ re-run, per conversation", f"{(n_scored / score_seconds) / (n_ran / run_seconds):.1f}× faster",
         "> 1× (a live model would make the re-run far slower)"),
    ]


if __name__ == "__main__":
    for row in otlp_benchmark():
        print(" | ".join(row))
