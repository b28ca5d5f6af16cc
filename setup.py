"""Packages for setuptools: every package under core/ and tui/, installed as agentdiff.core and
agentdiff.tui. Everything else about the build is in pyproject.toml."""

from setuptools import find_packages, setup

ROOTS = {"agentdiff.core": "core", "agentdiff.tui": "tui"}

setup(
    package_dir=ROOTS,
    packages=[f"{name}.{sub}" if sub else name for name, folder in ROOTS.items() for sub in ["", *find_packages(folder)]],
)
