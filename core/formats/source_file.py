"""Reading a source file and parsing it as JSON or YAML, with failures returned as LoadErrors."""

from __future__ import annotations

import hashlib
import os
import stat
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
    """How a path is shown: relative to the project root when it lies inside it, POSIX style. A
    symlink is shown by its own name, not its target's."""
    if root is not None:
        for here, top in ((Path(os.path.abspath(path)), Path(os.path.abspath(root))), (path.resolve(), root.resolve())):
            try:
                return here.relative_to(top).as_posix()
            except (ValueError, OSError):
                continue
    return path.as_posix()


class NotRegularFile(OSError):
    """A FIFO, a device, a socket or a folder where a file was expected: never read (it could block)."""


def read_regular(path: Path, limit: Optional[int] = None) -> bytes:
    """The bytes of `path` (symlinks followed), only if it is a regular file (a FIFO named like an eval
    file must not hang anything: it is opened without blocking and checked before any read), and, with
    `limit`, at most that large (`FileTooLarge`)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(f"not a regular file ({_kind(info.st_mode)})")
        if limit is not None and info.st_size > limit:
            raise FileTooLarge(info.st_size)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=True) as handle:
            fd = -1
            return handle.read()
    finally:
        if fd >= 0:
            os.close(fd)


def read_text_regular(path: Path, errors: str = "strict") -> str:
    """`read_regular` as UTF-8 text (line endings as they are)."""
    return read_regular(path).decode("utf-8", errors)


class FileTooLarge(OSError):
    def __init__(self, size: int) -> None:
        super().__init__(f"file is too large to load ({size / 1e6:.0f} MB; the limit is {MAX_FILE_BYTES // 1_000_000} MB)")
        self.size = size


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a file"


def read_source(path: Path, display: Optional[str] = None) -> SourceText:
    display = display or str(path)
    try:
        raw = read_regular(path, MAX_FILE_BYTES)
    except (NotRegularFile, FileTooLarge) as exc:
        raise SourceFileError(LoadError(file=display, message=str(exc)))
    except OSError as exc:
        message = f"cannot read file: {exc.strerror or exc}"
        if isinstance(exc, FileNotFoundError) and path.is_symlink():
            message = f"a symlink to {os.readlink(path)!r}, which does not exist"
        raise SourceFileError(LoadError(file=display, message=message))
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
