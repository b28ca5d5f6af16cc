"""Conformance cases (`adk conformance`): `spec.yaml`, recordings and session files, per streaming mode.

Layout: `<root>/<category>/<name>/spec.yaml` beside `generated-recordings[-sse].yaml` and
`generated-session[-sse].yaml`. A spec with no recordings yet is a case in the "not recorded" state;
a recordings file without its session file (or the reverse) is an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional

from agentdiff.core.formats.genai_types import Content, FunctionCall, FunctionResponse
from agentdiff.core.formats.load_error import LoadError, validation_errors
from agentdiff.core.formats.source_file import (
    SourceFileError,
    SourceText,
    parse_source,
    read_source,
)
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic.alias_generators import to_camel

SPEC_FILE = "spec.yaml"
StreamingMode = Literal["none", "sse"]
STREAMING_MODES: tuple[StreamingMode, ...] = ("none", "sse")


def recordings_file(mode: StreamingMode) -> str:
    return "generated-recordings.yaml" if mode == "none" else "generated-recordings-sse.yaml"


def session_file(mode: StreamingMode) -> str:
    return "generated-session.yaml" if mode == "none" else "generated-session-sse.yaml"


class UserMessage(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    text: Optional[str] = None
    content: Optional[Content] = None
    state_delta: Optional[dict[str, Any]] = None


class TestSpec(BaseModel):
    """`spec.yaml`: what to send and to which agent. Unknown keys are refused, as in ADK."""

    __test__ = False  # not a pytest class
    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str
    agent: str
    initial_state: dict[str, Any] = {}
    user_messages: list[UserMessage] = []


class _Forbid(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LlmRecording(_Forbid):
    # Requests and responses are kept as plain JSON trees: the diff engine works on trees, and
    # LlmRequest/LlmResponse carry the whole genai config surface.
    llm_request: Optional[dict[str, Any]] = None
    llm_responses: Optional[list[dict[str, Any]]] = None

    @model_validator(mode="before")
    @classmethod
    def _one_response(cls, data: Any) -> Any:
        """ADK before 1.28 recorded one `llm_response` (the call's last); read it as a list of one."""
        if isinstance(data, dict) and "llm_response" in data and "llm_responses" not in data:
            data = {**data, "llm_responses": None if data["llm_response"] is None else [data["llm_response"]]}
            del data["llm_response"]
        return data


class ToolRecording(_Forbid):
    tool_call: Optional[FunctionCall] = None
    tool_response: Optional[FunctionResponse] = None


class Recording(_Forbid):
    user_message_index: int
    agent_name: str
    llm_recording: Optional[LlmRecording] = None
    tool_recording: Optional[ToolRecording] = None


class Recordings(_Forbid):
    recordings: list[Recording] = []


class Session(BaseModel):
    """A recorded ADK Session: id, app, user, state and events."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)

    id: str = ""
    app_name: str = ""
    user_id: str = ""
    state: dict[str, Any] = {}
    events: list[dict[str, Any]] = []
    last_update_time: float = 0.0


@dataclass(frozen=True)
class ModeBaseline:
    """The recordings and session of one streaming mode."""

    mode: StreamingMode
    recordings: Recordings
    session: Session
    recordings_source: SourceText
    session_source: SourceText


@dataclass(frozen=True)
class ConformanceCase:
    dir: Path
    display: str  # the case's folder, relative to the project
    category: str
    name: str
    spec: TestSpec
    spec_source: SourceText
    baselines: dict[str, ModeBaseline] = field(default_factory=dict)

    @property
    def recorded(self) -> bool:
        return bool(self.baselines)


def load_conformance_case(case_dir: Path, display: str) -> tuple[Optional[ConformanceCase], list[LoadError]]:
    """Load one case folder. Errors in one mode's files are reported; the spec still loads."""
    errors: list[LoadError] = []
    spec_display = f"{display}/{SPEC_FILE}"
    try:
        spec_source = read_source(case_dir / SPEC_FILE, spec_display)
        spec_data = parse_source(spec_source, "yaml")
    except SourceFileError as exc:
        return None, [exc.error]
    if spec_data is None:
        return None, [LoadError(file=spec_display, line=1, column=1, message="spec.yaml is empty")]
    try:
        spec = TestSpec.model_validate(spec_data)
    except ValidationError as exc:
        return None, validation_errors(spec_display, spec_source.text, spec_data, exc, "yaml")
    for index, message in enumerate(spec.user_messages):
        if message.text is None and message.content is None:
            errors.append(
                LoadError(file=spec_display, message="a user message needs `text` or `content`", path=f"user_messages[{index}]")
            )

    baselines: dict[str, ModeBaseline] = {}
    for mode in STREAMING_MODES:
        rec_path, ses_path = case_dir / recordings_file(mode), case_dir / session_file(mode)
        if not rec_path.exists() and not ses_path.exists():
            continue
        if not rec_path.exists() or not ses_path.exists():
            present, absent = (rec_path, ses_path) if rec_path.exists() else (ses_path, rec_path)
            errors.append(
                LoadError(file=f"{display}/{present.name}", message=f"{absent.name} is missing beside it (streaming mode {mode})")
            )
            continue
        baseline, mode_errors = _load_mode(case_dir, display, mode)
        errors.extend(mode_errors)
        if baseline is not None:
            baselines[mode] = baseline

    case = ConformanceCase(
        dir=case_dir,
        display=display,
        category=case_dir.parent.name,
        name=case_dir.name,
        spec=spec,
        spec_source=spec_source,
        baselines=baselines,
    )
    return case, errors


def _load_mode(case_dir: Path, display: str, mode: StreamingMode) -> tuple[Optional[ModeBaseline], list[LoadError]]:
    loaded: dict[str, Any] = {}
    errors: list[LoadError] = []
    for key, name, model in (
        ("recordings", recordings_file(mode), Recordings),
        ("session", session_file(mode), Session),
    ):
        file_display = f"{display}/{name}"
        try:
            source = read_source(case_dir / name, file_display)
            data = parse_source(source, "yaml")
        except SourceFileError as exc:
            errors.append(exc.error)
            continue
        if data is None:
            errors.append(LoadError(file=file_display, line=1, column=1, message=f"{name} is empty"))
            continue
        try:
            loaded[key] = (model.model_validate(data), source)
        except ValidationError as exc:
            errors.extend(validation_errors(file_display, source.text, data, exc, "yaml"))
    if errors:
        return None, errors
    recordings, rec_source = loaded["recordings"]
    session, ses_source = loaded["session"]
    return ModeBaseline(mode, recordings, session, rec_source, ses_source), []
