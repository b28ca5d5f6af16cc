"""Reading ADK results files in every spelling ADK's own reader accepts."""

from __future__ import annotations

import json

from agentdiff.core.formats.adk_results import EvalStatus, load_eval_set_result
from agentdiff.core.scoring.stored_results import app_name_of, rescore_result

RESULT = {
    "eval_set_result_id": "my_app_set_1_1700000000.5",
    "eval_set_id": "set_1",
    "eval_case_results": [
        {
            "eval_id": "c1",
            "final_eval_status": 1,
            "overall_eval_metric_results": [
                {"metric_name": "response_match_score", "threshold": 0.5, "criterion": {"threshold": 0.5}, "score": 1.0, "eval_status": 1}
            ],
            "eval_metric_result_per_invocation": [
                {
                    "actual_invocation": {"user_content": {"parts": [{"text": "q"}]}, "final_response": {"parts": [{"text": "hello there"}]}},
                    "expected_invocation": {"user_content": {"parts": [{"text": "q"}]}, "final_response": {"parts": [{"text": "hello there"}]}},
                    "eval_metric_results": [],
                }
            ],
        },
        {"eval_id": "crashed", "final_eval_status": 2, "overall_eval_metric_results": [], "eval_metric_result_per_invocation": []},
    ],
}


def _camel(value):
    if isinstance(value, dict):
        return {"".join(w.capitalize() if i else w for i, w in enumerate(k.split("_"))): _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def test_snake_camel_and_double_encoded_files_read_the_same(tmp_path):
    spellings = {"snake": json.dumps(RESULT), "camel": json.dumps(_camel(RESULT)), "double": json.dumps(json.dumps(RESULT))}
    loaded = {}
    for name, text in spellings.items():
        path = tmp_path / f"{name}.evalset_result.json"
        path.write_text(text)
        loaded[name], errors = load_eval_set_result(path)
        assert errors == [], name
    assert loaded["snake"].result == loaded["camel"].result == loaded["double"].result
    assert loaded["snake"].result.eval_case_results[0].final_eval_status is EvalStatus.PASSED


def test_a_run_that_failed_without_metrics_is_an_error_and_the_app_is_named(tmp_path):
    path = tmp_path / "r.evalset_result.json"
    path.write_text(json.dumps(RESULT))
    loaded, _ = load_eval_set_result(path)
    assert app_name_of(loaded) == "my_app"
    cases = {c.eval_id: c for c in rescore_result(loaded)}
    assert cases["c1"].status.value == "passed"
    assert cases["crashed"].status.value == "error"
    assert "inference failed" in cases["crashed"].error
