"""Baseline documents made from a run, in ADK's formats, plus the registration record beside them.

* Conformance: `generated-recordings[-sse].yaml` (every model call with its request and responses
  and every tool call with its response, in the order the requests were made) and
  `generated-session[-sse].yaml` (the final session), as ADK's RecordingsPlugin and `adk conformance
  record` write them, so ADK's own replay accepts them.
* EvalSet: the actual invocations as expected ones (`final_response` and the static
  `intermediate_data`: tool_uses, tool_responses, intermediate_responses).
* `agentdiff-record.json`: who recorded, when, the models, instruction and tool-source hashes, the
  digests of the files the agent read, and the agentdiff version.
"""

from __future__ import annotations

from contextvars import ContextVar

import getpass
import json
import time
import uuid
from pathlib import Path

import yaml
from typing import Any, Optional, Sequence

from agentdiff.core import __version__
from agentdiff.core.baselines.journal import FileWrite, sha256_of
from agentdiff.core.formats.adk_rules import rules_for
from agentdiff.core.formats.conformance import recordings_file, session_file
from agentdiff.core.formats.eval_set import Invocation, InvocationEvents
from agentdiff.core.formats.load_error import child_key
from agentdiff.core.formats.yaml_writer import dump_yaml
from agentdiff.core.worker.jobs import RunOutput
from agentdiff.core.formats.source_file import read_text_regular

REGISTRATION_FILE = "agentdiff-record.json"


class RecordError(Exception):
    """The run cannot become a baseline (it failed, or the file's shape cannot take it)."""


def recordings_document(out: RunOutput) -> dict[str, Any]:
    """The Recordings document of a run: model calls and completed tool calls, in request order, in
    the form the run's ADK version records (before 1.28: each call's last response only)."""
    listed = rules_for(out.adk_version).recorded_response_list
    entries: list[tuple[int, int, dict[str, Any]]] = []
    for exchange in out.exchanges:
        if not exchange.responses:
            continue  # as ADK: an incomplete model call is not recorded
        recording = {
            "user_message_index": exchange.turn,
            "agent_name": exchange.agent,
            "llm_recording": {"llm_request": exchange.request, "llm_responses": exchange.responses} if listed
            else {"llm_request": exchange.request, "llm_response": exchange.responses[-1]},
        }
        entries.append((exchange.turn, exchange.seq, recording))
    for tool in out.tools:
        if not tool.has_response:
            continue  # a tool that raised is not recorded (ADK does the same)
        call = {key: value for key, value in (("id", tool.id), ("args", tool.args), ("name", tool.name)) if value is not None}
        response = {key: value for key, value in (("id", tool.id), ("name", tool.name), ("response", tool.response)) if value is not None}
        recording = {
            "user_message_index": tool.turn,
            "agent_name": tool.agent,
            "tool_recording": {"tool_call": call, "tool_response": response},
        }
        entries.append((tool.turn, tool.seq, recording))
    entries.sort(key=lambda entry: (entry[0], entry[1]))
    return {"recordings": [recording for _, _, recording in entries]}


def session_document(out: RunOutput) -> dict[str, Any]:
    state = {k: v for k, v in out.state.items() if k not in ("_adk_recordings_config", "_adk_replay_config")}
    times = [event["timestamp"] for event in out.events if isinstance(event.get("timestamp"), (int, float))]
    document: dict[str, Any] = {"id": str(uuid.uuid4()), "app_name": out.app_name, "user_id": out.user_id}
    if state:
        document["state"] = state
    document["events"] = out.events
    if times:
        document["last_update_time"] = max(times)
    return document


def _digest(path: str) -> Optional[str]:
    digest = sha256_of(Path(path))
    return digest[:16] if digest else None


#: The coding agent (its MCP client's name) a baseline is written for, when not the person at the keyboard.
ASSISTANT: ContextVar[str] = ContextVar("agentdiff_assistant", default="")


def registration(out: RunOutput, agent: str, root: Path, mode: Optional[str] = None) -> dict[str, Any]:
    files = {}
    for path in out.files_read:
        try:
            shown = Path(path).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            shown = path
        files[shown] = _digest(path)
    record = {
        "recorded_by": getpass.getuser(),
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "agentdiff_version": __version__,
        "agent": agent,
        "models": out.agent_info.get("models", {}),
        "instruction_sha256": out.agent_info.get("instructions", {}),
        "tool_source_sha256": out.agent_info.get("tools", {}),
        "files_read_sha256": files,
    }
    if mode is not None:
        record["streaming_mode"] = mode
    if ASSISTANT.get():
        record["assistant"] = ASSISTANT.get()
    return record


