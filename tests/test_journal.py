"""The baseline journal as a database would be: one entry per action, undo and redo across restarts,
an entry that cannot be undone dropped so older ones can, a crash at any step leaving every file old
or new as one set, and two writers never losing a write."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from agentdiff.core.baselines.journal import (
    BaselineConflict,
    BaselineWriteError,
    FileWrite,
    UndoBlocked,
    drop_last,
    journal_entries,
    project_lock,
    redo_last,
    sha256_of,
    undo_last,
    write_baseline,
)


def files(root: Path, **texts: str) -> dict[str, Path]:
    paths = {}
    for name, text in texts.items():
        paths[name] = root / f"{name}.json"
        paths[name].write_text(text)
    return paths


def write(root: Path, reason: str, **new: str) -> None:
    write_baseline([FileWrite(root / f"{n}.json", t, sha256_of(root / f"{n}.json")) for n, t in new.items()], root, reason)


def state(root: Path, *names: str) -> tuple:
    return tuple((root / f"{n}.json").read_text() if (root / f"{n}.json").exists() else None for n in names)


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("*.tmp"))


def test_one_entry_per_action_undone_and_redone_in_order_across_restarts(tmp_path):
    files(tmp_path, a="a0", b="b0")
    write(tmp_path, "batch", a="a1", b="b1")  # one action, two files
    write(tmp_path, "second", a="a2")
    for _ in range(3):  # many entries within one second keep their order
        write(tmp_path, "quick", b=(tmp_path / "b.json").read_text() + "+")
    assert [e.seq for e in journal_entries(tmp_path)] == [1, 2, 3, 4, 5]
    undo = "import sys; from pathlib import Path; from agentdiff.core.baselines.journal import undo_last; print(undo_last(Path(sys.argv[1])).reason)"
    for _ in range(5):  # each from a fresh process, as after a restart
        subprocess.run([sys.executable, "-c", undo, str(tmp_path)], check=True, capture_output=True)
    assert state(tmp_path, "a", "b") == ("a0", "b0")
    assert undo_last(tmp_path) is None
    assert redo_last(tmp_path).reason == "batch" and state(tmp_path, "a", "b") == ("a1", "b1")
    assert redo_last(tmp_path).reason == "second" and state(tmp_path, "a", "b") == ("a2", "b1")
    write(tmp_path, "new work", a="a9")  # a new write: the rest can no longer be redone
    assert redo_last(tmp_path) is None
    assert undo_last(tmp_path).reason == "new work" and state(tmp_path, "a") == ("a2",)


def test_a_file_the_write_created_is_removed_by_undo_and_made_again_by_redo(tmp_path):
    new = tmp_path / "sidecar.json"
    write_baseline([FileWrite(new, "made\n", None)], tmp_path, "create")
    undo_last(tmp_path)
    assert not new.exists()
    redo_last(tmp_path)
    assert new.read_text() == "made\n"


def test_an_entry_blocked_by_a_hand_edit_is_dropped_and_older_ones_still_undo(tmp_path):
    files(tmp_path, a="a0", b="b0")
    write(tmp_path, "first", a="a1")
    write(tmp_path, "second", b="b1")
    (tmp_path / "b.json").write_text("b1, edited by hand")
    with pytest.raises(UndoBlocked, match=r"b\.json changed since it was written, in the lines it wrote or next to them; undo would lose that change\. Drop that entry"):
        undo_last(tmp_path)
    assert drop_last(tmp_path).reason == "second"
    assert undo_last(tmp_path).reason == "first"
    assert state(tmp_path, "a", "b") == ("a0", "b1, edited by hand")


CRASHER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from agentdiff.core.baselines.journal import FileWrite, sha256_of, undo_last, write_baseline
    root = Path(sys.argv[1])
    if sys.argv[2] == "undo":
        undo_last(root)
    else:
        write_baseline([FileWrite(root / n, n + " new", sha256_of(root / n)) for n in ("a.json", "b.json", "c.json")], root, "batch")
""")


