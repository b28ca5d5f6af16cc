"""agents-cli's formats read as its SDK reads them: the scaffold's dataset and config, continuation and
trace cases, grade results, the manifest; and bad files as located errors (the hostile-bytes fuzz in
test_hardening covers these loaders too)."""

from __future__ import annotations

import json
import shutil

from agentdiff.core.formats.agents_cli.dataset import load_dataset
from agentdiff.core.formats.agents_cli.grade_results import load_grade_results
from agentdiff.core.formats.agents_cli.manifest import find_manifest
from agentdiff.core.formats.agents_cli.metrics_config import load_metrics_config
from conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "agents_cli"


def test_the_scaffolds_dataset_and_config_load(tmp_path):
    loaded, errors = load_dataset(FIXTURES / "basic-dataset.json", "tests/eval/datasets/basic-dataset.json")
    assert errors == [] and loaded.keys == ("greeting", "weather_query", "capital_lookup")
    assert loaded.cases[2].reference.response.text() == "The capital of France is Paris."
    shutil.copy(FIXTURES / "eval_config.yaml", tmp_path / "eval_config.yaml")
    (tmp_path / "response_quality.py").write_text("def evaluate(instance):\n    return {'score': 5}\n")
    config, errors = load_metrics_config(tmp_path / "eval_config.yaml", "tests/eval/eval_config.yaml")
    assert errors == [] and [(m.name, m.where, m.source_file) for m in config.metrics] == [("custom_response_quality", "local", "response_quality.py")]
    assert "def evaluate" in config.metrics[0].source  # the file's text, as agents-cli reads it in


def test_camel_case_keys_are_read_and_unknown_keys_refused_except_on_a_case(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"evalCases": [{"evalCaseId": "a", "prompt": {"role": "user", "parts": [{"text": "hi"}]}, "myField": 1}]}))
    loaded, errors = load_dataset(path)
    assert errors == [] and loaded.keys == ("a",) and loaded.cases[0].model_extra == {"myField": 1}
    path.write_text(json.dumps({"eval_cases": [{"prompt": {"role": "user", "parts": [{"text": "hi"}]},
                                                "reference": {"role": "model", "parts": [{"text": "x"}]}}]}, indent=2))
    _, errors = load_dataset(path, "d.json")
    assert [(e.path, e.line) for e in errors][:1] == [("eval_cases[0].reference.role", 13)]  # a bare Content: refused, as the SDK does


def test_a_datasets_own_top_level_keys_are_ignored_as_agents_cli_generate_ignores_them(tmp_path):
    """akoita/mcp-tripwire's layout: `eval_set_id` and `description` beside `eval_cases`; agents-cli 1.11 runs all three."""
    path = tmp_path / "tool_poisoning.json"
    cases = [{"eval_case_id": f"c{i}", "prompt": {"role": "user", "parts": [{"text": f"try {i}"}]}} for i in range(3)]
    path.write_text(json.dumps({"eval_set_id": "tool_poisoning", "description": "poisoned tool descriptions", "eval_cases": cases}))
    loaded, errors = load_dataset(path)
    assert errors == [] and loaded.keys == ("c0", "c1", "c2")
    cases[1]["prompt"]["parts"][0]["colour"] = "red"  # inside a case, what agents-cli refuses is still refused
    path.write_text(json.dumps({"eval_set_id": "x", "eval_cases": cases}))
    _, errors = load_dataset(path)
    assert errors and "colour" in errors[0].message + str(errors[0].path)


def test_cases_agents_cli_would_not_run_are_located_errors(tmp_path):
    user = {"author": "user", "content": {"role": "user", "parts": [{"text": "and tomorrow?"}]}}
    agent = {"author": "app", "content": {"role": "model", "parts": [{"text": "sunny"}]}}
    cases = [
        {"eval_case_id": "both", "prompt": {"parts": [{"text": "x"}]}, "agent_data": {"turns": [{"turn_index": 0, "events": [user]}]}},
        {"eval_case_id": "neither"},
        {"eval_case_id": "ends_with_the_agent", "agent_data": {"turns": [{"turn_index": 0, "events": [user, agent]}]}},
        {"eval_case_id": "scenario", "user_scenario": {"starting_prompt": "hi"}},  # a scenario needs its plan too
        {"eval_case_id": "fine", "agent_data": {"turns": [{"turn_index": 0, "events": [user, agent]}, {"turn_index": 1, "events": [user]}]}},
        {"eval_case_id": "fine"},
    ]
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"eval_cases": cases}, indent=2))
    _, errors = load_dataset(path, "d.json")
    said = {e.path: e.message for e in errors}
    assert set(said) == {f"eval_cases[{i}]" for i in (0, 1, 2, 3, 5)}
    assert "both a `prompt` and `agent_data.turns`" in said["eval_cases[0]"]
    assert "last event must be the user's message" in said["eval_cases[2]"]
    assert "needs a `starting_prompt` and a `conversation_plan`" in said["eval_cases[3]"] and "duplicate eval_case_id 'fine'" in said["eval_cases[5]"]
    assert all(e.line for e in errors)


