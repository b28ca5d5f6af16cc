"""The SDK's dataset types (`agentplatform.types`: EvaluationDataset, EvalCase, AgentData,
ConversationTurn, AgentEvent, AgentConfig, ResponseCandidate, UserScenario), modelled without it.

Every field is optional, as in the SDK; camelCase keys are read too; unknown keys are refused
(`extra="forbid"`) except on an eval case, whose extra fields (custom metrics read them) are kept. A
`Content` is genai's (`core.formats.genai_types`), refused when it holds keys genai does not know.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic.alias_generators import to_camel

from agentdiff.core.formats.genai_types import Content


class SdkModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class AgentEvent(SdkModel):
    author: Optional[str] = None
    content: Optional[Content] = None
    event_time: Optional[datetime] = None  # ISO text or Unix seconds, as the SDK reads it
    state_delta: Optional[dict[str, Any]] = None
    active_tools: Optional[list[Any]] = None


class ConversationTurn(SdkModel):
    turn_index: Optional[int] = None
    turn_id: Optional[str] = None
    events: Optional[list[AgentEvent]] = None


class AgentConfig(SdkModel):
    agent_id: Optional[str] = None
    agent_type: Optional[str] = None
    description: Optional[str] = None
    instruction: Optional[str] = None
    tools: Optional[list[Any]] = None  # genai Tools, kept as written
    sub_agents: Optional[list[str]] = None


class AgentData(SdkModel):
    agents: Optional[dict[str, AgentConfig]] = None
    turns: Optional[list[ConversationTurn]] = None


class ResponseCandidate(SdkModel):
    """`{"response": Content}`: a bare Content where one is expected is refused, as the SDK refuses it."""

    response: Optional[Content] = None


class UserScenario(SdkModel):
    starting_prompt: Optional[str] = None
    conversation_plan: Optional[str] = None
    test_case_title: Optional[str] = None


class DatasetCase(SdkModel):
    """One `EvalCase`. Its extra fields are kept as written (`model_extra`)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True)

    prompt: Optional[Content] = None
    responses: Optional[list[ResponseCandidate]] = None
    reference: Optional[ResponseCandidate] = None
    system_instruction: Optional[Content] = None
    conversation_history: Optional[list[Any]] = None
    rubric_groups: Optional[dict[str, Any]] = None
    eval_case_id: Optional[str] = None
    intermediate_events: Optional[list[Any]] = None
    agent_info: Any = None
    agent_data: Optional[AgentData] = None
    user_scenario: Optional[UserScenario] = None
    interactions_data_source: Any = None

    @property
    def turns(self) -> list[ConversationTurn]:
        return list((self.agent_data.turns if self.agent_data else None) or [])

    def events(self) -> list[AgentEvent]:
        """Every event of every turn, in order."""
        return [event for turn in self.turns for event in (turn.events or [])]


class EvaluationDataset(SdkModel):
    eval_cases: Optional[list[DatasetCase]] = None
    bigquery_source: Any = None
    gcs_source: Any = None
    eval_dataset_df: Any = None
    candidate_name: Optional[str] = None

    @model_validator(mode="before")
    @classmethod
    def _top_level_keys_of_a_dataset(cls, data: Any) -> Any:
        """A dataset's own top-level keys beyond the SDK's (`eval_set_id`, `description`) are ignored, as
        `agents-cli eval generate` ignores them; inside its cases, unknown keys are still refused."""
        if isinstance(data, dict) and isinstance(data.get("eval_cases", data.get("evalCases")), list):
            known = {name for field, info in cls.model_fields.items() for name in (field, info.alias) if name}
            return {key: value for key, value in data.items() if key in known}
        return data
