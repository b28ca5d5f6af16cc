"""What an assistant did, for the people watching: `.agentdiff/activity.jsonl`, one line per thing done
(`{"time", "who", "what"}`), appended by `agentdiff mcp` and read by an open TUI, which says it
("claude-code re-ran 3 cases"). Appends are single small writes (`O_APPEND`), so two writers never
interleave a line; the file is cut back to its newest lines when it grows past `KEEP_BYTES`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from agentdiff.core.formats.set_aside import made_state_dir

ACTIVITY_FILE = Path(".agentdiff") / "activity.jsonl"
KEEP_BYTES = 256_000


class Activity:
    """The writer's side."""

    def __init__(self, root: Path) -> None:
        self.path = root / ACTIVITY_FILE

    def add(self, who: str, what: str) -> None:
        line = json.dumps({"time": time.time(), "who": who[:80], "what": what[:300]}, ensure_ascii=False) + "\n"
        try:
            made_state_dir(self.path.parent)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
            try:
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)
            if self.path.stat().st_size > KEEP_BYTES:
                self._trim()
        except OSError:
            pass  # telling the TUI is a courtesy: a full disk or a read-only folder never fails the tool

    def _trim(self) -> None:
        lines = self.path.read_bytes().splitlines(keepends=True)[-500:]
        temp = self.path.with_name(self.path.name + ".tmp")
        temp.write_bytes(b"".join(lines))
        os.replace(temp, self.path)


class ActivityReader:
    """The reader's side: the lines added since it last looked (from its start: none of the old ones)."""

    def __init__(self, root: Path) -> None:
        self.path = root / ACTIVITY_FILE
        self._offset = self._size()
        self._last = time.time()  # lines from before it looked first, or said already, are not said (again)

    def _size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0

    def new(self) -> list[dict]:
        size = self._size()
        if size == self._offset:
            return []
        if size < self._offset:  # cut back by a writer: read it whole from its start
            self._offset = 0
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self._offset)
                data = handle.read(KEEP_BYTES)
        except OSError:
            return []
        complete = data[: data.rfind(b"\n") + 1]
        self._offset += len(complete)
        out = []
        for raw in complete.splitlines():
            try:
                item = json.loads(raw)
            except ValueError:
                continue
            if isinstance(item, dict) and isinstance(item.get("who"), str) and isinstance(item.get("what"), str) \
                    and isinstance(item.get("time"), (int, float)) and item["time"] > self._last:
                out.append(item)
        if out:
            self._last = max(item["time"] for item in out)
        return out
