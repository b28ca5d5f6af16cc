"""The per-layer diff engine: `diff_case(expected, actual)` → `CaseDiff`.

* request: each LLM call paired with the recorded one of the same agent and index (as ADK's replay
  pairs them), both normalised as ADK's replay compares them, then diffed by path, long strings
  word by word.
* tool_calls: per turn, the call sequences aligned on (name, args), unmatched runs paired by name,
  so one inserted call is one inserted row, a changed argument one changed row listing its paths,
  and a call that moved one moved row; the rows that decide the verdict under the match type are
  marked.
* response: per turn, a word diff of the final response with its ROUGE-1 score and threshold.
* session: app name, user and state by key, and the events aligned after ADK's exclusions.

Divergences are ordered by turn, then by time within the turn, then by layer, so the first one is
the earliest thing that went differently.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from agentdiff.core.diff.model import (
    LAYERS,
    CaseDiff,
    DiffCriteria,
    Divergence,
    EventRow,
    Layer,
    LayerStatus,
    RequestRow,
    ResponseDiff,
    SessionDiff,
    SourceLocation,
    ToolCallRow,
    TurnDiff,
    describe_change,
    short,
)
from agentdiff.core.formats.eval_config import RESPONSE_MATCH, TOOL_TRAJECTORY, EvalConfig, MatchType, eval_metrics
from agentdiff.core.formats.genai_types import FunctionCall
from agentdiff.core.diff.request_normalize import diff_requests as compare_requests
from agentdiff.core.diff.sequence import align, word_diff
from agentdiff.core.traces.model import LlmExchange, Origin, SessionSnapshot, ToolCall, Trace, Turn
from agentdiff.core.traces.from_files import FINAL_SEQ
from agentdiff.core.scoring.trajectory import trajectory_matches
from agentdiff.core.diff.tree import Change, diff_trees, freeze, pair_block, render_path

Locator = Callable[[Origin], Optional[SourceLocation]]

SESSION_EXCLUDED_STATE = ("_adk_recordings_config", "_adk_replay_config")
_EVENT_EXCLUDED = ("id", "timestamp", "invocation_id", "long_running_tool_ids", "node_info")
_EMPTY_DEFAULT_ACTIONS = ("state_delta", "artifact_delta")
_LAYER_RANK = {layer: rank for rank, layer in enumerate(LAYERS)}


def criteria_from_config(config: EvalConfig) -> DiffCriteria:
    """The match type, ignore_args and response threshold a case's config scores with."""
    from agentdiff.core.scoring.metrics import MetricNotEvaluated, trajectory_criterion

    match_type, ignore_args, threshold = MatchType.EXACT, False, None
    for metric in eval_metrics(config):
        if metric.metric_name == TOOL_TRAJECTORY:
            try:
                criterion = trajectory_criterion(metric)
            except MetricNotEvaluated:
                continue
            match_type, ignore_args = criterion.match_type, criterion.ignore_args
        elif metric.metric_name == RESPONSE_MATCH:
            threshold = metric.criterion_threshold()
    return DiffCriteria(match_type=match_type, ignore_args=ignore_args, response_threshold=threshold)


# --- tool calls -------------------------------------------------------------------------------------


def _call_key(call: ToolCall) -> Any:
    return (call.name, freeze(call.args))


def _call_changes(expected: ToolCall, actual: ToolCall) -> list[Change]:
    changes: list[Change] = []
    if expected.name != actual.name:
        changes += diff_trees(expected.name, actual.name, ("name",))
    if expected.args != actual.args:  # `{}` against null is a difference: ADK compares with ==
        changes += diff_trees(expected.args, actual.args, ("args",))
    return changes


def _response_changes(expected: ToolCall, actual: ToolCall) -> list[Change]:
    if not (expected.has_response and actual.has_response) or expected.response == actual.response:
        return []
    return diff_trees(expected.response, actual.response, ("response",))


