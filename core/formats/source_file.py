"""Reading a source file and parsing it as JSON or YAML, with failures returned as LoadErrors."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional

import yaml
from agentdiff.core.formats.load_error import LoadError, line_col

Kind = Literal["json", "yaml"]

#: Eval sets, recordings and sessions larger than this are refused rather than parsed.
MAX_FILE_BYTES = 64_000_000
#: Values a YAML document may expand to once its aliases are followed (an alias bomb is refused).
MAX_YAML_NODES = 2_000_000


class YamlTooLarge(Exception):
    pass


def load_yaml_bounded(text: str) -> Any:
    """`yaml.safe_load`, refusing documents whose aliases expand past MAX_YAML_NODES values."""
    loader = SAFE_LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        sizes: dict[int, int] = {}

        def expanded(n: yaml.Node) -> int:
            key = id(n)
            if key in sizes:
                return sizes[key]
            sizes[key] = 1  # a cycle counts once; the constructor handles recursion itself
            total = 1
            if isinstance(n, yaml.SequenceNode):
                total += sum(expanded(child) for child in n.value)
            elif isinstance(n, yaml.MappingNode):
                total += sum(expanded(k) + expanded(v) for k, v in n.value)
            sizes[key] = total
            if total > MAX_YAML_NODES:
                raise YamlTooLarge(f"its aliases expand to more than {MAX_YAML_NODES:,} values (an alias bomb?)")
            return total

        expanded(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()

#: PyYAML's safe loader, in its libyaml (C) build when installed: the same rules, several times faster.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SourceFileError(
                LoadError(file=display, message=f"file is too large to load ({size / 1e6:.0f} MB; the limit is {MAX_FILE_BYTES // 1_000_000} MB)")
            )
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
        return load_yaml_bounded(source.text)
    except YamlTooLarge as exc:
        raise SourceFileError(LoadError(file=source.display, line=1, column=1, message=f"invalid YAML: {exc}"))
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
