"""The `adk eval AGENT_DIR EVAL_FILE…` commands a project writes down for its users and its CI: in its
Makefiles and justfile (at the root and a folder or two down), shell scripts (anywhere in the project,
three folders deep at most), Markdown at the root and in `docs/` (README, CLAUDE.md, AGENTS.md…),
`pyproject.toml`, `tox.ini`, GitHub workflows, and the test files `agent_hints` reads (a docstring's
usage line). Read as text, never run. Each names eval files (whatever their names; a folder: its
`*.json` that load as eval sets), the agent folder that runs them, as `adk eval` would (adk-formats.md
§5), and the config it scores them with (`--config_file_path`).

* A command may continue over lines ending in `\\`; it ends at `;`, `&&`, `||`, `|`, `>`, `#` or a
  closing backquote. `adk` may be a path (`.venv/bin/adk`) or a variable holding one (`$(ADK) eval`).
* Options are skipped (`--log_level X`, `--eval_storage_uri X` take a value); `--config_file_path X` is kept.
* `path:case1,case2` names the file `path`. Variables are put in: a Makefile's own `NAME = value` (or
  `:=`, `?=`) for `$(NAME)` / `${NAME}`, a script's `NAME=value` (or `export NAME=…`) for `$NAME` /
  `${NAME}`, and `${NAME:-default}` (`$${…}` in a Makefile) gives its default when the file does not set
  it. A word still holding `$` or `<` (an argument, a placeholder) cannot be known and is skipped; a
  glob (`tests/eval/*`) names what the shell would expand it to.
* Paths are taken from the project root, else from the file's folder.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.formats.source_file import read_text_regular

MAX_BYTES = 500_000
MAX_FILES = 60
MAX_FOLDERS = 2000  # folders looked through for scripts
COMMAND_FILES = ("Makefile", "makefile", "GNUmakefile", "justfile", "Justfile", "Taskfile.yml", "README.rst", "README",
                 "pyproject.toml", "tox.ini", "noxfile.py")
_VALUED = {"--config_file_path", "--log_level", "--eval_storage_uri", "--enable_features", "--disable_features"}
_ADK_EVAL = re.compile(r"(?:^|[\s`'\"(;&|])(?:uv\s+run\s+|poetry\s+run\s+|python\s+-m\s+google\.adk\.cli\s+)?(?:[\w.~/-]*/)?adk\s+eval(?=\s)")
_MAKE_VAR = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*[:?]?=\s*(.*?)\s*$", re.MULTILINE)
_SHELL_VAR = re.compile(r"^\s*(?:export\s+|local\s+|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s;#]*)", re.MULTILINE)
_DEFAULTED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?-([^}]*)\}")
#: Folders never read for scripts (another project's tooling, or agentdiff's and ADK's own state).
_SKIPPED = {".git", ".venv", "venv", "node_modules", "__pycache__", ".agentdiff", ".adk", ".tox", ".nox", "site-packages", "dist", "build"}
_END = re.compile(r"\s(?:;|&&|\|\||\||>|2>|#)|`|;$")
_cache: dict[str, tuple[tuple[int, int], tuple["EvalCommand", ...]]] = {}


@dataclass(frozen=True)
class EvalCommand:
    agent: Path  # the agent folder, resolved
    evals: tuple[Path, ...]  # the eval files named, resolved (existing or not)
    file: Path  # where the command is written
    config: Optional[Path] = None  # `--config_file_path`, resolved


def command_files(root: Path) -> list[Path]:
    """The files read, at most `MAX_FILES`."""
    files = [root / name for name in COMMAND_FILES]
    for folder, pattern in ((root, "*.md"), (root / "docs", "*.md"), (root / ".github" / "workflows", "*.yml"),
                            (root / ".github" / "workflows", "*.yaml")):
        try:
            files += sorted(folder.glob(pattern))
        except OSError:
            continue
    files += _scripts(root)
    return list(dict.fromkeys(f for f in files if f.is_file()))[:MAX_FILES]


def _scripts(root: Path, depth: int = 3) -> list[Path]:
    """Shell scripts anywhere in the project (`evaluation/run_evals.sh`), and Makefiles and justfiles a
    folder or two down, shallowest first; never under another environment's or tool's folder."""
    found: list[tuple[int, Path]] = []
    level, seen = [root], 0
    for down in range(depth):
        following = []
        for folder in level:
            seen += 1
            if seen > MAX_FOLDERS:  # a tree of thousands of folders: its scripts are at its top
                break
            try:
                entries = sorted(folder.iterdir())
            except OSError:
                continue
            for entry in entries:
                if entry.is_dir() and not entry.is_symlink() and entry.name not in _SKIPPED and not entry.name.startswith("."):
                    following.append(entry)
                elif entry.suffix in (".sh", ".bash") or (down and down < 3 and entry.name in COMMAND_FILES[:5]):
                    found.append((down, entry))
        level = following
    return [path for _, path in sorted(found, key=lambda item: item[0])]


def is_command_file(path: Path, root: Path) -> bool:
    """Whether editing `path` may change what the commands name."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    if len(parts) == 1:
        return parts[0] in COMMAND_FILES or parts[0].endswith((".sh", ".md"))
    if parts[-1].endswith((".sh", ".bash")) or parts[-1] in COMMAND_FILES[:5]:
        return len(parts) <= 3 and not _SKIPPED & set(parts)
    return parts[:-1] in (("docs",), (".github", "workflows"))