def align_tool_calls(expected: Sequence[ToolCall], actual: Sequence[ToolCall]) -> list[ToolCallRow]:
    """Rows in reading order: equal calls are `same`, an unmatched run is paired by name into
    `changed` rows, the rest are `deleted` / `inserted`; a deleted call that reappears elsewhere
    unchanged is one `moved` row."""
    rows: list[ToolCallRow] = []

    def pair(i: Optional[int], j: Optional[int]) -> None:
        e = expected[i] if i is not None else None
        a = actual[j] if j is not None else None
        if e is not None and a is not None:
            changes = tuple(_call_changes(e, a))
            rows.append(
                ToolCallRow(
                    "changed" if changes else "same", i, j, e, a, changes, tuple(_response_changes(e, a)),
                    seq=min(e.seq, a.seq),
                )
            )
        elif e is not None:
            rows.append(ToolCallRow("deleted", i, None, e, None, seq=e.seq))
        elif a is not None:
            rows.append(ToolCallRow("inserted", None, j, None, a, seq=a.seq))

    if len(expected) == len(actual) and all(e.name == a.name and e.args == a.args for e, a in zip(expected, actual)):
        for k in range(len(expected)):  # the common case on a re-run: nothing to align
            pair(k, k)
        return rows
    for tag, i1, i2, j1, j2 in align([_call_key(c) for c in expected], [_call_key(c) for c in actual]):
        if tag == "equal":
            for k in range(i2 - i1):
                pair(i1 + k, j1 + k)
            continue
        block_e, block_a = expected[i1:i2], actual[j1:j2]
        pairs = pair_block(block_e, block_a, key=lambda call: call.name)
        pairs = _pair_leftovers(pairs, block_e, block_a)
        for i, j in pairs:
            pair(None if i is None else i1 + i, None if j is None else j1 + j)
    return _find_moves(rows)


def _pair_leftovers(pairs: list, block_e: Sequence[ToolCall], block_a: Sequence[ToolCall]) -> list:
    """In a block with one unmatched call on each side, or unmatched calls with equal args (a
    renamed tool), read the two as one changed call."""
    dels = [i for i, j in pairs if j is None]
    ins = [j for i, j in pairs if i is None]
    if not dels or not ins:
        return pairs
    matches: dict[int, int] = {}
    if len(dels) == 1 and len(ins) == 1 and len(pairs) == 2:
        matches[dels[0]] = ins[0]
    else:
        free: dict[Any, list[int]] = {}
        for j in ins:
            free.setdefault(freeze(block_a[j].args), []).append(j)
        for i in dels:
            same_args = free.get(freeze(block_e[i].args))
            if same_args:
                matches[i] = same_args.pop(0)
    if not matches:
        return pairs
    paired_ins = set(matches.values())
    out = []
    for i, j in pairs:
        if i is not None and j is None and i in matches:
            out.append((i, matches[i]))
        elif i is None and j in paired_ins:
            continue
        else:
            out.append((i, j))
    return out


def _find_moves(rows: list[ToolCallRow]) -> list[ToolCallRow]:
    deleted: dict[Any, list[ToolCallRow]] = {}
    for row in rows:
        if row.kind == "deleted":
            deleted.setdefault(_call_key(row.expected), []).append(row)  # type: ignore[arg-type]
    if not deleted:
        return rows
    moved_from: dict[int, ToolCallRow] = {}
    used: set[int] = set()
    for row in rows:
        if row.kind != "inserted":
            continue
        candidates = deleted.get(_call_key(row.actual))  # type: ignore[arg-type]
        if candidates:
            source = candidates.pop(0)
            used.add(id(source))
            moved_from[id(row)] = source
    out = []
    for row in rows:
        if id(row) in used:
            continue
        source = moved_from.get(id(row))
        if source is None:
            out.append(row)
            continue
        e, a = source.expected, row.actual
        out.append(
            ToolCallRow(
                "moved", source.expected_index, row.actual_index, e, a, (),
                tuple(_response_changes(e, a)),  # type: ignore[arg-type]
                seq=min(e.seq, a.seq),  # type: ignore[union-attr]
            )
        )
    return out


def _as_call(call: ToolCall) -> FunctionCall:
    return FunctionCall(name=call.name, args=call.args)


