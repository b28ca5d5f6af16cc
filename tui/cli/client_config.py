"""The files `agentdiff skills install` writes for each coding assistant: its skill (`SKILL.md`) and its
MCP configuration, merged into what is there. A file someone edited is never replaced without
saying so: a skill carries the digest of what agentdiff wrote, and a configuration's `agentdiff`
entry is left as it is when it differs from ours (`--force` replaces either, keeping the old copy
beside it)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from agentdiff.core.formats.json_edit import edit_json

SERVER = "agentdiff"
_MARK = re.compile(r"\n<!-- agentdiff skill sha256:([0-9a-f]{64}) -->\n?\Z")


@dataclass(frozen=True)
class Written:
    path: Path
    what: str  # wrote | updated | unchanged | left


def _write(path: Path, text: str) -> None:
    if path.is_symlink():
        raise OSError(f"{path} is a symbolic link; not written through")
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644  # a private config (tokens in `env`) stays private
    temp = path.with_name(f".{path.name}.agentdiff.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(temp, mode)
    os.replace(temp, path)


def _keep_old(path: Path) -> Path:
    """A copy of what --force replaces: `.orig`, or `.orig.N` beside an earlier one (never written over)."""
    old, n = path.with_name(path.name + ".orig"), 0
    while old.exists() or old.is_symlink():
        n += 1
        old = path.with_name(f"{path.name}.orig.{n}")
    shutil.copy2(path, old)
    return old


def marked(skill: str) -> str:
    """The skill as written: its text and the digest that tells a later install it was not edited."""
    return f"{skill}\n<!-- agentdiff skill sha256:{hashlib.sha256(skill.encode()).hexdigest()} -->\n"


def install_skill(path: Path, skill: str, force: bool) -> Written:
    text = marked(skill)
    if not path.exists() and not path.is_symlink():
        _write(path, text)
        return Written(path, "wrote")
    current = path.read_text(encoding="utf-8", errors="replace")
    if current == text:
        return Written(path, "unchanged")
    found = _MARK.search(current)
    ours = found is not None and hashlib.sha256(current[:found.start()].encode()).hexdigest() == found.group(1)
    if not ours and not force:
        return Written(path, "left")
    if not ours:
        _keep_old(path)
    _write(path, text)
    return Written(path, "updated")


def _json_entry(path: Path, key: str, entry: dict, force: bool) -> Written:
    """`entry` as `key`.agentdiff of the JSON file at `path`, the rest of the file kept."""
    data: dict = {}
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    if before.strip():
        try:
            data = json.loads(before)
        except json.JSONDecodeError as exc:  # Gemini CLI's settings may hold comments: not written over, said
            commented = re.search(r"^\s*//|/\*", before, re.MULTILINE) is not None
            raise ValueError(f"{path} is not plain JSON ({'it holds comments; ' if commented else ''}{exc.msg}, line {exc.lineno}): "
                             f"nothing was written; add this under \"{key}\" by hand: \"{SERVER}\": {json.dumps(entry)}") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path} does not hold a JSON object")
    servers = data.setdefault(key, {})
    if not isinstance(servers, dict):
        raise ValueError(f"{path}: {key} is not an object")
    if servers.get(SERVER) == entry:
        return Written(path, "unchanged")
    if SERVER in servers and not force:
        return Written(path, "left")
    existed = path.exists()
    if existed and SERVER in servers:
        _keep_old(path)
    servers[SERVER] = entry
    try:  # the file's own layout kept: only the entry changes
        text = edit_json(before, data) if before.strip() else json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    except ValueError:
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    _write(path, text)
    return Written(path, "updated" if existed else "wrote")


def _toml_entry(path: Path, entry: dict, force: bool) -> Written:
    """`entry` as the `[mcp_servers.agentdiff]` table of Codex's TOML file at `path`."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    current = tomllib.loads(text).get("mcp_servers", {}).get(SERVER) if text else None
    if current == entry:
        return Written(path, "unchanged")
    if current is not None and not force:
        return Written(path, "left")
    table = f"[mcp_servers.{SERVER}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in entry.items())
    if current is not None:  # forced: the old table (to the next table header) replaced
        _keep_old(path)
        text = re.sub(rf"(?ms)^\[mcp_servers\.{SERVER}\]\n.*?(?=^\[|\Z)", lambda _: table + "\n", text, count=1)
        if tomllib.loads(text).get("mcp_servers", {}).get(SERVER) != entry:  # written another way (dotted keys): not found to replace
            raise ValueError(f"{path}: its agentdiff entry is not a [mcp_servers.agentdiff] table agentdiff can replace; edit it by hand")
    else:
        text = (text.rstrip("\n") + "\n\n" if text.strip() else "") + table
    tomllib.loads(text)  # what is written still reads
    _write(path, text)
    return Written(path, "updated" if current is not None else "wrote")


def install_config(assistant: str, base: Path, project: bool, command: list[str], force: bool) -> Optional[Written]:
    """The assistant's MCP configuration of the agentdiff server, in the project (`project`) or the home
    folder `base`; None where agentdiff does not write it (Claude Code's own user file)."""
    cmd, *args = command
    if assistant in ("claude", "copilot"):
        if project:  # the portable file both read at the workspace's root
            return _json_entry(base / ".mcp.json", "mcpServers", {"command": cmd, "args": args}, force)
        if assistant == "copilot":
            return _json_entry(base / ".copilot" / "mcp-config.json", "mcpServers", {"command": cmd, "args": args}, force)
        return None
    if assistant == "gemini":
        return _json_entry(base / ".gemini" / "settings.json", "mcpServers", {"command": cmd, "args": args}, force)
    if assistant == "codex":
        return _toml_entry(base / ".codex" / "config.toml", {"command": cmd, "args": args, "startup_timeout_sec": 60,
                                                             "tool_timeout_sec": 600}, force)
    raise ValueError(assistant)