def _logical_lines(text: str) -> list[str]:
    return re.sub(r"\\\r?\n", " ", text).splitlines()


def _words(rest: str) -> list[str]:
    end = _END.search(rest)
    rest = rest[: end.start()] if end else rest
    try:
        return shlex.split(rest)
    except ValueError:  # an unclosed quote in prose
        return rest.split()


def _variables(text: str, file: Path) -> dict[str, str]:
    """The variables a Makefile (`NAME = value`) or a script (`NAME=value`) sets, by name."""
    make = "make" in file.name.lower() or file.name.lower() == "justfile"
    pattern = _MAKE_VAR if make else _SHELL_VAR
    return {m.group(1): m.group(2).strip().strip("\"'") for m in pattern.finditer(text)}


def _put_in(word: str, variables: dict[str, str], make: bool) -> str:
    if make:
        word = word.replace("$$", "$")  # a Makefile's escaped `$`: the shell's own variable
    for _ in range(3):  # a value that names another variable
        before = word
        word = _DEFAULTED.sub(lambda m: value if (value := variables.get(m.group(1))) and "$" not in value else m.group(2), word)
        for name, value in sorted(variables.items(), key=lambda item: -len(item[0])):
            word = word.replace(f"$({name})", value).replace(f"${{{name}}}", value)
            word = re.sub(rf"\${name}(?![A-Za-z0-9_])", lambda _m, value=value: value, word)
        if word == before:
            break
    return word


def commands_in(text: str, file: Path, root: Path) -> tuple[EvalCommand, ...]:
    """Every `adk eval` command in `text` whose agent folder and eval files can be known."""
    variables = _variables(text, file)
    make = "make" in file.name.lower() or file.name.lower() == "justfile"
    found: list[EvalCommand] = []
    for line in _logical_lines(text):
        if "$" in line and "eval" in line:  # `$(ADK) eval …`: the command itself may be a variable
            line = _put_in(line, variables, make) if not _ADK_EVAL.search(line) else line
        for match in _ADK_EVAL.finditer(line):
            args: list[str] = []
            config = None
            words = _words(line[match.end():])
            skip = False
            for word in words:
                word = _put_in(word, variables, make)
                if skip:
                    config = word if skip == "config" else config
                    skip = False
                    continue
                if word.startswith("-"):
                    name, eq, value = word.partition("=")
                    if name == "--config_file_path":
                        config, skip = (value, False) if eq else (None, "config")
                    else:
                        skip = not eq and name in _VALUED
                    continue
                args.append(word)
            if len(args) < 2 or any(ch in args[0] for ch in "$*<{"):
                continue
            agent = _where(args[0], file, root)
            evals = tuple(path for a in args[1:] if not any(ch in a for ch in "$<{") for path in _paths(_file_part(a), file, root))
            evals = tuple(e for e in evals if e.suffix == ".json" or e.is_dir())
            known = config is not None and not any(ch in config for ch in "$*<{")
            if evals:
                found.append(EvalCommand(agent, evals, file, _where(config, file, root) if known else None))
    return tuple(found)


def commanded_configs(root: Path) -> tuple[tuple[Path, Path], ...]:
    """(eval file or folder, config) for every `adk eval … --config_file_path X` of the project."""
    return tuple((named, command.config) for command in eval_commands(root) if command.config is not None for named in command.evals)


def commanded_config(eval_file: Path, configs: Sequence[tuple[Path, Path]]) -> Optional[Path]:
    """The config a project's own `adk eval … --config_file_path X` scores `eval_file` with (the file, or a
    folder holding it, named by the command: the most specific); None when no command gives one."""
    eval_file = eval_file.resolve()
    best: Optional[tuple[int, Path]] = None
    for named, config in configs:
        if (named == eval_file or named in eval_file.parents) and (best is None or len(named.parts) > best[0]):
            best = (len(named.parts), config)
    return best[1] if best else None


def _file_part(word: str) -> str:
    """`path:case1,case2` → `path` (split at the first `:` after a drive prefix, as ADK splits it)."""
    drive = word[:2] if re.match(r"^[A-Za-z]:[\\/]", word) else ""
    return drive + word[len(drive):].partition(":")[0]


def _paths(word: str, file: Path, root: Path) -> list[Path]:
    """The paths a word names: itself, or what the shell expands a glob to (`tests/eval/*`), from the
    root, else from the file's folder."""
    if not any(ch in word for ch in "*?["):
        return [_where(word, file, root)]
    if Path(word).is_absolute() or ".." in Path(word).parts:
        return []
    for base in (root, file.parent):
        try:
            found = sorted(base.glob(word))[:200]
        except (ValueError, OSError):
            return []
        if found:
            return [path.resolve() for path in found]
    return []


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