@pytest.mark.parametrize("step", ["intent", "staged", "renamed-1", "renamed-2"])
def test_a_crash_at_any_step_of_a_write_leaves_the_old_set_and_nothing_behind(tmp_path, step):
    for name in ("a.json", "b.json", "c.json"):
        (tmp_path / name).write_text(name + " old")
    done = subprocess.run([sys.executable, "-c", CRASHER, str(tmp_path), "write"], env={**os.environ, "AGENTDIFF_FAULT": step})
    assert done.returncode == 137
    assert undo_last(tmp_path) is None  # the next journal operation rolls back; there is nothing to undo
    assert state(tmp_path, "a", "b", "c") == ("a.json old", "b.json old", "c.json old")
    assert leftovers(tmp_path) == [] and journal_entries(tmp_path) == []
    write(tmp_path, "after the crash", a="a fresh")  # the journal works on
    assert undo_last(tmp_path).reason == "after the crash" and state(tmp_path, "a") == ("a.json old",)


def test_a_crash_during_undo_is_finished_by_the_next_start(tmp_path):
    for name in ("a.json", "b.json", "c.json"):
        (tmp_path / name).write_text(name + " old")
    subprocess.run([sys.executable, "-c", CRASHER, str(tmp_path), "write"], check=True)
    done = subprocess.run([sys.executable, "-c", CRASHER, str(tmp_path), "undo"], env={**os.environ, "AGENTDIFF_FAULT": "undoing"})
    assert done.returncode == 137
    assert redo_last(tmp_path).reason == "batch"  # the undo was finished first, so it can be redone
    assert state(tmp_path, "a", "b", "c") == ("a.json new", "b.json new", "c.json new")
    assert leftovers(tmp_path) == []


LINES = "".join(f"line {n}\n" for n in range(1, 11))


def test_undo_and_redo_merge_an_edit_made_elsewhere_in_the_file_and_refuse_one_beside_what_they_wrote(tmp_path):
    files(tmp_path, a=LINES)
    write(tmp_path, "accept", a=LINES.replace("line 3\n", "line three\n"))
    (tmp_path / "a.json").write_text(LINES.replace("line 3\n", "line three\n").replace("line 8\n", "line 8, by hand\n"))
    assert undo_last(tmp_path).reason == "accept"
    assert state(tmp_path, "a") == (LINES.replace("line 8\n", "line 8, by hand\n"),)
    assert redo_last(tmp_path).reason == "accept"
    assert state(tmp_path, "a") == (LINES.replace("line 3\n", "line three\n").replace("line 8\n", "line 8, by hand\n"),)
    (tmp_path / "a.json").write_text(state(tmp_path, "a")[0].replace("line 4\n", "line 4, by hand\n"))  # beside the accepted line
    before = state(tmp_path, "a")
    with pytest.raises(UndoBlocked, match=r"a\.json changed since it was written, in the lines it wrote or next to them"):
        undo_last(tmp_path)
    assert state(tmp_path, "a") == before and leftovers(tmp_path) == []


@pytest.mark.parametrize(("written", "current", "expected"), [
    ("a\nB\nc\n", "a\nB\nc\n", "a\nb\nc\n"),  # unchanged since: the other side itself
    ("a\nB\nc\nd\ne\n", "a\nB\nc\nd\nE\n", "a\nb\nc\nd\nE\n"),  # an edit two lines away is kept
    ("a\nB\nc\nd\ne\n", "a\nB\nc\nd\ne\nf\n", "a\nb\nc\nd\ne\nf\n"),  # lines added at the end are kept
    ("a\nB\nc\nd\ne\n", "z\na\nB\nc\nd\ne\n", "z\na\nb\nc\nd\ne\n"),  # a line added above, not beside: kept
    ("a\nB\nc\nd\ne\n", "a\nz\nB\nc\nd\ne\n", None),  # inserted right before the written line: refused
    ("a\nB\nc\n", "a\nB!\nc\n", None),  # the written line itself changed: refused
    ("a\nB\nc\n", "a\nc\n", None),  # the written line deleted: refused
    ('{"x": [\n 1,\n 2\n]}\n', '{"x": [\n 1,\n 2\n]}\n', '{"x": [\n 1\n]}\n'),
    ("same\n", "edited\n", "edited\n"),  # a write that changed nothing: nothing to take back, the edit stays
])
def test_take_back_keeps_what_changed_apart_from_the_written_lines(written, current, expected):
    from agentdiff.core.baselines.merge import take_back

    base = {"a\nB\nc\n": "a\nb\nc\n", "a\nB\nc\nd\ne\n": "a\nb\nc\nd\ne\n", '{"x": [\n 1,\n 2\n]}\n': '{"x": [\n 1\n]}\n', "same\n": "same\n"}[written]
    assert take_back(base, written, current) == expected


