"""JUnit XML: one <testsuite> per eval set (or conformance category), one <testcase> per case.

`failed`, `not_evaluated` and `flaky` cases are <failure>s (each with its `type`), `error` cases
are <error>s: CI treats every case that did not pass as not passing, as `adk eval` does.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Sequence

from agentdiff.core.reports.text import case_problem
from agentdiff.core.scoring.results import CaseResult, CaseStatus


def render_junit(cases: Sequence[CaseResult]) -> str:
    suites: dict[str, list[CaseResult]] = {}
    for case in cases:
        suites.setdefault(case.category or case.source, []).append(case)
    root = ET.Element("testsuites", name="agentdiff")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for name, members in suites.items():
        failures = sum(c.status in (CaseStatus.FAILED, CaseStatus.NOT_EVALUATED, CaseStatus.FLAKY) for c in members)
        errors = sum(c.status is CaseStatus.ERROR for c in members)
        suite = ET.SubElement(
            root, "testsuite", name=name, tests=str(len(members)), failures=str(failures), errors=str(errors), skipped="0"
        )
        totals["tests"] += len(members)
        totals["failures"] += failures
        totals["errors"] += errors
        for case in members:
            element = ET.SubElement(suite, "testcase", classname=name, name=case.eval_id, file=case.source)
            if case.status is CaseStatus.PASSED:
                continue
            tag = "error" if case.status is CaseStatus.ERROR else "failure"
            problem = case_problem(case)
            child = ET.SubElement(element, tag, type=case.status.value, message=problem.splitlines()[0] if problem else case.status.value)
            child.text = problem
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
