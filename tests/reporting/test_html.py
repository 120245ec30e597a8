"""The HTML report as text: self-contained, escaped, redaction honoured, every section."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any

from pytest_ragproof.reporting.html import CSP, case_data, embed_json, render_html
from tests.reporting.conftest import CASES, DOCS, Runs

SECRETS = [c["question"] for c in CASES] + list(DOCS.values())
SECRETS += ["Enterprise has SSO.", "Refunds take 5 days", "30 days of purchase", "10 seats"]
PAYLOAD = next(str(c["adversarial_payload"]) for c in CASES if c["kind"] == "injection")
SECRETS += [PAYLOAD, "ZEBRA-7731"]  # the planted payload and its canary


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text of each <script>."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data


def parse(page: str) -> Tags:
    tags = Tags()
    tags.feed(page)
    return tags


def test_report_is_self_contained(runs: Runs) -> None:
    page = render_html(runs.multi())
    assert page.startswith("<!DOCTYPE html>")
    assert "http://" not in page and "https://" not in page and "//cdn" not in page
    tags = parse(page)
    names = [t for t, _ in tags.tags]
    assert "link" not in names and "img" not in names and "iframe" not in names
    assert not [a for _, attrs in tags.tags for a in attrs if a in ("src", "srcset")]
    csp = [a for t, a in tags.tags if t == "meta" and a.get("http-equiv")]
    assert csp == [{"http-equiv": "Content-Security-Policy", "content": CSP}]
    assert CSP.startswith("default-src 'none';")
    scripts = [a for t, a in tags.tags if t == "script"]
    assert scripts == [{"type": "application/json", "id": "ragproof-data"}, {}]
    assert "<svg" in page and "<style>" in page


def test_embedded_data_survives_markup_in_answers(runs: Runs) -> None:
    results = runs.multi()
    page = render_html(results)
    # the pipeline answered "</script><script>alert(1)</script>": it must stay data
    assert "<script>alert(1)" not in page
    assert page.count("<script") == 2
    data = json.loads(parse(page).scripts[0])
    assert data == json.loads(json.dumps(case_data(results)))
    distract = next(c for c in data["cases"] if c["id"] == "qa-distract")
    assert distract["runs"]["rag_pipeline"]["answer"] == "</script><script>alert(1)</script>"
    assert distract["question"].startswith("Italy is lovely, but <how>")
    assert set(distract["runs"]) == {"rag_pipeline", "rival_pipeline"}
    assert data["pipelines"] == ["rag_pipeline", "rival_pipeline"]
    assert data["kinds"] == ["qa", "unanswerable", "injection"]
    assert data["default_metric"] == "hit@5"
    assert data["metrics"].index("hit@3") < data["metrics"].index("hit@10")


def test_embed_json_escapes_markup() -> None:
    text = embed_json({"a": "</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028"}


def test_server_side_sections_escape_names() -> None:
    case: dict[str, Any] = {
        "id": "c<1>",
        "dataset": "d&<x>.json",
        "pipeline": "<b>pipe</b>",
        "kind": "qa",
        "question_type": "complex",
        "tags": ["t\"'"],
        "status": "passed",
        "metrics": {"hit@5": 1.0},
        "failures": [],
    }
    results = {
        "format": "ragproof.results/1",
        "passed": True,
        "redacted": False,
        "datasets": [{"path": "d&<x>.json", "sha256": "ab", "frozen": True, "cases": 1}],
        "pipelines": ["<b>pipe</b>"],
        "cases": [case],
        "aggregates": [
            {
                "pipeline": "<b>pipe</b>",
                "selector": "tag=<i>",
                "metric": "hit@5",
                "n": 1,
                "n_error": 0,
                "n_missing": 0,
                "values": {"mean": 1.0, "min": 1.0, "max": 1.0},
            }
        ],
        "thresholds": [],
        "notes": ["<script>note</script>"],
    }
    page = render_html(results)
    assert "<b>pipe</b>" not in page.split('id="ragproof-data"')[0]
    assert "&lt;b&gt;pipe&lt;/b&gt;" in page
    assert "d&amp;&lt;x&gt;.json" in page and "tag=&lt;i&gt;" in page
    assert "&lt;script&gt;note&lt;/script&gt;" in page
    assert page.count("<script") == 2


def test_components_section_says_not_measured() -> None:
    cases = [
        {"id": "a", "pipeline": "p", "kind": "qa", "question_type": "complex", "status": "passed"},
        {"id": "b", "pipeline": "p", "kind": "qa", "question_type": "complex", "status": "passed"},
    ]
    results = {"passed": True, "pipelines": ["p"], "cases": cases}
    page = render_html(results)
    section = page.split('<section id="components">')[1].split("</section>")[0]
    assert section.count("not measured (no") == 4  # retriever, rewriter, router, knowledge base
    assert section.count("1.00 (2/2)") == 1  # generator only


def test_redacted_report_has_no_text(runs: Runs) -> None:
    results = runs.redacted()
    page = render_html(results)
    for secret in SECRETS:
        assert secret not in page
    assert "Redacted run" in page
    # even a document that still carries text is rendered without it when marked redacted
    leaky = runs.multi()
    leaky["redacted"] = True
    page = render_html(leaky)
    for secret in SECRETS:
        assert secret not in page
    data = case_data(leaky)
    assert all(c["question"] is None and c["expected_answer"] is None for c in data["cases"])
    runs_ = [r for c in data["cases"] for r in c["runs"].values()]
    assert all(r["answer"] is None for r in runs_)
    assert all(x["text"] is None for r in runs_ for x in r["contexts"] or [])
    assert all(c["adversarial_payload"] is None and c["canary"] is None for c in data["cases"])


def test_injection_cases_carry_their_payload_and_canary(runs: Runs) -> None:
    results = runs.multi()
    entry = next(c for c in results["cases"] if c["id"] == "inj-1")
    assert (entry["adversarial_payload"], entry["canary"]) == (PAYLOAD, "ZEBRA-7731")
    qa = next(c for c in results["cases"] if c["id"] == "qa-two")
    assert (qa["adversarial_payload"], qa["canary"]) == (None, None)
    data = case_data(results)
    inj = next(c for c in data["cases"] if c["id"] == "inj-1")
    assert (inj["adversarial_payload"], inj["canary"]) == (PAYLOAD, "ZEBRA-7731")
    redacted = next(c for c in runs.redacted()["cases"] if c["id"] == "inj-1")
    assert (redacted["adversarial_payload"], redacted["canary"]) == (None, None)


def test_baseline_section_rendered_from_a_real_comparison(runs: Runs) -> None:
    results = runs.with_baseline()
    assert "baseline" in results
    page = render_html(results)
    section = page.split('<section id="baseline">')[1].split("</section>")[0]
    assert "Case flips" in section and "qa-two" in section
    assert '<span class="badge regressed">regressed</span>' in section
    assert "1 regressed" in section
    assert "Aggregate changes" in section and "mcnemar-exact" in section
    assert "-0.25" in section  # qa hit@5 mean went from 0.75 to 0.5
    assert '<a href="#baseline">' in page
    # written by the pytest option in the same run
    assert (runs.project / "baseline.html").read_text(encoding="utf-8").count("Case flips") == 1


def test_no_baseline_section_without_a_baseline(runs: Runs) -> None:
    page = render_html(runs.multi())
    assert 'id="baseline"' not in page


def test_report_written_by_the_pytest_option(runs: Runs) -> None:
    runs.single()
    page = (runs.project / "single.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    data = json.loads(parse(page).scripts[0])
    assert {c["id"] for c in data["cases"]} == {c["id"] for c in CASES}
    assert data["pipelines"] == ["rag_pipeline"]
    # the real run has thresholds: the summary lists the default case thresholds
    assert "qa:hit@5&gt;=1" in page
    assert re.search(r"<h1>ragproof report <span class=\"badge failed\">FAILED", page)


def test_an_empty_results_document_renders() -> None:
    page = render_html({"format": "ragproof.results/1", "passed": True, "cases": []})
    assert "No aggregates" in page and "No thresholds were evaluated" in page
    assert json.loads(parse(page).scripts[0])["cases"] == []


def _chart_labels(page: str, title: str) -> list[str]:
    chart = re.search(rf'<svg class="chart"[^>]*aria-label="{re.escape(title)}".*?</svg>', page)
    assert chart is not None, title
    return re.findall(
        r'<text x="[0-9.]+" y="[0-9.]+" text-anchor="end"[^>]*>([^<]*)</text>', chart[0]
    )


def test_the_all_cases_chart_draws_abstained_per_kind(runs: Runs) -> None:
    page = render_html(runs.multi())
    everything = _chart_labels(page, "mean per metric, all cases")
    # its direction flips with the kind: one bar per kind, never a mean over qa and unanswerable
    assert "abstained" not in everything
    assert everything[:3] == ["abstained (qa)", "abstained (unanswerable)", "abstained (injection)"]
    assert "hit@5" in everything
    # the kinds' own charts keep the plain name
    assert "abstained" in _chart_labels(page, "mean per metric, selector qa")


def test_the_label_column_fits_the_longest_label() -> None:
    from pytest_ragproof.reporting.svg import bar_chart, text_width

    long = "answer_correctness_precision"
    svg = bar_chart("t", [(long, [0.5]), ("mrr", [1.0])], ["p"])
    x = float(re.findall(r'<text x="([0-9.]+)"[^>]*text-anchor="end"', svg)[0])
    assert x >= text_width(long)
