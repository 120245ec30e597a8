"""Readers of a results document read its typed model, not string keys (issue 36, item 1).

Outside ``results/``, a read of results data by string key (``doc.get("cases")``,
``case["status"]``) is counted per file of :data:`CHECKED` (the readers of a results
document: renderers, the review app, history rows, merge and baselines, labels, the
commands that read results, ``evaluate()``'s ``Results``), from the source's syntax tree:
a subscript by a string constant, or a ``.get`` call whose first argument is one. A file
may keep only the lines :data:`ALLOWED` lists, each with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_ragproof"

#: The readers of a results document (globs relative to the package).
CHECKED: tuple[str, ...] = (
    "evaluation.py",
    "reporting/markdown.py",
    "reporting/_correctness.py",
    "reporting/judge_reasons.py",
    "reporting/inspectorraget*.py",
    "reporting/components.py",
    "reporting/html*.py",
    "review/*.py",
    "history/rows.py",
    "history/compare.py",
    "history/shapes.py",
    "verdict/merge*.py",
    "verdict/recorded.py",
    "verdict/baseline.py",
    "regression/compare.py",
    "labels/cases.py",
    "labels/state.py",
    "labels/agreement.py",
    # labels/people.py is not listed: it reads labels and agreement figures, never a
    # results document (its string keys are its own PEOPLE_UNDEFINED and binary_figures').
    "judges/labelled.py",
    "commands/report.py",
    "commands/merge.py",
    "commands/history.py",
    "commands/judge_check.py",
    "commands/judge_check_labels.py",
    # commands/judge_check_text.py is not listed: it prints a judge-check report (the
    # ragproof.judge-check/1 document the command builds and writes), never a results one.
)

_VIEW = (
    "a judge view (judge_views' output: the HTML page's JSON and the InspectorRAGet "
    "reasons text), not results data"
)
_DETAILS = (
    "a judge's details are open by design: read by shape, not by judge name, so a "
    "judge's new field still shows (results/models.py types them as dict[str, Any])"
)
_EXPORT = "the InspectorRAGet experiment being built, not results data"
_WRITTEN = (
    "builds the file a baseline update writes from the run's own document: it stays the "
    "dict the run wrote, so the file's bytes are the run's (results/models.py only reads)"
)
_LABELS = (
    "splits the parsed document into one per case kind for labels.current_labels, which "
    "reads parsed documents until labels/ reads the model"
)

_REQUEST = "the request's own path, query or form fields (Starlette), not results data"
_ASGI = "the ASGI scope, messages and headers of a request, not results data"
_DATASET = (
    "a record of the dataset file under review (its cases, provenance, metadata, review "
    "counts), not results data"
)
_AGREEMENT = "a figure of labels.agreement's report (judge-check's figures), not results data"
_STORE = "a history store's aggregate row (history/), not results data"
_MERGED = (
    "the merged document is built from the shards' own entries, so its bytes are theirs "
    "(an integer metric stays one); the checks and the verdict read the model"
)
_PYDANTIC = "a pydantic error of the record's validation, not results data"
_BUILT = (
    "the writer's case records while verdict/results.py builds the document (components are "
    "scored before it is written, in the pytest run, where pydantic is not loaded); the HTML "
    "report hands it the cases of the parsed document it draws"
)
_MEASURED = "the figures judges.agreement.measure returns (value, cut, confusion), not results data"
_LABELLED = (
    "a line of a labelled JSONL file or of a --labels file (judge-check's input), not results data"
)
_JUDGE_CHECK = "the judge-check report the command builds and writes (--json), not results data"
_TALLY = "its own per-question-type tally (score, n), not results data"

#: Lines that keep a string-key read, by file and stripped text, each with its reason.
_PAGE = "the HTML page's own data (its grouped cases, a judge view), not results data"

ALLOWED: dict[str, dict[str, str]] = {
    "commands/judge_check.py": {
        'if isinstance(data, dict) and data.get("format") == REPORT_FORMAT:': (
            "tells the command's own earlier --json output from any other file it must not replace"
        ),
        'passed, line = kappa_gate(document["figures"], document.get("confusion"), floor)': (
            _JUDGE_CHECK
        ),
    },
    "commands/judge_check_labels.py": {
        'gate = document.get("min_kappa")': _JUDGE_CHECK,
        'for line in gate["lines"]:': _JUDGE_CHECK,
        'if not gate["passed"]:': _JUDGE_CHECK,
    },
    "judges/labelled.py": {
        'item_id = record["id"]': _LABELLED,
        'labels = _labels(record["labels"], where)': _LABELLED,
        'contexts=_contexts(record["contexts"], where),': _LABELLED,
        'if not isinstance(record["id"], str) or record["id"] in out:': _LABELLED,
        'out[record["id"]] = (_labels(record["labels"], where), where)': _LABELLED,
    },
    "labels/cases.py": {
        'context = entry.get("context")': _DETAILS,
        'claim=str(entry.get("claim") or ""),': _DETAILS,
        'verdict=str(entry.get("verdict") or ""),': _DETAILS,
    },
    "labels/agreement.py": {
        'return None if entry is None else entry["value"]': _MEASURED,
        'cut=found.get("cut"),': _MEASURED,
        'confusion=found.get("confusion"),': _MEASURED,
        'figures=found["figures"],': _MEASURED,
    },
    "reporting/_correctness.py": {
        'if case.get("status") == "error":': _BUILT,
        'if case.get("kind") == "unanswerable":': _BUILT,
        'value: float | None = 1.0 if case.get("status") == "passed" else 0.0': _BUILT,
        'value = (case.get("metrics") or {}).get(CORRECTNESS)': _BUILT,
        'reason = (case.get("not_judged") or {}).get(CORRECTNESS, "no reason recorded")': _BUILT,
        'n = sum(t["n"] for t in by_type.values())': _TALLY,
        'score = sum(t["score"] for t in by_type.values()) / len(by_type) if by_type else None': (
            _TALLY
        ),
        'pipeline = str(case.get("pipeline", ""))': _BUILT,
        'qtype = str(case.get("question_type") or "simple")': _BUILT,
        'kind = case.get("kind")': _BUILT,
        'mine["router"].add(qtype, OUT_OF_SCOPE, case)': "its own tallies by component",
        'mine["knowledge_base"].add(qtype, qtype, case)': "its own tallies by component",
    },
    "reporting/components.py": {
        'kb = mine["knowledge_base"]': "the pipeline's own tallies by component, not results data",
    },
    "reporting/html.py": {
        'view["prompt"] = cut(view.get("prompt"))': _PAGE,
        'for group in view.get("groups") or []:': _PAGE,
        'for item in group["items"]:': _PAGE,
        'item["text"] = cut(item["text"])': _PAGE,
        'entry["runs"][case.pipeline] = _run(case, redacted, cut)': _PAGE,
        '"cases": sorted(grouped.values(), key=lambda c: (c["dataset"], c["id"])),': _PAGE,
    },
    "review/agreement.py": {
        'value = entry.get("value")': _AGREEMENT,
        'ci = entry.get("ci95")': _AGREEMENT,
    },
    "review/app.py": {
        'name = request.path_params["name"]': _REQUEST,
    },
    "review/cases.py": {
        'show = filter_of(request.query_params.get("filter"))': _REQUEST,
        'n = int(request.path_params["n"])': _REQUEST,
    },
    "review/cases_labels.py": {
        'n = int(request.path_params["n"])': _REQUEST,
        'return review, snapshot, n, filter_of(form_of(request).get("filter"))': _REQUEST,
        'metric = form.get("metric", "")': _REQUEST,
        'choice = form.get("verdict", "")': _REQUEST,
        'verdict = float(form.get("grade", ""))': _REQUEST,
        'note = form.get("note", "").strip() or None': _REQUEST,
    },
    "review/cases_parts.py": {
        'e.get("context"): e.get("verdict")': _DETAILS,
        'for e in (judgements.get("context_relevance") or {}).get("contexts") or []': _DETAILS,
        'for e in (judgements.get("context_recall") or {}).get("reference_claims") or []': _DETAILS,
        '"verdict": str(e.get("verdict")),': _DETAILS,
        '"tone": tone(str(e.get("verdict"))),': _DETAILS,
        '"claim": e.get("claim"),': _DETAILS,
        'if e.get("context") == rank': _DETAILS,
        'verdict = judgement.get("verdict") if isinstance(judgement.get("verdict"), str) else None': (  # noqa: E501
            _DETAILS
        ),
        'e.get("claim")': _DETAILS,
        'or e.get("statement")': _DETAILS,
        'or (f"context {e.get(\'context\')}" if key == "contexts" else "")': _DETAILS,
        "f\" ← context {e['context']}\"": _DETAILS,
        'if key != "contexts" and isinstance(e.get("context"), int)': _DETAILS,
    },
    "review/dataset.py": {
        '"id": record["id"],': _DATASET,
        '"kind": record.get("kind"),': _DATASET,
        '"question_type": record.get("question_type"),': _DATASET,
        '"question": record.get("question"),': _DATASET,
        'if not len(reviewed) or counts["pending"]:': _DATASET,
        'value = provenance.get("confidence")': _DATASET,
        'n = request.path_params["n"]': _REQUEST,
        'sources = [str(s) for s in record.get("expected_source_ids") or []]': _DATASET,
        '{"role": f"{t.get(\'role\')}: ", "content": t.get("content")}': _DATASET,
        'for t in record.get("conversation_history") or []': _DATASET,
        '"expected_answer": record.get("expected_answer"),': _DATASET,
        '"adversarial_payload": record.get("adversarial_payload"),': _DATASET,
        "return page(request, title=f\"{record['id']} · dataset review\", area=AREA, body=body)": (
            _DATASET
        ),
        'metadata = record.get("metadata")': _DATASET,
        'edits = metadata.get("review_edits") if isinstance(metadata, Mapping) else None': _DATASET,
    },
    "review/dataset_common.py": {
        'provenance = record.get("provenance")': _DATASET,
        'return natural_order([str(r["id"]) for r in review.reviewed.records])': _DATASET,
        'show = request.query_params.get("show", "all")': _REQUEST,
    },
    "review/dataset_source.py": {
        'doc_id = provenance.get("document_id")': _DATASET,
        'span = provenance.get("span")': _DATASET,
        'chunk = provenance.get("chunk_id") or "–"': _DATASET,
        'return call_macro(_SOURCE, "provenance", rows, edits_table(provenance.get("edits")))': (
            _DATASET
        ),
        '"field": e.get("field"),': _DATASET,
        '"before": _value(e.get("before")),': _DATASET,
        '"reviewer": e.get("reviewer"),': _DATASET,
        '"time": e.get("time"),': _DATASET,
    },
    "review/dataset_trace.py": {
        'metadata = record.get("metadata")': _DATASET,
        'if not isinstance(metadata, Mapping) or metadata.get("imported_from") != "otel":': (
            _DATASET
        ),
        'trace = metadata.get("trace")': _DATASET,
        'return [d for d in value if isinstance(d, Mapping) and isinstance(d.get("id"), str)]': (
            _DATASET
        ),
        'key=lambda d: d["rank"] if isinstance(d.get("rank"), int) else 1 << 30,': _DATASET,
        'if doc["id"] not in out:': _DATASET,
        'out.append(doc["id"])': _DATASET,
        '"rank": d.get("rank") if isinstance(d.get("rank"), int) else "–",': _DATASET,
        '"id": d["id"],': _DATASET,
        '"score": _score(d.get("score")),': _DATASET,
        'answer = trace.get("answer")': _DATASET,
    },
    "review/dataset_writes.py": {
        'if was == "pending" and not review.reviewed.counts()["pending"]:': _DATASET,
        'n = request.path_params["n"]': _REQUEST,
        'show = form_of(request).get("show", "all")': _REQUEST,
        'status = form_of(request).get("status", "")': _REQUEST,
        'line.strip() for line in form["expected_source_ids"].splitlines() if line.strip()': (
            _REQUEST
        ),
        'if form["kind"] not in ("qa", "unanswerable"):': _REQUEST,
        'edits["kind"] = form["kind"]': _REQUEST,
        'if edits.get("expected_source_ids") == [] and not record.get("expected_source_ids"):': (
            _DATASET
        ),
        'edits["expected_source_ids"] = record.get("expected_source_ids")': _DATASET,
    },
    "review/history_compare.py": {
        'ref_b = request.query_params.get("b", "").strip() or "latest"': _REQUEST,
        'ref_a = request.query_params.get("a", "").strip()': _REQUEST,
    },
    "review/history_run.py": {
        'ref = request.path_params["run"]': _REQUEST,
        'kind = request.query_params.get("kind") or None': _REQUEST,
        'status = request.query_params.get("status") or None': _REQUEST,
        'pipeline = request.query_params.get("pipeline") or None': _REQUEST,
        'text = request.query_params.get("q", "").strip()': _REQUEST,
        '"pipeline": a["pipeline"],': _STORE,
        '"selector": a["selector"],': _STORE,
        '"metric": a["metric"],': _STORE,
        '"mean": fmt(a["mean"]),': _STORE,
        '"bound": a["bound"],': _STORE,
        '"verdict": a["verdict"],': _STORE,
        'if a.get("bound")': _STORE,
        'pipeline = request.query_params.get("pipeline", "")': _REQUEST,
        'case_id = request.query_params.get("id", "")': _REQUEST,
    },
    "review/history_runs.py": {
        'raw = request.query_params.get("last", "")': _REQUEST,
        'raw = request.query_params.get("page", "")': _REQUEST,
    },
    "review/results.py": {},
    "review/reviewed.py": {
        'if not isinstance(record, dict) or not isinstance(record.get("id"), str):': _DATASET,
        'if probe.get("review_status") == "rejected":': _DATASET,
        'metadata = record.get("metadata")': _DATASET,
        'and isinstance(metadata.get("imported_from"), str)': _DATASET,
        'and not isinstance(record.get("provenance"), Mapping)': _DATASET,
        'provenance = record.get("provenance")': _DATASET,
        'if isinstance(provenance, Mapping) and provenance.get("edits"):': _DATASET,
        'ids = [r["id"] for r in self.input]': _DATASET,
        'if [r["id"] for r in previous] != ids:': _DATASET,
        'return str(self.records[index].get("review_status") or "pending")': _DATASET,
        'owner, key = dict(record["metadata"]), REVIEW_EDITS': _DATASET,
    },
    "review/security.py": {
        'server = scope.get("server")  # (address, port) of the socket the request came to': _ASGI,
        'if scope["type"] != "http":': _ASGI,
        'host = request.headers.get("host", "")': _ASGI,
        'if not self._is_token(request.query_params["token"]):': _ASGI,
        'origin = request.headers.get("origin")': _ASGI,
        'if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):': (  # noqa: E501
            _ASGI
        ),
        'if not self._is_token(request.headers.get(HEADER) or form.get("token")):': _ASGI,
        'if message["type"] == "http.response.start":': _ASGI,
        'headers = list(message.get("headers", []))': _ASGI,
        'if message["type"] != "http.request":': _ASGI,
        'chunk: bytes = message.get("body", b"")': _ASGI,
        'more = bool(message.get("more_body", False))': _ASGI,
    },
    "reporting/judge_reasons.py": {
        'raw_rank = entry.get("context")': _DETAILS,
        'text = entry.get("claim", entry.get("statement"))': _DETAILS,
        '"verdict": None if entry.get("verdict") is None else str(entry["verdict"]),': _DETAILS,
        '"tone": tone(entry.get("verdict")),': _DETAILS,
        'prompt = details.get("prompt")': _DETAILS,
        'groups.sort(key=lambda g: g["key"] == "reference_claims")': _VIEW,
        'if view.get("not_judged"):': _VIEW,
        "return f\"not judged: {view['not_judged_text']} ({view['not_judged']})\"": _VIEW,
        'if view.get("verdict") is not None:': _VIEW,
        "lines.append(f\"verdict: {view['verdict']}\")": _VIEW,
        'if view.get("numbers"):': _VIEW,
        'lines.append(", ".join(f"{k} {_number(v)}" for k, v in view["numbers"]))': _VIEW,
        'for group in view.get("groups") or []:': _VIEW,
        "lines.append(f\"{group['title']} ({len(group['items'])}):\")": _VIEW,
        'for i, item in enumerate(group["items"], 1):': _VIEW,
        'if item["context"] is not None:': _VIEW,
        'named = f" ({item[\'context_id\']})" if item["context_id"] else ""': _VIEW,
        "ctx = f\"context {item['context']}{named}\"": _VIEW,
        'if item["text"] is None:': _VIEW,
        "lines.append(f\"{i}. [{item['verdict']}] {ctx or ''}\".rstrip())": _VIEW,
        'tag = str(item["verdict"]) + (f", {ctx}" if ctx else "")': _VIEW,
        "lines.append(f\"{i}. [{tag}] {item['text']}\")": _VIEW,
        'if view.get("prompt"):': _VIEW,
        "lines.append(f\"prompt {view['prompt']}\")": _VIEW,
    },
    "reporting/inspectorraget.py": {
        'cases = list(results.get("cases") or [])': _LABELS,
        '(kind, {**results, "cases": [c for c in cases if c.get("kind") == kind]})': _LABELS,
        'present = {str(c.get("kind", "")) for c in cases}': _LABELS,
    },
    "reporting/inspectorraget_build.py": {
        'self.reasons.add(view["judge"])': _VIEW,
        'notes[view["judge"] + REASONS_SUFFIX] = reason_text(view)': _VIEW,
        'self.people.annotate(record, out["annotations"])': _EXPORT,
        'e["annotations"]["status"][WORKER]["value"] not in UNSCORED_STATUSES': _EXPORT,
        'self.human = [m["name"] for m in declared]': _EXPORT,
        'used = {c["document_id"] for t in tasks for c in t["contexts"]}': _EXPORT,
        'used.update(c["document_id"] for e in evaluations for c in e.get("contexts", []))': (
            _EXPORT
        ),
    },
    "reporting/inspectorraget_format.py": {
        'loc = ".".join(str(part) for part in err["loc"]) or "(export)"': (
            "a pydantic error of the export's validation, not results data"
        ),
        'msg = err["msg"].removeprefix("Value error, ")': (
            "a pydantic error of the export's validation, not results data"
        ),
    },
    "verdict/baseline.py": {
        'fmt = str(data.get("format", ""))': (
            "tells which kind of file a path holds (results, dataset, other) before reading it"
        ),
        'for case in results.get("cases") or []:': _WRITTEN,
        'metrics = case.get("metrics") or {}': _WRITTEN,
        'a for a in results.get("aggregates") or [] if a.get("metric") not in VOLATILE_METRICS': (
            _WRITTEN
        ),
        't for t in results.get("thresholds") or [] if t.get("metric") not in VOLATILE_METRICS': (
            _WRITTEN
        ),
        "line = f\"ragproof baseline: written to {path} ({len(doc['cases'])} case record(s))\"": (
            _WRITTEN
        ),
        'if not results.get("passed", True):': _WRITTEN,
    },
    "verdict/merge_checks.py": {
        'entries: list[dict[str, Any]] = self.doc["cases"]': _MERGED,
    },
    "verdict/merge_gates.py": {
        'written: list[dict[str, Any]] = list(entry.get("failures") or [])': _MERGED,
        'value: float | None = entry["metrics"].get(metric)': _MERGED,
    },
    "verdict/recorded.py": {
        'field = ".".join(str(part) for part in err["loc"])': _PYDANTIC,
        'problem = "missing" if err["type"] == "missing" else err["msg"].rstrip(".")': _PYDANTIC,
    },
    "commands/report.py": {
        'entries = results.get("cases") or []': (
            "builds the document of some kinds for the exporters, which take the parsed "
            "document (its cases' kinds are read from the model)"
        ),
    },
    "regression/compare.py": {
        'if not isinstance(doc, Mapping) or doc.get("format") != RESULTS_FORMAT:': (
            "tells a results document from any other JSON before reading it as one, with the "
            "message that names the fix"
        ),
    },
    "reporting/inspectorraget_people.py": {
        'present = [name in e["annotations"] for e in evaluations]': _EXPORT,
        'for entry in e["annotations"].get(name, {}).values():': _EXPORT,
        'value = entry["value"]': _EXPORT,
    },
}


def key_reads(source: str) -> list[int]:
    """The line of each read by string key in ``source``: ``x["k"]`` or ``x.get("k", …)``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript):
            if not isinstance(node.ctx, ast.Load) or _is_type(node.value):
                continue  # a write (``out["k"] = v``) or a type (``Literal["qa"]``)
            key = node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
        ):
            key = node.args[0]
        else:
            continue
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            lines.append(node.lineno)
    return sorted(lines)


