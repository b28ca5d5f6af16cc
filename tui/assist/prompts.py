"""`agentdiff mcp`'s prompts: the eval loop's common asks as slash commands a client offers
(`/mcp__agentdiff__fix-case` in Claude Code), each the steps of the skill for that ask."""

from __future__ import annotations

from typing import Any


def add_prompts(server: Any) -> None:
    @server.prompt(name="fix-case", title="Fix a failing eval case",
                   description="Make one failing case pass by changing the agent, without breaking the others.")
    def fix_case(case: str) -> str:
        return (f"Make the eval case `{case}` pass by changing the agent (its instruction, a tool or its code), never the eval file "
                "or a threshold. With the agentdiff tools: 1. explain(case) — what diverged first, and where the expected value "
                "is; diff(case) for the whole picture. 2. Edit the agent. 3. run(which='affected') — the cases your edit can affect, "
                "re-run. 4. gate() — this session against the last kept run: nothing that passed may fail now. Fix any regression "
                "before you stop. 5. If the case's expected value itself is wrong, do not edit it: say so, and offer accept(case) "
                "with its plan for the user to approve.")

    @server.prompt(name="triage", title="Triage the failing cases",
                   description="Group the project's failing cases by cause and say what to fix first.")
    def triage() -> str:
        return ("Triage this project's eval failures with the agentdiff tools. 1. status() — the counts (kept verdicts count "
                "until the cases run in this session). 2. list_cases(filter='status:failed,error') — each failing case's first "
                "divergence. 3. Group them by cause (the same layer and the same change: a tool call missing, a prompt line, an "
                "error's file and line); explain(case) on one case per group. 4. Report each group: its cases, the cause, the file "
                "and line to change, and whether the agent or the expectation looks wrong. Change nothing.")

    @server.prompt(name="check-change", title="Check a change against the evals",
                   description="Run the cases an edit can affect and say whether anything broke.")
    def check_change() -> str:
        return ("Check my latest change against this project's evals with the agentdiff tools: run(which='affected'), then "
                "gate() (this session's current state against the last kept run). Report what changed verdict, each regression "
                "with its first divergence and file and line, and whether the gate passes. Change nothing.")
