"""``ragproof judge-check``'s printed text, byte for byte, from a judge-check report.

The run tests check parts of the text; this pins all of it, for every branch of the
renderer (errors, not judged, unlabelled, the cut, figures with and without a value,
the published figures, failed calls, unknown cost, the response format).
"""

from __future__ import annotations

import copy
from typing import Any

from pytest_ragproof.commands.judge_check_text import render

DOCUMENT: dict[str, Any] = {
    "format": "ragproof.judge-check/1",
    "metric": "faithfulness",
    "judge": "faithfulness",
    "judge_model": "openai/stub",
    "source": {"results": "results.json", "labels": "labels.json"},
    "labels": "binary",
    "items": {
        "labelled": 5,
        "measured": 3,
        "not_judged": {"n1": "no_claims", "n2": "no_contexts", "n3": "no_claims"},
        "errors": {"e1": {"step": "claims/1", "type": "Timeout"}},
        "unlabelled": 1,
    },
    "cut": 0.5,
    "confusion": {"tp": 2, "fp": 1, "fn": 0, "tn": 0},
    "figures": {
        "accuracy": {"value": 0.6666666, "ci95": [0.25, 1.0]},
        "kappa": {"value": None, "undefined": "a single class", "ci95": None},
    },
    "bootstrap": {"method": "percentile", "resamples": 200, "seed": 7},
    "published": {"source": "HaluEval", "precision": 0.5, "recall": 0.4, "f1": 0.44},
    "usage": {
        "calls": 9,
        "cached": 2,
        "prompt_tokens": 1200,
        "completion_tokens": 80,
        "cost_usd": 0.01234,
        "failures": {"timeout": 1},
        "response_format": "json_schema",
    },
}


FULL = (
    "judge-check: faithfulness by openai/stub on 5 labelled item(s) from results.json "
    "(binary labels)\n"
    "measured 3; not judged 2 no_claims (n1, n3); 1 no_contexts (n2); errors 1 (e1: claims/1 "
    "Timeout); 1 without a faithfulness label skipped\n"
    "a score >= 0.5 counts as 1; judge vs labels: 2 true 1, 1 false 1, 0 false 0, 0 true 0\n"
    "figure     value                       95% CI\n"
    "---------  --------------------------  --------------\n"
    "accuracy   0.667                       [0.250, 1.000]\n"
    "Cohen's κ  undefined (a single class)  —\n"
    "intervals: percentile bootstrap, 200 resamples, seed 7\n"
    "published: HaluEval: precision 0.5, recall 0.4, F1 0.44, with hallucinated answers as "
    "the positive class: compare with the label 0 rows\n"
    "judge calls: 9, 1 failed (1 timeout), 2 cached, 1200 prompt + 80 completion tokens, "
    "$0.0123\n"
    "judge response format: json_schema\n"
)


def test_every_part_of_the_text() -> None:
    assert render(DOCUMENT) == FULL


def test_the_text_of_a_bare_report() -> None:
    bare = copy.deepcopy(DOCUMENT)
    del bare["cut"], bare["published"], bare["usage"]["response_format"]
    bare["figures"] = {}
    bare["usage"].update(cost_usd=None, failures={})
    bare["items"].update(errors={}, not_judged={}, unlabelled=0)
    bare["source"] = {"labelled": "items.jsonl"}
    assert render(bare) == (
        "judge-check: faithfulness by openai/stub on 5 labelled item(s) from items.jsonl "
        "(binary labels)\n"
        "measured 3\n"
        "judge calls: 9, 2 cached, 1200 prompt + 80 completion tokens, cost unknown\n"
    )
