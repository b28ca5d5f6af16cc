"""An offline demo model that does what its prompt's playbook says.

The sample agents run without credentials or network: instead of calling Gemini, each agent's
model reads the **Playbook** section of the system instruction (the agent's `prompt.md`) and
follows it. Edit the prompt and the model behaves differently, as a real one would:

    Devices: kitchen light, living room lamp, bedroom heater, garage door.

    ## Playbook
    When the user says "turn on the <device>": call set_device_state(device=<device>, state="on"), then reply "The <device> is now on."
    When the user says "flight": transfer to flight_booker.
    Otherwise reply "Sorry, I can only help with your home."

* A rule matches when its quoted pattern appears in the user's latest message (case-insensitive).
  `<name>` captures a value: one of the words listed on a `Names:` line of the prompt when there
  is one (`<device>` → `Devices:`), else one word. The first matching rule wins. (Angle brackets,
  because ADK fills `{name}` in an instruction from the session state.)
* Steps run one model response at a time: `call tool(arg=value, …)` (values are `<name>`, quoted
  text or numbers), `transfer to agent`, `reply "text"`, or `reply one of "a" | "b"` (the variant is
  picked by the run's repeat number, to stand in for a model that does not always say the same).
  A call ending in `if <name>` is made only when that value is true.
* `<name>` in arguments and replies is filled from the pattern's captures and from the fields of the
  tool responses of the turn so far.

`respond(request)` works on genai-shaped dicts (native agents call it directly); `PlaybookModel` is
the same model as an ADK `BaseLlm`.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, AsyncGenerator, Optional

_RULE = re.compile(r'^\s*(?:[-*]\s*)?When the user (?:says|asks|mentions) "(?P<pattern>[^"]+)"\s*:\s*(?P<steps>.+)$', re.IGNORECASE)
_OTHERWISE = re.compile(r'^\s*(?:[-*]\s*)?Otherwise\s*,?\s*(?P<steps>.+)$', re.IGNORECASE)
_CALL = re.compile(r"^call (?P<name>\w+)\((?P<args>.*)\)$")
_ARG = re.compile(r'\s*(\w+)\s*=\s*("(?:[^"\\]|\\.)*"|<\w+>|-?\d+(?:\.\d+)?|true|false)\s*(?:,|$)')
_REPLY = re.compile(r'^reply (?:one of )?(?P<texts>".*")$')
_TRANSFER = re.compile(r"^transfer to (?P<agent>\w+)$")
_PLACEHOLDER = re.compile(r"<(\w+)>")
CONTEXT_PREFIX = "For context:"


def _instruction(request: dict[str, Any]) -> str:
    value = (request.get("config") or {}).get("system_instruction") or ""
    if isinstance(value, dict):
        return "\n".join(p.get("text", "") for p in value.get("parts") or [])
    return str(value)


def _vocabulary(prompt: str, name: str) -> Optional[list[str]]:
    plurals = {name + "s", name + "es", name[:-1] + "ies" if name.endswith("y") else name + "s"}
    for line in prompt.splitlines():
        head, sep, rest = line.partition(":")
        if sep and head.strip().lower() in plurals:
            return [item.strip() for item in rest.strip().rstrip(".").split(",") if item.strip()]
    return None


def _pattern(text: str, prompt: str) -> re.Pattern:
    out, last = [], 0
    for match in _PLACEHOLDER.finditer(text):
        out.append(re.escape(text[last : match.start()]))
        words = _vocabulary(prompt, match.group(1))
        choice = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) if words else r"[\w-]+"
        out.append(f"(?P<{match.group(1)}>{choice})")
        last = match.end()
    out.append(re.escape(text[last:]))
    return re.compile(r"(?<!\w)" + "".join(out) + r"(?!\w)", re.IGNORECASE)


def _steps(text: str) -> list[str]:
    text = text.strip().rstrip(".").strip()
    parts = re.split(r",\s*then\s+|,\s*(?=call |reply |transfer )|\s+then\s+", text)
    return [p.strip() for p in parts if p.strip()]


def playbook(prompt: str) -> list[tuple[Optional[re.Pattern], list[str]]]:
    rules: list[tuple[Optional[re.Pattern], list[str]]] = []
    for line in prompt.splitlines():
        if match := _RULE.match(line):
            rules.append((_pattern(match.group("pattern"), prompt), _steps(match.group("steps"))))
        elif match := _OTHERWISE.match(line):
            rules.append((None, _steps(match.group("steps"))))
    return rules


def _texts(content: dict[str, Any]) -> str:
    return "\n".join(p["text"] for p in content.get("parts") or [] if isinstance(p, dict) and isinstance(p.get("text"), str))


def _turn(request: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The user's latest message and the tool responses that came after it."""
    contents = request.get("contents") or []
    for index in range(len(contents) - 1, -1, -1):
        content = contents[index]
        text = _texts(content)
        if content.get("role") == "user" and text and not text.startswith(CONTEXT_PREFIX):
            responses = [
                p["function_response"]
                for later in contents[index + 1 :]
                for p in later.get("parts") or []
                if isinstance(p, dict) and p.get("function_response")
            ]
            return text, responses
    return "", []


