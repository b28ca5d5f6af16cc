"""What reading a big eval set file found is kept by the file's digest: the same bytes load again without
validating a case, as they loaded the first time; other bytes, other rules or a broken entry are
read as if nothing were kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentdiff.core.formats import eval_cases, read_cache
from agentdiff.core.formats.eval_set_files import load_eval_set
from agentdiff.core.formats.source_file import MAX_DEPTH

CASES = read_cache.MIN_CASES


def _suite(count: int = CASES, text: str = "hi", app: bool = True) -> str:
    rows = [{"eval_id": f"c{i}", "conversation": [{"user_content": {"role": "user", "parts": [{"text": f"{text} {i}"}]}}],
             **({"session_input": {"app_name": "weather", "user_id": "u"}} if app and i % 2 else {})} for i in range(count)]
    rows.append({"eval_id": "plan", "conversation_scenario": {"starting_prompt": "hi", "conversation_plan": "ask"}})
    return json.dumps({"eval_set_id": "s", "description": "d", "eval_cases": rows}, indent=1)


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("AGENTDIFF_CACHE_DIR", str(folder))
    monkeypatch.delenv("AGENTDIFF_NO_CACHE", raising=False)
    return folder / "eval-sets"


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.json")) if cache.exists() else []


def _no_reading(monkeypatch) -> None:
    """Validating a case again would fail the test: what loads came from the cache."""
    def refuse(text):
        raise AssertionError("the file was read again")
    monkeypatch.setattr("agentdiff.core.formats.eval_set_files.read_compact", refuse)


def test_the_same_bytes_load_from_the_cache_as_they_loaded_the_first_time(tmp_path, cache, monkeypatch):
    path = tmp_path / "big.evalset.json"
    path.write_text(_suite())
    first, errors = load_eval_set(path, path.name)
    assert errors == [] and len(_entries(cache)) == 1
    _no_reading(monkeypatch)
    again, errors = load_eval_set(path, path.name)
    assert errors == []
    assert again.cases == first.cases and again.cases.turns == first.cases.turns and again.cases.app_names == first.cases.app_names
    assert again.cases.turns[-1] is None, "the scenario's turns are None, kept as such"
    assert again.header == first.header and again.raw == first.raw == json.loads(path.read_text())
    assert again.cases[7] == first.cases[7] and again.cases.text_of(7) == first.cases.text_of(7)


def test_an_edited_file_is_read_again_for_its_own_errors(tmp_path, cache):
    path = tmp_path / "big.evalset.json"
    path.write_text(_suite())
    load_eval_set(path, path.name)
    path.write_text(_suite().replace('"eval_id": "c3"', '"eval_id": "c2"'))  # now a duplicate
    loaded, errors = load_eval_set(path, path.name)
    assert loaded is None and [e.message for e in errors] == ["duplicate eval_id 'c2' in the eval set"]
    path.write_text(_suite().replace('"conversation_plan": "ask"', '"conversation_plan": 3'))
    loaded, errors = load_eval_set(path, path.name)
    assert loaded is None and errors and errors[0].line is not None, "a case that does not validate, with its line"


def test_files_with_errors_and_small_files_are_never_kept(tmp_path, cache):
    small = tmp_path / "small.evalset.json"
    small.write_text(_suite(count=3))
    broken = tmp_path / "broken.evalset.json"
    broken.write_text(_suite().replace('"eval_id": "c3"', '"eval_id": 3'))
    twice = tmp_path / "twice.evalset.json"
    twice.write_text(_suite().replace('"eval_id": "c3"', '"eval_id": "c2"'))
    header = tmp_path / "header.evalset.json"
    header.write_text(_suite().replace('"eval_set_id": "s"', '"eval_set_id": 7'))
    assert load_eval_set(small, small.name)[1] == []
    assert load_eval_set(broken, broken.name)[1] != []
    assert [e.message for e in load_eval_set(twice, twice.name)[1]] == ["duplicate eval_id 'c2' in the eval set"]
    assert load_eval_set(header, header.name)[1] != []
    assert _entries(cache) == []


@pytest.mark.parametrize("spoil", ["garbage", "another file's record", "lengths that differ", "spans past the text"])
def test_a_spoiled_entry_is_read_as_if_none_were_kept(tmp_path, cache, spoil):
    path = tmp_path / "big.evalset.json"
    path.write_text(_suite())
    expected, _ = load_eval_set(path, path.name)
    [entry] = _entries(cache)
    record = json.loads(entry.read_text())
    if spoil == "garbage":
        entry.write_bytes(b"\x00{not json")
    elif spoil == "another file's record":
        entry.write_text(json.dumps({"header": [], "cases": record["cases"]}))
    elif spoil == "lengths that differ":
        record["cases"]["turns"].pop()
        entry.write_text(json.dumps(record))
    else:
        record["cases"]["bounds"][-1] = 10**9
        entry.write_text(json.dumps(record))
    loaded, errors = load_eval_set(path, path.name)
    assert errors == [] and loaded.cases == expected.cases and loaded.header == expected.header
    assert loaded.cases.turns == expected.cases.turns and loaded.cases.app_names == expected.cases.app_names


def test_other_rules_never_meet_an_entry_made_under_these(tmp_path, cache, monkeypatch):
    path = tmp_path / "big.evalset.json"
    path.write_text(_suite())
    load_eval_set(path, path.name)
    monkeypatch.setattr(read_cache, "_fingerprint", "rules of another agentdiff")
    assert read_cache.recall(path.read_text(), load_eval_set(path, path.name)[0].source.sha256) is not None, "kept again under these"
    assert len(_entries(cache)) == 2


def test_turned_off_nothing_is_kept(tmp_path, cache, monkeypatch):
    monkeypatch.setenv("AGENTDIFF_NO_CACHE", "1")
    path = tmp_path / "big.evalset.json"
    path.write_text(_suite())
    assert load_eval_set(path, path.name)[1] == []
    assert _entries(cache) == [] and not cache.exists()


def test_the_cache_keeps_a_bounded_number_of_entries(tmp_path, cache, monkeypatch):
    monkeypatch.setattr(read_cache, "MAX_ENTRIES", 4)
    for n in range(7):
        path = tmp_path / f"s{n}.evalset.json"
        path.write_text(_suite(text=f"set {n}"))
        load_eval_set(path, path.name)
    assert 3 <= len(_entries(cache)) <= 4


def test_an_unwritable_cache_is_no_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("AGENTDIFF_CACHE_DIR", str(blocker))  # a file where the folder would be
    path = tmp_path / "big.evalset.json"
    path.write_text(_suite())
    loaded, errors = load_eval_set(path, path.name)
    assert errors == [] and len(loaded.cases) == CASES + 1


def test_a_case_of_many_brackets_but_shallow_still_reads_as_spans(tmp_path, cache):
    """The depth check counts brackets first: past the limit it walks the value, so many shallow
    brackets are no error, and only real depth is."""
    state = {"flat": [[] for _ in range(MAX_DEPTH * 2)]}
    text = json.dumps({"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [], "final_session_state": state}]})
    path = tmp_path / "x.evalset.json"
    path.write_text(text)
    loaded, errors = load_eval_set(path, path.name)
    assert errors == [] and loaded.cases._text is not None
    assert eval_cases.read_compact(text.replace('"flat": [', '"flat": ' + "[" * MAX_DEPTH + "[").replace("]}}]", "]" * MAX_DEPTH + "]}}]")) is None


def test_the_cache_lives_in_the_users_cache_folder_and_never_in_the_project(monkeypatch, tmp_path):
    monkeypatch.delenv("AGENTDIFF_CACHE_DIR", raising=False)
    monkeypatch.delenv("AGENTDIFF_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert read_cache.cache_dir() == tmp_path / "xdg" / "agentdiff" / "eval-sets"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/folder")  # ignored, as the XDG rules say
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert read_cache.cache_dir() == tmp_path / "home" / ".cache" / "agentdiff" / "eval-sets"
    monkeypatch.setenv("HOME", "relative")  # no home of its own: no cache at all, never one in the project
    assert read_cache.cache_dir() is None
