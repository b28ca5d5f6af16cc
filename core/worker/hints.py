"""What to do about the usual reasons an agent cannot run: a package missing from the agents'
Python, or no model credentials. A clause added to the run's one-line error. And where an agent's
failure is in the project's own code (`project_origin`)."""

from __future__ import annotations

import os
import re
import sys
import traceback
from typing import Any, Optional

_CREDENTIAL_MESSAGES = ("No API key was provided", "Missing key inputs argument", "GOOGLE_CLOUD_PROJECT")
#: Google's Application Default Credentials missing (`google.auth.default()`): an API key cannot stand in.
_ADC_MESSAGES = ("default credentials were not found", "Could not automatically determine credentials")


_NETWORK_ERRORS = {"ClientConnectorError", "ClientConnectorDNSError", "ConnectError", "ConnectTimeout", "ServerDisconnectedError",
                   "APIConnectionError"}  # LiteLLM's, for a server (Ollama's, say) that does not answer
#: LiteLLM's error for a model string with no provider (`qwen3:32b` for `ollama_chat/qwen3:32b`).
_NO_PROVIDER = "LLM Provider NOT provided"
_PASSED_MODEL = re.compile(r"You passed model=(\S+)")
_KEY_VARIABLE = re.compile(r"\b[A-Z][A-Z0-9_]*_API_KEY\b")


def said(exc: BaseException) -> str:
    """An exception as its one-line error: `Type: message`, LiteLLM's no-provider error cut to its point
    (it runs on over lines with a providers link)."""
    text = str(exc)
    tool = tool_of(exc)
    if tool is not None:  # a tool whose signature cannot be declared to the model: pydantic's page, said as the tool
        func, parameter = tool
        what = f"its parameter `{parameter}`" if parameter else "its signature"
        why = (text.splitlines()[0] if text else "no schema").split(". ")[0].replace("Unable to generate pydantic-core schema", "no schema")
        return (f"{type(exc).__name__}: tool {func.__name__}: {what} cannot be declared to the model ({why}): give it "
                "types pydantic knows (typing.Any, not any)")
    if _NO_PROVIDER in text:
        model = _PASSED_MODEL.search(text)
        text = f"{_NO_PROVIDER}. You passed model={model.group(1)}" if model else _NO_PROVIDER
    elif _pydantic_errors(exc):  # `1 validation error for AgentConfig\nfield\n  Field required […]`, on one line
        text = f"{getattr(exc, 'title', '')}: " + "; ".join(f"{'.'.join(map(str, e.get('loc', ()))) or '(root)'}: {e.get('msg', '')}"
                                                          for e in _pydantic_errors(exc)[:5])
    return f"{type(exc).__name__}: {text}"


def tool_of(exc: BaseException) -> Optional[tuple[Any, str]]:
    """For a pydantic schema error raised while ADK declares a tool: the tool's function, and the parameter
    pydantic cannot take (`context: Dict[str, any]`, "" when none alone is); else None."""
    if "schema" not in type(exc).__name__.lower() and "Unable to generate pydantic-core schema" not in str(exc):
        return None
    tb = exc.__traceback__
    func = None
    while tb is not None:
        local = tb.tb_frame.f_locals
        for candidate in (local.get("func"), getattr(local.get("self"), "func", None)):
            if callable(candidate) and hasattr(candidate, "__code__"):
                func = candidate
        tb = tb.tb_next
    if func is None:
        return None
    import inspect

    from pydantic import TypeAdapter

    try:
        parameters = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return func, ""
    for parameter in parameters:
        if parameter.annotation is inspect.Parameter.empty:
            continue
        try:
            TypeAdapter(parameter.annotation)
        except Exception:  # noqa: BLE001 - the one pydantic cannot take
            annotation = getattr(parameter.annotation, "__name__", None) if isinstance(parameter.annotation, type) else None
            shown = re.sub(r"<(?:built-in function|class) '?([\w.]+)'?>", r"\1", str(parameter.annotation)).replace("typing.", "")
            return func, f"{parameter.name}: {annotation or shown}"
    return func, ""


def _pydantic_errors(exc: BaseException) -> list:
    errors = getattr(exc, "errors", None)
    if type(exc).__name__ != "ValidationError" or not callable(errors):
        return []
    try:
        found = errors()
    except Exception:  # noqa: BLE001 - not pydantic's after all
        return []
    return [e for e in found if isinstance(e, dict)] if isinstance(found, list) else []