def test_a_crash_during_a_merged_undo_is_finished_with_the_merged_text(tmp_path):
    """The merged text is journaled before any file changes: the next start finishes the undo with it,
    so the hand edit survives the crash too."""
    (tmp_path / "a.json").write_text(LINES)
    write(tmp_path, "accept", a=LINES.replace("line 2\n", "line two\n"))
    (tmp_path / "a.json").write_text(LINES.replace("line 2\n", "line two\n").replace("line 9\n", "line 9, by hand\n"))
    done = subprocess.run([sys.executable, "-c", CRASHER, str(tmp_path), "undo"], env={**os.environ, "AGENTDIFF_FAULT": "undoing"})
    assert done.returncode == 137
    assert undo_last(tmp_path) is None  # finished first: nothing left to undo
    assert state(tmp_path, "a") == (LINES.replace("line 9\n", "line 9, by hand\n"),)
    assert leftovers(tmp_path) == [] and not list((tmp_path / ".agentdiff" / "journal").glob("*/merged-*"))
    assert redo_last(tmp_path).reason == "accept"  # and the journal goes on from there
    assert state(tmp_path, "a") == (LINES.replace("line 2\n", "line two\n").replace("line 9\n", "line 9, by hand\n"),)


def test_two_writers_never_lose_a_write(tmp_path):
    """Both read the file, then both write it: the second is refused (the file changed since it read
    it), never applied over the first."""
    (tmp_path / "set.json").write_text("v0")
    seen = sha256_of(tmp_path / "set.json")
    write_baseline([FileWrite(tmp_path / "set.json", "from one", seen)], tmp_path, "one")
    with pytest.raises(BaselineConflict, match="set.json changed on disk since it was read; nothing was written"):
        write_baseline([FileWrite(tmp_path / "set.json", "from two", seen)], tmp_path, "two")
    assert (tmp_path / "set.json").read_text() == "from one" and len(journal_entries(tmp_path)) == 1


