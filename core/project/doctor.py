"""`agentdiff doctor`: what agents of this project need in order to run, checked one by one, each
problem with what to do about it.

* the agents' Python (`interpreter`): which one and why, its ADK version, whether agentdiff scores
  that version exactly, and whether it is the version the project asks for;
* each agent the project's eval files resolve to, imported in that Python (a fresh process per
  agent, with the `.env` ADK would load), or why none was found;
* the model credentials present, by name only (never a value): in the environment, or in the `.env`
  files ADK loads for the agents.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from agentdiff.core.formats.adk_rules import parse_version, support_note
from agentdiff.core.project.agent_memo import AgentMemo
from agentdiff.core.project.discovery import Discovery
from agentdiff.core.project.family import family_of
from agentdiff.core.project.interpreter import OWN_PYTHON, Interpreter
from agentdiff.core.worker.cloud_metrics import credentials_file
from agentdiff.core.worker.jobs import AgentRef
from agentdiff.core.worker.pool import WORKER_PACKAGE, copy_worker_package
from agentdiff.core.formats.source_file import read_text_regular
from agentdiff.core.project.dotenv_files import PLACEHOLDER, dotenv_names, dotenv_values, nearest_dotenv  # noqa: F401 - doctor's words

#: Names ADK's model clients read; any one of the groups is enough for Gemini.
GEMINI_KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
VERTEX_KEYS = ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION")
#: The switch to Vertex AI (Gemini Enterprise), by its newer name (google-genai, ADK 2.13) and its older one.
ENTERPRISE_SWITCHES = ("GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_GENAI_USE_VERTEXAI")
OTHER_KEYS = ("GOOGLE_APPLICATION_CREDENTIALS", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")
IMPORT_TIMEOUT = 60.0
_IMPORT = """
import json, sys
from {package}.adk_adapter import llm_agents, load_module, model_names
from {package}.hints import how_to_fix
from {package}.jobs import AgentRef
from {package}.model_endpoints import litellm_models
try:
    module = load_module(AgentRef.model_validate_json(sys.argv[1]))
    try:
        models = model_names(module)
    except Exception:
        models = None
    try:
        root = getattr(module, "root_agent", None) or getattr(getattr(module, "app", None), "root_agent", None)
        litellm = litellm_models(llm_agents(root)) if root is not None else []
    except Exception:
        litellm = []
    print(json.dumps({{"ok": True, "models": models, "litellm": litellm}}))
except BaseException as exc:
    print(json.dumps({{"ok": False, "error": f"{{type(exc).__name__}}: {{exc}}{{how_to_fix(exc)}}"}}))
""".format(package=WORKER_PACKAGE)


@dataclass(frozen=True)
class Imported:
    """An agent imported in the agents' Python: its models (None when unknown), or why it failed."""

    error: Optional[str] = None
    models: Optional[tuple[str, ...]] = None
    litellm: tuple[dict, ...] = ()  # its LiteLLM models as its Python sees them (`model_endpoints`)

    @property
    def needs_gemini(self) -> bool:
        """Whether a live run may call Gemini: a model named gemini-…, a Gemini model object, or unknown."""
        if self.models is None:
            return True
        return any(m.lower().startswith("gemini") or m.lower().startswith(("gemini:", "apigeellm:")) for m in self.models)


@dataclass(frozen=True)
class Check:
    """One line of the report: `ok` True (fine), False (a problem), None (for information)."""

    section: str
    ok: Optional[bool]
    text: str
    fix: str = ""


def python_checks(python: Interpreter, root: Path) -> list[Check]:
    checks = [Check("python", None if not python.error else False, f"agents run on {python.describe(root)}",
                    "" if not python.error else "choose the project's interpreter with --python PATH or python = \"…\"")]
    if python.error:
        return checks
    if python.why == OWN_PYTHON and declares_dependencies(root):
        checks.append(Check("python", False, "the project has no environment of its own here (no .venv, venv, active "
                            "virtualenv, uv or Poetry environment), so its dependencies may be missing",
                            f"create one: {environment_recipe(root)}; or pass --python PATH"))
    if python.adk is None:
        checks.append(Check("python", None, "no google-adk in that Python: only native agents can run"))
        return checks
    note = support_note(python.adk)
    checks.append(Check("python", note is None, note or f"ADK {python.adk} is supported: scored as ADK {python.adk} scores"))
    wanted = _adk_requirement(root)
    if wanted is not None:
        fits = requirement_allows(wanted, python.adk)
        checks.append(Check("python", fits, f"the project asks for google-adk{wanted} "
                            f"({'met' if fits else 'not met' if fits is False else 'cannot tell'} by {python.adk})",
                            "" if fits is not False else "install the project's own dependencies into that Python, or pass --python"))
    return checks


