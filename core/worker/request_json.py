"""An LLM request as the JSON a run keeps (`Exchange.request`), recorded and compared in replay.

pydantic is imported here only inside functions, from the project's own environment: this module runs in
workers."""

from __future__ import annotations

from typing import Any

REQUEST_EXCLUDE = {"config": {"http_options"}}  # how to send (retries, headers), not what is asked


def dumped_request(llm_request: Any) -> dict[str, Any]:
    """An LLM request as JSON. A config holding a class (an agent's `output_schema` becomes the request's
    `response_schema`) is no JSON for pydantic: such a value is written as its JSON schema (a model
    class's own, titled), or its name."""
    try:
        return llm_request.model_dump(mode="json", exclude_none=True, exclude_defaults=True, exclude=REQUEST_EXCLUDE)
    except Exception:  # PydanticSerializationError: "Unable to serialize unknown type: <class ...ModelMetaclass>"
        from pydantic_core import to_jsonable_python

        raw = llm_request.model_dump(mode="python", exclude_none=True, exclude_defaults=True, exclude=REQUEST_EXCLUDE)
        return to_jsonable_python(raw, fallback=_jsonable_schema, bytes_mode="base64")


def _jsonable_schema(value: Any) -> Any:
    schema = getattr(value, "model_json_schema", None)
    if isinstance(value, type) and callable(schema):
        return schema()
    return getattr(value, "__name__", None) or repr(value)