def _fill(text: str, values: dict[str, Any]) -> str:
    return _PLACEHOLDER.sub(lambda m: str(values.get(m.group(1), m.group(0))), text)


def _value(raw: str, values: dict[str, Any]) -> Any:
    if raw.startswith('"'):
        return _fill(json.loads(raw), values)
    if raw.startswith("<"):
        return values.get(raw[1:-1], raw)
    if raw in ("true", "false"):
        return raw == "true"
    return float(raw) if "." in raw else int(raw)


def _flatten(response: dict[str, Any]) -> dict[str, Any]:
    body = response.get("response") or {}
    values = dict(body) if isinstance(body, dict) else {}
    if isinstance(values.get("result"), dict):
        values.update(values["result"])
    return values


def respond(request: dict[str, Any], repeat: Optional[int] = None) -> dict[str, Any]:
    """The model's answer to a genai-shaped request, as a genai-shaped response dict."""
    prompt = _instruction(request)
    message, responses = _turn(request)
    tools = {
        decl.get("name")
        for tool in (request.get("config") or {}).get("tools") or []
        for decl in tool.get("function_declarations") or []
    }
    done = [r for r in responses if r.get("name") in tools]
    values: dict[str, Any] = {}
    steps = ['reply "I am not sure how to help with that."']
    for pattern, rule_steps in playbook(prompt):
        match = pattern.search(message) if pattern is not None else True
        if match:
            values = match.groupdict() if pattern is not None else {}  # type: ignore[union-attr]
            steps = rule_steps
            break
    for response in done:
        values.update(_flatten(response))
    pending = None
    taken = 0
    for action in (s for s in steps if not s.startswith("reply")):
        action, _, condition = action.partition(" if ")
        if condition and not values.get(condition.strip().strip("<>")):
            continue  # a step the playbook guards, and its guard is false
        if taken < len(done):
            taken += 1
            continue
        pending = action.strip()
        break
    if pending is not None:
        step = pending
        if match := _CALL.match(step):
            args = {name: _value(raw, values) for name, raw in _ARG.findall(match.group("args"))}
            part = {"function_call": {"name": match.group("name"), "args": args}}
        elif match := _TRANSFER.match(step):
            part = {"function_call": {"name": "transfer_to_agent", "args": {"agent_name": match.group("agent")}}}
        else:
            part = {"text": f"(the playbook step {step!r} is not understood)"}
        return _answer(request, part)
    reply = next((s for s in steps if s.startswith("reply")), 'reply ""')
    texts = [json.loads(t) for t in re.findall(r'"(?:[^"\\]|\\.)*"', reply)]
    if repeat is None:
        repeat = int(os.environ.get("AGENTDIFF_REPEAT", "0") or 0)
    text = _fill(texts[repeat % len(texts)] if texts else "", values)
    return _answer(request, {"text": text})


def _answer(request: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    words = sum(len(_texts(c).split()) for c in request.get("contents") or []) + len(_instruction(request).split())
    return {
        "model_version": str(request.get("model") or "demo-playbook"),
        "content": {"role": "model", "parts": [part]},
        "usage_metadata": {"prompt_token_count": words, "candidates_token_count": max(1, len(json.dumps(part).split()))},
    }


def playbook_model(name: str = "demo-playbook") -> Any:
    """The demo model as an ADK model (imports google-adk only when an ADK agent asks for it)."""
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse

    class PlaybookModel(BaseLlm):
        model: str = name

        async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
            request = llm_request.model_dump(mode="json", exclude_none=True)
            answer = respond(request)
            # an older ADK's LlmResponse may lack a field (model_version before 1.16) and forbids extras
            yield LlmResponse.model_validate({k: v for k, v in answer.items() if k in LlmResponse.model_fields})

    return PlaybookModel()
