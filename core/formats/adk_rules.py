"""How each supported ADK version scores and records: the rules that changed between 1.19 and 2.13,
keyed by the version each one arrived in, so a project is scored (and its baselines written) as its
own ADK version does.

Measured by reading each release's `google/adk/evaluation` (the version given is the first release
with the rule):

| rule | from | before it |
|---|---|---|
| `match_type` by name (`"IN_ORDER"`, `"in-order"`) | 1.22.0 | only 0, 1, 2: a name is an invalid criterion |
| conformance recordings: every response of a model call (`llm_responses`) | 1.28.0 | the last one (`llm_response`) |
| actual invocation: only the chosen final event left out of `invocation_events` | 1.29.0 | every final-response event left out |
| `inline_data` parts make an event an invocation event | 1.34.0 | function call, function response or text only |
| the chosen final event kept when it holds function calls | 2.3.0 | left out |
| the final response: a text-bearing final event preferred | 2.6.0 | the last final event with parts |
| ROUGE tokenizer: NFKC, CJK per character, Unicode letters | 2.6.0 | rouge_score's default (ASCII `[a-z0-9]` words) |
| grounding-only events count, with their grounding; the final event stays (content cleared) when it has grounding | 2.8.0 | no grounding kept |
| `ignore_args` on `tool_trajectory_avg_score` | 2.9.0 | ignored: arguments always compared |
| an event with an `error_code` (not partial, no function call) is a final response | 2.9.0 | only by its parts |
| efficiency metrics (`tool_call_count_v1`, …) always reported; the final event kept with its content cleared, usage and model version copied | 2.10.0 | no such metrics (naming one: unknown metric) |
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

Version = tuple[int, int, int]

OLDEST: Version = (1, 19, 0)
NEWEST: Version = (2, 13, 0)


def parse_version(text: Optional[str]) -> Optional[Version]:
    """`"1.19.0"` → (1, 19, 0); pre-release and local suffixes ignored; None when unreadable."""
    match = re.match(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def _show(version: Version) -> str:
    return ".".join(map(str, version))


@dataclass(frozen=True)
class AdkRules:
    """The scoring rules of one ADK version (`version`); `RULES_NEWEST` for agents without ADK."""

    version: Version

    def at_least(self, *version: int) -> bool:
        return self.version >= version

    @property
    def label(self) -> str:
        return _label(self.version)

    @property
    def match_type_names(self) -> bool:
        return self.at_least(1, 22, 0)

    @property
    def recorded_response_list(self) -> bool:
        return self.at_least(1, 28, 0)

    @property
    def keep_other_final_events(self) -> bool:
        return self.at_least(1, 29, 0)

    @property
    def inline_data_events(self) -> bool:
        return self.at_least(1, 34, 0)

    @property
    def keep_final_with_calls(self) -> bool:
        return self.at_least(2, 3, 0)

    @property
    def prefer_text_final(self) -> bool:
        return self.at_least(2, 6, 0)

    @property
    def unicode_tokenizer(self) -> bool:
        return self.at_least(2, 6, 0)

    @property
    def grounding_events(self) -> bool:
        return self.at_least(2, 8, 0)

    @property
    def error_code_final(self) -> bool:
        return self.at_least(2, 9, 0)

    @property
    def ignore_args(self) -> bool:
        return self.at_least(2, 9, 0)

    @property
    def efficiency_metrics(self) -> bool:
        return self.at_least(2, 10, 0)

    @property
    def supported(self) -> bool:
        return OLDEST <= self.version[:2] + (0,) and self.version[:2] <= NEWEST[:2]


RULES_NEWEST = AdkRules(NEWEST)


@lru_cache(maxsize=64)
def rules_for(adk_version: Optional[str]) -> AdkRules:
    """The rules of the ADK version given (a version string, as `importlib.metadata` reads it); the
    newest supported ones when there is none (an agent without ADK) or it cannot be read."""
    parsed = parse_version(adk_version)
    return AdkRules(parsed) if parsed else RULES_NEWEST


def support_note(adk_version: Optional[str]) -> Optional[str]:
    """Why scores may not match this ADK version's own, or None when it is supported."""
    parsed = parse_version(adk_version)
    if parsed is None or AdkRules(parsed).supported:
        return None
    side = "older than the oldest" if parsed < OLDEST else "newer than the newest"
    return (f"ADK {_show(parsed)} is {side} version agentdiff scores exactly ({_show(OLDEST)} to {NEWEST[0]}.{NEWEST[1]}.x); "
            f"it is scored as ADK {_show(OLDEST if parsed < OLDEST else NEWEST)} scores")


@lru_cache(maxsize=64)
def _label(version: Version) -> str:
    """One string per version: every case's result names the rules it was scored by."""
    return f"ADK {_show(version)}"