def test_a_trace_and_its_grade_results_load_with_the_graded_case_for_each_result(tmp_path):
    trace = {"eval_cases": [{
        "prompt": {"parts": [{"text": "Weather in SF?"}], "role": "user"},
        "responses": [{"response": {"parts": [{"text": "Foggy."}], "role": "model"}}],
        "eval_case_id": "weather_query",
        "agent_data": {"agents": {"app": {"agent_id": "app", "agent_type": "LlmAgent", "instruction": "Help."}},
                       "turns": [{"turn_index": 0, "turn_id": "turn_0", "events": [
                           {"author": "app", "content": {"parts": [{"function_call": {"id": "adk-1", "args": {"city": "SF"}, "name": "get_weather"}}],
                                                         "role": "model"}, "event_time": "2026-11-30T10:00:00Z"},
                           {"author": "app", "content": {"parts": [{"text": "Foggy."}], "role": "model"}, "event_time": 1764496800.5}]}]}}]}
    path = tmp_path / "traces_20261130_100000.json"
    path.write_text(json.dumps(trace, indent=2))
    _, errors = load_dataset(path)
    assert "both a `prompt` and `agent_data.turns`" in errors[0].message  # as cases to run: agents-cli would refuse it
    loaded, errors = load_dataset(path, trace=True)
    assert errors == [] and loaded.cases[0].events()[0].content.parts[0].function_call.name == "get_weather"
    results = {"eval_case_results": [{"eval_case_index": 0, "response_candidate_results": [{"response_index": 0, "metric_results": {
        "custom_response_quality": {"metric_name": "custom_response_quality", "score": 4.0, "explanation": "good", "rubric_verdicts": None,
                                    "raw_output": None, "error_message": None}}}]}],
        "summary_metrics": [{"metric_name": "custom_response_quality", "num_cases_total": 1, "num_cases_valid": 1, "num_cases_error": 0,
                             "mean_score": 4.0, "stdev_score": None, "pass_rate": None}],
        "win_rates": None, "evaluation_dataset": [{"bigquery_source": None, "gcs_source": None, "eval_cases": trace["eval_cases"],
                                                   "eval_dataset_df": None, "candidate_name": None}],
        "metadata": {"candidate_names": ["candidate_1"], "dataset": [{"prompt_display_text": "Weather in SF?"}]}, "agent_info": None}
    (tmp_path / "results_1.json").write_text(json.dumps(results))
    graded, errors = load_grade_results(tmp_path / "results_1.json")
    assert errors == []
    (case,) = graded.graded()
    assert case.key == "weather_query" and case.metrics["custom_response_quality"].score == 4.0
    _, errors = load_grade_results(path)
    assert "not an agents-cli results file" in errors[0].message


def test_the_manifest_is_found_walking_up_and_the_legacy_table_too(tmp_path):
    (tmp_path / "agents-cli-manifest.yaml").write_text("name: demo\nagent_directory: app\ncreate_params:\n  root_agent_name: demo\n")
    (tmp_path / "tests" / "eval").mkdir(parents=True)
    manifest, errors = find_manifest(tmp_path / "tests" / "eval")
    assert errors == [] and (manifest.root, manifest.agent_directory, manifest.root_agent_name) == (tmp_path, "app", "demo")
    (tmp_path / "agents-cli-manifest.yaml").write_text("agent_directory: ../elsewhere\n")
    _, errors = find_manifest(tmp_path)
    assert errors and errors[0].line == 1 and "inside the project" in errors[0].message
    legacy = tmp_path / "old"
    legacy.mkdir()
    (legacy / "pyproject.toml").write_text('[project]\nname = "old"\n[tool.agents-cli]\nagent_directory = "my_agent"\n')
    manifest, _ = find_manifest(legacy, stop=legacy)
    assert manifest.file == "pyproject.toml" and manifest.agent_directory == "my_agent"