def _is_type(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("Literal", "Annotated")


def checked_files() -> list[str]:
    found = {
        path.relative_to(PACKAGE).as_posix()
        for pattern in CHECKED
        for path in PACKAGE.glob(pattern)
    }
    return sorted(found)


def unlisted_reads(name: str) -> list[str]:
    """The string-key reads of a checked file that :data:`ALLOWED` does not list."""
    text = (PACKAGE / name).read_text(encoding="utf-8").splitlines()
    allowed = ALLOWED.get(name, {})
    shown = (f"{name}:{n}: {text[n - 1].strip()}" for n in key_reads("\n".join(text)))
    return [s for s in shown if s.split(": ", 1)[1] not in allowed]


def test_the_counter_sees_each_kind_of_read() -> None:
    source = 'a = doc["cases"]\nb = doc.get("passed")\nc = case.get("id", "")\nd = doc[0]\n'
    source += 'e = doc.get(key)\nf = ["a", "b"]\ng = f"{doc[\'run_id\']}"\n'
    source += 'out["k"] = 1\nh: Literal["qa"]\n'
    assert key_reads(source) == [1, 2, 3, 7]


def test_every_checked_pattern_names_files() -> None:
    for pattern in CHECKED:
        assert list(PACKAGE.glob(pattern)), pattern


@pytest.mark.parametrize("name", checked_files())
def test_a_reader_reads_the_typed_model(name: str) -> None:
    reads = unlisted_reads(name)
    assert not reads, (
        f"{len(reads)} string-key read(s) of results data in {name}: "
        "read the typed model (pytest_ragproof.results.models), or list the line in "
        "ALLOWED with its reason:\n" + "\n".join(reads)
    )


def test_the_allowances_are_current() -> None:
    """Each ALLOWED line still exists in its file (a line that went leaves the table)."""
    files = set(checked_files())
    for name, lines in ALLOWED.items():
        assert name in files, f"{name} is in ALLOWED but not a checked reader"
        text = {line.strip() for line in (PACKAGE / name).read_text().splitlines()}
        assert set(lines) <= text, (name, set(lines) - text)
