"""agents-cli's grade results compared as runs: `agentdiff compare results_A.json results_B.json` says
which cases' scores moved and by how much (what `agents-cli eval compare` shows only as whole lists),
and a metric that could not grade a case is that case's error."""

from __future__ import annotations

import json

from test_cli import run


def _results(scores: dict[str, object]) -> dict:
    cases = [{"eval_case_id": key, "prompt": {"role": "user", "parts": [{"text": f"about {key}"}]},
              "responses": [{"response": {"role": "model", "parts": [{"text": "an answer"}]}}]} for key in scores]
    results = []
    for index, (key, score) in enumerate(scores.items()):
        error = score if isinstance(score, str) else None
        metric = {"metric_name": "custom_response_quality", "score": None if error else score, "explanation": "judged",
                  "rubric_verdicts": None, "raw_output": None, "error_message": error}
        results.append({"eval_case_index": index, "response_candidate_results": [{"response_index": 0, "metric_results": {"custom_response_quality": metric}}]})
    return {"eval_case_results": results, "summary_metrics": [], "win_rates": None,
            "evaluation_dataset": [{"eval_cases": cases}], "metadata": {"candidate_names": ["candidate_1"], "dataset": []}, "agent_info": None}


def test_two_results_files_compare_case_by_case_with_the_scores_that_moved(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results_a.json").write_text(json.dumps(_results({"greeting": 4.0, "weather_query": 5.0, "capital_lookup": 5.0}), indent=2))
    (tmp_path / "results_b.json").write_text(json.dumps(_results({"greeting": 4.0, "weather_query": 2.0,
                                                                  "capital_lookup": "CustomFunctionError(evaluate): boom"}), indent=2))
    code, out, err = run("compare", "results_a.json", "results_b.json")
    assert code == 1, err  # a case now errs
    assert "newly erroring (1):" in out and "capital_lookup: not_evaluated → error" in out
    assert "scores moved, verdict unchanged (1):" in out and "weather_query: custom_response_quality 5 → 2 (−3)" in out
    assert "greeting" not in out.split("scores moved", 1)[1]
    data = json.loads(run("compare", "results_a.json", "results_b.json", "--json")[1])
    weather = next(case for case in data["cases"] if case["id"] == "weather_query")
    assert weather["metrics"]["custom_response_quality"] == {"base": 5.0, "head": 2.0}
    code, out, _ = run("gate", "--baseline", "results_a.json", "results_b.json")
    assert code == 1 and "critical id:*" in out  # no rule configured: no case may regress, and one newly errs


def test_score_shows_a_results_files_stored_scores(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results_a.json").write_text(json.dumps(_results({"greeting": 4.0, "capital_lookup": "CustomFunctionError(evaluate): boom"})))
    code, out, err = run("score", "results_a.json")
    assert code == 1, err
    assert "? not_evaluated greeting        custom_response_quality 4.0" in out
    assert "! error         capital_lookup" in out and "CustomFunctionError(evaluate): boom" in out