def agent_checks(
    found: Discovery, root: Path, agents_dirs: Sequence[Path], mapping: dict[str, str], python: Interpreter,
) -> tuple[list[Check], dict[Path, Imported]]:
    """A line per agent (imported or not) and per eval file with no agent; and each imported agent's
    folder with what its import said."""
    memo = AgentMemo(root)
    imported: dict[Path, Imported] = {}
    agents: dict[str, tuple[AgentRef, list[str]]] = {}
    checks: list[Check] = []
    for ref in found.cases:
        resolution = memo.resolve(ref, agents_dirs, mapping)
        where = family_of(ref).group(ref)
        if resolution.agent is None:
            first, _, fix = (resolution.error or "").partition("\nto choose it, ")
            if not any(c.text.startswith(where + ":") for c in checks):
                checks.append(Check("agents", False, f"{where}: {first}", fix.replace("\n", " ")))
            continue
        agent = resolution.agent.model_copy(update={"sub_agent": None})  # imported as a run imports it (a dotted module too)
        _, sources = agents.setdefault(agent.model_dump_json(), (agent, []))
        if where not in sources:
            sources.append(where)
    for agent, sources in agents.values():
        name = agent.name
        if python.error:  # nothing can be imported; the agents are still named, their models unknown
            imported[Path(agent.agents_dir) / name] = Imported("not imported")
            checks.append(Check("agents", None, f"{name} (for {', '.join(sources[:3])}): not imported, the agents' Python cannot run"))
            continue
        result = import_agent(python.path, agent, root)
        imported[Path(agent.agents_dir) / name] = result
        shown = ", ".join(sources[:3]) + (f" and {len(sources) - 3} more" if len(sources) > 3 else "")
        if result.error is None:
            models = f"; models {', '.join(dict.fromkeys(result.models))}" if result.models else ""
            checks.append(Check("agents", True, f"{name} imports  (for {shown}{models})"))
        else:
            checks.append(Check("agents", False, f"{name} does not import: {result.error}"))
    return checks, imported