def _missing_settings(exc: BaseException) -> list[str]:
    """The fields a settings class (`…Config`, `…Settings`) found no value for: usually variables the
    project's `.env` sets."""
    if not str(getattr(exc, "title", "")).endswith(("Config", "Settings", "Env")):
        return []
    return [str(e["loc"][-1]) for e in _pydantic_errors(exc) if e.get("type") == "missing" and e.get("loc")]


def _installed(package: str) -> bool:
    """Whether `package` is an installed distribution's (found in site-packages), looked up, never imported."""
    where = _location(package)
    return bool(where) and ("site-packages" in where or "dist-packages" in where)


def _adk_version() -> str:
    try:
        from importlib.metadata import version

        return version("google-adk")
    except Exception:  # noqa: BLE001
        return "unknown"


_CANNOT_IMPORT = re.compile(r"cannot import name '([A-Za-z_][A-Za-z0-9_]*)'")
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_LOCK_NAME = re.compile(r'^name\s*=\s*"([^"]+)"', re.MULTILINE)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_distributions(root: str) -> dict[str, str]:
    """The distributions a project declares (normalised name → the file that declares it): pyproject.toml's
    dependencies (PEP 621, its optional groups, Poetry's), requirements*.txt, uv.lock and poetry.lock."""
    found: dict[str, str] = {}
    try:
        import tomllib

        with open(os.path.join(root, "pyproject.toml"), "rb") as handle:
            data = tomllib.load(handle)
        project = data.get("project") or {}
        poetry = (data.get("tool") or {}).get("poetry") or {}
        lines = [*(project.get("dependencies") or []), *[d for group in (project.get("optional-dependencies") or {}).values() for d in group],
                 *[d for group in (data.get("dependency-groups") or {}).values() for d in group if isinstance(d, str)],
                 *(poetry.get("dependencies") or {}).keys()]
        for line in lines:
            if isinstance(line, str) and (match := _REQUIREMENT_NAME.match(line)):
                found.setdefault(_normal(match.group(1)), "pyproject.toml")
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    try:
        names = sorted(os.listdir(root))
    except OSError:
        names = []
    for name in names:
        path = os.path.join(root, name)
        try:
            if name.startswith("requirements") and name.endswith(".txt"):
                with open(path, encoding="utf-8", errors="replace") as handle:
                    for line in handle:
                        if not line.lstrip().startswith(("#", "-")) and (match := _REQUIREMENT_NAME.match(line)):
                            found.setdefault(_normal(match.group(1)), name)
            elif name in ("uv.lock", "poetry.lock"):
                with open(path, encoding="utf-8", errors="replace") as handle:
                    for match in _LOCK_NAME.finditer(handle.read(4_000_000)):
                        found.setdefault(_normal(match.group(1)), name)
        except OSError:
            continue
    return found


def _declared_distribution(module: str) -> Optional[tuple[str, str]]:
    """The distribution the project declares that provides `module` (`google.cloud.trace_v1` →
    `google-cloud-trace`, named after its import path as Google's and most namespace packages are;
    `supabase` → `supabase`), with the file declaring it; None when none is declared."""
    declared = declared_distributions(os.getcwd())
    if not declared:
        return None
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        words = [re.sub(r"_v\d+(?:(?:alpha|beta)\d*)?$", "", part) for part in parts[:end]]
        for name in dict.fromkeys((_normal("-".join(words)), _normal("-".join(parts[:end])))):
            if name in declared:
                return name, declared[name]
    top = parts[0]
    known = _IMPORT_NAMES.get(top)
    if known in declared:
        return known, declared[known]
    near = [name for name in declared if top not in ("google", "test", "tests") and _provides(name, _normal(top))]
    return (near[0], declared[near[0]]) if len(near) == 1 else None


#: Import names whose distribution is named otherwise, among those agents use most.
_IMPORT_NAMES = {"googleapiclient": "google-api-python-client", "yaml": "pyyaml", "dotenv": "python-dotenv", "bs4": "beautifulsoup4",
                 "PIL": "pillow", "sklearn": "scikit-learn", "cv2": "opencv-python", "jwt": "pyjwt", "dateutil": "python-dateutil",
                 "docx": "python-docx", "pptx": "python-pptx", "fitz": "pymupdf", "magic": "python-magic", "Crypto": "pycryptodome",
                 "OpenSSL": "pyopenssl", "git": "gitpython", "psycopg2": "psycopg2-binary", "serial": "pyserial", "attr": "attrs"}


def _provides(distribution: str, module: str) -> bool:
    """Whether a distribution's name says it brings `module` (`a2a` ← `a2a-sdk`, `tinydb` ← `async-tinydb`,
    `pdf` ← `pypdf`)."""
    return distribution.startswith(module + "-") or distribution.endswith("-" + module) or distribution in ("py" + module, "python-" + module)


