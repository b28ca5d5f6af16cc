"""Big eval set files new to the cache are read by processes of their own while discovery goes on:
the suite found is the one discovery finds alone, no case is validated twice, and a suite read
before starts no process."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from agentdiff.core.formats import eval_set_files, read_cache
from agentdiff.core.project import warm_reads
from agentdiff.core.project.discovery import discover


def _suite(root: Path, files: int, cases: int = read_cache.MIN_CASES) -> None:
    for f in range(files):
        rows = [{"eval_id": f"case_{i}", "conversation": [{"user_content": {"role": "user", "parts": [{"text": f"hi {i}"}]}}],
                 **({"session_input": {"app_name": "app", "user_id": "u"}} if i % 3 == 0 else {})} for i in range(cases)]
        (root / f"set_{f}.evalset.json").write_text(json.dumps({"eval_set_id": f"set_{f}", "eval_cases": rows}))


def _facts(found) -> tuple:
    return ([(ref.id, ref.turns, ref.app_name) for ref in found.cases], [(e.file, e.line, e.message) for e in found.errors])


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AGENTDIFF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("AGENTDIFF_NO_CACHE", raising=False)
    monkeypatch.setattr(warm_reads, "MIN_BYTES", 1)
    root = tmp_path / "project"
    root.mkdir()
    _suite(root, 3)
    (root / "broken.evalset.json").write_text('{"eval_set_id": "b", "eval_cases": [{"eval_id": "x"}]}')  # no conversation
    return root


def test_files_new_to_the_cache_are_read_by_other_processes_and_the_suite_is_the_same(project, monkeypatch):
    monkeypatch.setenv("AGENTDIFF_NO_CACHE", "1")
    alone = _facts(discover([project], project))
    monkeypatch.delenv("AGENTDIFF_NO_CACHE")
    read_here: list[int] = []
    original = eval_set_files.read_compact
    monkeypatch.setattr(eval_set_files, "read_compact", lambda text: read_here.append(len(text)) or original(text))
    started: list[list[str]] = []
    popen = warm_reads.subprocess.Popen
    monkeypatch.setattr(warm_reads.subprocess, "Popen", lambda argv, **kw: started.append(argv) or popen(argv, **kw))

    found = discover([project], project)

    assert _facts(found) == alone
    assert len(started) == min(warm_reads._cores(), 4)  # a process per core, for the four big files
    assert sorted(Path(p).name for argv in started for p in argv[4:]) == ["broken.evalset.json", "set_0.evalset.json",
                                                                          "set_1.evalset.json", "set_2.evalset.json"]
    assert len(read_here) == 1, "only the broken file, which keeps no entry, was read here"
    assert len(list((project.parent / "cache" / "eval-sets").glob("*.json"))) == 3


def test_a_suite_read_before_starts_no_process(project, monkeypatch):
    first = _facts(discover([project], project))
    monkeypatch.setattr(warm_reads.subprocess, "Popen", lambda *a, **kw: pytest.fail("a process was started"))
    assert _facts(discover([project], project)) == first


@pytest.mark.parametrize("child", ["pass", "print('noise'); import time; time.sleep(60)", "import time; time.sleep(60)"],
                         ids=["stops", "says something else", "falls silent"])
def test_a_process_that_fails_leaves_discovery_reading_the_files_itself(project, monkeypatch, child):
    monkeypatch.setenv("AGENTDIFF_NO_CACHE", "1")
    alone = _facts(discover([project], project))
    monkeypatch.delenv("AGENTDIFF_NO_CACHE")
    monkeypatch.setattr(warm_reads, "SILENCE", 0.5)
    popen, started = warm_reads.subprocess.Popen, []
    monkeypatch.setattr(warm_reads.subprocess, "Popen", lambda argv, **kw: started.append(popen([argv[0], "-c", child], **kw)) or started[-1])
    began = time.monotonic()
    assert _facts(discover([project], project)) == alone
    assert started and all(process.poll() is not None for process in started)  # none left behind
    assert time.monotonic() - began < 20


def test_a_file_that_keeps_no_entry_is_marked_and_not_read_ahead_again(project, monkeypatch):
    for name in ("set_0", "set_1", "set_2"):
        (project / f"{name}.evalset.json").unlink()
    (project / "other.evalset.json").write_text('{"eval_set_id": "o", "eval_cases": [{"eval_id": "y"}]}')  # two broken files
    discover([project], project)
    assert len(list((project.parent / "cache" / "eval-sets").glob("*.none"))) == 2
    monkeypatch.setattr(warm_reads.subprocess, "Popen", lambda *a, **kw: pytest.fail("a process was started"))
    found = discover([project], project)
    assert len(found.errors) == 2 and not found.cases


def test_the_processes_import_nothing_from_the_working_folder(project, monkeypatch):
    for name in ("json", "pydantic", "agentdiff"):
        (project / f"{name}.py").write_text(f"open({str(project / 'imported')!r}, 'w').write({name!r})\n")
    monkeypatch.chdir(project)
    started: list[list[str]] = []
    popen = warm_reads.subprocess.Popen
    monkeypatch.setattr(warm_reads.subprocess, "Popen", lambda argv, **kw: started.append(argv) or popen(argv, **kw))
    found = discover([Path(".")], project)
    assert started and len(found.cases) == 3 * read_cache.MIN_CASES
    assert not (project / "imported").exists()