def import_agent(python: str, agent: AgentRef, cwd: Optional[Path] = None) -> Imported:
    """Import the agent in `python` as a run would (a fresh process, in the project's folder `cwd`):
    its models, or why it failed."""
    with tempfile.TemporaryDirectory(prefix="agentdiff-doctor-") as folder:
        env = copy_worker_package(folder)
        try:
            done = subprocess.run([python, "-c", _IMPORT, agent.model_dump_json()], capture_output=True, text=True,
                                  timeout=IMPORT_TIMEOUT, env=env, stdin=subprocess.DEVNULL, cwd=cwd)
        except subprocess.TimeoutExpired:
            return Imported(f"importing it took over {IMPORT_TIMEOUT:g} s")
        except OSError as exc:
            return Imported(f"cannot run {python}: {exc.strerror or exc}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return Imported(f"the import process ended with code {done.returncode}: {tail}")
    result = json.loads(lines[-1])
    if not result.get("ok"):
        return Imported(result.get("error", "unknown error"))
    models = result.get("models")
    return Imported(models=None if models is None else tuple(models), litellm=tuple(result.get("litellm") or ()))


def credential_checks(imported: dict[Path, Imported], environ: Optional[dict[str, str]] = None) -> list[Check]:
    """Which credential names are set, and where (the environment, or a `.env` ADK would load for an
    agent); missing Gemini credentials are a problem when an agent may call Gemini."""
    agent_dirs = sorted(imported)
    environ = dict(os.environ if environ is None else environ)
    known = (*GEMINI_KEYS, *VERTEX_KEYS, *ENTERPRISE_SWITCHES, *OTHER_KEYS)
    where: dict[str, str] = {name: "the environment" for name in known if environ.get(name)}
    placeholders: dict[str, str] = {name: "the environment" for name in known if environ.get(name) and PLACEHOLDER.match(environ[name].strip())}
    values = {name: environ[name].strip() for name in ENTERPRISE_SWITCHES if environ.get(name)}
    for folder in agent_dirs:
        dotenv = nearest_dotenv(folder)
        if dotenv is None:
            continue
        for name, value in dotenv_values(dotenv).items():
            if name in known and name not in where:
                where[name] = str(dotenv)
                values.setdefault(name, value) if name in ENTERPRISE_SWITCHES else None
                if PLACEHOLDER.match(value):
                    placeholders[name] = str(dotenv)
    checks = [Check("credentials", False, f"{name} in {source} is a placeholder, not a value: calls with it fail", f"put your own {name} there")
              if name in placeholders else Check("credentials", True, f"{name} is set ({source})") for name, source in where.items()]
    real = {name for name in where if name not in placeholders}
    gemini = any(name in real for name in GEMINI_KEYS)
    vertex = any(name in real for name in ENTERPRISE_SWITCHES) and {"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"} <= real
    needing = [folder.name for folder, result in sorted(imported.items()) if result.needs_gemini]
    switched = next((name for name in ENTERPRISE_SWITCHES if values.get(name, "").lower() in ("1", "true", "yes", "on")), None)
    if switched and not vertex and needing:  # google-genai sends every call to Vertex AI: an API key is not used
        checks.append(Check("credentials", False, f"{switched} is on ({where[switched]}): Gemini calls go to Vertex AI, which needs "
                            "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION (a GOOGLE_API_KEY is not used)",
                            f"set those two, or set {switched}=False to call Gemini with the API key"))
        return checks
    if not gemini and not vertex and not imported:  # no agent imported: whether one needs them is unknown
        checks.append(Check("credentials", None, "no Gemini credentials; no agent could be imported to tell whether one "
                            "needs them (live runs of a Gemini agent will)"))
    elif not gemini and not vertex and not needing:
        checks.append(Check("credentials", None, "no Gemini credentials, and no agent here needs them"))
    elif not gemini and not vertex:
        checks.append(Check("credentials", False, f"no Gemini credentials: live runs of {', '.join(needing)} will fail "
                            "(replayed cases — conformance cases, `adk test` fixtures — need none)",
                            "set GOOGLE_API_KEY, or GOOGLE_GENAI_USE_ENTERPRISE=TRUE (GOOGLE_GENAI_USE_VERTEXAI before ADK 2.13) with "
                            "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, in the environment or in a .env beside the agent"))
    return checks


def vertex_configured(environ: Optional[dict[str, str]] = None) -> bool:
    """Whether Google Cloud is configured for Vertex AI's evaluation service: a project, a location,
    and credentials (a key file, or gcloud's application-default login)."""
    env = os.environ if environ is None else environ
    if not (env.get("GOOGLE_CLOUD_PROJECT") and env.get("GOOGLE_CLOUD_LOCATION")):
        return False
    if env.get("GOOGLE_APPLICATION_CREDENTIALS"):
        return True
    config = env.get("CLOUDSDK_CONFIG") or os.path.join(os.path.expanduser("~"), ".config", "gcloud")
    return os.path.isfile(os.path.join(config, "application_default_credentials.json"))


def metric_checks(cases: Sequence[object], environ: Optional[dict[str, str]] = None) -> list[Check]:
    """agents-cli eval configs: which of their metrics run here (local custom functions, in the
    project's interpreter) and which need Google's cloud eval service, and whether it is configured."""
    from agentdiff.core.project.dataset_cases import DatasetCaseRef

    configs = {ref.metrics.display: ref.metrics for ref in cases if isinstance(ref, DatasetCaseRef) and ref.metrics is not None}
    checks = []
    env = os.environ if environ is None else environ
    cloud_ready = bool(env.get("GOOGLE_CLOUD_PROJECT") or credentials_file(env))  # as the workers decide (cloud_metrics)
    for shown, config in configs.items():
        if config.local:
            checks.append(Check("metrics", True, f"{shown}: {', '.join(m.name for m in config.local)} run here (local custom functions)"))
        if config.cloud:
            names = ", ".join(m.name for m in config.cloud)
            if cloud_ready:
                checks.append(Check("metrics", True, f"{shown}: {names} run through Google's cloud eval service (Google Cloud is "
                                                     "configured; the project's environment needs google-cloud-aiplatform[evaluation])"))
            else:
                checks.append(Check("metrics", None, f"{shown}: {names} need Google's cloud eval service: not evaluated here",
                                    "set GOOGLE_CLOUD_PROJECT and credentials (`gcloud auth application-default login`), with "
                                    "google-cloud-aiplatform[evaluation] in the project's environment"))
    return checks


# --- the ADK version the project asks for ------------------------------------------------------

_REQUIREMENT = re.compile(r"^\s*google[-_.]adk(?![\w.-])(?:\[[^\]]*\])?\s*(?P<spec>[^;#]*)", re.IGNORECASE)


def _adk_requirement(root: Path) -> Optional[str]:
    """The version specifier of google-adk in the project's pyproject or requirements.txt ("" when
    unpinned), or None when it names none."""
    sources: list[str] = []
    try:
        data = tomllib.loads(read_text_regular(root / "pyproject.toml"))
        sources += list(data.get("project", {}).get("dependencies", []) or [])
        poetry = data.get("tool", {}).get("poetry", {}).get("dependencies", {}) or {}
        for name, spec in poetry.items():
            if name.lower().replace("_", "-") == "google-adk":
                sources.append(f"google-adk{_poetry_spec(spec)}")
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError):
        pass
    try:
        sources += read_text_regular(root / "requirements.txt").splitlines()
    except (OSError, UnicodeDecodeError):
        pass
    for line in sources:
        match = _REQUIREMENT.match(str(line))
        if match:
            return match.group("spec").strip().replace(" ", "")
    return None


