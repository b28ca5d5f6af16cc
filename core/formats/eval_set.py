"""ADK 2.13's EvalSet schema, with ADK's key-casing and unknown-key rules.

* `EvalSet` itself reads snake_case keys only and ignores unknown top-level keys.
* Everything nested reads snake_case or camelCase and refuses unknown keys, except `EvalCase`
  and `SessionInput`, which keep them (and so do we, so a round trip loses nothing), and
  `InvocationEvent`, which drops them.
* `intermediate_data` is either the static `IntermediateData` (tool_uses, tool_responses,
  intermediate_responses; `{}` is this form) or the event form `InvocationEvents`.
"""

from __future__ import annotations

from typing import Annotated, Any, Optional, Union

from agentdiff.core.formats.genai_types import (
    Content,
    FunctionCall,
    FunctionResponse,
    Part,
    UsageMetadata,
)
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel


class EvalBaseModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class RubricContent(EvalBaseModel):
    text_property: Optional[str] = None


class Rubric(EvalBaseModel):
    rubric_id: str
    rubric_content: RubricContent
    description: Optional[str] = None
    type: Optional[str] = None


class IntermediateData(EvalBaseModel):
    """The static form: expected tool calls, their responses and intermediate texts."""

    # defaults made by a factory, not copied: pydantic deep-copies a mutable default for every case read
    tool_uses: list[FunctionCall] = Field(default_factory=list)
    tool_responses: list[FunctionResponse] = Field(default_factory=list)
    intermediate_responses: list[tuple[str, list[Part]]] = Field(default_factory=list)


class InvocationEvent(EvalBaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True
    )

    author: str
    content: Optional[Content] = None
    grounding_metadata: Any = None
    usage_metadata: Optional[UsageMetadata] = None
    model_version: Optional[str] = None


class InvocationEvents(EvalBaseModel):
    """The event form ADK writes for actual runs."""

    invocation_events: list[InvocationEvent] = Field(default_factory=list)


IntermediateDataType = Annotated[
    Union[IntermediateData, InvocationEvents], Field(union_mode="left_to_right")
]


_STATIC_KEYS = {
    "tool_uses", "toolUses", "tool_responses", "toolResponses", "intermediate_responses", "intermediateResponses"
}
_EVENT_KEYS = {"invocation_events", "invocationEvents"}


class Invocation(EvalBaseModel):
    """One turn: the user's message and what the agent did (or should do) with it."""

    invocation_id: str = ""
    user_content: Content
    final_response: Optional[Content] = None
    intermediate_data: Optional[IntermediateDataType] = None
    creation_timestamp: float = 0.0
    duration: Optional[float] = None
    model_duration: Optional[float] = None
    tool_duration: Optional[float] = None
    rubrics: Optional[list[Rubric]] = None
    app_details: Optional[dict[str, Any]] = None

    @field_validator("intermediate_data", mode="before")
    @classmethod
    def _one_shape(cls, value: Any) -> Any:
        if isinstance(value, dict):
            static = sorted(_STATIC_KEYS & value.keys())
            events = sorted(_EVENT_KEYS & value.keys())
            if static and events:
                raise ValueError(
                    f"intermediate_data mixes the static form ({', '.join(static)}) with the event form "
                    f"({', '.join(events)}); use one of them"
                )
        return value

    def tool_calls(self) -> list[FunctionCall]:
        """Every tool call of the turn: `tool_uses`, or every function_call part of every event
        (sub-agents and `transfer_to_agent` included)."""
        data = self.intermediate_data
        if isinstance(data, IntermediateData):
            return list(data.tool_uses)
        if isinstance(data, InvocationEvents):
            return [
                part.function_call
                for event in data.invocation_events
                if event.content and event.content.parts
                for part in event.content.parts
                if part.function_call
            ]
        return []

    def tool_responses(self) -> list[FunctionResponse]:
        data = self.intermediate_data
        if isinstance(data, IntermediateData):
            return list(data.tool_responses)
        if isinstance(data, InvocationEvents):
            return [
                part.function_response
                for event in data.invocation_events
                if event.content and event.content.parts
                for part in event.content.parts
                if part.function_response
            ]
        return []


class SessionInput(EvalBaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True
    )

    app_name: str
    user_id: str
    session_id: Optional[str] = None
    state: dict[str, Any] = Field(default_factory=dict)


class ConversationScenario(EvalBaseModel):
    starting_prompt: str
    conversation_plan: str
    user_persona: Any = None


class EvalCase(EvalBaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True
    )

    eval_id: str
    conversation: Optional[list[Invocation]] = None
    conversation_scenario: Optional[ConversationScenario] = None
    session_input: Optional[SessionInput] = None
    creation_timestamp: float = 0.0
    rubrics: Optional[list[Rubric]] = None
    final_session_state: Optional[dict[str, Any]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_of_conversation_or_scenario(self) -> "EvalCase":
        if (self.conversation is None) == (self.conversation_scenario is None):
            raise ValueError(
                "exactly one of `conversation` and `conversation_scenario` must be given"
            )
        return self


class EvalSet(BaseModel):
    """The file's top level: snake_case keys only; unknown keys are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    eval_set_id: str
    name: Optional[str] = None
    description: Optional[str] = None
    eval_cases: list[EvalCase]
    creation_timestamp: float = 0.0
