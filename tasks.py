#!/usr/bin/env python3
"""The two quick-start commands; needs nothing but Python 3.11+.

    python3 tasks.py run     set up .venv (with google-adk) and open the TUI on the bundled sample agents
    python3 tasks.py test    set up .venv (with google-adk and the test tools) and run the whole suite
    python3 tasks.py docs    set up .venv (with MkDocs) and build the docs site into site/, failing on any warning

Each creates a virtual environment in .venv and installs agentdiff into it (editable), reinstalling
only when pyproject.toml changes. Extra arguments after `test` go to pytest, after `docs` to mkdocs build.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")


def _run(*args: str | Path) -> int:
    return subprocess.call([str(a) for a in args], cwd=ROOT)


def _install(*args: str) -> bool:
    """pip install quietly; on failure, show everything pip said."""
    log = VENV / "install.log"
    with log.open("w") as out:
        code = subprocess.call([str(PYTHON), "-m", "pip", "install", *args], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    if code != 0:
        sys.stderr.write(log.read_text())
    return code == 0


def ensure_venv(extras: str) -> None:
    if sys.version_info < (3, 11):
        sys.exit(f"agentdiff needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    if not PYTHON.exists():
        print(f"creating {VENV.relative_to(ROOT)} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    stamp = VENV / f".agentdiff-installed-{extras or 'base'}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    wanted = set(filter(None, extras.split(",")))
    for other in VENV.glob(".agentdiff-installed-*"):  # an install with more extras will do
        installed = set(filter(None, other.name.removeprefix(".agentdiff-installed-").replace("base", "").split(",")))
        if wanted <= installed and other.read_text() == digest:
            return
    target = f".[{extras}]" if extras else "."
    print(f"installing agentdiff{f'[{extras}]' if extras else ''} into .venv ...", flush=True)
    if not _install("--upgrade", "pip"):
        sys.exit("could not upgrade pip in .venv")
    if not _install("-e", target):
        sys.exit(f"could not install {target} into .venv (the log above says why)")
    stamp.write_text(digest)


def run(args: list[str]) -> int:
    ensure_venv("adk")
    agentdiff = BIN / "agentdiff"
    if not sys.stdout.isatty():  # no terminal for the TUI (a pipe, CI): the same cases, headless
        print("\n$ agentdiff run sample_agents --num-runs 2", flush=True)
        code = _run(agentdiff, "run", "sample_agents", "--num-runs", "2", *args)
        return 2 if code == 2 else 0  # some sample cases fail on purpose
    return _run(agentdiff, "watch", "sample_agents", *args)


def test(args: list[str]) -> int:
    """The suite on every CPU (pytest-xdist; a test takes the next free worker), unless the arguments
    choose otherwise (`-n 0` runs it in one process)."""
    ensure_venv("adk,test")
    spread = [] if any(a == "-n" or a.startswith(("-n", "--numprocesses", "--dist")) for a in args) else ["-n", "auto", "--dist", "worksteal"]
    return _run(PYTHON, "-m", "pytest", *spread, *args)


def docs(args: list[str]) -> int:
    """The docs site: README.md's pages under docs/, as mkdocs.yml lays them out, built into site/.
    --strict makes every warning (a broken link or anchor, a page left out of the nav) an error."""
    ensure_venv("docs")
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")  # Material's notice about its successor, on every build
    return _run(BIN / "mkdocs", "build", "--strict", *args)


def main() -> int:
    commands = {"run": run, "test": test, "docs": docs}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__)
        return 2
    return commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
