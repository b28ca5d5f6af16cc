"""The `adk eval AGENT_DIR EVAL_FILE…` commands a project writes down for its users and its CI: in its
Makefile, justfile, shell scripts (at the root and in `scripts/`), Markdown at the root and in `docs/`
(README, CLAUDE.md, AGENTS.md…), `pyproject.toml`, `tox.ini`, GitHub workflows, and the test files
`agent_hints` reads (a docstring's usage line). Read as text, never run. Each names eval files
(whatever their names; a folder: its `*.json` that load as eval sets) and the agent folder that runs
them, as `adk eval` would (adk-formats.md §5).

* A command may continue over lines ending in `\\`; it ends at `;`, `&&`, `||`, `|`, `>`, `#` or a
  closing backquote.
* Options are skipped (`--config_file_path X`, `--log_level X`, `--eval_storage_uri X` take a value).
* `path:case1,case2` names the file `path`; a word holding `$`, `*` or `<` (a variable, a glob, a
  placeholder) cannot be known and is skipped, but a Makefile's own `NAME = value` (or `:=`, `?=`)
  is put in for `$(NAME)` / `${NAME}`.
* Paths are taken from the project root, else from the file's folder.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from agentdiff.core.formats.source_file import read_text_regular

MAX_BYTES = 500_000
MAX_FILES = 60
COMMAND_FILES = ("Makefile", "makefile", "GNUmakefile", "justfile", "Justfile", "Taskfile.yml", "README.rst", "README",
                 "pyproject.toml", "tox.ini", "noxfile.py")
_VALUED = {"--config_file_path", "--log_level", "--eval_storage_uri", "--enable_features", "--disable_features"}
_ADK_EVAL = re.compile(r"(?:^|[\s`'\"(;&|])(?:uv\s+run\s+|poetry\s+run\s+|python\s+-m\s+google\.adk\.cli\s+)?adk\s+eval(?=\s)")
_MAKE_VAR = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*[:?]?=\s*(.*?)\s*$", re.MULTILINE)
_END = re.compile(r"\s(?:;|&&|\|\||\||>|2>|#)|`|;$")
_cache: dict[str, tuple[tuple[int, int], tuple["EvalCommand", ...]]] = {}


@dataclass(frozen=True)
class EvalCommand:
    agent: Path  # the agent folder, resolved
    evals: tuple[Path, ...]  # the eval files named, resolved (existing or not)
    file: Path  # where the command is written


def command_files(root: Path) -> list[Path]:
    """The files read, at most `MAX_FILES`."""
    files = [root / name for name in COMMAND_FILES]
    for folder, pattern in ((root, "*.sh"), (root, "*.md"), (root / "docs", "*.md"), (root / "scripts", "*.sh"), (root / "scripts", "*.bash"),
                            (root / ".github" / "workflows", "*.yml"), (root / ".github" / "workflows", "*.yaml")):
        try:
            files += sorted(folder.glob(pattern))
        except OSError:
            continue
    return [f for f in files if f.is_file()][:MAX_FILES]


def is_command_file(path: Path, root: Path) -> bool:
    """Whether editing `path` may change what the commands name."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    if len(parts) == 1:
        return parts[0] in COMMAND_FILES or parts[0].endswith((".sh", ".md"))
    return parts[:-1] in (("scripts",), ("docs",), (".github", "workflows"))


def _logical_lines(text: str) -> list[str]:
    return re.sub(r"\\\r?\n", " ", text).splitlines()


def _words(rest: str) -> list[str]:
    end = _END.search(rest)
    rest = rest[: end.start()] if end else rest
    try:
        return shlex.split(rest)
    except ValueError:  # an unclosed quote in prose
        return rest.split()


def commands_in(text: str, file: Path, root: Path) -> tuple[EvalCommand, ...]:
    """Every `adk eval` command in `text` whose agent folder and eval files can be known."""
    variables = {m.group(1): m.group(2) for m in _MAKE_VAR.finditer(text)} if "make" in file.name.lower() else {}
    found: list[EvalCommand] = []
    for line in _logical_lines(text):
        for match in _ADK_EVAL.finditer(line):
            args: list[str] = []
            words = _words(line[match.end():])
            skip = False
            for word in words:
                if skip:
                    skip = False
                    continue
                if word.startswith("-"):
                    skip = word in _VALUED
                    continue
                for name, value in variables.items():
                    word = word.replace(f"$({name})", value).replace(f"${{{name}}}", value)
                args.append(word)
            if len(args) < 2 or any(ch in args[0] for ch in "$*<{"):
                continue
            agent = _where(args[0], file, root)
            evals = tuple(_where(_file_part(a), file, root) for a in args[1:] if not any(ch in a for ch in "$*<{"))
            evals = tuple(e for e in evals if e.suffix == ".json" or e.is_dir())
            if evals:
                found.append(EvalCommand(agent, evals, file))
    return tuple(found)


def _file_part(word: str) -> str:
    """`path:case1,case2` → `path` (split at the first `:` after a drive prefix, as ADK splits it)."""
    drive = word[:2] if re.match(r"^[A-Za-z]:[\\/]", word) else ""
    return drive + word[len(drive):].partition(":")[0]


def _where(path: str, file: Path, root: Path) -> Path:
    candidate = root / path
    if not candidate.exists() and (file.parent / path).exists():
        candidate = file.parent / path
    return candidate.resolve()


def eval_commands(root: Path, also: Sequence[Path] = ()) -> tuple[EvalCommand, ...]:
    """The `adk eval` commands of the project at `root`, and in the files `also` (each file read again
    only when it changed)."""
    root = root.resolve()
    out: list[EvalCommand] = []
    for file in dict.fromkeys([*command_files(root), *also]):
        try:
            stat = file.stat()
            if stat.st_size > MAX_BYTES:
                continue
            seen = (stat.st_mtime_ns, stat.st_size)
            if _cache.get(str(file), (None,))[0] != seen:
                _cache[str(file)] = (seen, commands_in(read_text_regular(file, "replace"), file, root))
        except OSError:
            continue
        out.extend(_cache[str(file)][1])
    return tuple(out)
