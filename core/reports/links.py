"""Where a Markdown report's case links lead. A PR comment is read on the code host, where a path
relative to the project means nothing: inside a CI job that names its repository (GitHub Actions,
GitLab CI), a case's file is linked on the host at the commit the run was made from (its kept git
state, else the job's), under the project's folder in the repository. Elsewhere the link is the path
as the report gives it (relative to the project root)."""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional
from urllib.parse import quote


def file_link(path: str, meta: Mapping[str, Any], env: Optional[Mapping[str, str]] = None) -> str:
    """`path` (relative to the project root) as a link; `meta`: the run's kept state (`run` block)."""
    env = os.environ if env is None else env
    git = meta.get("git") if isinstance(meta.get("git"), dict) else {}
    prefix = git.get("prefix") if isinstance(git.get("prefix"), str) else ""
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
