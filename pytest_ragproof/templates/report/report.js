// pytest-ragproof HTML report: the per-case table (filter, sort, details, pipelines side by side).
// Reads the embedded JSON; every value reaches the page through textContent, never as markup.
// State lives in the URL fragment (#filter=..&kind=..&status=..&sort=..&dir=..&metric=..&open=..)
// so a view can be shared and is applied on load.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("ragproof-data").textContent);
  var PIPES = DATA.pipelines;
  var STATUS_ORDER = { error: 0, not_run: 1, failed: 2, passed: 3 };
  var DEFAULTS = { filter: "", kind: "", status: "", sort: "id", dir: "asc", metric: DATA.default_metric || "", open: "" };
  var state = Object.assign({}, DEFAULTS);

  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (k === "text") node.textContent = attrs[k];
        else if (k === "cls") node.className = attrs[k];
        else node.setAttribute(k, attrs[k]);
      });
    }
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  function fmt(v) {
    if (v === null || v === undefined) return "–";
    if (typeof v !== "number") return String(v);
    if (Number.isInteger(v)) return String(v);
    return Math.abs(v) >= 100 ? v.toFixed(1) : v.toPrecision(3).replace(/\.?0+$/, "");
  }

  // A text the report shortened is {cut, chars, note} (the results JSON has it whole).
  function isCut(v) {
    return v !== null && typeof v === "object" && typeof v.cut === "string";
  }

  function plain(v) {
    return isCut(v) ? v.cut : v;
  }

  function text(v) {
    if (DATA.redacted) return "[redacted]";
    if (isCut(v)) return v.cut + "\u2026";
    return v === null || v === undefined ? "(none)" : String(v);
  }

  // A text field: the text, then (when shortened) the note saying so and where it is whole.
  function longText(v, cls, none) {
    var shown = v === null && none !== undefined && !DATA.redacted ? none : text(v);
    var span = el("span", { cls: cls || "text", text: shown });
    if (!isCut(v) || DATA.redacted) return span;
    return el("span", { cls: "shortened" }, span, el("span", { cls: "cut-note", text: "[" + v.note + "]" }));
  }

  // -- fragment state ---------------------------------------------------------
  function readHash() {
    var raw = window.location.hash.replace(/^#/, "");
    state = Object.assign({}, DEFAULTS);
    raw.split("&").forEach(function (pair) {
      var at = pair.indexOf("=");
      if (at < 0) return;
      var key = decodeURIComponent(pair.slice(0, at));
      var value = decodeURIComponent(pair.slice(at + 1).replace(/\+/g, " "));
      if (Object.prototype.hasOwnProperty.call(state, key)) state[key] = value;
    });
  }

  function writeHash() {
    var parts = [];
    Object.keys(state).forEach(function (k) {
      if (state[k]) parts.push(encodeURIComponent(k) + "=" + encodeURIComponent(state[k]));
    });
    try {
      history.replaceState(null, "", "#" + parts.join("&"));
    } catch (e) {
      /* some file:// contexts refuse; the view still works */
    }
  }

  // -- filtering and sorting --------------------------------------------------
  function haystack(c) {
    var parts = [c.id, c.dataset, c.kind, c.question_type, plain(c.question) || "", plain(c.expected_answer) || ""];
    parts = parts.concat(c.tags, c.expected_source_ids);
    PIPES.forEach(function (p) {
      var r = c.runs[p];
      if (!r) return;
      parts.push(plain(r.answer) || "", r.status, plain(r.error_type) || "");
      parts = parts.concat(r.retrieved_ids || []);
    });
    return parts.join("\n").toLowerCase();
  }

  function statuses(c) {
    return PIPES.map(function (p) { return c.runs[p] ? c.runs[p].status : "not_run"; });
  }

  function matches(c) {
    if (state.kind && c.kind !== state.kind) return false;
    if (state.status) {
      var s = statuses(c);
      if (state.status === "differs") {
        if (s.every(function (x) { return x === s[0]; })) return false;
      } else if (s.indexOf(state.status) < 0) return false;
    }
    if (state.filter) {
      var words = state.filter.toLowerCase().split(/\s+/).filter(Boolean);
      var hay = c._hay || (c._hay = haystack(c));
      if (!words.every(function (w) { return hay.indexOf(w) >= 0; })) return false;
    }
    return true;
  }

  function sortKey(c, key) {
    var at = key.indexOf(":");
    if (at > 0) {
      var what = key.slice(0, at), pipe = key.slice(at + 1), r = c.runs[pipe];
      if (what === "status") return r ? STATUS_ORDER[r.status] : STATUS_ORDER.not_run;
      if (what === "metric") {
        var v = r && r.metrics ? r.metrics[state.metric] : undefined;
        return v === undefined ? null : v;
      }
      if (what === "latency") return r && r.latency_s !== null ? r.latency_s : null;
    }
    if (key === "tags") return c.tags.join(",");
    return c[key] === undefined ? "" : c[key];
  }

  function compare(a, b) {
    var ka = sortKey(a, state.sort), kb = sortKey(b, state.sort);
    // missing values sort last whatever the direction
    if (ka === null && kb === null) return a.key < b.key ? -1 : 1;
    if (ka === null) return 1;
    if (kb === null) return -1;
    var d = ka < kb ? -1 : ka > kb ? 1 : 0;
    if (d === 0) return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
    return state.dir === "desc" ? -d : d;
  }

  // -- rendering --------------------------------------------------------------
  var table = document.getElementById("cases-table");
  var tbody = table.querySelector("tbody");
  var counter = document.getElementById("case-count");

  function header() {
    var row = table.querySelector("thead tr");
    row.textContent = "";
    var cols = [["id", "Case"], ["kind", "Kind"], ["question_type", "Type"], ["tags", "Tags"]];
    cols.forEach(function (c) { row.appendChild(el("th", { "data-sort": c[0], text: c[1] })); });
    PIPES.forEach(function (p) {
      row.appendChild(el("th", { "data-sort": "status:" + p, text: p }));
      row.appendChild(el("th", { "data-sort": "metric:" + p, cls: "num", text: state.metric || "metric" }));
      row.appendChild(el("th", { "data-sort": "latency:" + p, cls: "num", text: "latency s" }));
    });
    Array.prototype.forEach.call(row.children, function (th) {
      if (th.getAttribute("data-sort") === state.sort) {
        th.setAttribute("aria-sort", state.dir === "desc" ? "descending" : "ascending");
      }
    });
  }

  function caseRow(c) {
    var tr = el("tr", { cls: "case", "data-key": c.key, "data-kind": c.kind });
    tr.appendChild(el("td", { text: c.id, title: c.dataset }));
    tr.appendChild(el("td", { text: c.kind }));
    tr.appendChild(el("td", { text: c.question_type }));
    tr.appendChild(el("td", { text: c.tags.join(", ") }));
    PIPES.forEach(function (p) {
      var r = c.runs[p];
      var status = r ? r.status : "not_run";
      tr.appendChild(el("td", { "data-pipeline": p }, el("span", { cls: "badge " + status, text: status.replace("_", " ") })));
      var v = r && r.metrics ? r.metrics[state.metric] : undefined;
      tr.appendChild(el("td", { cls: "num", text: fmt(v) }));
      tr.appendChild(el("td", { cls: "num", text: fmt(r ? r.latency_s : null) }));
    });
    tr.addEventListener("click", function () {
      state.open = state.open === c.key ? "" : c.key;
      writeHash();
      render();
    });
    return tr;
  }

  function field(label, value) {
    return el("div", { cls: "field" }, el("b", { text: label }), value);
  }

  function idList(ids, expected, ranked) {
    if (ids === null || ids === undefined) return el("span", { cls: "muted", text: "(no contexts returned)" });
    if (!ids.length) return el("span", { cls: "muted", text: "(none)" });
    var ul = el(ranked ? "ol" : "ul", { cls: "ids" });
    ids.forEach(function (id) { ul.appendChild(el("li", { cls: expected.indexOf(id) >= 0 ? "hit" : "", text: id })); });
    return ul;
  }

  // -- LLM judges: score, reasons, or why a judge did not judge this case ---------
  function contextName(item) {
    if (item.context === null) return "";
    return "context " + item.context + (item.context_id ? " (" + item.context_id + ")" : "");
  }

  function judgeGroup(g) {
    var ol = el("ol", { cls: "reasons" });
    g.items.forEach(function (item) {
      var li = el("li", { cls: "reason " + item.tone }, el("span", { cls: "verdict " + item.tone, text: item.verdict || "–" }));
      if (item.text !== null) li.appendChild(el("span", null, " ", longText(item.text)));
      var where = contextName(item);
      if (where) li.appendChild(el("span", { cls: "where", text: item.text !== null ? " \u2190 " + where : " " + where }));
      ol.appendChild(li);
    });
    return el("div", { cls: "judge-group" }, el("div", { cls: "muted", text: g.title + " (" + g.items.length + ")" }), ol);
  }

  function judgeView(v) {
    var scores = v.scores.map(function (s) { return s[0] + " = " + fmt(s[1]); }).join(", ");
    var box = el("div", { cls: "judge", "data-judge": v.judge });
    box.appendChild(el("div", { cls: "judge-head" }, el("b", { text: v.judge }), " ", scores || (v.not_judged ? "not judged" : "")));
    if (v.not_judged) {
      box.appendChild(el("div", { cls: "not-judged", text: "not judged: " + v.not_judged_text + " (" + v.not_judged + ")" }));
      return box;
    }
    if (v.redacted) {
      box.appendChild(el("div", { cls: "muted", text: "reasons left out (--ragproof-redact)" }));
      return box;
    }
    if (v.verdict !== null) box.appendChild(el("div", null, "verdict: ", el("span", { cls: "verdict " + v.verdict_tone, text: v.verdict })));
    if (v.numbers.length) box.appendChild(el("div", { cls: "numbers", text: v.numbers.map(function (n) { return n[0] + " " + fmt(n[1]); }).join(" \u00b7 ") }));
    v.groups.forEach(function (g) { box.appendChild(judgeGroup(g)); });
    if (v.prompt) box.appendChild(el("div", { cls: "muted prompt" }, "prompt ", longText(v.prompt, "prompt-text")));
    return box;
  }

  function judgePanel(r) {
    if (!r.judges.length && !r.judge_error && !r.judge_usage) return null;
    var det = el("details", { cls: "judges", open: "" });
    var u = r.judge_usage;
    var usage = u ? ", " + u.calls + " call(s), " + u.cached + " cached, " + (u.prompt_tokens + u.completion_tokens) + " tokens" + (u.cost_usd === null ? ", cost unknown" : ", $" + u.cost_usd.toFixed(4)) : "";
    det.appendChild(el("summary", { text: "LLM judges (" + r.judges.length + usage + ")" }));
    if (r.judge_error) det.appendChild(field("judge error", el("span", { cls: "badge error judge-error", text: text(r.judge_error) })));
    r.judges.forEach(function (v) { det.appendChild(judgeView(v)); });
    return det;
  }

  function runPanel(c, p) {
    var r = c.runs[p];
    var box = el("div", { cls: "run", "data-pipeline": p });
    var status = r ? r.status : "not_run";
    box.appendChild(el("h4", null, p + " ", el("span", { cls: "badge " + status, text: status.replace("_", " ") })));
    if (!r) {
      box.appendChild(el("div", { cls: "muted", text: "This pipeline has no record of this case." }));
      return box;
    }
    if (r.error_type) box.appendChild(field("error", el("span", { cls: "badge error", text: text(r.error_type) })));
    box.appendChild(field("answer", longText(r.answer)));
    box.appendChild(field("retrieved (rank order)", idList(r.retrieved_ids, c.expected_source_ids, true)));
    if (r.failures.length) {
      var ul = el("ul", { cls: "failures" });
      r.failures.forEach(function (f) {
        var line = f.observed === null
          ? text(f.expression) + ": " + f.metric + " not available (" + text(f.reason) + ")"
          : text(f.expression) + ": " + f.metric + " = " + fmt(f.observed) + " (expected " + f.bound + ")";
        ul.appendChild(el("li", { text: line }));
      });
      box.appendChild(field("failed thresholds", ul));
    }
    var judged = judgePanel(r);
    if (judged) box.appendChild(judged);
    if (r.contexts && r.contexts.length && !DATA.redacted) {
      var det = el("details", null, el("summary", { text: r.contexts.length + " retrieved context(s)" }));
      r.contexts.forEach(function (ctx, i) {
        var title = (i + 1) + ". " + ctx.id + (ctx.document_id && ctx.document_id !== ctx.id ? " (" + ctx.document_id + ")" : "");
        det.appendChild(field(title, longText(ctx.text, "text", "(no text)")));
      });
      box.appendChild(det);
    }
    var grid = el("div", { cls: "metric-grid" });
    Object.keys(r.metrics).sort().forEach(function (m) { grid.appendChild(el("span", { text: m + " = " + fmt(r.metrics[m]) })); });
    box.appendChild(el("details", null, el("summary", { text: Object.keys(r.metrics).length + " metric(s)" }), grid));
    return box;
  }

  function detailsRow(c, span) {
    var td = el("td", { colspan: String(span) });
    td.appendChild(field("question", longText(c.question)));
    if (c.history && c.history.length) {
      var h = el("ul", { cls: "ids" });
      c.history.forEach(function (m) { h.appendChild(el("li", null, m.role + ": ", longText(m.content, "history-text"))); });
      td.appendChild(field("conversation", h));
    }
    if (c.expected_answer !== null || DATA.redacted) td.appendChild(field("expected answer", longText(c.expected_answer)));
    td.appendChild(field("expected sources", idList(c.expected_source_ids, c.expected_source_ids)));
    if (c.kind === "injection") {
      td.appendChild(field("planted payload", longText(c.adversarial_payload)));
      td.appendChild(field("canary", longText(c.canary)));
    }
    if (c.reference_contexts.length) {
      var det = el("details", null, el("summary", { text: c.reference_contexts.length + " reference context(s)" }));
      c.reference_contexts.forEach(function (t) { det.appendChild(el("div", { cls: "field" }, longText(t))); });
      td.appendChild(det);
    }
    var side = el("div", { cls: "side" });
    side.style.gridTemplateColumns = "repeat(" + PIPES.length + ", minmax(0, 1fr))";
    PIPES.forEach(function (p) { side.appendChild(runPanel(c, p)); });
    td.appendChild(side);
    return el("tr", { cls: "details", "data-key": c.key }, td);
  }

  function render() {
    header();
    var rows = DATA.cases.filter(matches).sort(compare);
    var span = 4 + 3 * PIPES.length;
    tbody.textContent = "";
    rows.forEach(function (c) {
      var tr = caseRow(c);
      tbody.appendChild(tr);
      if (state.open === c.key) {
        tr.classList.add("open");
        tbody.appendChild(detailsRow(c, span));
      }
    });
    counter.textContent = rows.length + " of " + DATA.cases.length + " case(s)";
    document.body.setAttribute("data-rendered", String(rows.length));
  }

  // -- controls ---------------------------------------------------------------
  function fillSelect(select, values, current) {
    values.forEach(function (v) { select.appendChild(el("option", { value: v, text: v })); });
    select.value = current;
  }

  readHash();
  var filterBox = document.getElementById("filter");
  var kindSel = document.getElementById("kind");
  var statusSel = document.getElementById("status");
  var metricSel = document.getElementById("metric");
  filterBox.value = state.filter;
  fillSelect(kindSel, DATA.kinds, state.kind);
  var statusValues = ["passed", "failed", "error"].concat(PIPES.length > 1 ? ["differs"] : []);
  fillSelect(statusSel, statusValues, state.status);
  metricSel.textContent = "";
  fillSelect(metricSel, DATA.metrics, state.metric);

  filterBox.addEventListener("input", function () { state.filter = filterBox.value; writeHash(); render(); });
  kindSel.addEventListener("change", function () { state.kind = kindSel.value; writeHash(); render(); });
  statusSel.addEventListener("change", function () { state.status = statusSel.value; writeHash(); render(); });
  metricSel.addEventListener("change", function () { state.metric = metricSel.value; writeHash(); render(); });
  table.querySelector("thead").addEventListener("click", function (ev) {
    var th = ev.target.closest("th[data-sort]");
    if (!th) return;
    var key = th.getAttribute("data-sort");
    state.dir = state.sort === key && state.dir === "asc" ? "desc" : "asc";
    state.sort = key;
    writeHash();
    render();
  });
  window.addEventListener("hashchange", function () {
    // in-page links (#cases) are not view state: keep the current view
    if (window.location.hash.indexOf("=") < 0) return;
    readHash();
    filterBox.value = state.filter;
    kindSel.value = state.kind;
    statusSel.value = state.status;
    metricSel.value = state.metric;
    render();
  });
  render();
  if (state.open) {
    var opened = tbody.querySelector("tr.case.open");
    if (opened) opened.scrollIntoView();
  }
})();
