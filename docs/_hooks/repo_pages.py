"""MkDocs hook for the docs site (mkdocs.yml): two pages live beside what they describe, outside docs/ —
benchmarks/README.md and sample_agents/README.md. They become pages of the site too, and the links the
docs make to them (relative, so that they work on a code host as well) lead there."""

from __future__ import annotations

import posixpath
from pathlib import Path

from mkdocs.structure.files import File

#: a page kept outside docs/ (relative to the repository's root) → its place in the site
OUTSIDE = {"benchmarks/README.md": "benchmarks.md", "sample_agents/README.md": "sample-agents.md"}


def on_files(files, config):
    root = Path(config.config_file_path).parent
    for source, uri in OUTSIDE.items():
        files.append(File.generated(config, uri, abs_src_path=str(root / source)))
    return files


def on_page_markdown(markdown, page, config, files):
    folder = posixpath.dirname(page.file.src_uri)
    up = "../" * (folder.count("/") + 1) if folder else ""
    for source, uri in OUTSIDE.items():
        markdown = markdown.replace(f"]({up}../{source}", f"]({up}{uri}")
    return markdown
