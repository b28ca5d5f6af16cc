"""A format is a family behind one interface: a new one is a finder, a family and a registration, and
the whole pipeline (discovery, watch, run, score, accept, undo, list) handles its cases unchanged."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from agentdiff.core.project import family
from agentdiff.core.project.discovery import discover
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.workbench.workbench import Workbench
from workbench_support import EchoPool, echo_project

CORE = Path(__file__).resolve().parents[1] / "core"
TUI = Path(__file__).resolve().parents[1] / "tui"
CASE_REFS = {"EvalCaseRef", "ConformanceCaseRef", "DatasetCaseRef"}


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(family.REGISTERED, "toy", "toy_format:ToyFamily")
    monkeypatch.setitem(family.FINDERS, "toy", "toy_format:ToyFinder")


@pytest.fixture
def root(tmp_path, toy) -> Path:
    echo_project(tmp_path, {"echo": ["hello"]})
    (tmp_path / "agents" / "echo" / "greetings.toy.txt").write_text("hi -> hi\nbye -> see you\n")
    return tmp_path


TOY_1, TOY_2 = "agents/echo/greetings.toy.txt::line_1", "agents/echo/greetings.toy.txt::line_2"


def test_a_registered_format_is_discovered_and_described_by_its_own_family(root):
    found = discover([root / "agents"], root)
    assert [ref.id for ref in found.cases] == ["agents/echo/echo.evalset.json::case_0", TOY_1, TOY_2] and found.errors == []
    toy = family.family_of(found.cases[1])
    assert toy.name == "toy" and toy.described(found.cases[2]) == {"kind": "toy", "line": 2}
    assert toy.editor_place(found.cases[2])[1:] == (2, 1)


def test_a_bad_line_of_a_registered_format_is_a_load_error_with_its_line(root):
    (root / "agents" / "echo" / "greetings.toy.txt").write_text("hi -> hi\nno arrow here\n")
    found = discover([root / "agents"], root)
    assert [(e.file, e.line) for e in found.errors] == [("agents/echo/greetings.toy.txt", 2)]
    assert [ref.id for ref in found.cases][1:] == [TOY_1]


async def test_a_registered_format_runs_is_watched_and_accepted_like_any_other(root):
    pool = EchoPool()
    wb = Workbench(root, [root / "agents"], pool)
    wb.run(list(wb.cases), "first run")
    await wb.wait()
    assert wb.cases[TOY_1].status is CaseStatus.PASSED and wb.cases[TOY_2].status is CaseStatus.FAILED

    toy_file = root / "agents" / "echo" / "greetings.toy.txt"
    before = toy_file.read_bytes()
    plan = await wb.plan_accept(TOY_2)
    assert [w.path for w in plan.writes] == [toy_file] and "-bye -> see you\n+bye -> bye" in plan.preview
    await wb.accept(plan)
    await wb.wait()
    assert toy_file.read_text() == "hi -> hi\nbye -> bye\n" and wb.cases[TOY_2].status is CaseStatus.PASSED
    await wb.undo()
    await wb.wait()
    assert toy_file.read_bytes() == before and wb.cases[TOY_2].status is CaseStatus.FAILED

    pool.clear()
    toy_file.write_text("hi -> hi\nbye -> see you\nagain -> again\n")  # a case added: watch loads it and runs it alone
    await wb.on_changes([toy_file])
    await wb.wait()
    assert pool.ran() == ["agents/echo/greetings.toy.txt::line_3"] and wb.cases["agents/echo/greetings.toy.txt::line_3"].status is CaseStatus.PASSED
    new = root / "agents" / "echo" / "more.toy.txt"
    new.write_text("yes -> yes\n")  # a file of it that appears is a case file
    await wb.on_changes([new])
    await wb.wait()
    assert wb.cases["agents/echo/more.toy.txt::line_1"].status is CaseStatus.PASSED


def _kind_branches(folder: Path) -> list[str]:
    """`isinstance(x, <a case ref class>)` anywhere in `folder`'s modules."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" and len(node.args) == 2:
                kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
                if any(getattr(k, "id", None) in CASE_REFS for k in kinds):
                    found.append(f"{path.relative_to(folder.parent)}:{node.lineno}")
    return found


def test_the_pipeline_asks_a_cases_family_and_does_not_branch_on_its_kind():
    outside = [hit for folder in (CORE, TUI) for hit in _kind_branches(folder)
               if not hit.startswith(("core/formats/", "core/families/"))]
    # the two that stay are commands of one format: agents-cli's grade results (`score`) and its metric checks (`doctor`)
    assert [hit.split(":")[0] for hit in outside] == ["core/project/doctor.py", "tui/cli/score_agents_cli.py"]
