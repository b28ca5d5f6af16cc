"""Journey checks: deterministic rules on what a run did, declared in `agentdiff-checks.yaml`.

The file sits beside the eval sets (or conformance cases) it checks, and covers every case at or
below its folder (the nearest file up from a case is its file):

    checks:                                   # every case here
      max_tool_calls: 8
      max_calls: {issue_refund: 1}            # per tool
      no_repeat: [issue_refund]               # side effects: never twice in a run
      order: [[lookup_order, issue_refund]]   # lookup_order before any issue_refund
      forbidden: [delete_account]             # never called
      required_args: {issue_refund: [order_id, amount]}   # present and not empty
      max_tokens: 20000                       # the agent's model calls, one run
      max_seconds: 30                         # one run's wall time
      python: ["checks.py:no_refund_over_100"]  # functions given the run's trace
      forbidden_nodes: [escalate]             # ADK 2 workflows: a node (by name or path) that never runs
      required_nodes: [verify_identity]       # one that runs in every run
      required_route: {classify: refund}      # each run of classify takes this route
      max_node_visits: {retry_loop: 3}        # loops: runs of a node in one run
    eval_sets:                                # by file name or eval_set_id (a conformance category too)
      customer_service.evalset.json: {max_tool_calls: 5}
    cases:                                    # by eval_id, case name or id
      refund_too_late: {forbidden: [issue_refund], max_calls: null}   # null: off for this case

A case's checks are the file's `checks`, then its eval set's entries, then its own, key by key. Each
check is one `CheckSpec`, with the line that declares it (`e` opens it there).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional

from agentdiff.core.formats.load_error import LoadError, locate
from agentdiff.core.formats.source_file import SourceFileError, SourceText, parse_source, read_source

CHECKS_FILE = "agentdiff-checks.yaml"

LIMITS = ("max_tool_calls", "max_tokens", "max_seconds")
PER_TOOL_LIMITS = ("max_calls",)
TOOL_LISTS = ("no_repeat", "forbidden")
NODE_LISTS = ("forbidden_nodes", "required_nodes")
PER_NODE_LIMITS = ("max_node_visits",)
KINDS = (*LIMITS, *PER_TOOL_LIMITS, *TOOL_LISTS, "order", "required_args", "python", *NODE_LISTS, *PER_NODE_LIMITS, "required_route")
SECTIONS = ("checks", "eval_sets", "cases")


@dataclass(frozen=True)
class CheckSpec:
    """One check: `kind`, the tool it is about (if any), its value (a limit, an ordered pair, the
    required argument names, a `file.py:function`), and where it is declared."""

    kind: str
    tool: Optional[str]
    value: Any
    file: str  # as displayed (relative to the project root)
    line: Optional[int]
    path: Optional[Path] = None  # the checks file (a python check's module is found beside it)

    @property
    def module(self) -> Optional[Path]:
        """A `python` check's file (beside the checks file)."""
        if self.kind != "python":
            return None
        return (self.path.parent if self.path else Path(".")) / str(self.value).partition(":")[0]

    @property
    def label(self) -> str:
        if self.kind in LIMITS:
            return f"{self.kind} ≤ {self.value:g}"
        if self.kind in ("max_calls", "max_node_visits"):
            return f"{self.kind} {self.tool} ≤ {self.value:g}"
        if self.kind == "required_route":
            return f"required_route {self.tool} → {self.value}"
        if self.kind == "order":
            return f"order {self.value[0]} before {self.value[1]}"
        if self.kind == "required_args":
            return f"required_args {self.tool}: {', '.join(self.value)}"
        if self.kind == "python":
            return f"python {self.value}"
        return f"{self.kind} {self.tool}"

    @property
    def source(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True)
class ChecksFile:
    source: SourceText
    data: dict[str, Any]

    @property
    def digest(self) -> str:
        return self.source.sha256

    def for_case(self, set_keys: Iterable[str], case_keys: Iterable[str]) -> tuple[CheckSpec, ...]:
        """The checks of a case of the eval set (or category) named by any of `set_keys`, itself
        named by any of `case_keys`: the file's, then its set's, then its own, key by key."""
        merged: dict[str, tuple[Any, tuple]] = {}
        layers = [(("checks",), self.data.get("checks") or {})]
        for section, keys in (("eval_sets", set_keys), ("cases", case_keys)):
            entries = self.data.get(section) or {}
            for key in keys:
                if key in entries:
                    layers.append(((section, key), entries[key] or {}))
                    break
        for where, checks in layers:
            for kind, value in checks.items():
                merged[kind] = (value, (*where, kind))
        specs: list[CheckSpec] = []
        for kind, (value, where) in merged.items():
            if value is not None:
                specs.extend(self._expand(kind, value, where))
        return tuple(specs)

    def _line(self, path: tuple) -> Optional[int]:
        found = locate(self.source.text, list(path), "yaml")
        return found[0] if found else None

    def _expand(self, kind: str, value: Any, where: tuple) -> list[CheckSpec]:
        def spec(tool: Optional[str], item: Any, at: tuple) -> CheckSpec:
            return CheckSpec(kind, tool, item, self.source.display, self._line(at), self.source.path)

        if kind in LIMITS:
            return [spec(None, value, where)]
        if kind in (*PER_TOOL_LIMITS, *PER_NODE_LIMITS, "required_args", "required_route"):
            return [spec(tool, item, (*where, tool)) for tool, item in value.items()]
        if kind in (*TOOL_LISTS, *NODE_LISTS):
            return [spec(tool, None, (*where, i)) for i, tool in enumerate(value)]
        if kind == "order":
            return [spec(pair[1], tuple(pair), (*where, i)) for i, pair in enumerate(value)]
        return [spec(None, item, (*where, i)) for i, item in enumerate(value)]  # python


