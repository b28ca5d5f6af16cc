"""agents-cli's cloud metrics, run as `agents-cli eval grade` runs them: through Google's eval SDK
(`agentplatform`, which `google-cloud-aiplatform[evaluation]` installs — the `eval` extra of an
agents-cli project) in the project's interpreter, against Google's cloud eval service.

Each metric is built from its config entry as agents-cli builds it: a built-in name is passed to the
SDK by name; an entry with a `prompt_template` (or a built-in parameterised) is an `LLMMetric`; an
entry with `execution: remote` a `CodeExecutionMetric`. The case is the traced case `eval generate`
writes (events without content dropped, as agents-cli drops them), evaluated by
`Client(project, location).evals.evaluate`. The project is `GOOGLE_CLOUD_PROJECT` or the credentials'
own; the location is `global` unless `AGENTDIFF_EVAL_LOCATION` names one (agents-cli's default, and its
`--region`); `GOOGLE_VERTEX_BASE_URL`, google-genai's endpoint override, is honoured.

When the SDK is missing, or no project and credentials are set, every cloud metric is answered with
what to do instead, and nothing is sent.

The SDK is imported here only inside functions: this module runs in workers.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any, Optional

LOCATION = "global"
RETRIES = {"attempts": 5, "initial_delay": 1.0, "max_delay": 8.0, "http_status_codes": [408, 429, 500, 502, 503, 504]}
NO_SDK = ("needs Google's eval SDK in the project's environment: install `google-cloud-aiplatform[evaluation]` "
          "(agents-cli projects: `uv sync --extra eval`)")
NO_PROJECT = ("is run by Google's cloud eval service: set GOOGLE_CLOUD_PROJECT (or `gcloud config set project`) and "
              "Google Cloud credentials (`gcloud auth application-default login`)")
BODY_KEYS = ("prompt_template", "custom_function", "custom_function_file", "remote_custom_function")
AGENTDIFF_KEYS = ("threshold",)  # keys of an entry that are agentdiff's, not the SDK's


def grade_cloud(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """name → {score, explanation, error_message[, rubric_verdicts]} for each cloud metric of the
    request, scored on its `case`."""
    wanted = request.get("cloud") or []
    if not wanted:
        return {}
    project = _project()
    if project is None:
        return {m["name"]: _error(f"`{m['name']}` {NO_PROJECT}") for m in wanted}
    try:
        import agentplatform
        from agentplatform import types
    except ImportError:
        return {m["name"]: _error(f"`{m['name']}` {NO_SDK}") for m in wanted}
    try:
        metrics = [_metric(types, m) for m in wanted]
        case = types.EvalCase.model_validate(request.get("case") or {})
        for turn in (case.agent_data.turns if case.agent_data else None) or []:
            turn.events = [event for event in turn.events or [] if event.content]
        options: dict[str, Any] = {"retry_options": RETRIES}
        if os.environ.get("GOOGLE_VERTEX_BASE_URL"):  # google-genai's override of the endpoint (a proxy, a private one)
            options["base_url"] = os.environ["GOOGLE_VERTEX_BASE_URL"]
        client = agentplatform.Client(project=project, location=os.environ.get("AGENTDIFF_EVAL_LOCATION") or LOCATION,
                                      http_options=options)
        result = client.evals.evaluate(dataset=types.EvaluationDataset(eval_cases=[case]), metrics=metrics)
    except Exception as exc:  # the service, the credentials or the entry refused: every metric says why
        return {m["name"]: _error(f"{type(exc).__name__}: {exc}") for m in wanted}
    return _read(result, [m["name"] for m in wanted])


def _project() -> Optional[str]:
    """The Cloud project agents-cli would use: the environment's, else that of the application
    default credentials when a credentials file is there (asking Compute Engine's metadata server
    instead would stall a machine without one: there, set GOOGLE_CLOUD_PROJECT)."""
    if os.environ.get("GOOGLE_CLOUD_PROJECT"):
        return os.environ["GOOGLE_CLOUD_PROJECT"]
    if not credentials_file():
        return None
    try:
        import google.auth

        _credentials, project = google.auth.default()
    except Exception:  # unreadable credentials: nothing to run as
        return None
    return project or None


def credentials_file(environ: Optional[dict[str, str]] = None) -> Optional[str]:
    """The application default credentials' file, when there is one: GOOGLE_APPLICATION_CREDENTIALS,
    else gcloud's `application-default login`."""
    env = os.environ if environ is None else environ
    if env.get("GOOGLE_APPLICATION_CREDENTIALS"):
        return env["GOOGLE_APPLICATION_CREDENTIALS"]
    config = env.get("CLOUDSDK_CONFIG") or os.path.join(os.path.expanduser("~"), ".config", "gcloud")
    path = os.path.join(config, "application_default_credentials.json")
    return path if os.path.isfile(path) else None


def _metric(types: Any, metric: dict[str, Any]) -> Any:
    entry = {key: value for key, value in (metric.get("entry") or {}).items() if key not in AGENTDIFF_KEYS}
    if entry.get("custom_function_file") is not None:  # its text, as agents-cli reads it into the entry
        entry["custom_function"] = metric.get("source")
        del entry["custom_function_file"]
    if not entry:
        return metric["name"]  # a built-in, by name: the SDK resolves it
    if entry.pop("execution", "local") == "remote":
        return types.CodeExecutionMetric.model_validate(entry)
    if not any(key in entry for key in BODY_KEYS):  # a built-in parameterised: by the name the service registers
        entry["name"] = _registered(str(entry.get("name") or metric["name"]))
    return types.LLMMetric.model_validate(entry)


def _registered(name: str) -> str:
    """A built-in's versioned name (`final_response_quality` → `final_response_quality_v1`): the newest
    the SDK lists, as agents-cli resolves it."""
    try:
        from agentplatform._genai._evals_constant import SUPPORTED_PREDEFINED_METRICS
    except ImportError:
        return name
    lowered = name.lower()
    if lowered in SUPPORTED_PREDEFINED_METRICS:
        return lowered
    versions = [(int(match.group(1)), candidate) for candidate in SUPPORTED_PREDEFINED_METRICS
                if (match := re.fullmatch(rf"{re.escape(lowered)}_v(\d+)", candidate))]
    return max(versions)[1] if versions else name


def _read(result: Any, names: list[str]) -> dict[str, dict[str, Any]]:
    cases = result.eval_case_results or []
    candidates = (cases[0].response_candidate_results or []) if cases else []
    found = dict(candidates[0].metric_results or {}) if candidates else {}
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        got = found.get(name)
        if got is None:  # a built-in the SDK keyed by its versioned name
            got = next((value for key, value in found.items() if key.lower().startswith(name.lower())), None)
        if got is None:
            out[name] = _error("the eval service gave no result for this metric")
            continue
        score = got.score
        out[name] = {"score": float(score) if isinstance(score, (int, float)) and math.isfinite(score) else None,
                     "explanation": got.explanation, "error_message": got.error_message}
        if getattr(got, "rubric_verdicts", None):
            out[name]["rubric_verdicts"] = [v.model_dump(mode="json", exclude_none=True) for v in got.rubric_verdicts]
    return out


def _error(message: str) -> dict[str, Any]:
    return {"score": None, "explanation": None, "error_message": message}
