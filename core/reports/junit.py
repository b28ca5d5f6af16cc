"""JUnit XML: one <testsuite> per eval set (or conformance category), one <testcase> per case.

`failed`, `not_evaluated` and `flaky` cases are <failure>s (each with its `type`), `error` cases
are <error>s: CI treats every case that did not pass as not passing, as `adk eval` does.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Sequence

from agentdiff.core.reports.text import case_problem
from agentdiff.core.scoring.results import CaseResult, CaseStatus

#: Characters XML 1.0 cannot hold (control characters, lone surrogates), shown as `\xNN` instead.
_NOT_XML = re.compile("[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f\\ud800-\\udfff\\ufffe\\uffff]")


def _xml(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text)


def render_junit(cases: Sequence[CaseResult]) -> str:
    suites: dict[str, list[CaseResult]] = {}
    for case in cases:
        suites.setdefault(case.category or case.source, []).append(case)
    root = ET.Element("testsuites", name="agentdiff")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for name, members in suites.items():
        failures = sum(c.status in (CaseStatus.FAILED, CaseStatus.NOT_EVALUATED, CaseStatus.FLAKY, CaseStatus.NEW,
                                    CaseStatus.INCONCLUSIVE) for c in members)
        errors = sum(c.status is CaseStatus.ERROR for c in members)
        suite = ET.SubElement(
            root, "testsuite", name=_xml(name), tests=str(len(members)), failures=str(failures), errors=str(errors), skipped="0"
        )
        totals["tests"] += len(members)
        totals["failures"] += failures
        totals["errors"] += errors
        for case in members:
            element = ET.SubElement(suite, "testcase", classname=_xml(name), name=_xml(case.eval_id), file=_xml(case.source))
            if case.status is CaseStatus.PASSED:
                continue
            tag = "error" if case.status is CaseStatus.ERROR else "failure"
            problem = case_problem(case)
            message = problem.splitlines()[0] if problem else case.status.value
            child = ET.SubElement(element, tag, type=case.status.value, message=_xml(message))
            child.text = _xml(problem) if problem else problem
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