def _problems(checks: Any, at: tuple) -> Iterable[tuple[tuple, str]]:
    """What is wrong with one `checks` table, each with where it is."""
    if not isinstance(checks, dict):
        yield at, "must be a table of checks"
        return
    for kind, value in checks.items():
        here = (*at, kind)
        if kind not in KINDS:
            yield here, f"unknown check {kind!r} (use {', '.join(KINDS)})"
        elif value is None:
            continue  # turned off here
        elif kind in LIMITS and not (isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0):
            yield here, f"`{kind}` must be a number ≥ 0"
        elif kind in PER_TOOL_LIMITS and not (isinstance(value, dict) and all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value.values())):
            yield here, f"`{kind}` must be a table of tool name: whole number ≥ 0"
        elif kind in TOOL_LISTS and not (isinstance(value, list) and all(isinstance(v, str) and v for v in value)):
            yield here, f"`{kind}` must be a list of tool names"
        elif kind in NODE_LISTS and not (isinstance(value, list) and all(isinstance(v, str) and v for v in value)):
            yield here, f"`{kind}` must be a list of node names (or paths: `inner/writer`)"
        elif kind in PER_NODE_LIMITS and not (isinstance(value, dict) and all(
                isinstance(k, str) and k and isinstance(v, int) and not isinstance(v, bool) and v >= 0 for k, v in value.items())):
            yield here, f"`{kind}` must be a table of node name: whole number ≥ 0"
        elif kind == "required_route" and not (isinstance(value, dict) and all(
                isinstance(k, str) and k and isinstance(v, (str, int, bool)) for k, v in value.items())):
            yield here, "`required_route` must be a table of node name: route (a string, number or true/false)"
        elif kind == "order" and not (isinstance(value, list) and all(
                isinstance(p, list) and len(p) == 2 and all(isinstance(t, str) and t for t in p) for p in value)):
            yield here, "`order` must be a list of [first_tool, then_tool] pairs"
        elif kind == "required_args" and not (isinstance(value, dict) and all(
                isinstance(v, list) and v and all(isinstance(a, str) and a for a in v) for v in value.values())):
            yield here, "`required_args` must be a table of tool name: [argument names]"
        elif kind == "python" and not (isinstance(value, list) and all(
                isinstance(v, str) and v.count(":") == 1 and v.split(":")[0].endswith(".py") and v.split(":")[1]
                and "/" not in v.split(":")[0] and "\\" not in v.split(":")[0] for v in value)):
            yield here, '`python` must be a list of "file.py:function" (the file beside the checks file, no path)'


def load_checks_file(path: Path, display: str) -> tuple[Optional[ChecksFile], list[LoadError]]:
    """The file parsed and checked; a problem is a located load error and the file checks nothing."""
    try:
        source = read_source(path, display)
        data = parse_source(source, "yaml")
    except SourceFileError as exc:
        return None, [exc.error]
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return None, [LoadError(file=display, line=1, message=f"{CHECKS_FILE} must hold a table with {', '.join(SECTIONS)}")]
    errors = []

    def error(at: tuple, message: str) -> None:
        found = locate(source.text, list(at), "yaml")
        errors.append(LoadError(file=display, line=found[0] if found else None, column=found[1] if found else None, message=message))

    for key, value in data.items():
        if key not in SECTIONS:
            error((key,), f"unknown section {key!r} (use {', '.join(SECTIONS)})")
        elif key == "checks":
            for at, message in _problems(value or {}, (key,)):
                error(at, message)
        elif value is not None and not isinstance(value, dict):
            error((key,), f"`{key}` must be a table of name: checks")
        else:
            for name, checks in (value or {}).items():
                for at, message in _problems(checks or {}, (key, name)):
                    error(at, message)
    if errors:
        return None, errors
    return ChecksFile(source, data), []


def checks_digest(specs: Iterable[CheckSpec]) -> str:
    """What a case is checked by, for telling whether it changed (a re-score, no agent call)."""
    return hashlib.sha256(repr([(s.kind, s.tool, s.value) for s in specs]).encode()).hexdigest()