def _install_hint(module: str, distribution: str, where: str) -> str:
    return (f" ({module} comes from {distribution}, which the project declares in {where} and is not installed for {sys.executable}: "
            f"install it (`pip install {distribution}`, or the project's dependencies: `uv sync`, `pip install -r …`), or choose the "
            "project's own Python with --python)")


def how_to_fix(exc: BaseException) -> str:
    """What to do about the usual reasons an agent cannot run here, as a clause to add to its error."""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        if _is_projects_own(exc.name.rpartition(".")[0]):
            return f" (the project's own module {exc.name} is not there: a file missing from the checkout?)"
        top = exc.name.split(".")[0]
        if "." in exc.name and top not in ("google",) and _installed(top):  # `mcp.server.fastmcp` of an mcp 2 installed
            return (f" ({top} is installed for {sys.executable}, but a version without {exc.name}: the project needs another "
                    "version; install the project's dependencies into that Python, or choose the project's own with --python)")
        missing = "google-adk is" if exc.name in ("google", "google.adk") else "it is"
        declared = _declared_distribution(exc.name)
        if declared is not None and missing == "it is":
            return _install_hint(exc.name, *declared)
        return (f" ({missing} not installed for {sys.executable}: install the project's dependencies into that Python, "
                "or choose the project's own with --python)")
    if isinstance(exc, ImportError) and not isinstance(exc, ModuleNotFoundError) and (exc.name or "").startswith("google.adk"):
        return (f" (the agent was written for another ADK version: this Python has google-adk {_adk_version()}; install the "
                "version the project asks for, or run its agents in its own environment with --python)")
    missing = _missing_settings(exc)
    if missing:
        names = ", ".join(name.upper() for name in missing[:5])
        return f" (the agent's settings need {names}: set {'it' if len(missing) == 1 else 'them'} in the environment or in a .env beside the agent)"
    if isinstance(exc, ImportError) and "(unknown location)" in str(exc):
        wanted = _CANNOT_IMPORT.search(str(exc))
        module = f"{exc.name}.{wanted.group(1)}" if exc.name and wanted else None
        declared = _declared_distribution(module) if module else None
        if declared is not None:  # `from google.cloud import trace_v1`: a namespace package's part another distribution brings
            return _install_hint(module, *declared)
        if module and _installed(exc.name or ""):  # an installed namespace (google.cloud), not a folder of the project's
            return (f" ({module} is not installed for {sys.executable}: {exc.name} is a namespace package, each of its parts comes "
                    "from a distribution of its own; install the one that provides it, or the project's dependencies)")
        return f" ({exc.name or 'that package'} has no __init__.py and no such module in its folder: a file missing from the checkout?)"
    text = str(exc)
    if ("Cannot connect to host" in text or type(exc).__name__ in _NETWORK_ERRORS) and "Ollama" in text:
        return " (Ollama could not be reached: start it (`ollama serve`), or set OLLAMA_API_BASE to where it runs)"
    if "Cannot connect to host" in text or type(exc).__name__ in _NETWORK_ERRORS:
        return " (the model's API could not be reached from here: check the network connection, a proxy, or the API host)"
    if any(message in text for message in _ADC_MESSAGES) or type(exc).__name__ == "DefaultCredentialsError":
        switch = _key_switch(os.getcwd())
        if switch is not None:  # the project turns Vertex AI off itself when a key is set
            return (f" (Google Application Default Credentials were not found: the agent uses Vertex AI unless {switch[0]} is set "
                    f"({switch[1]}): set {switch[0]}, or run `gcloud auth application-default login`)")
        return (" (Google Application Default Credentials were not found — the code asks for them with google.auth.default(), "
                "which an API key does not answer: run `gcloud auth application-default login`, or set "
                "GOOGLE_APPLICATION_CREDENTIALS to a service account's key file)")
    if _NO_PROVIDER in text:
        model = _PASSED_MODEL.search(text)
        bare = model.group(1).split("/")[-1] if model else "<model>"
        return (f" (LiteLLM cannot tell which provider serves this model: write it as '<provider>/<model>' (for Ollama "
                f"'ollama_chat/{bare}'), or set the variable the agent reads its model from, often in a .env kept out of git; "
                "`agentdiff doctor` checks each agent's model)")
    key = _KEY_VARIABLE.search(text) if type(exc).__name__ == "AuthenticationError" else None
    if key is not None:
        return f" (set {key.group(0)} in the environment or in a .env beside the agent; `agentdiff doctor` shows which are set)"
    if any(message in text for message in _CREDENTIAL_MESSAGES):
        return (" (no model credentials: set GOOGLE_API_KEY, or GOOGLE_GENAI_USE_ENTERPRISE=TRUE (GOOGLE_GENAI_USE_VERTEXAI before "
                "ADK 2.13) with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, in the environment or in a .env beside the agent; "
                "`agentdiff doctor` shows which are set)")
    return ""


