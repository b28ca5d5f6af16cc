"""Reading a source file and parsing it as JSON or YAML, with failures returned as LoadErrors."""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import json
from pathlib import Path
from typing import Any, Literal, Optional, Union

import yaml
from agentdiff.core.formats.load_error import LoadError, line_col
from agentdiff.core.formats.packed_text import MIN_PACKED, PackedText

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


class SourceText:
    """A file's text as read, with the digest that later writes check against. A big file held while a
    suite runs has its text packed (`pack`): `text` is then made whole again when asked, and `content`
    is what slices it without that."""

    __slots__ = ("path", "display", "sha256", "_text")

    def __init__(self, path: Path, display: str, text: str, sha256: str) -> None:
        self.path, self.display, self.sha256 = path, display, sha256
        self._text: Union[str, PackedText] = text

    @property
    def text(self) -> str:
        text = self._text
        return text if isinstance(text, str) else str(text)

    @property
    def content(self) -> Union[str, PackedText]:
        """The text as held: a string, or the packed text (both sliced with `[start:end]`)."""
        return self._text

    def pack(self, text: str) -> Union[str, PackedText]:
        """The text packed if it is `text` (the same string) and big enough to be worth it; as held."""
        if self._text is text and len(text) >= MIN_PACKED:
            self._text = PackedText(text)
        return self._text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourceText):
            return NotImplemented
        return (self.path, self.display, self.sha256) == (other.path, other.display, other.sha256) and self.text == other.text

    def __hash__(self) -> int:
        return hash((self.path, self.display, self.sha256))

    def __repr__(self) -> str:
        return f"SourceText(path={self.path!r}, display={self.display!r}, sha256={self.sha256!r})"


class SourceFileError(Exception):
    """Raised inside loaders to carry a LoadError out of a parse step."""

    def __init__(self, error: LoadError):
        super().__init__(str(error))
        self.error = error


def missing_reason(path: Path) -> str:
    """Why a named path cannot be opened: missing, a dangling symlink (named by its target), or a
    symlink loop."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symlink loop (its links lead back to themselves)"
        if os.path.islink(path):
            return f"a symlink to {os.readlink(path)!r}, which does not exist"
        return "no such file or folder"
    except ValueError:  # a NUL in the name
        return "no such file or folder"
    return "no such file or folder"


def resolved(path: Path) -> Path:
    """`path.resolve()`, or its absolute form when it cannot be resolved (a symlink loop)."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        return Path(os.path.abspath(path))


def display_path(path: Path, root: Optional[Path] = None) -> str:
    """How a path is shown (and how case ids name their file): relative to the project root when it
    lies inside it, POSIX style. A symlink is shown by its own name, not its target's. A newline, tab
    or carriage return in a name is shown as `\\n`, `\\t`, `\\r`, so a name cannot forge a line."""
    shown = path.as_posix()
    if root is not None:
        for here, top in ((Path(os.path.abspath(path)), Path(os.path.abspath(root))), (resolved(path), resolved(root))):
            try:
                shown = here.relative_to(top).as_posix()
                break
            except (ValueError, OSError):
                continue
    return shown.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")


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
        real = os.path.realpath(path)
        if real.startswith(("/proc/", "/sys/")):  # they look regular, but are the kernel's (and may block)
            raise NotRegularFile(f"not a regular file (a kernel file: {real})")
        if limit is not None and info.st_size > limit:
            raise FileTooLarge(info.st_size)
        # Left non-blocking: a regular file ignores it, and a kernel file that only looks regular
        # (`/proc/kmsg`) fails at once instead of blocking the app.
        with os.fdopen(fd, "rb", closefd=True) as handle:
            fd = -1
            try:
                return handle.read()
            except BlockingIOError:
                raise NotRegularFile("not a regular file (reading it would block: a kernel or device file)") from None
    finally:
        if fd >= 0:
            os.close(fd)


def read_text_regular(path: Path, errors: str = "strict") -> str:
    """`read_regular` as UTF-8 text (line endings as they are)."""
    return read_regular(path).decode("utf-8", errors)


