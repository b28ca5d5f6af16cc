"""Accepting a fixture run, and re-recording one, into the fixture file: written as `adk test --rebuild`
writes it (the session's events with deterministic ids, `thoughtSignature`s and empty `actions` left
out; the file's other keys kept, `lastUpdateTime` dropped; JSON indented 2, keys sorted, UTF-8, one
final newline), so that ADK's own `adk test` passes on what agentdiff wrote. A fixture is accepted
whole. A registration (who accepted it, when, the agent's models and the files it read) goes beside the
agent's folder's other files, never into `tests/`, where `adk test` would read it as a fixture."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.baselines.documents import REGISTRATION_FILE, RecordError, registration, registration_write
from agentdiff.core.baselines.journal import FileWrite, JournalEntry, write_baseline
from agentdiff.core.formats.adk_test.normalize import renumbered
from agentdiff.core.project.family import AcceptBatch
from agentdiff.core.scoring.results import CaseStatus
from agentdiff.core.worker.jobs import RunOutput

from .cases import FixtureCaseRef


def registration_path(ref: FixtureCaseRef) -> Path:
    return ref.agent_dir / REGISTRATION_FILE


def written_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events as `--rebuild` writes them."""
    out = []
    for event in copy.deepcopy(events):
        content = event.get("content")
        for part in (content.get("parts") or []) if isinstance(content, dict) else []:
            if isinstance(part, dict):
                part.pop("thoughtSignature", None)
        actions = event.get("actions")
        if isinstance(actions, dict):
            kept = {k: v for k, v in actions.items() if not (isinstance(v, dict) and not v)}
            if kept:
                event["actions"] = kept
            else:
                del event["actions"]
        out.append(event)
    return out


def fixture_text(ref: FixtureCaseRef, events: list[dict[str, Any]]) -> str:
    data = dict(ref.fixture.data)
    data["events"] = written_events(events)
    data.pop("lastUpdateTime", None)
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def run_events(ref: FixtureCaseRef, out: RunOutput, mode: str) -> list[dict[str, Any]]:
    """The whole fixture a run makes, numbered as `--rebuild` numbers it: a re-record's own events
    (which begin with the user's first message); a replay's after the fixture's first user event, each
    user event sent again in the invocation it starts, and a `finishReason` the mock model cannot give
    kept from the fixture's event in the same place."""
    raw = out._fixture_events if out._fixture_events is not None else out.events
    if mode != "replay":
        return renumbered(raw)
    first = copy.deepcopy(ref.fixture.events[:1])
    events = renumbered([*first, *raw])
    for index, event in enumerate(events[1:], 1):  # a user event sent again belongs to the invocation it starts
        if event.get("author") == "user" and not event.get("invocationId") and index + 1 < len(events):
            event["invocationId"] = events[index + 1].get("invocationId", "")
    numbered: dict[str, str] = {}
    if first and first[0].get("invocationId") and len(events) > 1 and events[1].get("invocationId"):
        numbered[events[1]["invocationId"]] = first[0]["invocationId"]  # the first turn is the first message's invocation
    for event in events[1:]:  # the invocations counted as `--rebuild` counts them
        if event.get("invocationId"):
            event["invocationId"] = numbered.setdefault(event["invocationId"], f"i-{len(numbered) + 1}")
    old = ref.fixture.events
    for index, event in enumerate(events):
        if index < len(old) and old[index].get("author") == event.get("author") and "finishReason" in old[index]:
            event.setdefault("finishReason", old[index]["finishReason"])
    if first:
        events[0] = first[0]  # the fixture's own first event, as written
    return events


class FixtureAccepts(AcceptBatch):
    def __init__(self, root: Path) -> None:
        self.root = root
        self.planned: list[FileWrite] = []
        self.records: dict[Path, dict[str, Any]] = {}

    def add(self, request: Any, out: RunOutput) -> bool:
        run = request.run
        ref: FixtureCaseRef = run.ref
        if run.result.status is CaseStatus.PASSED and not ref.fixture.xfail:
            return False  # the fixture already says what the run did
        mode = run.modes[run.shown] if run.modes else run.result.mode
        text = fixture_text(ref, run_events(ref, out, mode))
        if text == ref.fixture.source.text:
            return False
        self.planned.append(FileWrite(ref.fixture.source.path, text, ref.fixture.source.sha256))
        self.records.setdefault(registration_path(ref), {})[ref.name] = registration(out, run.agent.label if run.agent else "", self.root)
        return True

    def writes(self, planned: list) -> list[FileWrite]:
        writes = list(self.planned)
        for path, records in self.records.items():
            (first, record), *rest = records.items()
            base: Optional[str] = next((w.text for w in [*planned, *writes] if w.path == path), None)
            writes.append(registration_write(path, first, record, base=base, more=dict(rest)))
        return writes


def record_fixture(ref: FixtureCaseRef, out: RunOutput, root: Path, agent: str = "") -> JournalEntry:
    """A live run of the fixture's user messages written as the fixture (`--rebuild`, reviewable)."""
    if out.error is not None:
        raise RecordError(f"the run failed, nothing was recorded: {out.error}")
    text = fixture_text(ref, run_events(ref, out, "live"))
    record = registration(out, agent, root)
    writes = [FileWrite(ref.fixture.source.path, text, ref.fixture.source.sha256),
              registration_write(registration_path(ref), ref.name, record)]
    return write_baseline(writes, root, f"record {ref.id}")
