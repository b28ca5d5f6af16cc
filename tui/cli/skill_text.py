"""The agentdiff skill (`SKILL.md`) that `agentdiff skills install` writes: the eval loop through
`agentdiff mcp`, when to use it and when not, the shell commands when the server is not connected,
and what to change for each kind of failure."""

from __future__ import annotations

SKILL_NAME = "agentdiff-eval-loop"

SKILL = """---
name: agentdiff-eval-loop
description: Fix or change an ADK agent (its prompt, tools or code) against the project's eval cases without
  breaking others, and update a case's baseline only with the user's approval, through agentdiff (its MCP
  server, or its command line). Use when asked to make an eval case pass, to check an agent change against
  the evals, to triage eval failures, or to accept a new behaviour as a case's baseline.
---

# The eval loop with agentdiff

agentdiff runs this project's ADK eval cases (EvalSet files, conformance cases, `adk test` fixtures,
agents-cli datasets) and shows, per layer, how each run differs from its baseline: the LLM request
(instruction, tools, config), the tool calls, the response, the session, a workflow's nodes. Its MCP
server (`agentdiff mcp`) watches the files: an edit re-runs the cases it can affect by itself.

## When to use it, and when not

- Use it to make a failing eval case pass, to check that an agent change broke nothing, to find why a
  case fails, or to accept a new behaviour as a case's baseline (with the user's approval).
- Not for writing new eval cases from scratch (write the file as the project's other cases are written,
  then `run` it), not for unit tests of plain Python code (use pytest), and not to make a case pass by
  changing what it expects.

## The loop

1. `status` — the counts by status. A case not run in this session counts with its kept verdict (from
   the last run that ran it; `list_cases` says which run). A kept verdict whose files changed since is
   `stale`: `run(which="affected")` runs it. `not_run_in_this_session` says what `run(which="all")` would cost.
2. `list_cases("status:failed,error")`, then `explain(case)` on one failing case — what diverged first,
   the expected value's file and line, the failing metrics with the judge's reasons, what changed since
   the case last passed. `diff(case)` gives the layers that changed, turn by turn (turns count from 1).
3. Edit the agent (its instruction, a tool, its code) — not the eval file.
4. `run(which="affected")` — the cases your edit can affect, with their verdicts and why each ran.
5. Check that nothing else broke: `gate()` — this session's current state (once its runs are done)
   against the latest kept run; it fails on any case that passed there and fails now, and lists the cases
   by category (`regressed`, `still failing`, `fixed`). A case that failed there too is still failing, not
   a regression: when the latest kept run may itself hold a regression, name a baseline you trust
   (`gate(baseline=<a kept run's name>)`). Fix regressions before you go on.
6. Only when the user agrees that the new behaviour is right: `accept(case, turn=…, layer=…)` returns a
   plan — the exact change to the eval file, as a diff. Show it to the user. `apply(plan_digest)` writes
   it as one journal step; `undo()` (or `agentdiff undo`, or the TUI's `z`) takes it back.

## What a failure means, and what to change

| layer that diverged | what it means | what to change |
|---|---|---|
| request | the LLM request differs from the recording: the instruction, the tool declarations, the model config | a replayed (recorded) case: if the change was meant, accept it; else put the instruction or tool back |
| tool_calls | a call missing, extra, reordered, or its arguments differ | the instruction's steps, the tool's docstring or signature; never the expected calls |
| response | the answer's words (ROUGE-1 under the threshold) or a judge's score | the instruction's wording or format rules; read the judge's reason in `explain` |
| nodes | a workflow took another route, or a node's output differs | the router's rule or the node's code |
| session | the session state or events differ | the code that writes state (`output_key`, a tool's `tool_context.state`) |
| error | the run broke: an import, a missing credential, a tool raising | the file and line the error names; `doctor` says what the agents need to run |

## Flaky, new and clustered cases

- **flaky**: the case passes in some repeats and fails in others (`--num-runs`). Do not accept one run:
  fix the cause of the variance (an ambiguous instruction), or tell the user.
- **new**: the case has no baseline yet. Its first run is not a failure; the user decides whether to accept it.
- **clusters**: several cases failing the same way (the same layer and change) share one cause. Fix one,
  then `run(which="affected")` shows the others.

## Rules

- Never lower a threshold, loosen a criterion, or edit an expected value by hand to make a case pass.
  A baseline changes only through `accept` with its plan shown to the user.
- Running many cases live costs model quota: when `run` asks for `confirm`, tell the user the estimate it
  gives and ask before confirming. Leave `mode` out: recorded cases replay (no model call), the others run
  live. `mode="replay"` runs only the recorded cases; it never replays a case that has no recordings.
- A case is named by its id from `list_cases`, its end after `/` or `::`, or its eval_id.

## Without the MCP server: the command line

When the `agentdiff` tools are not connected, the same from a shell (`.venv/bin/agentdiff` in most projects):

```sh
agentdiff run --json                 # every case: verdicts and first divergences (exit 1 when one fails)
agentdiff diff CASE                  # a case's layered diff (--json for the whole document)
agentdiff run --changed-since main   # only the cases a change since main can affect
agentdiff gate                       # the newest kept run against the one before: may it merge
agentdiff accept CASE                # runs the case, prints the exact file change and asks before writing
agentdiff undo                       # take back the last accept
```
The shell cannot ask the user for you: run `agentdiff accept` only where the user answers its question.
"""
