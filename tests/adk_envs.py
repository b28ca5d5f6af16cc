"""Project environments with another ADK version, for the tests across versions: made once with pip
(`google-adk[eval]==VERSION`, nothing of agentdiff) and kept under `.venv-adk/VERSION/` in the repo
(ignored by git), so later runs reuse them.

    .venv/bin/python tests/adk_envs.py 1.19.0     # make (or check) one ahead of the tests
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The oldest ADK agentdiff supports; the newest is the one in agentdiff's own environment.
OLDEST = "1.19.0"


def env_python(version: str) -> Path:
    return ROOT / ".venv-adk" / version / "bin" / "python"


def ensure_env(version: str) -> Path:
    """The environment's Python, made first if needed (one maker at a time, under a file lock)."""
    folder = ROOT / ".venv-adk" / version
    folder.parent.mkdir(exist_ok=True)
    with open(folder.parent / f"{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready = folder / "ready"
        if ready.exists():
            return env_python(version)
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        log = folder / "install.log"
        with open(log, "w") as out:
            done = subprocess.run(
                [str(folder / "bin" / "pip"), "install", "--disable-pip-version-check", f"google-adk[eval]=={version}"],
                stdout=out, stderr=subprocess.STDOUT,
            )
        if done.returncode != 0:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"could not make the ADK {version} environment: {tail}")
        ready.write_text(version)
        return env_python(version)


if __name__ == "__main__":
    print(ensure_env(sys.argv[1] if len(sys.argv) > 1 else OLDEST))