def mark_counting_rows(rows: list[ToolCallRow], expected: Sequence[ToolCall], actual: Sequence[ToolCall], criteria: DiffCriteria) -> tuple[list[ToolCallRow], bool]:
    """Mark the rows that make the trajectory fail under the match type; returns (rows, matches)."""
    if all(row.kind == "same" for row in rows):
        return rows, True  # equal sequences match under every match type
    exp_calls, act_calls = [_as_call(c) for c in expected], [_as_call(c) for c in actual]
    matches = trajectory_matches(act_calls, exp_calls, criteria.match_type, criteria.ignore_args)
    if matches:
        return rows, True
    if criteria.match_type is MatchType.EXACT:
        def counts(row: ToolCallRow) -> bool:
            if row.kind == "same":
                return False
            if row.kind == "changed" and criteria.ignore_args:
                return row.expected.name != row.actual.name  # type: ignore[union-attr]
            return True
        marked = [_with_counts(row, counts(row)) for row in rows]
        if not any(row.counts for row in marked):  # e.g. ignore_args with only argument changes and extra calls
            marked = [_with_counts(row, row.kind in ("inserted", "deleted", "moved")) for row in rows]
        return marked, False
    unmatched = _unmatched_expected(exp_calls, act_calls, criteria)
    marked = [
        _with_counts(row, row.kind != "same" and row.expected_index is not None and row.expected_index in unmatched)
        for row in rows
    ]
    if not any(row.counts for row in marked):
        marked = [_with_counts(row, row.kind in ("changed", "deleted", "moved")) for row in rows]
    return marked, False


def _with_counts(row: ToolCallRow, counts: bool) -> ToolCallRow:
    if row.counts == counts:
        return row
    return ToolCallRow(row.kind, row.expected_index, row.actual_index, row.expected, row.actual, row.changes, row.response_changes, counts, row.seq)


def _unmatched_expected(expected: list[FunctionCall], actual: list[FunctionCall], criteria: DiffCriteria) -> set[int]:
    def same(a: FunctionCall, e: FunctionCall) -> bool:
        return a.name == e.name and (criteria.ignore_args or a.args == e.args)

    if criteria.match_type is MatchType.IN_ORDER:
        position = 0
        for call in actual:
            if position < len(expected) and same(call, expected[position]):
                position += 1
        return set(range(position, len(expected)))
    unused = list(actual)
    missing: set[int] = set()
    for index, wanted in enumerate(expected):
        for k, call in enumerate(unused):
            if same(call, wanted):
                del unused[k]
                break
        else:
            missing.add(index)
    return missing


# --- requests ---------------------------------------------------------------------------------------


def diff_requests(expected: Sequence[LlmExchange], actual: Sequence[LlmExchange]) -> list[RequestRow]:
    by_agent_e: dict[str, list[LlmExchange]] = {}
    by_agent_a: dict[str, list[LlmExchange]] = {}
    for ex in expected:
        by_agent_e.setdefault(ex.agent, []).append(ex)
    for ex in actual:
        by_agent_a.setdefault(ex.agent, []).append(ex)
    rows: list[RequestRow] = []
    for agent in list(dict.fromkeys([*by_agent_e, *by_agent_a])):
        exp, act = by_agent_e.get(agent, []), by_agent_a.get(agent, [])
        for k in range(max(len(exp), len(act))):
            e = exp[k] if k < len(exp) else None
            a = act[k] if k < len(act) else None
            seq = min(x.seq for x in (e, a) if x is not None)
            if e is None:
                rows.append(RequestRow("inserted", agent, k, seq, None, a))
            elif a is None:
                rows.append(RequestRow("deleted", agent, k, seq, e, None))
            else:
                changes = tuple(compare_requests(e.request or {}, a.request or {}))
                rows.append(RequestRow("changed" if changes else "same", agent, k, seq, e, a, changes))
    rows.sort(key=lambda row: row.seq)
    return rows


# --- session ----------------------------------------------------------------------------------------


def normalize_event(event: dict[str, Any]) -> dict[str, Any]:
    """An event as ADK's replay compares it: ids, timestamps and replay bookkeeping removed."""
    out = {key: value for key, value in event.items() if key not in _EVENT_EXCLUDED and value is not None}
    content = out.get("content")
    if isinstance(content, dict) and isinstance(content.get("parts"), list):
        parts = []
        for part in content["parts"]:
            if isinstance(part, dict):
                part = {k: v for k, v in part.items() if k != "thought_signature" and v is not None}
                for key in ("function_call", "function_response"):
                    if isinstance(part.get(key), dict):
                        part[key] = {k: v for k, v in part[key].items() if k != "id" and v is not None}
            parts.append(part)
        out["content"] = {**content, "parts": parts}
    actions = out.get("actions")
    if isinstance(actions, dict):
        actions = {k: v for k, v in actions.items() if k not in ("requested_auth_configs", "requested_tool_confirmations")}
        if isinstance(actions.get("state_delta"), dict):
            actions["state_delta"] = {k: v for k, v in actions["state_delta"].items() if k not in SESSION_EXCLUDED_STATE}
        # empty maps and nulls are EventActions' defaults: a file that spells them out says nothing more
        actions = {k: v for k, v in actions.items() if v is not None and not (k in _EMPTY_DEFAULT_ACTIONS and v == {})}
        if actions:
            out["actions"] = actions
        else:
            out.pop("actions")
    return out


