"""Traced conversations scored per second (`agentdiff score TRACES`, no agent call) against a re-run of the
same cases (`agentdiff run`, the agent called), in the same run, on what ADK 2.13 itself emitted.

The weather agent of the tests (`tests/fixtures/otlp`) runs its four conversations under ADK with schema 2
and content capture; their lines are repeated under new session ids up to `AGENTDIFF_BENCH_CONVERSATIONS`
(default 400), imported as cases, then scored from the traces and run again. Both commands are timed whole
(process start included), as a user meets them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
        started = time.perf_counter()
        scored = subprocess.run([AGENTDIFF, "score", str(traces), "--json"], cwd=root, capture_output=True, text=True)
        score_seconds = time.perf_counter() - started
        started = time.perf_counter()
        ran = subprocess.run([AGENTDIFF, "run", "weather_agent", "--json"], cwd=root, capture_output=True, text=True)
        run_seconds = time.perf_counter() - started
        n_scored = len(json.loads(scored.stdout)["cases"])
        n_ran = len(json.loads(ran.stdout)["cases"])
    return [
        ("otlp: conversations scored from their traces (no agent call)", f"{n_scored / score_seconds:,.0f} a second ({n_scored} in {score_seconds:.1f} s)",
         "reference: the same cases run again, below"),
        ("otlp: the same cases run again (the agent called, offline model)", f"{n_ran / run_seconds:,.0f} a second ({n_ran} in {run_seconds:.1f} s)", ""),
        ("otlp: score ÷ re-run, per conversation", f"{(n_scored / score_seconds) / (n_ran / run_seconds):.1f}× faster",
         "> 1× (a live model would make the re-run far slower)"),
    ]


if __name__ == "__main__":
    for row in otlp_benchmark():
        print(" | ".join(row))
