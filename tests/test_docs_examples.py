"""The docs' examples hold: every `console` block of README.md and of the pages under docs/ runs on a
copy of the sample agents and ends as it says; every `agentdiff …` command line in any block parses with
agentdiff's own parser; every relative link leads to a file, and its anchor to a heading of that file;
every page is listed by README.md, docs/index.md and mkdocs.yml's nav. The convention is written down in
docs/development.md, "Runnable examples"."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(page for page in DOCS.rglob("*.md") if "_hooks" not in page.parts)]
AGENTDIFF = Path(sys.executable).with_name("agentdiff")
SHELL = {"sh", "bash", "shell", "zsh"}  # every line is a command (or a comment)
PROMPTED = {"console", "text", ""}  # only the lines after a `$ ` prompt are commands; the rest is output
SEPARATORS = {"&&", "||", ";", "|", "&"}
REDIRECTS = {">", ">>", "<", "2>", "2>&1", "&>"}
USAGE_ERRORS = ("unrecognized arguments", "invalid choice", "the following arguments are required", "not allowed with argument",
                "expected one argument", "usage: agentdiff")
TIMEOUT = 120  # seconds per command: a sample run takes a few


@dataclass
class Block:
    page: Path
    line: int  # the opening fence's, 1-based
    tag: str
    lines: list[str]

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a Markdown page, indented ones (inside a list) included."""
    found, block, fence, indent = [], None, "", 0
    for number, line in enumerate(page.read_text().split("\n"), 1):
        opening = re.match(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)", line)
        if block is None and opening:
            indent, fence = len(opening.group(1)), opening.group(2)
            block = Block(page, number, opening.group(3).lower(), [])
        elif block is not None and line.strip().startswith(fence) and not line.strip().strip(fence[0]):
            found.append(block)
            block = None
        elif block is not None:
            block.lines.append(line[indent:] if not line[:indent].strip() else line)
    assert block is None, f"{page.relative_to(ROOT)}:{block.line}: a code block is never closed"
    return found


def prose(page: Path) -> str:
    """The page without its code blocks and inline code: where links are."""
    text, inside = [], False
    for line in page.read_text().split("\n"):
        if re.match(r"^\s*(`{3,}|~{3,})", line):
            inside = not inside
        elif not inside:
            text.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(text)


def shell_lines(block: Block) -> list[str]:
    """The lines of a block that hold shell commands."""
    if block.tag in SHELL:
        return [line for line in block.lines if line.strip() and not line.lstrip().startswith("#")]
    if block.tag in PROMPTED:
        return [line[2:] for line in block.lines if line.startswith("$ ")]
    if block.tag in ("yaml", "yml"):  # a CI step: `- run: agentdiff …`
        steps = (re.match(r"^\s*(?:-\s*)?run:\s*(.+)$", line) for line in block.lines)
        return [re.sub(r"\$\{\{[^}]*\}\}", "1", step.group(1)) for step in steps if step]  # a matrix value
    return []


