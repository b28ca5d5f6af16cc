"""An agents-cli project: `agents-cli-manifest.yaml` at its root (or, in older projects, a
`[tool.agents-cli]` table in `pyproject.toml`), naming the agent's package (`agent_directory`,
default `app`). Found by walking up from a folder, as agents-cli walks up from where it is run."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from agentdiff.core.formats.load_error import LoadError, locate
from agentdiff.core.formats.source_file import SourceFileError, parse_source, read_source

MANIFEST = "agents-cli-manifest.yaml"
DEFAULT_AGENT_DIRECTORY = "app"


@dataclass(frozen=True)
class Manifest:
    root: Path  # the project's root: the folder holding the manifest (or the pyproject.toml)
    file: str  # `agents-cli-manifest.yaml`, or `pyproject.toml` for the legacy table
    agent_directory: str
    name: str = ""
    root_agent_name: str = ""
    language: str = "python"


def find_manifest(start: Path, stop: Optional[Path] = None) -> tuple[Optional[Manifest], list[LoadError]]:
    """The agents-cli project `start` lies in (walking up, not past `stop`): its manifest, else a
    `pyproject.toml` with `[tool.agents-cli]`; (None, []) when it is in none."""
    folders = [start, *start.parents]
    if stop is not None:
        stop = stop.resolve()
        folders = [f for f in folders if f.resolve() == stop or stop in f.resolve().parents]
    for folder in folders:
        if os.path.lexists(folder / MANIFEST):
            return read_manifest(folder)
    for folder in folders:
        legacy = _legacy_table(folder / "pyproject.toml")
        if legacy is not None:
            return _from_mapping(folder, "pyproject.toml", legacy, None), []
    return None, []


def read_manifest(root: Path) -> tuple[Optional[Manifest], list[LoadError]]:
    path = root / MANIFEST
    try:
        source = read_source(path, MANIFEST)
        data = parse_source(source, "yaml")
    except SourceFileError as exc:
        return None, [exc.error]
    if data is None:
        data = {}  # an empty manifest: every default, as agents-cli reads it
    if not isinstance(data, dict):
        return None, [LoadError(file=MANIFEST, line=1, column=1, message="the manifest must be a mapping (agent_directory, name, …)")]
    directory = data.get("agent_directory", DEFAULT_AGENT_DIRECTORY)
    if not isinstance(directory, str) or not directory.strip() or os.path.isabs(directory) or ".." in Path(directory).parts:
        position = locate(source.text, ["agent_directory"], "yaml") or (1, 1)
        return None, [LoadError(file=MANIFEST, line=position[0], column=position[1],
                                message=f"`agent_directory` must name the agent's folder inside the project, not {directory!r}")]
    return _from_mapping(root, MANIFEST, data, source.text), []


def _from_mapping(root: Path, file: str, data: dict[str, Any], text: Optional[str]) -> Manifest:
    params = data.get("create_params") if isinstance(data.get("create_params"), dict) else {}
    directory = data.get("agent_directory") if isinstance(data.get("agent_directory"), str) else DEFAULT_AGENT_DIRECTORY
    return Manifest(root=root, file=file, agent_directory=directory.strip().strip("/") or DEFAULT_AGENT_DIRECTORY,
                    name=str(data.get("name") or ""), root_agent_name=str(params.get("root_agent_name") or ""),
                    language=str(data.get("language") or "python"))


def _legacy_table(path: Path) -> Optional[dict[str, Any]]:
    if not path.is_file():
        return None
    try:
        import tomllib

        with open(path, "rb") as handle:
            table = tomllib.load(handle).get("tool", {}).get("agents-cli")
    except (OSError, ValueError):
        return None
    return table if isinstance(table, dict) else None