def _event_turns(events: Sequence[dict[str, Any]]) -> list[int]:
    turns, turn, seen = [], 0, False
    for event in events:
        if event.get("author") == "user":
            if seen:
                turn += 1
            seen = True
        turns.append(turn)
    return turns


def diff_session(expected: SessionSnapshot, actual: SessionSnapshot) -> SessionDiff:
    changes: list[Change] = []
    for key in ("app_name", "user_id"):
        changes += diff_trees(getattr(expected, key), getattr(actual, key), (key,))
    state_e = {k: v for k, v in expected.state.items() if k not in SESSION_EXCLUDED_STATE}
    state_a = {k: v for k, v in actual.state.items() if k not in SESSION_EXCLUDED_STATE}
    changes += diff_trees(state_e, state_a, ("state",))
    norm_e = [normalize_event(e) for e in expected.events]
    norm_a = [normalize_event(e) for e in actual.events]
    turns_e, turns_a = _event_turns(expected.events), _event_turns(actual.events)
    rows: list[EventRow] = []
    for tag, i1, i2, j1, j2 in align([freeze(e) for e in norm_e], [freeze(e) for e in norm_a]):
        if tag == "equal":
            rows += [EventRow("same", i1 + k, j1 + k, turns_e[i1 + k], str(norm_e[i1 + k].get("author", ""))) for k in range(i2 - i1)]
            continue
        pairs = pair_block(norm_e[i1:i2], norm_a[j1:j2], key=lambda event: str(event.get("author")))
        for i, j in pairs:
            if i is not None and j is not None:
                ie, ja = i1 + i, j1 + j
                rows.append(
                    EventRow("changed", ie, ja, turns_e[ie], str(norm_e[ie].get("author", "")), tuple(diff_trees(norm_e[ie], norm_a[ja])))
                )
            elif i is not None:
                rows.append(EventRow("deleted", i1 + i, None, turns_e[i1 + i], str(norm_e[i1 + i].get("author", ""))))
            else:
                assert j is not None
                rows.append(EventRow("inserted", None, j1 + j, turns_a[j1 + j], str(norm_a[j1 + j].get("author", ""))))
    return SessionDiff(tuple(changes), tuple(rows))


# --- responses --------------------------------------------------------------------------------------


def diff_response(expected: Turn, actual: Turn, criteria: DiffCriteria) -> Optional[ResponseDiff]:
    if expected.final_response is None and actual.final_response is None and not (
        expected.intermediate_responses or actual.intermediate_responses
    ):
        return None
    score = None
    if expected.final_response is not None and actual.final_response is not None:
        score = response_score(actual.final_response, expected.final_response)
    words = tuple(word_diff(expected.final_response or "", actual.final_response or ""))
    return ResponseDiff(
        expected.final_response,
        actual.final_response,
        words,
        score,
        criteria.response_threshold,
        expected.intermediate_responses,
        actual.intermediate_responses,
    )


def response_score(actual: str, expected: str) -> float:
    """ROUGE-1 F-measure as ADK's response_match_score computes it."""
    from agentdiff.core.scoring.rouge import rouge1, tokenize

    if actual == expected:  # identical texts: 1.0 unless there is no token at all (ADK: 0.0)
        if actual.isascii():
            return 1.0 if any(char.isalnum() for char in actual) else 0.0
        return 1.0 if tokenize(actual) else 0.0
    return rouge1(actual, expected).fmeasure


# --- the case ---------------------------------------------------------------------------------------