def registration_write(path: Path, key: str, record: dict[str, Any], base: Optional[str] = None,
                       more: Optional[dict[str, dict[str, Any]]] = None) -> FileWrite:
    """The registration file with `key`'s record set (and each of `more`'s, in one pass: accepting a
    thousand cases of one file renders it once); `base` is its text as already planned (else the
    file's own), so several records of one file accumulate."""
    try:
        before = sha256_of(path)
        text = base if base is not None else (read_text_regular(path) if path.exists() else None)
    except OSError as exc:
        raise RecordError(f"{path.name} cannot be read ({exc.strerror or exc}); nothing was written") from exc
    existing: dict[str, Any] = {}
    if text is not None and text.strip():
        # never written over when it does not read: it holds every other case's record and sign-off
        try:
            existing = json.loads(text)
        except (ValueError, RecursionError) as exc:
            where = f" (line {exc.lineno}: {exc.msg})" if isinstance(exc, json.JSONDecodeError) else ""
            raise RecordError(f"{path.name} is not valid JSON{where} — merge-conflict markers, or cut short? It holds the other cases' "
                              "registrations and sign-offs, so it is not written over: fix it (or remove it) first; nothing was written") from None
        if not isinstance(existing, dict):
            raise RecordError(f"{path.name} is not a JSON object of registrations; it is not written over: fix it first; nothing was written")
    existing[key] = record
    existing.update(more or {})
    return FileWrite(path, json.dumps(existing, indent=2, ensure_ascii=False) + "\n", before)


def static_intermediate(invocation: Invocation) -> dict[str, Any]:
    data = invocation.intermediate_data
    tool_uses, tool_responses, intermediate = [], [], []
    if isinstance(data, InvocationEvents):
        for event in data.invocation_events:
            parts = (event.content.parts or []) if event.content else []
            for part in parts:
                if part.function_call:  # ids are per run (ADK ignores them when it compares)
                    tool_uses.append(part.function_call.model_dump(mode="json", exclude_none=True, exclude={"id"}))
                elif part.function_response:
                    tool_responses.append(part.function_response.model_dump(mode="json", exclude_none=True, exclude={"id"}))
            texts = [p for p in parts if p.text and not p.thought]
            if texts:
                intermediate.append([event.author, [p.model_dump(mode="json", exclude_none=True) for p in texts]])
    return {"tool_uses": tool_uses, "tool_responses": tool_responses, "intermediate_responses": intermediate}


def record_into(data: Any, case_index: int, actual: Sequence[Invocation]) -> None:
    """Case `case_index` of the EvalSet document `data` (`data["eval_cases"][case_index]`) expecting `actual`."""
    case = data["eval_cases"][case_index]
    conversation = case[child_key(case, "conversation") or "conversation"]
    if len(actual) != len(conversation):
        raise RecordError(f"the run answered {len(actual)} of {len(conversation)} turns; nothing was recorded")
    for turn, invocation in zip(conversation, actual, strict=True):
        final_key = child_key(turn, "final_response") or "final_response"
        if invocation.final_response is not None:
            turn[final_key] = invocation.final_response.model_dump(mode="json", exclude_none=True)
        else:
            turn.pop(final_key, None)
        turn[child_key(turn, "intermediate_data") or "intermediate_data"] = static_intermediate(invocation)


#: Fields a run sets anew every time and no comparison reads: ids and clock times.
VOLATILE_KEYS = frozenset({"id", "invocation_id", "timestamp", "last_update_time"})


def keep_volatile(new: Any, old: Any, mapping: Optional[dict[Any, Any]] = None) -> Any:
    """`new` with the ids and times of `old` where both have them at the same place (the same event,
    the same call), and every other use of a replaced id (a function response, a recorded request)
    following it: a re-recording whose compared content is unchanged rewrites nothing. `mapping`
    (new id → old id) is shared across the documents of one recording, and filled in."""
    mapping = {} if mapping is None else mapping

    def walk(a: Any, b: Any) -> Any:
        if isinstance(a, dict) and isinstance(b, dict):
            out = {}
            for key, value in a.items():
                if key in VOLATILE_KEYS and key in b and not isinstance(value, (dict, list)) and not isinstance(b[key], (dict, list)):
                    if value != b[key] and isinstance(value, str):
                        mapping[value] = b[key]
                    out[key] = b[key]
                else:
                    out[key] = walk(value, b[key]) if key in b else value
            return out
        if isinstance(a, list) and isinstance(b, list):
            return [walk(x, y) for x, y in zip(a, b)] + a[len(b):]
        return a

    def follow(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: follow(v) for k, v in value.items()}
        if isinstance(value, list):
            return [follow(v) for v in value]
        return mapping.get(value, value) if isinstance(value, str) else value

    return follow(walk(new, old))


def conformance_writes(case_dir: Path, mode: str, out: RunOutput, agent: str, root: Path) -> list[FileWrite]:
    """The recordings, session and registration of a conformance case in `mode`, keeping the ids and
    times of the files there now where the run did the same."""
    rec, ses = case_dir / recordings_file(mode), case_dir / session_file(mode)

    def old(path: Path) -> Any:
        try:
            return yaml.safe_load(read_text_regular(path)) if path.exists() else None
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            return None

    ids: dict[Any, Any] = {}
    session = keep_volatile(session_document(out), old(ses), ids)
    recordings = keep_volatile(recordings_document(out), old(rec), ids)
    return [
        FileWrite(rec, dump_yaml(recordings), sha256_of(rec)),
        FileWrite(ses, dump_yaml(session), sha256_of(ses)),
        registration_write(case_dir / REGISTRATION_FILE, mode, registration(out, agent, root, mode)),
    ]
