"""promptfoo test cases: YAML (a list of tests, or a config with ``tests:``) or CSV.

A YAML test has ``vars`` (free names), ``assert`` (``[{type, value}]``),
``description`` and ``metadata``; a config's ``defaultTest`` applies to every
test. A CSV has one column per var plus ``__expected`` (``type: value``, plain
text meaning ``equals``), ``__expected1``…, ``__description`` and
``__metadata:KEY``. Vars have no fixed meaning, so ``--var question=NAME`` says
which var is the question (``expected_answer``, ``reference_contexts``,
``expected_source_ids`` and ``id`` may be mapped too). The expected answer comes
from a mapped var or from the first ``equals``/``contains``/``icontains``/
``similar`` assertion. PyYAML (``pytest-ragproof[interop]``) reads the YAML.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_ragproof.dataset.values import printable_name
from pytest_ragproof.interop.drafts import (
    Draft,
    bad,
    csv_rows,
    read_text,
    string_list,
    string_value,
)
from pytest_ragproof.interop.report import FieldReport

VAR_FIELDS = ("question", "expected_answer", "reference_contexts", "expected_source_ids", "id")
ANSWER_ASSERTS = ("equals", "contains", "icontains", "similar")
_CSV_ASSERT = re.compile(r"^([a-z][a-z0-9-]*):\s?(.*)$", re.DOTALL)


def parse_vars(pairs: list[str] | None) -> dict[str, str]:
    """``--var FIELD=VAR`` pairs as {field: var name}; a usage error names the fix."""
    from pytest_ragproof.errors import ConfigError

    out: dict[str, str] = {}
    for pair in pairs or ():
        field, sep, var = pair.partition("=")
        field, var = field.strip(), var.strip()
        if not sep or not var or field not in VAR_FIELDS:
            raise ConfigError(
                f"--var {pair!r}: expected FIELD=VAR with FIELD one of {', '.join(VAR_FIELDS)}, "
                "e.g. --var question=query"
            )
        out[field] = var
    return out


def _yaml_tests(path: Path, text: str) -> list[tuple[int | None, Any]]:
    try:
        import yaml
    except ImportError:
        from pytest_ragproof.errors import MissingExtraError

        raise MissingExtraError("interop", "pyyaml", "Reading promptfoo YAML") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        _no_repeated_keys(path, node)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + 1
        if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow
            line = text.count("\n", 0, exc.position) + 1
        raise bad(
            path,
            line,
            f"invalid YAML ({type(exc).__name__})",
            "fix the YAML syntax at that line",
        ) from None
    except RecursionError:
        raise bad(
            path, 1, "holds values nested too deeply to parse", "flatten the nested values"
        ) from None
    except ValueError:  # an integer longer than Python converts (sys.int_info's limit)
        import re

        long = re.search(r"\d{4300,}", text)
        line = None if long is None else text.count("\n", 0, long.start()) + 1
        raise bad(
            path,
            line,
            "holds a number too long to read (thousands of digits)",
            "quote it to make it text, or shorten it",
        ) from None
    default: Mapping[str, Any] = {}
    default_line: int | None = None
    if isinstance(data, Mapping):
        if isinstance(data.get("tests"), str):
            raise bad(
                path,
                _key_line(node, "tests"),
                "tests: names another file",
                "import that file (the tests list) instead of the config",
            )
        if not isinstance(data.get("tests"), list):
            raise bad(path, 1, "has no tests: list", "give a promptfoo tests file or config")
        found = data.get("defaultTest")
        default_line = _key_line(node, "defaultTest")
        if found is not None and not isinstance(found, Mapping):
            raise bad(
                path,
                default_line,
                f"defaultTest is a {type(found).__name__}, not a mapping",
                "write defaultTest as {vars: …, assert: […]}",
            )
        default = found or {}
        _check_test(path, default_line, default, "defaultTest")
        node = _value_node(node, "tests")
        data = data["tests"]
    if not isinstance(data, list):
        raise bad(path, 1, "is not a list of tests", "give a promptfoo tests file or config")
    items = getattr(node, "value", None)
    if isinstance(items, list) and len(items) == len(data):
        lines: list[int | None] = [item.start_mark.line + 1 for item in items]
    else:  # tests reached through an alias or merge key: their lines are not known
        lines = [None] * len(data)
    out: list[tuple[int | None, Any]] = []
    for line, test in zip(lines, data, strict=True):
        if isinstance(test, Mapping):
            _check_test(path, line, test, "the test")
            test = _merge(default, test)
        out.append((line, test))
    return out


def _key_line(node: Any, key: str) -> int | None:
    for k, _ in getattr(node, "value", None) or ():
        if getattr(k, "value", None) == key:
            return int(k.start_mark.line) + 1
    return None


def _value_node(node: Any, key: str) -> Any:
    for k, v in getattr(node, "value", None) or ():
        if getattr(k, "value", None) == key:
            return v
    return None


def _no_repeated_keys(path: Path, root: Any) -> None:
    """A mapping that names a key twice is an error (promptfoo's YAML reader refuses it;
    PyYAML would keep the last silently)."""
    import yaml

    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in keys and key.value != "<<":
                        raise bad(
                            path,
                            key.start_mark.line + 1,
                            "a mapping has the same key twice",
                            "keep one of the two keys (YAML keys must be unique)",
                        )
                    keys.add(key.value)
                stack += [key, value]
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value


def _check_test(path: Path, line: int | None, test: Mapping[str, Any], what: str) -> None:
    """``vars`` a mapping and ``assert`` a list, where present."""
    vars_ = test.get("vars")
    if vars_ is not None and not isinstance(vars_, Mapping):
        raise bad(
            path,
            line,
            f"{what}'s vars is a {type(vars_).__name__}, not a mapping",
            "write vars as NAME: value lines (a vars: file reference is not read)",
        )
    asserts = test.get("assert")
    if asserts is not None and not isinstance(asserts, list):
        raise bad(
            path,
            line,
            f"{what}'s assert is a {type(asserts).__name__}, not a list",
            "write assert as a list of {type, value}",
        )


def _merge(default: Mapping[str, Any], test: Mapping[str, Any]) -> Mapping[str, Any]:
    if not default:
        return test
    out = {**default, **test}
    out["vars"] = {**(default.get("vars") or {}), **(test.get("vars") or {})}
    out["assert"] = [*(default.get("assert") or []), *(test.get("assert") or [])]
    return out


def _csv_tests(path: Path, text: str) -> list[tuple[int | None, Any]]:
    _, rows = csv_rows(path, text)
    tests: list[tuple[int | None, Any]] = []
    for row in rows:
        test: dict[str, Any] = {"vars": {}, "assert": [], "metadata": {}}
        for name, cell in row.value.items():
            if name.startswith("__expected"):
                match = _CSV_ASSERT.match(cell)
                kind, value = (match.group(1), match.group(2)) if match else ("equals", cell)
                test["assert"].append({"type": kind, "value": value})
            elif name == "__description":
                test["description"] = cell
            elif name.startswith("__metadata:"):
                test["metadata"][name.split(":", 1)[1]] = cell
            elif name.startswith("__"):
                test.setdefault("_dropped", []).append(name)
            else:
                test["vars"][name] = cell
        tests.append((row.line, test))
    return tests


def read(path: Path, report: FieldReport, *, var_map: dict[str, str]) -> list[Draft]:
    text = read_text(path)
    is_csv = path.suffix.lower() == ".csv"
    tests = _csv_tests(path, text) if is_csv else _yaml_tests(path, text)
    if "question" not in var_map:
        names = sorted(
            {
                printable_name(str(k))
                for _, t in tests
                if isinstance(t, Mapping) and isinstance(t.get("vars"), Mapping)
                for k in t["vars"]
            }
        )
        raise bad(
            path,
            None,
            "promptfoo vars have no fixed meaning and no --var question=NAME was given",
            "say which var is the question with --var question=NAME "
            f"(vars in the file: {', '.join(names) or 'none'})",
        )
    drafts: list[Draft] = []
    for line, test in tests:
        report.n_read += 1
        if not isinstance(test, Mapping):
            raise bad(
                path, line, "a test is not a mapping with vars", "write each test as {vars: …}"
            )
        _check_test(path, line, test, "the test")
        draft = _draft(path, line, test, var_map, report)
        if draft is not None:
            drafts.append(draft)
    return drafts


def _var(
    path: Path, line: int | None, vars_: Mapping[str, Any], var_map: dict[str, str], field: str
) -> tuple[str, Any]:
    name = var_map.get(field, "")
    return f"vars.{name}", vars_.get(name) if name else None


def _draft(
    path: Path,
    line: int | None,
    test: Mapping[str, Any],
    var_map: dict[str, str],
    report: FieldReport,
) -> Draft | None:
    vars_ = test.get("vars") or {}
    label, raw = _var(path, line, vars_, var_map, "question")
    if isinstance(raw, list):
        report.drop_record(
            f"{label} is a list (promptfoo runs one test per value; a case has one question)",
            line,
        )
        return None
    question = string_value(path, line, label, raw)
    if question is None:
        report.drop_record(f"no question ({label} is missing or empty)", line)
        return None
    if question.startswith("file://"):
        report.drop_record(f"{label} is loaded from a file by promptfoo (file://); inline it", line)
        return None
    draft = Draft(line=line, question=question)
    report.map(label, "question")
    used = {var_map["question"]}
    for field in ("expected_answer", "id"):
        label, raw = _var(path, line, vars_, var_map, field)
        value = string_value(path, line, label, raw, allow_number=field == "id")
        if value is not None:
            setattr(draft, field, value)
            report.map(label, field)
            used.add(var_map[field])
    label, raw = _var(path, line, vars_, var_map, "reference_contexts")
    draft.passages = string_list(path, line, label, raw)
    if draft.passages:
        report.map(label, "reference_contexts")
        used.add(var_map["reference_contexts"])
    label, raw = _var(path, line, vars_, var_map, "expected_source_ids")
    ids = string_list(path, line, label, raw)
    if ids:
        draft.source_ids, draft.source_ids_from = ids, label  # mapped when used (build.py)
        used.add(var_map["expected_source_ids"])
    for name in vars_:
        if str(name) not in used:
            report.drop_field(f"vars.{name}", "a var not named by --var")
    for item in test.get("assert") or []:
        kind = str(item.get("type", "")) if isinstance(item, Mapping) else ""
        value = item.get("value") if isinstance(item, Mapping) else None
        if draft.expected_answer is None and kind in ANSWER_ASSERTS and isinstance(value, str):
            draft.expected_answer = value
            report.map(f"assert {kind}", "expected_answer")
        elif kind in ANSWER_ASSERTS:
            report.drop_field(f"assert {kind}", "a case has one expected answer: the first one")
        else:
            report.drop_field(f"assert {kind or '?'}", "an assertion with no ragproof equivalent")
    meta = test.get("metadata")
    if isinstance(meta, Mapping):
        draft.metadata.update(meta)
        for key in meta:
            report.map(f"metadata.{key}", f"metadata.{key}")
    description = string_value(path, line, "description", test.get("description"))
    if description is not None:
        draft.metadata["description"] = description
        report.map("description", "metadata.description")
    for name in test.get("_dropped", ()):
        report.drop_field(name, "a promptfoo column with no ragproof equivalent")
    for name in test:
        if name not in ("vars", "assert", "metadata", "description", "_dropped"):
            report.drop_field(name, "a promptfoo test setting with no ragproof equivalent")
    return draft
