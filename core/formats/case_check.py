"""Whether a parsed eval case validates, checked without building its model.

Reading a big eval set validates every case once, to know the file loads, and lets the models go (a
case's model is built again when it is asked for). Building them was most of that time: a one-turn
case is seven models, each `Part` seventeen fields. `check_case` validates the same value against a
twin of `EvalCase` made of TypedDicts: the models' own fields, types, aliases, defaults, unknown-key
rules and validators, read off the models, so an edit to a model is an edit to its twin; it returns
the validated value as plain dicts, in about two thirds of the time. What the twin does not mirror (a
configuration beyond aliases and unknown keys, a validator but a field's before one or a model's
after one) it refuses to be built for, and the models validate then. `tests/test_case_check.py`
checks that it accepts and refuses what `EvalCase` does, over mutations of every field.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Annotated, Any, Optional, Union

from agentdiff.core.formats.eval_set import EvalCase
from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
)
from typing_extensions import NotRequired, Required, TypedDict


@functools.lru_cache(maxsize=None)
def _twin(model: type[BaseModel]) -> Any:
    """`model` as a TypedDict that validates what the model validates."""
    config = model.model_config
    unmirrored = set(config) - _MIRRORED
    if unmirrored:
        raise TypeError(f"{model.__name__}: its configuration's {', '.join(sorted(unmirrored))} has no twin yet")
    by_name = config.get("populate_by_name") or config.get("validate_by_name")
    decorators = model.__pydantic_decorators__
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        extras: list[Any] = list(info.metadata)
        alias = info.validation_alias or info.alias
        if alias and alias != name:  # read under its alias, and under its name when the model populates by name
            extras.append(Field(validation_alias=AliasChoices(alias, name) if by_name else alias))
        for validator in decorators.field_validators.values():
            applies = name in validator.info.fields or "*" in validator.info.fields
            if applies and validator.info.mode == "before":
                extras.append(BeforeValidator(validator.func))
            elif applies:
                raise TypeError(f"{model.__name__}.{name}: a {validator.info.mode} field validator has no twin yet")
        kind = _twin_type(info.annotation)
        annotated = Annotated[(kind, *extras)] if extras else kind  # type: ignore[valid-type]
        fields[name] = Required[annotated] if info.is_required() else NotRequired[annotated]
    twin = TypedDict(f"{model.__name__}Check", fields, total=False)  # type: ignore[operator]
    twin.__pydantic_config__ = ConfigDict(extra=config.get("extra") or "ignore")  # type: ignore[attr-defined]
    after = [d for d in decorators.model_validators.values() if d.info.mode == "after"]
    if len(after) != len(decorators.model_validators):
        raise TypeError(f"{model.__name__}: a model validator that is not an after validator has no twin yet")
    if not after:
        return twin
    defaults = {name: info.get_default(call_default_factory=True) for name, info in model.model_fields.items() if not info.is_required()}

    def run_after(value: dict[str, Any]) -> dict[str, Any]:
        seen = _Fields(value, defaults)
        for validator in after:
            validator.func(seen)
        return value

    return Annotated[twin, AfterValidator(run_after)]


class _Fields:
    """A checked value read the way a model's validator reads the model: a field not given is its default."""

    __slots__ = ("_value", "_defaults")

    def __init__(self, value: dict[str, Any], defaults: dict[str, Any]) -> None:
        self._value, self._defaults = value, defaults

    def __getattr__(self, name: str) -> Any:
        value = self._value.get(name, _MISSING)
        return self._defaults[name] if value is _MISSING else value


_MISSING = object()


def _twin_type(kind: Any) -> Any:
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return _twin(kind)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is Annotated:
        return Annotated[(_twin_type(args[0]), *kind.__metadata__)]  # type: ignore[valid-type]
    if origin in (Union, types.UnionType):
        return Union[tuple(_twin_type(a) for a in args)]  # type: ignore[valid-type]
    if origin in (list, tuple, dict):
        return origin[tuple(_twin_type(a) for a in args)] if args else origin
    return kind


#: the configuration the twin mirrors (`frozen` changes nothing a validation decides)
_MIRRORED = {"alias_generator", "populate_by_name", "validate_by_name", "extra", "frozen"}


@functools.lru_cache(maxsize=None)
def _adapter() -> Optional[TypeAdapter]:
    try:
        return TypeAdapter(_twin(EvalCase))
    except TypeError:  # something the twin does not mirror: the model validates
        return None


def check_case(value: Any) -> dict[str, Any]:
    """`value` validated as `EvalCase` validates it, as dicts of the fields given (no defaults filled
    in; the model's fields when there is no twin); ValidationError (or ValueError) when the model
    would refuse it."""
    adapter = _adapter()
    if adapter is None:
        case = EvalCase.model_validate(value)
        session = case.session_input
        return {"eval_id": case.eval_id, "conversation": case.conversation, "session_input": {"app_name": session.app_name} if session else None}
    return adapter.validate_python(value)


def case_facts(checked: dict[str, Any]) -> tuple[str, Optional[int], Optional[str]]:
    """A checked case's eval_id, turn count (None: a scenario) and `session_input.app_name`."""
    conversation = checked.get("conversation")
    session = checked.get("session_input")
    return checked["eval_id"], len(conversation) if conversation is not None else None, session["app_name"] if session else None
