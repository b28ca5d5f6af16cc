"""The case filter of the `/` key (`tui/case_filter.py`): a query of words and `key:value` tokens,
each token a condition every shown case meets, `!` inverting one. Pure functions: facts in, a
yes or no (or a parse error) out."""

from __future__ import annotations

import pytest
from agentdiff.tui.case_filter import CaseFacts, matches, parse_error

REFUND = CaseFacts(
    id="agents/customer_service/refunds.evalset.json::refund_Delivered_order",
    status="failed",
    agent="customer_service",
    label="wrong tool",
    mode="live",
    changed_layers=("tool_calls", "response"),
)
LIGHTS = CaseFacts(id="agents/home/conformance/lights/kitchen_on", status="passed", agent="home_automation", mode="replay")
UNRUN = CaseFacts(id="agents/trip/trips.evalset.json::rome", status="not run")


def shown(query: str) -> list[str]:
    """The names of the example cases the query keeps, in order."""
    return [name for name, case in (("refund", REFUND), ("lights", LIGHTS), ("unrun", UNRUN)) if matches(query, case)]


def test_the_docstring_examples_refund_failed_and_failed_or_error_mean_what_they_say():
    # "refund status:failed": cases whose id holds "refund" and that failed
    assert shown("refund status:failed") == ["refund"]
    # "status:failed,error": either status
    errored = CaseFacts(id="x::y", status="error")
    assert matches("status:failed,error", errored) and matches("status:failed,error", REFUND)


def test_the_docstring_example_a_quoted_label_with_spaces_is_one_value():
    # 'agent:trip_planner !label:"flaky model"': trip_planner's cases not labelled "flaky model"
    # (one of the default labels, which hold spaces)
    rome = CaseFacts(id="agents/trip_planner/trips.evalset.json::rome", status="failed", agent="trip_planner")
    flaky = CaseFacts(id="agents/trip_planner/trips.evalset.json::paris", status="flaky", agent="trip_planner", label="flaky model")
    assert matches('agent:trip_planner !label:"flaky model"', flaky) is False
    assert matches('agent:trip_planner !label:"flaky model"', rome) is True
    assert matches('status:"not run"', CaseFacts(id="x::y", status="not run")) is True


def test_an_empty_or_blank_query_keeps_every_case():
    assert shown("") == shown("   ") == ["refund", "lights", "unrun"]


def test_a_word_keeps_the_cases_whose_id_holds_it_ignoring_case():
    assert shown("refund") == ["refund"]
    assert shown("DELIVERED") == ["refund"]
    assert shown("kitchen_ON") == ["lights"]
    assert shown("agents/") == ["refund", "lights", "unrun"]
    assert shown("nowhere") == []


def test_a_word_is_looked_up_in_the_id_only_not_in_the_agent_or_label():
    assert shown("customer_service") == ["refund"]  # in its id too
    assert shown("wrong") == []  # only its label says "wrong tool"
    assert shown("home_automation") == []  # only its agent


def test_every_token_must_match():
    assert shown("refund order") == ["refund"]
    assert shown("refund kitchen") == []


def test_status_matches_by_its_beginning_and_a_comma_list_means_either():
    assert shown("status:failed") == ["refund"]
    assert shown("status:FAILED") == ["refund"]
    assert shown("status:fail") == ["refund"]  # by its beginning, as `agent:` matches a part
    assert shown("status:ailed") == []  # not a part elsewhere
    assert shown("status:failed,passed") == ["refund", "lights"]
    assert shown("status:passed,") == ["lights"]  # an empty alternative is ignored


def test_agent_label_and_mode_match_a_part_of_the_value_ignoring_case():
    assert shown("agent:customer") == ["refund"]
    assert shown("agent:AUTOMATION") == ["lights"]
    assert shown("agent:customer,home") == ["refund", "lights"]
    assert shown("label:wrong") == ["refund"]
    assert shown("mode:replay") == ["lights"]
    assert shown("mode:l") == ["refund", "lights"]  # "live" and "replay" both hold an l


def test_an_empty_value_is_no_constraint_yet_as_the_filter_is_typed_live():
    everything = shown("")
    assert shown("agent:") == everything and shown("status:") == everything and shown("status:,") == everything
    assert shown("!status:") == []


def test_layer_matches_a_changed_layer_by_its_beginning_and_lowers_only_the_query():
    assert shown("layer:tool_calls") == ["refund"]
    assert shown("layer:TOOL_CALLS") == ["refund"]
    assert shown("layer:tool") == ["refund"]  # by its beginning
    assert shown("layer:calls") == []
    assert shown("layer:session,response") == ["refund"]
    assert shown("layer:request") == []


def test_a_bang_inverts_one_token():
    assert shown("!refund") == ["lights", "unrun"]
    assert shown("!status:passed") == ["refund", "unrun"]
    assert shown("!label:wrong") == ["lights", "unrun"]  # no label: not "wrong"
    assert shown("!layer:response") == ["lights", "unrun"]
    assert shown("agents/ !status:failed !status:passed") == ["unrun"]


def test_a_lone_bang_is_ignored():
    assert shown("!") == ["refund", "lights", "unrun"]
    assert shown("refund !") == ["refund"]


def test_words_and_keys_combine():
    assert shown("refund status:failed agent:customer layer:tool_calls mode:live") == ["refund"]
    assert shown("refund status:passed") == []
    assert shown("agents/ !agent:customer mode:replay") == ["lights"]


def test_an_unknown_key_is_searched_as_a_word():
    case = CaseFacts(id="suite::owner:alice", status="passed")
    assert matches("owner:alice", case) is True
    assert matches("owner:bob", case) is False


@pytest.mark.parametrize("query", ["", "refund", "status:failed", "!agent:x", "label:wrong tool", "layer:request,response"])
def test_queries_with_known_keys_have_no_parse_error(query):
    assert parse_error(query) is None


def test_an_unknown_key_is_a_parse_error_naming_it_and_the_known_keys():
    assert parse_error("refund colour:red") == "unknown filter key 'colour' (use status, agent, label, mode, layer)"
    assert parse_error("!stat:failed") == "unknown filter key 'stat' (use status, agent, label, mode, layer)"


@pytest.mark.parametrize("query", ["agents/x.evalset.json::case:1", "refunds.evalset.json::case", "a.b:c"])
def test_a_colon_after_a_path_or_a_dotted_name_is_not_a_key(query):
    assert parse_error(query) is None


def test_the_first_unknown_key_is_the_one_reported():
    assert parse_error("one:1 two:2") == "unknown filter key 'one' (use status, agent, label, mode, layer)"


def test_a_status_or_layer_matches_by_its_beginning_and_an_unknown_one_lists_the_valid_ones():
    failed = CaseFacts(id="a::b", status="failed", changed_layers=("tool_calls",))
    assert matches("status:fail", failed) and matches("layer:tool", failed) and not matches("status:pass", failed)
    assert parse_error("status:bogus") == "unknown status 'bogus' (use passed, failed, error, not_evaluated, flaky, inconclusive, new, stale, running, not run)"
    assert parse_error("layer:tools") == "unknown layer 'tools' (use request, tool_calls, response, session, nodes)"
    assert parse_error("status:fail,err") is None
