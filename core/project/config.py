"""Project configuration: `[tool.agentdiff]` in `pyproject.toml`, or `agentdiff.toml` (top level).

    [tool.agentdiff]
    agents = ["agents"]          # agents dir(s); default: found from each case's location
    paths = ["evals", "tests"]   # where cases are; default: the project folder
    mode = "replay"              # default mode for conformance cases (replay | live)
    num_runs = 1
    jobs = 4                     # concurrent workers; default: the CPU count
    timeout = 120                # seconds per run
    memory_mb = 4096             # memory a worker may use before allocations fail
    python = ".venv/bin/python"  # the interpreter that runs the agents; default: found (`interpreter`)
    strict_node_order = false    # ADK 2 workflows: parallel branches compared in the order they ran
    min_pass_rate = 0.9          # live repeats: the pass rate a case must show (default: every run passes)
    confidence = 0.95            # the level of every pass-rate interval
    pass_hat_k = [3]             # report pass^k: the chance k runs in a row all pass
    inconclusive_passes = false  # an inconclusive case fails `run` (exit 3) unless this is true
    [tool.agentdiff.min_pass_rate_for]  # per case id glob
    "weather/*" = 0.7
    [tool.agentdiff.agent_for]   # which agent runs the cases under a path
    "evals/support" = "customer_service"
    [tool.agentdiff.prices]      # US dollars per million tokens, for an estimated cost
    "gemini-2.5-flash" = { input = 0.30, output = 2.50 }

Zero configuration is the norm: ADK's conventional layouts need none of this.
"""

from __future__ import annotations

import math

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.formats.load_error import LoadError
from agentdiff.core.formats.source_file import read_text_regular


@dataclass(frozen=True)
class ProjectConfig:
    root: Path
    file: Optional[Path] = None
    agents: tuple[Path, ...] = ()
    paths: tuple[Path, ...] = ()
    mode: Optional[str] = None
    num_runs: int = 1
    jobs: Optional[int] = None
    timeout: float = 120.0
    memory_mb: int = 4096
    python: Optional[str] = None
    agent_for: dict[str, str] = field(default_factory=dict)
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    editor: Optional[str] = None  # a command template: `code -g {file}:{line}:{col}`
    stacked_below: int = 100  # terminal columns: narrower, the TUI shows expected above actual
    keep_runs: int = 20  # kept runs under .agentdiff/runs (0: none)
    confirm_live_above: int = 50  # re-running more cases live than this asks first, with their cost
    strict_node_order: bool = False  # ADK 2 workflows: parallel branches compared in the order they ran
    gate: dict[str, Any] = field(default_factory=dict)  # the release gate's rules (`GATE_NUMBERS`, `critical`)
    min_pass_rate: Optional[float] = None  # None: every run must pass (`scoring.pass_rate`)
    confidence: Optional[float] = None
    pass_hat_k: tuple[int, ...] = ()
    min_pass_rate_for: dict[str, float] = field(default_factory=dict)  # case id glob → its minimum
    inconclusive_passes: bool = False  # an inconclusive case does not fail `run` (exit 0, not 3)
    new_passes: bool = False  # a case with no baseline yet (`new`) does not fail `run`


#: Repeats of one case: more is a mistake (each repeat is a run of the agent, held in memory until scored).
MAX_NUM_RUNS = 1000

_KNOWN = {"agents", "paths", "mode", "num_runs", "jobs", "timeout", "memory_mb", "python", "agent_for", "prices", "editor", "stacked_below", "keep_runs", "gate", "confirm_live_above",
          "strict_node_order", "min_pass_rate", "confidence", "pass_hat_k", "min_pass_rate_for",
          "inconclusive_passes", "new_passes"}

#: The gate's rules that are limits: the most a run may show (see `agentdiff gate`).
GATE_NUMBERS = ("max_pass_rate_drop", "max_p95_seconds", "max_total_tokens", "max_case_tokens", "max_total_cost",
                "max_case_cost", "max_case_tool_calls", "min_pass_rate", "max_inconclusive", "max_paired_drop")
CRITICAL_KINDS = ("label", "failure", "set", "id")