def diff_case(
    expected: Trace,
    actual: Trace,
    criteria: DiffCriteria = DiffCriteria(),
    case_id: str = "",
    locate: Optional[Locator] = None,
) -> CaseDiff:
    turn_count = max(len(expected.turns), len(actual.turns))
    compare_requests_layer = expected.has_requests  # an EvalSet baseline records no requests
    turns: list[TurnDiff] = []
    divergences: list[Divergence] = []
    for t in range(turn_count):
        e = expected.turns[t] if t < len(expected.turns) else Turn(index=t)
        a = actual.turns[t] if t < len(actual.turns) else Turn(index=t)
        missing = "expected" if t >= len(expected.turns) else "actual" if t >= len(actual.turns) else None
        requests = diff_requests(e.llm, a.llm) if compare_requests_layer else []
        rows = align_tool_calls(e.tool_calls, a.tool_calls)
        rows, matches = mark_counting_rows(rows, e.tool_calls, a.tool_calls, criteria)
        response = diff_response(e, a, criteria)
        turn = TurnDiff(t, e.user_text or a.user_text, tuple(requests), tuple(rows), matches, response, missing)  # type: ignore[arg-type]
        turns.append(turn)
        divergences += _turn_divergences(turn, e.final_origin, locate)
    session = None
    if expected.session is not None and actual.session is not None:
        session = diff_session(expected.session, actual.session)
        divergences += _session_divergences(session, expected.session, max(turn_count - 1, 0), locate)
    divergences.sort(key=lambda d: (d.turn, d.seq, _LAYER_RANK[d.layer], d.row))
    layers = _layer_statuses(expected, actual, divergences)
    return CaseDiff(case_id, criteria, tuple(turns), session, layers, tuple(divergences), error=actual.error)


def _where(locate: Optional[Locator], origin: Optional[Origin], *parts: str | int) -> Optional[SourceLocation]:
    if locate is None or origin is None:
        return None
    return locate(origin.child(*parts))


def _prefix(turn: int, layer: Layer) -> str:
    return f"turn {turn + 1} · {layer} · "


def _turn_divergences(turn: TurnDiff, final_origin: Optional[Origin], locate: Optional[Locator]) -> list[Divergence]:
    out: list[Divergence] = []
    t = turn.index
    for r, row in enumerate(turn.requests):
        label = f"{row.agent} call {row.index + 1}"
        if row.kind == "inserted":
            out.append(Divergence("request", t, r, "", "inserted", _prefix(t, "request") + f"{label} ran past the recording", None, row.actual_request, True, None, row.seq, r))
        elif row.kind == "deleted":
            out.append(Divergence("request", t, r, "", "deleted", _prefix(t, "request") + f"{label} was recorded but never made", row.expected_request, None, True, _where(locate, row.expected.origin if row.expected else None), row.seq, r))
        for change in row.changes:
            path = render_path(change.path)
            source = _where(locate, row.expected.origin if row.expected else None, *_existing(change))
            out.append(Divergence("request", t, r, path, change.kind, _prefix(t, "request") + f"{label} {describe_change(change)}", change.expected, change.actual, True, source, row.seq, r))
    for r, row in enumerate(turn.tool_calls):
        if not row.differs:
            continue
        out.append(_tool_divergence(t, r, row, turn.tool_calls, locate))
    if turn.response is not None and not turn.response.same:
        resp = turn.response
        score = ""
        if resp.score is not None:
            score = f"ROUGE-1 {resp.score:.2f}"
            if resp.threshold is not None:
                score += f" {'≥' if resp.passed else '<'} {resp.threshold:g}"
            score += " · "
        out.append(
            Divergence(
                "response", t, None, "final_response", "changed",
                _prefix(t, "response") + score + _text_change(resp.expected, resp.actual),
                resp.expected, resp.actual, resp.passed is False, _where(locate, final_origin), FINAL_SEQ, 0,
            )
        )
    return out


def _existing(change: Change) -> tuple[str | int, ...]:
    """The path of the nearest expected-side value (an added key lives in its parent)."""
    return change.path[:-1] if change.kind == "added" else change.path


def _text_change(expected: Optional[str], actual: Optional[str]) -> str:
    if expected is None:
        return f"unexpected answer {short(actual)}"
    if actual is None:
        return f"no answer (expected {short(expected)})"
    change = Change("changed", (), (), expected, actual, tuple(word_diff(expected, actual)))
    return describe_change(change).removeprefix("(value) ")


