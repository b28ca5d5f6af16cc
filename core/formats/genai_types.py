"""The google-genai value types that ADK's files embed, modelled without importing google-genai.

Rules follow google-genai 2.34: both snake_case and camelCase keys are read, unknown keys are
rejected (`extra="forbid"`), and files are written in snake_case. Only the fields agentdiff reads
are typed closely; the rest are kept as plain JSON values so that nothing is lost on a round trip.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class GenaiModel(BaseModel):
    """Base of the genai mirrors: camelCase accepted on read, unknown keys refused."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class FunctionCall(GenaiModel):
    id: Optional[str] = None
    args: Optional[dict[str, Any]] = None
    name: Optional[str] = None
    partial_args: Optional[list[Any]] = None
    will_continue: Optional[bool] = None

    def adk_repr(self) -> str:
        """The text `str(FunctionCall)` gives in google-genai (ADK's CSV uses it)."""
        return (
            f"id={self.id!r} args={self.args!r} name={self.name!r} "
            f"partial_args={self.partial_args!r} will_continue={self.will_continue!r}"
        )


class FunctionResponse(GenaiModel):
    will_continue: Optional[bool] = None
    scheduling: Optional[str] = None
    parts: Optional[list[Any]] = None
    id: Optional[str] = None
    name: Optional[str] = None
    response: Optional[dict[str, Any]] = None


class Part(GenaiModel):
    """A genai Part: the 17 keys google-genai 2.34 knows, nothing else."""

    media_resolution: Any = None
    code_execution_result: Any = None
    executable_code: Any = None
    file_data: Any = None
    function_call: Optional[FunctionCall] = None
    function_response: Optional[FunctionResponse] = None
    inline_data: Any = None
    text: Optional[str] = None
    thought: Optional[bool] = None
    thought_signature: Any = None
    video_metadata: Any = None
    tool_call: Any = None
    tool_response: Any = None
    part_metadata: Any = None
    audio_transcription: Any = None
    media_processing: Any = None
    speech_metadata: Any = None


class Content(GenaiModel):
    parts: Optional[list[Part]] = None
    role: Optional[str] = None

    def text(self) -> str:
        """The parts' texts joined with newlines, thought parts included (ADK's rule)."""
        return content_text(self)


def content_text(content: Optional[Content]) -> str:
    """`"\\n".join(part.text ...)` over the text parts; "" for no content or no text."""
    if content is None or not content.parts:
        return ""
    return "\n".join(part.text for part in content.parts if part.text)


class UsageMetadata(BaseModel):
    """GenerateContentResponseUsageMetadata: the token counts the efficiency metrics read.

    Other keys of this large genai type are kept as they are (it grows with every release).
    """

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True
    )

    prompt_token_count: Optional[int] = None
    candidates_token_count: Optional[int] = None
    thoughts_token_count: Optional[int] = None
    tool_use_prompt_token_count: Optional[int] = None
    cached_content_token_count: Optional[int] = None
    total_token_count: Optional[int] = None
