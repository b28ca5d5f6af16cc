"""Environments of other tools the tests use as oracles, made once with pip (nothing of agentdiff in
them) and kept in the repo (ignored by git), so later runs reuse them:

* another ADK version, for the tests across versions: `google-adk[eval]==VERSION` in `adk/VERSION/`;
* Google's agents-cli: `google-agents-cli==AGENTS_CLI` in `agents-cli/AGENTS_CLI/`,

under `$AGENTDIFF_ORACLE_ENVS`, else `~/.cache/agentdiff/oracle-envs/` (outside the checkout, so a fresh
clone on the same machine reuses them).

    .venv/bin/python tests/adk_envs.py 1.19.0        # make (or check) one ahead of the tests
    .venv/bin/python tests/adk_envs.py agents-cli
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The oldest ADK agentdiff supports; the newest is the one in agentdiff's own environment.
OLDEST = "1.19.0"
#: The agents-cli whose formats and behaviour agentdiff follows (docs/agents-cli-formats.md).
AGENTS_CLI = "1.11.0"


ENVS = Path(os.environ.get("AGENTDIFF_ORACLE_ENVS") or Path.home() / ".cache" / "agentdiff" / "oracle-envs")


def env_python(version: str) -> Path:
    return ENVS / "adk" / version / "bin" / "python"


def ensure_env(version: str) -> Path:
    """The environment's Python, made first if needed (one maker at a time, under a file lock)."""
    return _ensure(ENVS / "adk" / version, f"google-adk[eval]=={version}")


def agents_cli_bin() -> Path:
    """The `agents-cli` command of its environment, made first if needed."""
    return _ensure(ENVS / "agents-cli" / AGENTS_CLI, f"google-agents-cli=={AGENTS_CLI}").parent / "agents-cli"


def _ensure(folder: Path, requirement: str) -> Path:
    version = folder.name
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready = folder / "ready"
        if ready.exists():
            return folder / "bin" / "python"
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        log = folder / "install.log"
        with open(log, "w") as out:
            done = subprocess.run(
                [str(folder / "bin" / "pip"), "install", "--disable-pip-version-check", requirement],
                stdout=out, stderr=subprocess.STDOUT,
            )
        if done.returncode != 0:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"could not make the environment of {requirement}: {tail}")
        ready.write_text(version)
        return folder / "bin" / "python"


if __name__ == "__main__":
    wanted = sys.argv[1] if len(sys.argv) > 1 else OLDEST
    print(agents_cli_bin() if wanted == "agents-cli" else ensure_env(wanted))