def load_project_config(root: Path) -> tuple[ProjectConfig, list[LoadError]]:
    for name, table in (("agentdiff.toml", ()), ("pyproject.toml", ("tool", "agentdiff"))):
        path = root / name
        if not path.is_file():
            continue
        try:
            data: Any = tomllib.loads(read_text_regular(path))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
            bom = isinstance(exc, tomllib.TOMLDecodeError) and read_text_regular(path).startswith("\ufeff")
            said = "the file starts with a byte-order mark (BOM), which TOML does not allow: save it as UTF-8 without one" if bom else exc
            return ProjectConfig(root), [LoadError(file=name, message=f"invalid TOML: {said}")]
        for key in table:
            data = data.get(key, {}) if isinstance(data, dict) else {}
        if not isinstance(data, dict):  # `[tool] agentdiff = 3`: not a table of settings
            where = "[tool.agentdiff]" if table else "the file"
            return ProjectConfig(root), [LoadError(file=name, message=f"{where} must be a table of settings, not {type(data).__name__} {data!r:.40}")]
        if not data and name == "pyproject.toml":
            continue
        config, errors = _parse(root, path, data)
        if name == "agentdiff.toml" and _configures_too(root / "pyproject.toml"):  # which rules hold would be a guess
            errors.append(LoadError(file=name, message="pyproject.toml's [tool.agentdiff] configures agentdiff too, and is ignored "
                                    "while agentdiff.toml is there: keep one of the two"))
        return config, errors
    return ProjectConfig(root), []


def _configures_too(pyproject: Path) -> bool:
    try:
        table = tomllib.loads(read_text_regular(pyproject)).get("tool", {})
    except (OSError, ValueError):
        return False
    return isinstance(table, dict) and bool(table.get("agentdiff"))


def _parse(root: Path, path: Path, data: dict[str, Any]) -> tuple[ProjectConfig, list[LoadError]]:
    errors = [LoadError(file=path.name, message=f"unknown setting {key!r} in agentdiff's configuration") for key in data if key not in _KNOWN]

    def paths(key: str) -> tuple[Path, ...]:
        value = data.get(key, [])
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            errors.append(LoadError(file=path.name, message=f"`{key}` must be a list of paths"))
            return ()
        return tuple(root / v for v in value)

    mode = data.get("mode")
    if mode not in (None, "replay", "live"):
        errors.append(LoadError(file=path.name, message="`mode` must be replay or live"))
        mode = None
    agent_for = data.get("agent_for", {})
    if not isinstance(agent_for, dict):
        errors.append(LoadError(file=path.name, message="`agent_for` must be a table of path = agent"))
        agent_for = {}
    python = data.get("python")
    if python is not None and not isinstance(python, str):
        errors.append(LoadError(file=path.name, message="`python` must be the path of an interpreter"))
        python = None
    editor = data.get("editor")
    if editor is not None and (not isinstance(editor, str) or not editor.strip()):
        errors.append(LoadError(file=path.name, message="`editor` must be a command, such as \"code -g {file}:{line}:{col}\""))
        editor = None
    prices: dict[str, dict[str, float]] = {}
    for model, price in (data.get("prices") or {}).items() if isinstance(data.get("prices"), dict) else ():
        if isinstance(price, dict) and set(price) <= {"input", "output"} and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < math.inf for v in price.values()):
            prices[str(model)] = {key: float(value) for key, value in price.items()}
        else:
            errors.append(LoadError(file=path.name, message=f"`prices.{model}` must be {{ input = dollars, output = dollars }} per million tokens"))
    if "prices" in data and not isinstance(data["prices"], dict):
        errors.append(LoadError(file=path.name, message="`prices` must be a table of model = { input, output }"))
    def number(key: str, default: Any, low: float, high: float, whole: bool = True) -> Any:
        """`key`'s value when it is a number in [low, high] (whole when `whole`), else `default` and
        an error saying what it must be."""
        if key not in data:
            return default
        value = data[key]
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high
        if ok and whole and value != int(value):
            ok = False
        if not ok:
            kind = "a whole number" if whole else "a number"
            errors.append(LoadError(file=path.name, message=f"`{key}` must be {kind} from {low:g} to {high:.0f}, not {value!r}"))
            return default
        return int(value) if whole else float(value)

    config = ProjectConfig(
        root=root,
        file=path,
        agents=paths("agents"),
        paths=paths("paths"),
        mode=mode,
        num_runs=number("num_runs", 1, 1, MAX_NUM_RUNS),
        jobs=number("jobs", None, 1, 100_000),
        timeout=number("timeout", 120.0, 0.001, 86_400, whole=False),
        memory_mb=number("memory_mb", 4096, 64, 1_048_576),
        python=python,
        agent_for={str(k): str(v) for k, v in agent_for.items()},
        prices=prices,
        editor=editor,
        stacked_below=number("stacked_below", 100, 0, 10_000),
        keep_runs=number("keep_runs", 20, 0, 10_000),
        confirm_live_above=number("confirm_live_above", 50, 0, 10_000_000),
        gate=_gate(data.get("gate"), path, errors),
        strict_node_order=_flag(data, "strict_node_order", path, errors),
        min_pass_rate=number("min_pass_rate", None, 0, 1, whole=False),
        confidence=_confidence(data, path, errors),
        pass_hat_k=_pass_hat_k(data, path, errors),
        min_pass_rate_for=_rates_for(data, path, errors),
        inconclusive_passes=_flag(data, "inconclusive_passes", path, errors),
        new_passes=_flag(data, "new_passes", path, errors),
    )
    return config, errors


