"""A normal (non-editable) install works: the wheel holds every package and the app's stylesheet, and
installed into a fresh virtual environment, `agentdiff run` and the TUI start from it.

The dev environment's editable install maps agentdiff.core and agentdiff.tui onto the source folders,
which once hid a wheel that missed tui/widgets/, tui/screens/ and tui/app.tcss. Here the wheel is
built from a copy of the sources (so no build/ or egg-info lands in the repo) and installed with
--no-deps; the dependencies come from this environment's site-packages, listed in a .pth file. A
plain path line in a .pth only extends sys.path (it does not run the editable install's finder hook),
so the fresh interpreter imports the installed wheel.
"""

from __future__ import annotations

import os
import re
import shutil
import site
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from conftest import ROOT
from packaging.requirements import Requirement

BIN = "Scripts" if sys.platform == "win32" else "bin"
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
SOURCES_IGNORE = shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "__pycache__")
SAMPLES_IGNORE = shutil.ignore_patterns("__pycache__", ".adk", "*.agentdiff-record.json")
APP_SCRIPT = """
import asyncio, sys
from pathlib import Path
from agentdiff.tui.app import create_app

class NeverPool:
    async def run(self, job, timeout=None):
        await asyncio.Event().wait()

async def main(root):
    app = create_app(root, [root / "sample_agents"], pool=NeverPool(), watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        print("cases:", len(app.workbench.cases))

asyncio.run(main(Path(sys.argv[1])))
"""


def run(*cmd, timeout: float = 300, expect: int = 0, **kwargs) -> str:
    """Runs a command; asserts its exit code, showing its output if not; returns its stdout."""
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, env=ENV, **kwargs)
    if done.returncode != expect:
        pytest.fail(f"{' '.join(map(str, cmd))} exited {done.returncode}, not {expect}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout


def build_isolation(src: Path) -> list[str]:
    """Builds offline with this environment's setuptools if it meets the build requirements; else pip isolates."""
    try:
        requires = [Requirement(r) for r in tomllib.loads((src / "pyproject.toml").read_text())["build-system"]["requires"]]
        return ["--no-build-isolation"] if all(r.specifier.contains(version(r.name), prereleases=True) for r in requires) else []
    except PackageNotFoundError:
        return []


def expected_members(src: Path) -> set[str]:
    """Every package of core/ and tui/ (as agentdiff/core/…, agentdiff/tui/…) and every stylesheet of tui/."""
    found = {(folder, p) for folder in ("core", "tui") for p in (src / folder).rglob("__init__.py")}
    found |= {("tui", p) for p in (src / "tui").rglob("*.tcss")}
    return {(Path("agentdiff", folder) / p.relative_to(src / folder)).as_posix() for folder, p in found}


@pytest.fixture(scope="module")
def install(tmp_path_factory) -> dict:
    """The wheel, its expected members, and a fresh venv with it installed (deps via a .pth file)."""
    tmp = tmp_path_factory.mktemp("packaging")
    shutil.copytree(ROOT, tmp / "src", ignore=SOURCES_IGNORE)
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *build_isolation(tmp / "src"), "-w", tmp / "dist", tmp / "src")
    (wheel,) = (tmp / "dist").glob("agentdiff-*.whl")
    venv = tmp / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / BIN / "python"
    # Installed before the .pth exists, so pip neither sees nor tries to uninstall the dev environment's agentdiff.
    run(sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index", wheel)
    purelib = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").strip())
    (purelib / "test_environment_deps.pth").write_text("".join(f"{p}\n" for p in site.getsitepackages()))
    return {"wheel": wheel, "expected": expected_members(tmp / "src"), "venv": venv.resolve(), "python": python}


def project(tmp_path: Path) -> Path:
    """A project root holding a copy of the sample agents (without their recordings and caches)."""
    shutil.copytree(ROOT / "sample_agents", tmp_path / "sample_agents", ignore=SAMPLES_IGNORE)
    return tmp_path


def test_wheel_holds_every_package_and_stylesheet(install):
    with zipfile.ZipFile(install["wheel"]) as wheel:
        missing = install["expected"] - set(wheel.namelist())
    assert not missing, f"the wheel misses {sorted(missing)}"


def test_fresh_interpreter_imports_the_installed_wheel(install):
    files = run(install["python"], "-c", "import agentdiff.core, agentdiff.tui.app as a; print(agentdiff.core.__file__); print(a.__file__)")
    for file in files.split():
        assert Path(file).resolve().is_relative_to(install["venv"]), f"{file} is imported from outside {install['venv']}"


def test_agentdiff_run_from_the_install(install, tmp_path):
    out = run(install["venv"] / BIN / "agentdiff", "run", "sample_agents", cwd=project(tmp_path), expect=1)  # 2: load errors
    assert "kitchen_on_then_check" in out, out
    assert re.search(r"^\d+ cases: \d+ passed, [1-9]\d* failed", out, re.MULTILINE), out


def test_app_starts_headless_from_the_install(install, tmp_path):
    (tmp_path / "app_check.py").write_text(APP_SCRIPT)
    out = run(install["python"], tmp_path / "app_check.py", project(tmp_path / "project"), timeout=120)
    assert re.search(r"^cases: [1-9]\d*$", out, re.MULTILINE), out
