"""A case's run held to its pass-rate rule: the rule found for its id and its suite (`scoring.pass_rate`),
applied to live runs only (a replay is deterministic)."""

from __future__ import annotations

import dataclasses

from agentdiff.core.project.family import family_of
from agentdiff.core.run.case_run import CaseRun
from agentdiff.core.run.options import RunOptions
from agentdiff.core.scoring.pass_rate import PassRule, with_pass_rate


def rule_of(run: CaseRun, options: RunOptions) -> PassRule:
    suite_min, suite_confidence = family_of(run.ref).suite_pass_rule(run.ref)
    return options.pass_rules.rule(run.ref.id, suite_min, suite_confidence)


def held_to_rule(run: CaseRun, options: RunOptions, rule: "PassRule | None" = None, before: "CaseRun | None" = None) -> CaseRun:
    """`run` with its pass rate and, under a minimum, its verdict over its runs (`rule`: this one instead
    of the case's own). `before`: the run it re-scores; a verdict a run-until-confident reached at its
    stricter level keeps that level (judged again at the plain one, a re-score would undo the looks' split)."""
    if run.result.mode != "live":
        return run
    rule = rule or rule_of(run, options)
    prior = before.result.pass_rate if before is not None else None
    if prior is not None and prior.min_pass_rate is not None and prior.confidence > rule.confidence:
        rule = dataclasses.replace(rule, confidence=prior.confidence)
    result = with_pass_rate(run.result, rule)
    return run if result is run.result else dataclasses.replace(run, result=result)
