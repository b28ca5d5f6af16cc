"""A long headless run keeps its finished results on disk: the reports read them back, in the suite's
order, as they would have found them in memory."""

from __future__ import annotations

import io
import json

import pytest

from agentdiff.core.run import result_spool
from agentdiff.core.run.result_spool import BlobFile, ResultSpool
from agentdiff.core.scoring.results import CaseResult, CaseStatus
from agentdiff.tui.cli import main
from agentdiff.tui.cli import run as run_module
from test_cli_progress import FakePool
from workbench_support import case_id, echo_project


def _result(i: int) -> CaseResult:
    return CaseResult(id=f"s::c{i}", source="s", eval_set_id="s", eval_id=f"c{i}", agent="a", mode="live",
                      status=CaseStatus.PASSED if i % 3 else CaseStatus.FAILED)


def test_results_past_the_first_few_are_read_back_from_disk_in_rank_order():
    spool = ResultSpool(in_memory=3)
    results = [_result(i) for i in range(10)]
    ranks = [9, 3, 7, 0, 5, 1, 8, 2, 6, 4]
    for result, rank in zip(results, ranks):
        spool.append(result, rank)
    assert spool.on_disk == 7 and len(spool) == 10
    assert list(spool) == results, "in the order added until sorted"
    spool.sort()
    expected = [result for _, result in sorted(zip(ranks, results), key=lambda pair: pair[0])]
    assert list(spool) == expected and spool[4] == expected[4] and spool[-1] == expected[-1] and spool[2:5] == expected[2:5]
    assert list(spool) == expected, "read back as often as asked"
    spool.close()


def test_a_result_that_cannot_be_written_stays_in_memory(monkeypatch):
    spool = ResultSpool(in_memory=1)
    spool.append(_result(0))
    monkeypatch.setattr(result_spool.pickle, "dumps", lambda *a, **k: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    spool.append(_result(1))
    spool.append(_result(2))
    assert spool.on_disk == 0 and "No space left" in spool.problem and [r.eval_id for r in spool] == ["c0", "c1", "c2"]


def test_blobs_are_written_in_batches_and_read_back_before_and_after_their_batch_is_written(monkeypatch):
    writes = []
    real = result_spool.os.pwrite
    monkeypatch.setattr(result_spool.os, "pwrite", lambda fd, data, at: writes.append((at, len(data))) or real(fd, data, at))
    monkeypatch.setattr(BlobFile, "FLUSH_AT", 1000)
    blobs = BlobFile("agentdiff-test-")
    made = [bytes([i % 251]) * (37 + i * 11) for i in range(60)]
    starts = [blobs.put(blob) for blob in made + [b"tail"]]
    made.append(b"tail")
    assert len(writes) < len(made) / 3, "batched, not a write per blob"
    assert [blobs.get(at, len(blob)) for at, blob in zip(starts, made)] == made  # some in the file, the last ones in memory
    assert sum(size for _, size in writes) < blobs.end
    blobs.close()


def test_a_batch_that_cannot_be_written_stays_readable_and_later_blobs_are_refused(monkeypatch):
    monkeypatch.setattr(BlobFile, "FLUSH_AT", 100)
    blobs = BlobFile("agentdiff-test-")
    first = blobs.put(b"a" * 150)  # written
    monkeypatch.setattr(result_spool.os, "pwrite", lambda *a: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    second = blobs.put(b"b" * 50)
    with pytest.raises(OSError, match="No space"):
        blobs.put(b"c" * 60)  # its batch fails to be written
    with pytest.raises(OSError, match="No space"):
        blobs.put(b"d")
    assert blobs.get(first, 150) == b"a" * 150 and blobs.get(second, 50) == b"b" * 50
    assert blobs.end == 200, "the refused blob takes no room: the last kept one ends where it did"
    blobs.close()


def test_a_blob_file_used_again_after_it_is_closed_starts_a_new_file(monkeypatch):
    blobs = BlobFile("agentdiff-test-")
    blobs.put(b"hello")
    blobs.close()
    at = blobs.put(b"world")
    assert blobs.get(at, 5) == b"world"
    blobs.close()


class _Seen(ResultSpool):
    made: list[ResultSpool] = []

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.made.append(self)


def _run(tmp_path, monkeypatch, in_memory: int, *argv: str) -> tuple[int, str]:
    echo = FakePool(delays={case_id("echo", "case_2"): 0.05, case_id("two", "case_0"): 0.02})  # done out of order
    echo.echo.answers[case_id("echo", "case_1")] = "something else"
    monkeypatch.setattr(run_module, "worker_pool", lambda args, config, options, python=None: echo)
    monkeypatch.setattr(result_spool, "IN_MEMORY", in_memory)
    monkeypatch.setattr(run_module, "ResultSpool", _Seen)
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue()


@pytest.mark.parametrize("argv", [("run",), ("run", "--json")])
def test_a_run_whose_results_wait_on_disk_reports_what_one_held_in_memory_reports(tmp_path, monkeypatch, argv):
    echo_project(tmp_path, {"echo": ["hello", "hello", "hello", "hi"], "two": ["bye", "bye"]})
    monkeypatch.chdir(tmp_path)
    held_code, held = _run(tmp_path, monkeypatch, 10_000, *argv)
    spooled_code, spooled = _run(tmp_path, monkeypatch, 1, *argv)
    assert [spool.on_disk for spool in _Seen.made[-2:]] == [0, 5], "the second run's results waited on disk"
    assert held_code == spooled_code == 1, "one case failed"
    if "--json" in argv:
        def stable(text: str) -> list:
            return [{k: v for k, v in case.items() if k not in ("seconds", "started")} for case in json.loads(text)["cases"]]
        held_cases, spooled_cases = stable(held), stable(spooled)
        assert [c["id"] for c in spooled_cases] == [c["id"] for c in held_cases] and len(held_cases) == 6
        assert spooled_cases == held_cases
    else:
        assert spooled == held and "6 cases: 5 passed, 1 failed" in held