def test_a_second_process_waits_for_the_lock_then_is_refused_clearly(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, time
        from pathlib import Path
        from agentdiff.core.baselines.journal import project_lock
        with project_lock(Path(sys.argv[1])):
            print("held", flush=True)
            time.sleep(30)
    """), str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(BaselineWriteError, match=rf"another agentdiff \(pid {holder.pid}\) is writing to this project"):
            with project_lock(tmp_path, wait=0.2):
                pass
    finally:
        holder.kill()
        holder.wait()
    with project_lock(tmp_path, wait=0.2):  # released when its holder ended
        pass


def test_a_write_that_fails_on_any_exception_leaves_nothing_and_the_next_write_works(tmp_path):
    files(tmp_path, a="1")
    with pytest.raises(UnicodeEncodeError):  # text no encoder can write, as a lone surrogate once was
        write(tmp_path, "bad", a="\ud800")
    assert state(tmp_path, "a") == ("1",) and leftovers(tmp_path) == [] and journal_entries(tmp_path) == []
    (tmp_path / ".agentdiff" / "journal" / "00000007").mkdir(parents=True)  # as a crash before the entry was saved
    write(tmp_path, "good", a="2")  # the leftover is cleared under the lock, never in the way
    assert state(tmp_path, "a") == ("2",) and [e.seq for e in journal_entries(tmp_path)] == [1]
    assert not (tmp_path / ".agentdiff" / "journal" / "00000007").exists()


def test_a_baseline_that_is_a_symlink_is_written_through_and_undone_through(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "real.json").write_text("1")
    (tmp_path / "a.json").symlink_to(shared / "real.json")
    write(tmp_path, "accept", a="2")
    assert (tmp_path / "a.json").is_symlink() and (shared / "real.json").read_text() == "2"
    undo_last(tmp_path)
    assert (tmp_path / "a.json").is_symlink() and (shared / "real.json").read_text() == "1"


@pytest.mark.parametrize("garbage", ['{"reason": "second", "time": 1', "[]", "{}", '{"reason": 5, "time": "x", "files": {}}'])
def test_a_newest_entry_that_cannot_be_read_blocks_undo_until_set_aside(tmp_path, garbage):
    files(tmp_path, a="a0", b="b0")
    write(tmp_path, "first", a="a1")
    write(tmp_path, "second", b="b1")
    newest = tmp_path / ".agentdiff" / "journal" / "00000002" / "entry.json"
    newest.write_text(garbage)
    # never stepped over: undoing "first" now would revert the wrong write
    with pytest.raises(UndoBlocked, match=r"the newest journal entry \(\.agentdiff/journal/00000002/entry\.json\) cannot be read"):
        undo_last(tmp_path)
    assert state(tmp_path, "a", "b") == ("a1", "b1")
    write(tmp_path, "third", a="a2")  # accepting still works beside it
    assert undo_last(tmp_path).reason == "third"
    dropped = drop_last(tmp_path)  # sets the unreadable entry aside, kept whole
    assert dropped.id == "00000002" and not newest.parent.exists()
    (aside,) = (tmp_path / ".agentdiff" / "set-aside").iterdir()
    assert (aside / "entry.json").read_text() == garbage
    assert undo_last(tmp_path).reason == "first" and state(tmp_path, "a", "b") == ("a0", "b1")


def test_a_crash_mid_record_is_rolled_back_when_run_or_the_tui_starts_not_at_the_next_accept(tmp_path, monkeypatch):
    from agentdiff.tui.app import create_app
    from fake_pool import CannedPool
    from test_cli import run

    for name in ("a.json", "b.json", "c.json"):
        (tmp_path / name).write_text(name + " old")
    for step in ("renamed-1", "renamed-2"):
        done = subprocess.run([sys.executable, "-c", CRASHER, str(tmp_path), "write"], env={**os.environ, "AGENTDIFF_FAULT": step})
        assert done.returncode == 137 and state(tmp_path, "a") == ("a.json new",)  # half written
        if step == "renamed-1":
            monkeypatch.chdir(tmp_path)
            code, _, err = run("list")
            assert "warning: an interrupted write was rolled back: batch" in err
        else:
            create_app(tmp_path, [tmp_path], pool=CannedPool(tmp_path), watch=False)
        assert state(tmp_path, "a", "b", "c") == ("a.json old", "b.json old", "c.json old")
        assert journal_entries(tmp_path) == [] and leftovers(tmp_path) == []


def test_what_a_killed_write_left_is_cleared_and_the_journal_is_pruned_keeping_what_undo_reaches(tmp_path, monkeypatch):
    import time

    from agentdiff.core.baselines import journal

    files(tmp_path, a="a0")
    folder = tmp_path / ".agentdiff" / "journal"
    for n in range(5):
        write(tmp_path, f"w{n}", a=f"a{n + 1}")
    (folder / "00000099").mkdir()  # a write killed before its entry was saved
    (folder / "00000099" / "0-after").write_text("x")
    assert journal.recover_at_start(tmp_path) == [] and not (folder / "00000099").exists()
    assert undo_last(tmp_path).reason == "w4"
    write(tmp_path, "w5", a="a9")  # w4 undone and written past: nothing can reach it
    old = time.time() + 40 * 86_400  # forty days on
    for entry in journal.journal_entries(tmp_path):
        assert entry.seq != 5 or entry.state == "dropped"
    from agentdiff.core.baselines import journal_entries as entries

    monkeypatch.setattr(entries, "KEEP_ENTRIES", 3)
    with project_lock(tmp_path):
        assert journal.prune_journal(tmp_path, now=old) == 3
    assert [e.reason for e in journal_entries(tmp_path)] == ["w2", "w3", "w5"]  # the newest three undo can reach
    assert [undo_last(tmp_path).reason for _ in range(3)] == ["w5", "w3", "w2"]


def test_leftover_temporary_folders_of_killed_processes_are_removed(tmp_path, monkeypatch):
    from agentdiff.core.worker.pool import private_temp_dir, sweep_temp_dirs

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / f"agentdiff-{dead.pid}-abcd").mkdir()
    (tmp_path / f"agentdiff-{dead.pid}-abcd" / "workers.sock").write_text("")
    (tmp_path / "agentdiff-doctor-xyz").mkdir()  # not ours to judge
    mine = private_temp_dir()
    sweep_temp_dirs()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["agentdiff-doctor-xyz", Path(mine).name])


def test_a_hard_linked_baseline_is_written_through_every_name_and_undone_through(tmp_path):
    files(tmp_path, a="a0")
    os.link(tmp_path / "a.json", tmp_path / "shared.json")  # the same eval set under two names
    write(tmp_path, "accept", a="a1")
    assert os.stat(tmp_path / "a.json").st_nlink == 2 and (tmp_path / "shared.json").read_text() == "a1"
    assert undo_last(tmp_path).reason == "accept" and (tmp_path / "shared.json").read_text() == "a0"
    assert redo_last(tmp_path).reason == "accept" and (tmp_path / "shared.json").read_text() == "a1"
    assert os.stat(tmp_path / "a.json").st_nlink == 2 and leftovers(tmp_path) == []


def test_a_crash_writing_a_hard_linked_baseline_is_rolled_back_through_every_name(tmp_path):
    for name in ("a.json", "b.json", "c.json"):
        (tmp_path / name).write_text(name + " old")
    os.link(tmp_path / "b.json", tmp_path / "shared.json")
    done = subprocess.run([sys.executable, "-c", CRASHER, str(tmp_path), "write"], env={**os.environ, "AGENTDIFF_FAULT": "renamed-2"})
    assert done.returncode == 137 and (tmp_path / "shared.json").read_text() == "b.json new"  # half written
    assert undo_last(tmp_path) is None  # rolled back first
    assert state(tmp_path, "a", "b", "c", "shared") == ("a.json old", "b.json old", "c.json old", "b.json old")
    assert os.stat(tmp_path / "b.json").st_nlink == 2 and leftovers(tmp_path) == []


def test_accepting_into_a_hard_linked_eval_set_keeps_the_link(tmp_path, monkeypatch):
    import json

    from test_cli import run

    (tmp_path / "agents" / "echo").mkdir(parents=True)
    (tmp_path / "agents" / "echo" / "agent.py").write_text("async def run_turn(ctx):\n    return 'hello back'\n")
    conversation = [{"user_content": {"role": "user", "parts": [{"text": "hi"}]}, "final_response": {"role": "model", "parts": [{"text": "bye"}]}}]
    evalset = tmp_path / "agents" / "echo" / "s.evalset.json"
    evalset.write_text(json.dumps({"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": conversation}]}, indent=2))
    os.link(evalset, tmp_path / "shared.evalset.json.bak")
    monkeypatch.chdir(tmp_path)
    code, _, err = run("accept", "agents/echo/s.evalset.json::a", "--yes")
    assert code == 0, err
    assert os.stat(evalset).st_nlink == 2 and "hello back" in (tmp_path / "shared.evalset.json.bak").read_text()
    assert run("undo")[0] == 0 and "hello back" not in (tmp_path / "shared.evalset.json.bak").read_text()


def test_a_planted_entry_naming_files_outside_the_project_is_never_followed(tmp_path):
    import hashlib
    import json

    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    victim, other = outside / "v9.txt", outside / "v8.txt"
    victim.write_text("precious")
    other.write_text("precious too")
    (project / "a.json").write_text("a0")
    planted = project / ".agentdiff" / "journal" / "00000001"
    planted.mkdir(parents=True)
    (planted / "0-before").write_text("PWNED")
    sha = hashlib.sha256(victim.read_bytes()).hexdigest()
    entry = {"id": "00000001", "reason": "x", "time": 1.0, "seq": 1, "state": "pending", "files": [
        {"path": str(victim), "before": "00", "after": sha, "backup": "0-before"},
        {"path": "a.json", "before": "00", "after": "11", "staged": "../../../../outside/v8.txt"}]}
    (planted / "entry.json").write_text(json.dumps(entry))
    from agentdiff.core.baselines.journal import recover_at_start

    recover_at_start(project)
    assert victim.read_text() == "precious" and other.read_text() == "precious too"
    with pytest.raises(UndoBlocked, match="names a file outside the project"):
        undo_last(project)


def test_writes_never_follow_a_link_out_of_the_project_nor_the_lock_a_link(tmp_path):
    project, outside = tmp_path / "project", tmp_path / "outside.txt"
    project.mkdir()
    outside.write_text("precious")
    (project / "x.agentdiff-record.json").symlink_to(outside)
    with pytest.raises(BaselineWriteError, match="leads out of the project"):
        write_baseline([FileWrite(project / "x.agentdiff-record.json", "{}", sha256_of(outside))], project, "accept")
    assert outside.read_text() == "precious"
    (project / ".agentdiff").mkdir()
    (project / ".agentdiff" / "lock").symlink_to(outside)
    (project / "a.json").write_text("a0")
    with pytest.raises(BaselineWriteError, match="lock is a file of its own"):
        write(project, "w", a="a1")
    assert outside.read_text() == "precious" and state(project, "a") == ("a0",)
