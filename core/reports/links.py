"""Where a Markdown report's case links lead. A PR comment is read on the code host, where a path
relative to the project means nothing: inside a CI job that names its repository (GitHub Actions,
GitLab CI), a case's file is linked on the host at the commit the run was made from (its kept git
state, else the job's), under the project's folder in the repository (kept with the run, else the
current folder's place in the job's checkout). Elsewhere, or where that folder cannot be told, the
link is the path as the report gives it (relative to the project root)."""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional
from urllib.parse import quote


def _prefix(git: Mapping[str, Any], env: Mapping[str, str], cwd: Optional[str]) -> Optional[str]:
    """The project's folder in the repository: as the run kept it, else the current folder's place
    in the job's checkout (a JSON report keeps no git state); None when it cannot be told."""
    if isinstance(git.get("prefix"), str):
        return git["prefix"]
    workspace = env.get("GITHUB_WORKSPACE") or env.get("CI_PROJECT_DIR")
    if not workspace:
        return None
    here = os.path.realpath(cwd or os.getcwd())
    top = os.path.realpath(workspace)
    if here != top and not here.startswith(top.rstrip(os.sep) + os.sep):
        return None
    inner = os.path.relpath(here, top)
    return "" if inner == "." else inner.replace(os.sep, "/") + "/"


def file_link(path: str, meta: Mapping[str, Any], env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None) -> str:
    """`path` (relative to the project root) as a link; `meta`: the run's kept state (`run` block),
    the base run's for a case it alone has. A path outside the project stays a path."""
    env = os.environ if env is None else env
    git = meta.get("git") if isinstance(meta.get("git"), dict) else {}
    if path.startswith("/") or ".." in path.split("/") or not (env.get("GITHUB_REPOSITORY") or env.get("CI_PROJECT_URL")):
        return path
    prefix = _prefix(git, env, cwd)
    if prefix is None:
        return path
    where = quote(f"{prefix}{path}", safe="/")
    if env.get("GITHUB_REPOSITORY"):
        commit = git.get("commit") or env.get("GITHUB_SHA")
        if commit:
            server = (env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
            return f"{server}/{env['GITHUB_REPOSITORY']}/blob/{commit}/{where}"
    if env.get("CI_PROJECT_URL"):
        commit = git.get("commit") or env.get("CI_COMMIT_SHA")
        if commit:
            return f"{env['CI_PROJECT_URL'].rstrip('/')}/-/blob/{commit}/{where}"
    return path