_SWITCH = re.compile(r"GOOGLE_GENAI_USE_(?:VERTEXAI|ENTERPRISE)")
_KEY_NAMES = re.compile(r"\b(GEMINI_API_KEY|GOOGLE_API_KEY)\b")
_SKIPPED = {".venv", "venv", ".git", "node_modules", "__pycache__", ".agentdiff", "site-packages", ".tox"}


def _key_switch(root: str, limit: int = 400) -> Optional[tuple[str, str]]:
    """A project file that sets the Vertex AI switch and reads an API key's variable (`if "GEMINI_API_KEY"
    in os.environ: os.environ["GOOGLE_GENAI_USE_VERTEXAI"] = "False"`): the key and where it is read
    (`app/agent.py:38`). The project's own .py files, at most `limit` of them."""
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIPPED and not d.startswith(".")]
        for name in files:
            if not name.endswith(".py"):
                continue
            seen += 1
            if seen > limit:
                return None
            path = os.path.join(folder, name)
            try:
                with open(path, encoding="utf-8") as handle:
                    text = handle.read(200_000)
            except (OSError, UnicodeDecodeError):
                continue
            if not _SWITCH.search(text):
                continue
            for number, line in enumerate(text.splitlines(), 1):
                key = _KEY_NAMES.search(line)
                if key is not None:
                    return key.group(1), f"{os.path.relpath(path, root)}:{number}"
    return None


def _location(package: str) -> str:
    """Where the top package of `package` would be imported from (its file or folder; "" when nowhere),
    looked up, never imported."""
    import importlib.util

    if not package:
        return ""
    try:
        spec = importlib.util.find_spec(package.split(".")[0])
    except (ImportError, ValueError):
        return ""
    if spec is None:
        return ""
    return spec.origin if spec.origin not in (None, "namespace") else next(iter(spec.submodule_search_locations or []), "")


def _is_projects_own(package: str) -> bool:
    """Whether the top package of `package` is the project's (found outside the interpreter's own and
    installed packages)."""
    where = _location(package)
    return bool(where) and not any(part in where for part in ("site-packages", "dist-packages", sys.base_prefix + "/lib"))


def _is_project_file(path: str, roots: tuple[str, ...]) -> bool:
    """A file of the project: under one of its roots, not an installed package's, nor the
    interpreter's, nor this worker's."""
    if not path or path.startswith("<"):  # <frozen importlib._bootstrap>, <string>: no file of the project
        return False
    real = os.path.realpath(path)
    parts = real.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts or os.path.dirname(real) == os.path.dirname(os.path.realpath(__file__)):
        return False
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    if any(real.startswith(prefix + os.sep) for prefix in prefixes):
        return False
    return any(real.startswith(os.path.realpath(root) + os.sep) for root in roots)


def project_origin(exc: BaseException, agents_dir: str, limit: int = 12) -> tuple[Optional[str], Optional[int], Optional[str]]:
    """Where an agent's failure is in the project's own code, for `e` and the one-line error: (the
    innermost frame's file, its line, the traceback trimmed to the project's frames and the error);
    (None, None, None) when no frame is the project's (the failure is ADK's, a library's or ours).
    A SyntaxError is where the parser stopped (the import machinery's frames say nothing). The
    project is the agents dir and the folder agentdiff runs in (the project root)."""
    roots = (agents_dir, os.getcwd())
    frames: list[Any] = [frame for frame in traceback.extract_tb(exc.__traceback__) if _is_project_file(frame.filename, roots)]
    lines = [f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}' + (f"\n    {frame.line.strip()}" if frame.line else "")
             for frame in frames[-limit:]]
    where: tuple[Optional[str], Optional[int]] = (frames[-1].filename, frames[-1].lineno) if frames else (None, None)
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno and _is_project_file(exc.filename, roots):
        where = (exc.filename, exc.lineno)
    tool = tool_of(exc) if where[0] is None else None
    if tool is not None and _is_project_file(tool[0].__code__.co_filename, roots):  # a tool ADK could not declare: the tool
        where = (tool[0].__code__.co_filename, tool[0].__code__.co_firstlineno)
    if where[0] is None:
        return None, None, None
    said = "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
    return os.path.realpath(where[0]), where[1], "\n".join([*lines, said])