def _tool_divergence(t: int, r: int, row: ToolCallRow, rows: Sequence[ToolCallRow], locate: Optional[Locator]) -> Divergence:
    prefix = _prefix(t, "tool_calls")
    e, a = row.expected, row.actual
    if row.kind == "inserted":
        anchor = next((x.expected for x in reversed(rows[:r]) if x.expected is not None), None)
        return Divergence("tool_calls", t, r, "", "inserted", prefix + f"extra call {_call_text(a)}", None, _call_dict(a), row.counts, _where(locate, anchor.origin if anchor else None), row.seq, r)
    if row.kind == "deleted":
        return Divergence("tool_calls", t, r, "", "deleted", prefix + f"missing call {_call_text(e)}", _call_dict(e), None, row.counts, _where(locate, e.origin if e else None), row.seq, r)
    if row.kind == "moved":
        return Divergence(
            "tool_calls", t, r, "", "moved",
            prefix + f"{row.name} moved from call {row.expected_index + 1} to {row.actual_index + 1}",  # type: ignore[operator]
            _call_dict(e), _call_dict(a), row.counts, _where(locate, e.origin if e else None), row.seq, r,
        )
    changes = row.changes or row.response_changes
    first = changes[0]
    more = f" (+{len(changes) - 1} more)" if len(changes) > 1 else ""
    if first.path[0] == "args" and e is not None:
        source = _where(locate, e.args_origin, *_existing(first)[1:])
    elif first.path[0] == "response" and e is not None:
        source = _where(locate, e.response_origin, *_existing(first)[1:])
    else:
        source = _where(locate, e.origin if e else None, "name")
    name = e.name if e is not None and first.path[0] == "name" else row.name
    kind = "changed" if row.changes else "response"
    summary = prefix + (f"{describe_change(first)}{more}" if first.path[0] == "name" else f"{name} {describe_change(first)}{more}")
    return Divergence("tool_calls", t, r, render_path(first.path), kind, summary, first.expected, first.actual, row.counts and bool(row.changes), source, row.seq, r)


def _call_dict(call: Optional[ToolCall]) -> Optional[dict[str, Any]]:
    return None if call is None else {"name": call.name, "args": call.args}


def _call_text(call: Optional[ToolCall]) -> str:
    return "" if call is None else f"{call.name}({short(call.args, 50)})"


def _session_divergences(session: SessionDiff, expected: SessionSnapshot, last_turn: int, locate: Optional[Locator]) -> list[Divergence]:
    out: list[Divergence] = []
    for r, row in enumerate(session.events):
        if row.kind == "same":
            continue
        label = f"event {(row.expected_index if row.expected_index is not None else row.actual_index) + 1} ({row.author})"  # type: ignore[operator]
        if row.kind == "changed":
            first = row.changes[0]
            more = f" (+{len(row.changes) - 1} more)" if len(row.changes) > 1 else ""
            summary = f"{label} {describe_change(first)}{more}"
            source = _where(locate, expected.origin, "events", row.expected_index, *_existing(first))  # type: ignore[arg-type]
            path = render_path(first.path)
        else:
            summary = f"{label} {'extra' if row.kind == 'inserted' else 'missing'}"
            source = _where(locate, expected.origin, "events", row.expected_index) if row.expected_index is not None else None
            path = ""
        out.append(Divergence("session", row.turn, r, path, row.kind, _prefix(row.turn, "session") + summary, None, None, True, source, FINAL_SEQ + 1, r))
    for r, change in enumerate(session.changes):
        source = _where(locate, expected.origin, *_existing(change))
        out.append(
            Divergence("session", last_turn, None, render_path(change.path), change.kind, f"session · {describe_change(change)}", change.expected, change.actual, True, source, FINAL_SEQ + 2, r)
        )
    return out


def _layer_statuses(expected: Trace, actual: Trace, divergences: Sequence[Divergence]) -> tuple[LayerStatus, ...]:
    out = []
    for layer in LAYERS:
        mine = [d for d in divergences if d.layer == layer]
        reason = _absent_reason(layer, expected, actual)
        if reason and not mine:
            out.append(LayerStatus(layer, "absent", reason=reason))
            continue
        if not mine:
            out.append(LayerStatus(layer, "same"))
            continue
        more = f" (+{len(mine) - 1} more)" if len(mine) > 1 else ""
        out.append(LayerStatus(layer, "changed", len(mine), mine[0].summary + more))
    return tuple(out)


def _absent_reason(layer: Layer, expected: Trace, actual: Trace) -> Optional[str]:
    if layer == "request" and not expected.has_requests:
        return "the baseline has no recorded LLM requests"
    if layer == "session" and (expected.session is None or actual.session is None):
        return "no session to compare" if expected.session is not None else "the baseline has no session"
    if layer == "response" and not any(t.final_response is not None for t in (*expected.turns, *actual.turns)):
        return "no final responses"
    if layer == "tool_calls" and not any(t.tool_calls for t in (*expected.turns, *actual.turns)):
        return "no tool calls on either side"
    return None
