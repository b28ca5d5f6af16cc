"""A case's diff as a coding agent reads it over MCP: what changed and nothing twice. Turns count from 1
(`turn`, as every argument and summary counts them); a turn shows the layers that changed (all with
`layers="all"`); a long text is given once, as its changed lines (`text_diff`), not as both whole
sides; word lists and empty values are left out (the summaries quote what changed)."""

from __future__ import annotations

from typing import Any, Optional

from agentdiff.core.diff.text_lines import line_rows

LONG = 200  # characters: a text longer than this (on either side) is given as its changed lines
LINE = 300  # characters of one unchanged line kept (its middle is cut)
TEXT_DIFF = ("long texts as their lines: ' N:' unchanged, '-N:' removed (N: the expected's line), '+N:' added, "
             "'~N:' changed, its words [-removed-]{+added+}; N counts the actual text's lines")


def _clip(text: str, limit: int = LINE) -> str:
    return text if len(text) <= limit else f"{text[:limit // 2]} … {text[-limit // 2:]}"


def text_diff(expected: str, actual: str) -> list[str]:
    """Two texts as their changed lines with a little context, unchanged runs folded to a count."""
    out = []
    for row in line_rows(expected, actual):
        if row.kind == "same":
            out.append(f" {row.actual_number}: {_clip(row.actual or '')}")
        elif row.kind == "folded":
            out.append(f"⋯ {row.folded} unchanged lines")
        elif row.kind == "deleted":
            out.append(f"-{row.expected_number}: {row.expected}")
        elif row.kind == "inserted":
            out.append(f"+{row.actual_number}: {row.actual}")
        else:
            marked = "".join(op.text if op.op == "equal" else f"[-{op.text}-]" if op.op == "delete" else f"{{+{op.text}+}}"
                             for op in row.words)
            out.append(f"~{row.actual_number}: {marked}")
    return out


def _long(*values: Any) -> bool:
    return all(isinstance(v, str) for v in values) and any(len(v) > LONG for v in values)


def _texts(item: dict[str, Any], expected: str = "expected", actual: str = "actual") -> bool:
    """`item`'s two sides given as a text diff when they are long texts; whether they were."""
    if not _long(item.get(expected), item.get(actual)):
        return False
    item["text_diff"] = text_diff(item.pop(expected), item.pop(actual))
    return True


def pruned(value: Any) -> Any:
    """Without None, empty lists and empty objects (at any depth)."""
    if isinstance(value, dict):
        out = {k: pruned(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None and v != [] and v != {}}
    if isinstance(value, list):
        return [pruned(v) for v in value]
    return value


def _turn_from_one(item: dict[str, Any]) -> dict[str, Any]:
    if isinstance(item.get("turn_index"), int):
        item = {("turn" if k == "turn_index" else k): (v + 1 if k == "turn_index" else v) for k, v in item.items()}
    return item


def divergence(item: dict[str, Any], sides: bool = True) -> dict[str, Any]:
    """A divergence, its turn from 1; its two sides (when kept) as a text diff when long."""
    item = _turn_from_one(dict(item))
    if not sides:
        item.pop("expected", None)
        item.pop("actual", None)
    else:
        _texts(item)
    return item


def _change(change: dict[str, Any], seen: Optional[dict[tuple, str]] = None, where: str = "") -> dict[str, Any]:
    """A change without its word list; long texts as a text diff, given once: the same diff again (one
    prompt edit shows in every request) says where it was given."""
    change = dict(change)
    change.pop("words", None)
    if _texts(change) and seen is not None:
        key = tuple(change["text_diff"])
        if key in seen:
            change["text_diff"] = f"the same as {seen[key]}"
        else:
            seen[key] = where
    return change


def _changed_row(row: dict[str, Any]) -> bool:
    return row.get("kind") not in (None, "same", "equal") or bool(row.get("changes")) or bool(row.get("response_changes"))


def _turn(turn: dict[str, Any], every: bool, seen: dict[tuple, str]) -> dict[str, Any]:
    number = turn["turn_index"] + 1
    out: dict[str, Any] = {"turn": number, "user_text": turn.get("user_text")}
    if turn.get("missing"):
        out["missing"] = turn["missing"]
    requests = [{**row, "changes": [_change(c, seen, f"turn {number} · {row.get('agent')} call {row.get('index', 0) + 1} · {c.get('path')}")
                                    for c in row.get("changes") or ()]} for row in turn.get("request") or ()]
    requests = requests if every else [{k: v for k, v in row.items() if k != "notes"} for row in requests if _changed_row(row)]  # notes: how both sides were normalised
    if requests:
        out["request"] = requests
    calls = turn.get("tool_calls")
    if calls is not None:
        rows = [{**row, "changes": [_change(c) for c in row.get("changes") or ()],
                 "response_changes": [_change(c) for c in row.get("response_changes") or ()]} for row in calls.get("rows") or ()]
        changed = [row for row in rows if _changed_row(row)]
        if every or changed or calls.get("matches") is False:
            out["tool_calls"] = {"matches": calls.get("matches"), "rows": rows if every else changed}
    nodes = turn.get("nodes")
    if nodes is not None:
        rows = nodes.get("rows") or []
        changed = [row for row in rows if _changed_row(row)]
        if every or changed:
            out["nodes"] = {**nodes, "rows": rows if every else changed} if every else {"rows": changed}
    response = turn.get("response")
    if response is not None and (every or response.get("expected") != response.get("actual") or response.get("passed") is False):
        response = {k: v for k, v in response.items() if k != "words"}
        _texts(response)
        out["response"] = response
    if "session" in turn:
        out["session"] = turn["session"]
    return out


def lean_diff(document: dict[str, Any], every: bool = False) -> dict[str, Any]:
    """`diff_to_dict`'s document (turns included) as an assistant reads it (see the module's doc)."""
    doc = {k: v for k, v in document.items() if k not in ("schema_version", "agentdiff_version")}
    seen: dict[tuple, str] = {}
    if doc.get("first_divergence"):
        doc["first_divergence"] = divergence(doc["first_divergence"], sides=False)  # its two sides: in its turn, below
    doc["divergences"] = [divergence(d, sides=False) for d in doc.get("divergences") or ()]  # their sides are in the turns
    doc["turns"] = [_turn(t, every, seen) for t in doc.get("turns") or ()]
    session = doc.get("session")
    if isinstance(session, dict):
        events = [_turn_from_one({**e, "changes": [_change(c) for c in e.get("changes") or ()]}) for e in session.get("events") or ()]
        doc["session"] = {"changes": [_change(c) for c in session.get("changes") or ()],
                          "events": events if every else [e for e in events if _changed_row(e)]}
    said = {d.get("summary") for d in doc["divergences"]}
    layers = [{k: v for k, v in layer.items() if not (k == "summary" and v in said)} for layer in doc.get("layers") or ()]
    doc["layers"] = layers if every else [layer for layer in layers if layer.get("status") == "changed"]
    if not every and len(doc["layers"]) < len(layers):
        doc["other_layers"] = "; ".join(f"{l['layer']} {l.get('status')}" + (f" ({l['reason']})" if l.get("reason") else "")
                                       for l in layers if l.get("status") != "changed")
    doc = pruned(doc)
    if _holds(doc, "text_diff"):
        doc["text_diffs"] = TEXT_DIFF
    return doc


def _holds(value: Any, key: str) -> bool:
    if isinstance(value, dict):
        return key in value or any(_holds(v, key) for v in value.values())
    return isinstance(value, list) and any(_holds(v, key) for v in value)
