"""agents-cli's `eval_config.yaml` (or `.json`): which metrics grade a dataset's cases.

Read as `agents-cli eval grade` reads it: a mapping whose `metrics_to_run` (a list of names) and
`custom_metrics` (a list of entries with a `name`) are all it uses; other keys are ignored. A name in
`metrics_to_run` that is a custom entry's uses it; any other is one of the cloud eval service's
built-in metrics. A custom entry is

* local — `custom_function` (inline Python defining `evaluate(instance)`) or `custom_function_file`
  (a `.py` beside the config, read into `custom_function`), `execution` absent or `local`: it runs
  offline, in the project's interpreter here;
* cloud — `prompt_template` (an LLM judge the service runs), `execution: remote`, a `metric_resource_name`,
  or a built-in parameterised (`metric_spec_parameters`).

agents-cli has no thresholds; `threshold` on an entry (an agentdiff key: agents-cli ignores it) gives a
pass/fail from the score.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional

from agentdiff.core.formats.load_error import LoadError, locate
from agentdiff.core.formats.source_file import SourceFileError, parse_source, read_source

DEFAULT_CONFIGS = (Path("tests") / "eval" / "eval_config.yaml", Path("eval") / "eval_config.yaml")
BODY_KEYS = ("prompt_template", "custom_function", "custom_function_file", "remote_custom_function")

Where = Literal["local", "cloud"]


@dataclass(frozen=True)
class MetricSpec:
    """One metric to run on every case of a dataset."""

    name: str  # as results key it: lowercased
    where: Where
    source: Optional[str] = None  # a local metric's Python (the file's text for custom_function_file)
    source_file: Optional[str] = None  # the `.py` it came from, as written, when it came from one
    threshold: Optional[float] = None  # agentdiff's: a score at or above it passes
    entry: dict[str, Any] = field(default_factory=dict)  # the entry as written (cloud metrics send it)
    line: Optional[int] = None  # where the entry (or the name in metrics_to_run) is, for `e`


@dataclass(frozen=True)
class MetricsConfig:
    path: Optional[Path]
    display: Optional[str]
    metrics: tuple[MetricSpec, ...]

    @property
    def local(self) -> tuple[MetricSpec, ...]:
        return tuple(m for m in self.metrics if m.where == "local")

    @property
    def cloud(self) -> tuple[MetricSpec, ...]:
        return tuple(m for m in self.metrics if m.where == "cloud")


def find_config(root: Path) -> Optional[Path]:
    """The config `eval grade` reads by default: the first of DEFAULT_CONFIGS under the project root."""
    for relative in DEFAULT_CONFIGS:
        if os.path.lexists(root / relative):
            return root / relative
    return None


def load_metrics_config(path: Path, display: Optional[str] = None) -> tuple[Optional[MetricsConfig], list[LoadError]]:
    """Read one config. Never raises for bad input; a bad entry is a located error, the others load."""
    display = display or str(path)
    kind = "json" if path.suffix == ".json" else "yaml"
    try:
        source = read_source(path, display)
        data = parse_source(source, kind)
    except SourceFileError as exc:
        return None, [exc.error]
    text = source.text

    def error(where: list, message: str) -> LoadError:
        position = locate(text, where, kind) if where else (1, 1)
        return LoadError(file=display, message=message, line=position[0] if position else None, column=position[1] if position else None)

    if not isinstance(data, dict):
        return None, [error([], "the configuration must be a mapping (metrics_to_run, custom_metrics)")]
    errors: list[LoadError] = []
    names = data.get("metrics_to_run")
    if names is None:
        names = []
    if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
        return None, [error(["metrics_to_run"], "`metrics_to_run` must be a list of metric names")]
    entries = data.get("custom_metrics")
    if entries is None:
        entries = []
    if not isinstance(entries, list):
        return None, [error(["custom_metrics"], "`custom_metrics` must be a list of entries, each with a `name`")]
    pool: dict[str, tuple[int, dict[str, Any]]] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            errors.append(error(["custom_metrics", index], "each `custom_metrics` entry must be a mapping with a `name`"))
            continue
        if isinstance(entry.get("name"), str) and entry["name"]:
            pool[entry["name"]] = (index, entry)  # the last of a name wins, as in agents-cli
    metrics: list[MetricSpec] = []
    for position, name in enumerate(names):
        name = name.strip()
        if name not in pool:
            line = (locate(text, ["metrics_to_run", position], kind) or (None,))[0]
            metrics.append(MetricSpec(name=name.lower(), where="cloud", line=line))
            continue
        index, entry = pool[name]
        spec, problem = _spec(name, entry, path, ["custom_metrics", index], error)
        if problem is not None:
            errors.append(problem)
        elif spec is not None:
            metrics.append(spec)
    if not metrics and not errors:
        errors.append(error(["metrics_to_run"] if "metrics_to_run" in data else [], "no metrics: `metrics_to_run` is empty or missing"))
    if errors:
        return None, errors
    return MetricsConfig(path=path, display=display, metrics=tuple(metrics)), []


#: A folder with one of these is an agents-cli project's root (`agents-cli create` writes the manifest).
PROJECT_MARKERS = ("agents-cli-manifest.yaml", "pyproject.toml", ".git")


def project_of(config_path: Path) -> Path:
    """The project a config belongs to: its nearest folder upward holding a project marker, else its own."""
    start = Path(os.path.realpath(config_path)).parent
    for folder in (start, *start.parents):
        if any(os.path.lexists(folder / marker) for marker in PROJECT_MARKERS):
            return folder
    return start


def _inside(file: Path, project: Path) -> bool:
    real = Path(os.path.realpath(file))
    return real == project or project in real.parents


def _spec(name: str, entry: dict[str, Any], config_path: Path, where: list, error) -> tuple[Optional[MetricSpec], Optional[LoadError]]:
    line = error(where, "").line
    threshold = entry.get("threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold)):
        return None, error(where + ["threshold"], f"`threshold` must be a finite number, not {threshold!r}")
    if entry.get("rubric_group_name") is not None:
        return None, error(where + ["rubric_group_name"], "`rubric_group_name` is not supported by agents-cli; use metric_spec_parameters.rubric_group_key")
    if entry.get("custom_function") is not None and entry.get("custom_function_file") is not None:
        return None, error(where, "give `custom_function` or `custom_function_file`, not both")
    execution = entry.get("execution", "local")
    if execution not in ("local", "remote"):
        return None, error(where + ["execution"], f"`execution` must be local or remote, not {execution!r}")
    threshold = float(threshold) if threshold is not None else None
    if entry.get("custom_function_file") is not None:
        relative = entry["custom_function_file"]
        if not isinstance(relative, str) or not relative:
            return None, error(where + ["custom_function_file"], "`custom_function_file` must be a path to a .py file")
        file = (config_path.parent / relative) if not os.path.isabs(relative) else Path(relative)
        project = project_of(config_path)
        if not _inside(file, project):
            return None, error(where + ["custom_function_file"],
                               f"{relative} lies outside the project ({project}): a metric file is Python that runs, so only the "
                               "project's own are run; copy it into the project")
        try:
            code = read_source(file, relative).text
        except SourceFileError as exc:
            return None, error(where + ["custom_function_file"], f"{relative}: {exc.error.message}")
        if execution == "local":
            return MetricSpec(name.lower(), "local", code, relative, threshold, dict(entry), line), None
    elif entry.get("custom_function") is not None:
        if not isinstance(entry["custom_function"], str):
            return None, error(where + ["custom_function"], "`custom_function` must be Python source defining evaluate(instance)")
        if execution == "local":
            return MetricSpec(name.lower(), "local", entry["custom_function"], None, threshold, dict(entry), line), None
    elif not any(entry.get(key) is not None for key in BODY_KEYS) and not entry.get("metric_spec_parameters") \
            and not entry.get("metric_resource_name"):
        return None, error(where, f"the metric {name!r} needs a `custom_function`, `custom_function_file` or `prompt_template`")
    remote = entry.get("custom_function_file") is not None
    return MetricSpec(name.lower(), "cloud", code if remote else entry.get("custom_function"), entry.get("custom_function_file"),
                      threshold, dict(entry), line), None