class FileTooLarge(OSError):
    def __init__(self, size: int) -> None:
        super().__init__(f"file is too large to load ({size:,} bytes; the limit is {MAX_FILE_BYTES:,} bytes)")
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
        if isinstance(exc, FileNotFoundError) or exc.errno == errno.ELOOP:
            message = missing_reason(path)
        raise SourceFileError(LoadError(file=display, message=message))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = line_col(raw[: exc.start].decode("utf-8", "replace"), exc.start)
        raise SourceFileError(
            LoadError(file=display, line=line, column=column, message=f"not valid UTF-8 ({exc.reason})")
        )
    return SourceText(path=path, display=display, text=text, sha256=hashlib.sha256(raw).hexdigest())


_SURROGATE_ESCAPE = re.compile(r"(\\+)u([dD][89a-fA-F][0-9a-fA-F]{2})")


def lone_surrogate(text: str) -> Optional[int]:
    """The offset of the first `\\uD800`–`\\uDFFF` escape that is not half of a surrogate pair: JSON
    lets Python read it as a string no encoder can write (ADK's loader refuses the file), so it is a
    load error, not a crash later."""
    paired_low = -1
    for match in _SURROGATE_ESCAPE.finditer(text):
        if len(match.group(1)) % 2 == 0 or match.start(1) + len(match.group(1)) - 1 == paired_low:
            continue  # an escaped backslash followed by "u…", or the low half of a pair already seen
        code = int(match.group(2), 16)
        low_next = _SURROGATE_ESCAPE.match(text, match.end())
        if code < 0xDC00 and low_next and len(low_next.group(1)) == 1 and int(low_next.group(2), 16) >= 0xDC00:
            paired_low = low_next.start(1)
            continue
        return match.start(1) + len(match.group(1)) - 1
    return None


def _refuse_lone_surrogates(source: SourceText, kind: Kind) -> None:
    offset = lone_surrogate(source.text) if "\\u" in source.text or "\\U" in source.text else None
    if offset is not None:
        line, column = line_col(source.text, offset)
        escape = source.text[offset : offset + 6]
        raise SourceFileError(LoadError(file=source.display, line=line, column=column,
                                        message=f"invalid {'JSON' if kind == 'json' else 'YAML'}: "
                                                f"{escape} is half of a surrogate pair, not a character"))


#: Values nested deeper than this are refused: no eval file needs them, and the diff and scorers that
#: walk a value would run out of stack on one (Python's limit is about 1,000 frames).
MAX_DEPTH = 200


def parse_source(source: SourceText, kind: Kind) -> Any:
    data = _parse(source, kind)
    if deeper_than(data, MAX_DEPTH):
        raise SourceFileError(LoadError(file=source.display, message=f"invalid {'JSON' if kind == 'json' else 'YAML'}: nested too deeply "
                                                                     f"(more than {MAX_DEPTH} levels)"))
    return data


def deeper_than(data: Any, limit: int) -> bool:
    """Whether containers nest more than `limit` deep (walked without recursion; a YAML cycle counts once)."""
    stack, seen = [(data, 1)], set()
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if id(value) in seen:
                continue
            seen.add(id(value))
            if depth > limit:
                return True
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _parse(source: SourceText, kind: Kind) -> Any:
    _refuse_lone_surrogates(source, kind)
    if kind == "json":
        try:
            return json.loads(source.text)
        except json.JSONDecodeError as exc:
            if not source.text.strip():  # 0 bytes, or only white space: say so, not "Expecting value"
                raise SourceFileError(LoadError(file=source.display, line=1, message="the file is empty, where JSON was expected"))
            raise SourceFileError(
                LoadError(file=source.display, line=exc.lineno, column=exc.colno, message=f"invalid JSON: {exc.msg}")
            )
        except RecursionError:
            raise SourceFileError(LoadError(file=source.display, message="invalid JSON: nested too deeply"))
        except ValueError as exc:  # a whole number past Python's 4,300 digits, say
            raise _number_error(source, "JSON", exc) from None
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
    except ValueError as exc:  # a whole number past Python's 4,300 digits, say
        raise _number_error(source, "YAML", exc) from None


_LONG_NUMBER = re.compile(r"\d{4301,}")


def _number_error(source: SourceText, kind: str, exc: ValueError) -> SourceFileError:
    found = _LONG_NUMBER.search(source.text)
    line, column = line_col(source.text, found.start()) if found else (None, None)
    why = "a number with more than 4,300 digits" if found else str(exc)
    return SourceFileError(LoadError(file=source.display, line=line, column=column, message=f"invalid {kind}: {why}"))