def agentdiff_commands(line: str) -> list[list[str]]:
    """Every `agentdiff …` command of a shell line, as its arguments: after `&&`, `||`, `;` or `|`, inside
    `$(…)`, or handed to another command by path (`claude mcp add agentdiff -- .venv/bin/agentdiff mcp`)."""
    inner = re.findall(r"\$\(([^()]*)\)", line)
    lexer = shlex.shlex(re.sub(r"\$\(([^()]*)\)", "X", line), posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split, lexer.commenters = True, "#"
    words, found = list(lexer), []
    segments, segment = [], []
    for word in words:
        if word in SEPARATORS:
            segments.append(segment)
            segment = []
        else:
            segment.append(word)
    segments.append(segment)
    for segment in segments:
        for at, word in enumerate(segment):
            if word in REDIRECTS:
                break
            if (at == 0 and word == "agentdiff") or word.endswith("/agentdiff"):
                argv = []
                for arg in segment[at + 1:]:
                    if arg in REDIRECTS:
                        break
                    argv.append(arg)
                found.append(argv)
                break
    for command in inner:
        found.extend(agentdiff_commands(command))
    return found


def parse_error(argv: list[str]) -> str | None:
    """What agentdiff's own parser says of these arguments, when it refuses them. The command line reads
    them as `main` does: no command, or a path or an option first, is the TUI (`watch`)."""
    from agentdiff.tui.cli import COMMANDS, build_parser

    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv = ["watch", *argv]
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
            build_parser().parse_args(argv)
    except SystemExit as exit:
        if exit.code not in (0, None):
            return said.getvalue().strip().splitlines()[-1]
    return None


def console_blocks() -> list[Block]:
    return [block for page in PAGES for block in blocks(page) if block.tag == "console"]


def test_every_agentdiff_command_line_in_the_docs_parses():
    checked, refused = 0, []
    for page in PAGES:
        for block in blocks(page):
            for line in shell_lines(block):
                for argv in agentdiff_commands(line):
                    checked += 1
                    error = parse_error(argv)
                    if error:
                        refused.append(f"{block}: agentdiff {shlex.join(argv)}\n    {error}")
    assert not refused, "\n".join(refused)
    assert checked >= 40, f"only {checked} command lines found: the reading of the blocks is broken"


def test_a_refused_option_is_found():
    """The check above can fail: a misspelt option, a removed command and a bad choice are refused."""
    assert "unrecognized arguments: --nmu-runs" in parse_error(["run", "--nmu-runs", "2"])
    assert "invalid choice" in parse_error(["run", "--mode", "relpay"])
    assert parse_error(["sample_agents", "--mode", "live"]) is None  # `agentdiff PATHS` is the TUI
    assert agentdiff_commands('eval -- "$(agentdiff completion bash)"') == [["completion", "bash"]]
    assert agentdiff_commands("agentdiff gate --markdown > comment.md && echo done") == [["gate", "--markdown"]]
    assert agentdiff_commands("claude mcp add agentdiff -- .venv/bin/agentdiff mcp   # e.g.") == [["mcp"]]


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> Path:
    """The sample agents, copied once without agentdiff's state: each block gets a copy of this."""
    folder = tmp_path_factory.mktemp("samples") / "sample_agents"
    shutil.copytree(ROOT / "sample_agents", folder, ignore=shutil.ignore_patterns(".agentdiff", "__pycache__"))
    return folder


@pytest.mark.adk  # the samples' ADK agents run
@pytest.mark.parametrize("block", console_blocks(), ids=str)
def test_console_example_runs_offline_and_ends_as_it_says(block, samples, tmp_path):
    """Each command of the block, in order, in a folder of its own that holds a copy of sample_agents/
    (as the repository's root does), must end with the status its `# exit N` comment says (else 0)."""
    shutil.copytree(samples, tmp_path / "sample_agents")
    env = {**os.environ, "NO_COLOR": "1"}
    for name in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"):  # the samples run on agentdiff's own Python (with ADK)
        env.pop(name, None)
    commands = [line[2:] for line in block.lines if line.startswith("$ ")]
    assert commands, f"{block}: a console block with no `$ agentdiff …` line"
    for command in commands:
        words = shlex.split(command, comments=True)
        assert words and words[0] == "agentdiff", f"{block}: a console block runs agentdiff commands only: {command}"
        said = re.search(r"#\s*exit\s+(\d+)", command)
        expected = int(said.group(1)) if said else 0
        assert expected != 2, f"{block}: an example never ends in a usage or load error (2): {command}"
        done = subprocess.run([str(AGENTDIFF), *words[1:]], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=TIMEOUT)
        story = f"{block}: $ {command}\nexit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        assert not any(error in done.stderr for error in USAGE_ERRORS), story
        assert "Traceback (most recent call last)" not in done.stderr, story
        assert done.returncode == expected, story


def test_the_docs_have_runnable_examples():
    """README.md and the reference both hold some: a page that lost its tags would otherwise pass unseen."""
    pages = {block.page for block in console_blocks()}
    assert ROOT / "README.md" in pages and len(pages) >= 6, sorted(str(page) for page in pages)


def _heading_text(line: str) -> str:
    text = re.sub(r"^#+\s*|\s+#+\s*$", "", line.strip())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link: its text
    return re.sub(r"[`*]", "", text)


def github_anchor(text: str) -> str:
    """The anchor a code host (GitHub) gives a heading."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def site_anchor(text: str) -> str:
    """The anchor MkDocs (Python-Markdown's toc) gives it."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", text).strip().lower())


def anchors(page: Path) -> tuple[set[str], set[str]]:
    headings = [_heading_text(line) for line in prose(page).split("\n") if re.match(r"^#{1,6}\s", line)]
    return {github_anchor(text) for text in headings}, {site_anchor(text) for text in headings}


def links(page: Path) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", prose(page))


def test_relative_links_lead_to_a_file_and_an_anchor_of_it():
    broken = []
    for page in PAGES:
        for link in links(page):
            if re.match(r"^[a-z]+:", link):  # https:, mailto:
                continue
            path, _, anchor = link.partition("#")
            target = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(ROOT)}: ({link})"
            if not target.exists() or ROOT not in target.parents:
                broken.append(f"{where}: no such file in the repository")
            elif anchor:
                on_host, on_site = anchors(target) if target.suffix == ".md" else (set(), set())
                if anchor not in on_host or anchor not in on_site:
                    broken.append(f"{where}: no heading with that anchor (on the code host: {anchor in on_host}, on the site: {anchor in on_site})")
    assert not broken, "\n".join(broken)


def test_every_page_is_listed_by_the_readme_the_index_and_the_nav():
    pages = {page.relative_to(DOCS).as_posix() for page in PAGES if DOCS in page.parents}
    readme = {(ROOT / link.partition("#")[0]).resolve() for link in links(ROOT / "README.md")}
    index = {(DOCS / link.partition("#")[0]).resolve() for link in links(DOCS / "index.md")}
    nav, stack = set(), [yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        else:
            nav.add(item)
    for listing, linked in (("README.md", readme), ("docs/index.md", index)):
        unlisted = sorted(page for page in pages - {"index.md"} if (DOCS / page).resolve() not in linked)
        assert not unlisted, f"pages {listing} does not link: {unlisted}"
    assert pages <= nav, f"pages missing from mkdocs.yml's nav: {sorted(pages - nav)}"
    assert (ROOT / "benchmarks" / "README.md").resolve() in readme | index
