"""`--report agents-cli=DIR`: the run's agents-cli cases as the trace file `agents-cli eval generate`
writes (`traces_<YYYYMMDD_HHMMSS>.json`, local time, beside any earlier ones), so that
`agents-cli eval grade --traces DIR/traces_<time>.json` grades agentdiff's runs. As `eval generate`
does, a case whose run failed is left out, and no file is written when none ran."""

from __future__ import annotations

import os
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.formats.agents_cli.traces import dump_traces


def trace_file_name(now: Optional[datetime] = None) -> str:
    return f"traces_{(now or datetime.now()).strftime('%Y%m%d_%H%M%S')}.json"


def write_traces(cases: Sequence[dict], folder: Path, now: Optional[datetime] = None) -> Optional[Path]:
    """Write the trace file into `folder` (created if missing); its path, or None when there were no cases."""
    if not cases:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / trace_file_name(now)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(dump_traces(cases))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path