def _poetry_spec(spec: object) -> str:
    version = spec.get("version", "") if isinstance(spec, dict) else str(spec)
    if version.startswith("^"):
        low = parse_version(version[1:])
        return f">={version[1:]},<{low[0] + 1}.0.0" if low and low[0] else f">={version[1:]}"
    if version.startswith("~") and not version.startswith("~="):
        low = parse_version(version[1:])
        return f">={version[1:]},<{low[0]}.{low[1] + 1}.0" if low else f">={version[1:]}"
    return version if version[:1] in "<>=!~" else (f"=={version}" if version and version != "*" else "")


def _release(text: str) -> Optional[tuple[int, ...]]:
    """`"2"` → (2, 0, 0), `"1.19"` → (1, 19, 0); None for anything but dotted numbers."""
    parts = text.split(".")
    if not all(part.isdigit() for part in parts) or len(parts) > 3:
        return None
    return tuple(int(part) for part in parts) + (0,) * (3 - len(parts))


def requirement_allows(spec: str, version: str) -> Optional[bool]:
    """Whether `version` meets a specifier like `>=1.19,<2` (None when it cannot be read)."""
    have = parse_version(version)
    if have is None:
        return None
    for clause in filter(None, spec.split(",")):
        match = re.match(r"^(==|!=|>=|<=|~=|>|<)\s*([0-9][0-9.]*)(\.\*)?$", clause.strip())
        if not match:
            return None
        op, text, star = match.groups()
        want = _release(text.rstrip("."))
        if want is None:
            return None
        depth = len(text.split("."))
        if op in ("==", "!=") and star:
            same = have[:depth] == want[:depth]
            ok = same if op == "==" else not same
        elif op == "~=":
            ok = have >= want and have[: max(depth - 1, 1)] == want[: max(depth - 1, 1)]
        else:
            ok = {"==": have == want, "!=": have != want, ">=": have >= want, "<=": have <= want, ">": have > want, "<": have < want}[op]
        if not ok:
            return False
    return True


def environment_recipe(root: Path) -> str:
    """The commands that make the project's environment, from what the project declares."""
    if (root / "uv.lock").is_file():
        return "uv sync"
    if (root / "poetry.lock").is_file() or "[tool.poetry" in _read(root / "pyproject.toml"):
        return "poetry config virtualenvs.in-project true && poetry install"
    if (root / "requirements.txt").is_file():
        return "python3 -m venv .venv && .venv/bin/pip install -r requirements.txt"
    return "python3 -m venv .venv && .venv/bin/pip install <the dependencies pyproject.toml lists>"


def _read(path: Path) -> str:
    try:
        return read_text_regular(path)
    except (OSError, UnicodeDecodeError):
        return ""


def declares_dependencies(root: Path) -> bool:
    return any((root / name).is_file() for name in ("pyproject.toml", "requirements.txt", "setup.py", "uv.lock", "poetry.lock"))


_SKIPPED_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".agentdiff", ".tox", ".nox", "site-packages"}


def drop_in_users(root: Path, limit: int = 2000) -> list[Path]:
    """The project's test files that import agentdiff's drop-in (`agentdiff.core.testing`), looked
    for in at most `limit` Python files (test_*.py, *_test.py, conftest.py), never in environments."""
    found, seen = [], 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(files):
            if not (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py")):
                continue
            seen += 1
            if seen > limit:
                return found
            try:
                text = (Path(folder) / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if "agentdiff.core.testing" in text or "from agentdiff.core import testing" in text:
                found.append(Path(folder) / name)
    return found


def drop_in_checks(python: Interpreter, root: Path) -> list[Check]:
    """Where the project's tests use the drop-in: whether the Python they run on can import it."""
    users = drop_in_users(root)
    if not users or python.error:
        return []
    shown = ", ".join(str(path.relative_to(root)) for path in users[:3]) + (f" and {len(users) - 3} more" if len(users) > 3 else "")
    try:
        done = subprocess.run([python.path, "-c", "import agentdiff.core.testing"], capture_output=True, text=True, timeout=60, cwd=root)
        ok, said = done.returncode == 0, (done.stderr.strip().splitlines() or [""])[-1]
    except (OSError, subprocess.TimeoutExpired) as exc:
        ok, said = False, str(exc)
    if ok:
        return [Check("python", True, f"{shown} import agentdiff.core.testing: that Python has it")]
    return [Check("python", False, f"{shown} import agentdiff.core.testing, which that Python cannot import ({said})",
                  f"pytest runs the tests there: install agentdiff into it ({python.path} -m pip install PATH_TO_AGENTDIFF)")]
