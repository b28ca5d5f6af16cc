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
    with pytest.raises(UndoBlocked, match=r"b\.json changed since it was written; undo would lose that change\. Drop that entry"):
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
    write(tmp_path, "good", a="2")
    assert state(tmp_path, "a") == ("2",) and [e.seq for e in journal_entries(tmp_path)] == [8]


def test_a_baseline_that_is_a_symlink_is_written_through_and_undone_through(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "real.json").write_text("1")
    (tmp_path / "a.json").symlink_to(shared / "real.json")
    write(tmp_path, "accept", a="2")
    assert (tmp_path / "a.json").is_symlink() and (shared / "real.json").read_text() == "2"
    undo_last(tmp_path)
    assert (tmp_path / "a.json").is_symlink() and (shared / "real.json").read_text() == "1"
