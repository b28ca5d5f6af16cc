"""Reading a source file and parsing it as JSON or YAML, with failures returned as LoadErrors."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional

import yaml

from .load_error import LoadError, line_col

Kind = Literal["json", "yaml"]


@dataclass(frozen=True)
class SourceText:
    """A file's text as read, with the digest that later writes check against."""

    path: Path
    display: str
    text: str
    sha256: str


class SourceFileError(Exception):
    """Raised inside loaders to carry a LoadError out of a parse step."""

    def __init__(self, error: LoadError):
        super().__init__(str(error))
        self.error = error


def display_path(path: Path, root: Optional[Path] = None) -> str:
    """How a path is shown: relative to the project root when it lies inside it, POSIX style."""
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return path.as_posix()


def read_source(path: Path, display: Optional[str] = None) -> SourceText:
    display = display or str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SourceFileError(LoadError(file=display, message=f"cannot read file: {exc.strerror or exc}"))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = line_col(raw[: exc.start].decode("utf-8", "replace"), exc.start)
        raise SourceFileError(
            LoadError(file=display, line=line, column=column, message=f"not valid UTF-8 ({exc.reason})")
        )
    return SourceText(path=path, display=display, text=text, sha256=hashlib.sha256(raw).hexdigest())


def parse_source(source: SourceText, kind: Kind) -> Any:
    if kind == "json":
        try:
            return json.loads(source.text)
        except json.JSONDecodeError as exc:
            raise SourceFileError(
                LoadError(file=source.display, line=exc.lineno, column=exc.colno, message=f"invalid JSON: {exc.msg}")
            )
        except RecursionError:
            raise SourceFileError(LoadError(file=source.display, message="invalid JSON: nested too deeply"))
    try:
        return yaml.safe_load(source.text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "cannot parse"
        raise SourceFileError(
            LoadError(
                file=source.display,
                line=mark.line + 1 if mark else None,
                column=mark.column + 1 if mark else None,
                message=f"invalid YAML: {problem}",
            )
        )
    except (yaml.YAMLError, RecursionError) as exc:
        raise SourceFileError(LoadError(file=source.display, message=f"invalid YAML: {exc}"))
