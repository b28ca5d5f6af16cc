"""Load errors as data: file, line, column, the JSON/YAML path of the problem, and a message.

A loader never raises for bad input; it returns `LoadError`s, and one bad file never hides the
good ones. Positions of schema violations are found lazily (only once a file has failed), by
mapping the pydantic error location back onto the source text.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable, Literal, Optional, Sequence

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel, to_snake

Loc = Sequence[str | int]

#: Past this size a file's errors are reported without a line (mapping would be slow).
MAX_LOCATE_BYTES = 20_000_000
MAX_ERRORS_PER_FILE = 20


class LoadError(BaseModel):
    model_config = ConfigDict(frozen=True)

    file: str
    message: str
    line: Optional[int] = None  # 1-based
    column: Optional[int] = None  # 1-based
    path: Optional[str] = None  # e.g. eval_cases[0].conversation[1].user_content

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        at = f" at {self.path}" if self.path else ""
        return f"{where}: {self.message}{at}"


def format_path(loc: Iterable[str | int]) -> str:
    """`("eval_cases", 0, "conversation")` → `eval_cases[0].conversation`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def child_key(node: dict, key: str) -> Optional[str]:
    for candidate in (key, to_snake(key), to_camel(key)):
        if candidate in node:
            return candidate
    return None


def resolve_loc(data: Any, loc: Loc) -> tuple[list[str | int], Optional[str]]:
    """Walk `loc` through `data`: the part that exists, and the first key that does not.

    Pydantic locations carry alias spellings and union-member names that are not in the data;
    those are skipped, so the path names what the user actually wrote.
    """
    found: list[str | int] = []
    node = data
    missing: Optional[str] = None
    for part in loc:
        if isinstance(node, dict) and isinstance(part, str):
            key = child_key(node, part)
            if key is not None:
                found.append(key)
                node = node[key]
                continue
            missing = part
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            found.append(part)
            node = node[part]
            continue
    return found, missing


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def locate(text: str, path: list[str | int], kind: Literal["json", "yaml"]) -> Optional[tuple[int, int]]:
    """1-based (line, column) of the value at `path` in a JSON or YAML text, if it can be found."""
    if len(text) > MAX_LOCATE_BYTES:
        return None
    try:
        if kind == "json":
            return _locate_json(text, path)
        return _locate_yaml(text, path)
    except Exception:  # a position is a courtesy; never fail an error report over it
        return None


@lru_cache(maxsize=2)
def _json_source_map(text: str) -> dict:
    from json_source_map import calculate

    return calculate(text)


@lru_cache(maxsize=2)
def _yaml_tree(text: str) -> Any:
    import yaml

    return yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _locate_json(text: str, path: list[str | int]) -> Optional[tuple[int, int]]:
    pointer = "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)
    entry = _json_source_map(text).get(pointer)
    if entry is None:
        return None
    start = entry.key_start or entry.value_start
    return start.line + 1, start.column + 1


def _locate_yaml(text: str, path: list[str | int]) -> Optional[tuple[int, int]]:
    import yaml

    node = _yaml_tree(text)
    mark = node.start_mark if node is not None else None
    for part in path:
        if node is None:
            return None
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if key_node.value == part:
                    mark = key_node.start_mark
                    node = value_node
                    break
            else:
                return None
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            mark = node.start_mark
        else:
            return None
    return (mark.line + 1, mark.column + 1) if mark is not None else None


def _message(error: dict[str, Any], missing: Optional[str]) -> str:
    kind = error.get("type")
    if kind == "missing":
        return f"missing required key '{to_snake(str(missing or error['loc'][-1]))}'"
    if kind == "extra_forbidden":
        return f"unknown key '{error['loc'][-1]}' (not allowed here)"
    message = str(error.get("msg", "invalid value"))
    return message.removeprefix("Value error, ")


def validation_errors(
    file: str,
    text: str,
    data: Any,
    exc: ValidationError,
    kind: Literal["json", "yaml"],
    prefix: Loc = (),
) -> list[LoadError]:
    """Turn a pydantic ValidationError into located LoadErrors (deduplicated, capped)."""
    # Union members each report their own error at the same place; keep the deepest (most specific).
    best: dict[str, tuple[int, dict[str, Any], list[str | int], Optional[str]]] = {}
    for error in exc.errors(include_url=False):
        found, missing = resolve_loc(data, list(prefix) + list(error["loc"]))
        if error.get("type") == "extra_forbidden" and found:
            error = {**error, "loc": (*error["loc"][:-1], found[-1])}
        path = format_path(found)
        depth = len(error["loc"])
        if path not in best or depth > best[path][0]:
            best[path] = (depth, error, found, missing)
    errors: list[LoadError] = []
    for path, (_, error, found, missing) in list(best.items())[:MAX_ERRORS_PER_FILE]:
        position = locate(text, found, kind) if found else (1, 1)
        errors.append(
            LoadError(
                file=file,
                message=_message(error, missing),
                line=position[0] if position else None,
                column=position[1] if position else None,
                path=path or None,
            )
        )
    return errors