def _confidence(data: dict[str, Any], path: Path, errors: list[LoadError]) -> Optional[float]:
    value = data.get("confidence")
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and 0.5 <= value < 1):
        return None if value is None else float(value)
    errors.append(LoadError(file=path.name, message=f"`confidence` must be a level from 0.5 to below 1, such as 0.95, not {value!r}"))
    return None


def _pass_hat_k(data: dict[str, Any], path: Path, errors: list[LoadError]) -> tuple[int, ...]:
    value = data.get("pass_hat_k", [])
    value = [value] if isinstance(value, int) and not isinstance(value, bool) else value
    if isinstance(value, list) and all(isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= MAX_NUM_RUNS for k in value):
        return tuple(sorted(set(value)))
    errors.append(LoadError(file=path.name, message=f"`pass_hat_k` must be a list of whole numbers from 1 to {MAX_NUM_RUNS}, not {value!r}"))
    return ()


def _rates_for(data: dict[str, Any], path: Path, errors: list[LoadError]) -> dict[str, float]:
    table = data.get("min_pass_rate_for", {})
    if not isinstance(table, dict):
        errors.append(LoadError(file=path.name, message="`min_pass_rate_for` must be a table of case id glob = minimum pass rate"))
        return {}
    rates = {}
    for glob, value in table.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
            rates[str(glob)] = float(value)
        else:
            errors.append(LoadError(file=path.name, message=f"`min_pass_rate_for.{glob}` must be a rate from 0 to 1, not {value!r}"))
    return rates


def _flag(data: dict[str, Any], key: str, path: Path, errors: list[LoadError]) -> bool:
    value = data.get(key, False)
    if isinstance(value, bool):
        return value
    errors.append(LoadError(file=path.name, message=f"`{key}` must be true or false, not {value!r}"))
    return False


def _gate(table: Any, path: Path, errors: list[LoadError]) -> dict[str, Any]:
    """`[tool.agentdiff.gate]` checked: its limits numbers ≥ 0, `critical` a list of `label:NAME`,
    `set:NAME` or `id:GLOB` selectors."""
    if table is None:
        return {}
    if not isinstance(table, dict):
        errors.append(LoadError(file=path.name, message="`gate` must be a table of rules"))
        return {}
    gate: dict[str, Any] = {}
    for key, value in table.items():
        if key in GATE_NUMBERS:
            if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < math.inf:
                gate[key] = float(value)
            else:
                errors.append(LoadError(file=path.name, message=f"`gate.{key}` must be a finite number ≥ 0, not {value!r}"))
        elif key == "require_signoff":
            if isinstance(value, bool):
                gate[key] = value
            else:
                errors.append(LoadError(file=path.name, message="`gate.require_signoff` must be true or false"))
        elif key == "signoff_since":
            if isinstance(value, str) and value.strip():
                gate[key] = value
            else:
                errors.append(LoadError(file=path.name, message="`gate.signoff_since` must be a git ref, such as \"main\""))
        elif key == "critical":
            ok = isinstance(value, list) and all(isinstance(v, str) and v.partition(":")[0] in CRITICAL_KINDS and v.partition(":")[2] for v in value)
            if ok:
                gate[key] = list(value)
            else:
                errors.append(LoadError(file=path.name, message="`gate.critical` must be a list of label:NAME (or failure:NAME), set:NAME or id:GLOB"))
        else:
            errors.append(LoadError(file=path.name, message=f"unknown gate rule {key!r} (use {', '.join((*GATE_NUMBERS, 'critical', 'require_signoff', 'signoff_since'))})"))
    return gate
