"""Reading and writing the results file, and the questions renderers ask of a case entry."""

from __future__ import annotations

import json
import platform
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof.results.digest import DIGEST_COVERS, digest

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Results

RESULTS_FORMAT = "ragproof.results/1"


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for dist in ("pytest-ragproof", "pytest"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:  # pragma: no cover - bare checkout
            out[dist] = "unknown"
    return out


#: The results file's encoder: deterministic, diff-friendly (sorted keys, 2-space indent).
_ENCODER = json.JSONEncoder(sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)


def dumps(results: dict[str, Any]) -> str:
    """Deterministic, diff-friendly JSON: sorted keys, 2-space indent, trailing newline."""
    return _ENCODER.encode(results) + "\n"


#: Characters of JSON handed to the file at a time by :func:`dump_parts`.
_PART = 1 << 16


def dump_parts(results: dict[str, Any]) -> Iterator[str]:
    """:func:`dumps`'s text in consecutive parts, never all of it at once.

    ``json.dumps`` with an indent joins a list of every token of the document: for
    100,000 cases, millions of small strings and then the text, at the end of a run
    that holds every case already. The same encoder yields the same tokens here,
    joined into parts of about 64 K characters.
    """
    part: list[str] = []
    size = 0
    for token in _ENCODER.iterencode(results):
        part.append(token)
        size += len(token)
        if size >= _PART:
            yield "".join(part)
            part.clear()
            size = 0
    part.append("\n")
    yield "".join(part)


def write_results(results: dict[str, Any], path: Path) -> None:
    """Write ``results`` at ``path`` (atomically) with the digest of its cases.

    The file is :func:`dumps` of the signed document, written part by part.
    """
    from pytest_ragproof.fileio import write_atomic

    covers = list(DIGEST_COVERS)
    signed = {**results, "digest": {"sha256": digest(results, covers), "covers": covers}}
    write_atomic(path, dump_parts(signed))


def read_results(path: Path, *, check: bool = False, shown: str | None = None) -> dict[str, Any]:
    """A results file, parsed; ConfigError naming the file when it is not one.

    ``check``: also validate it as merges and baselines need it (types, metric ranges,
    duplicate cases, the digest; :func:`pytest_ragproof.results.schema.check_results`).
    ``shown``: the file's name in messages (default: the path).
    """
    from pytest_ragproof.errors import ConfigError

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(f"cannot read results file {path}: {reason}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"results file {path} is not UTF-8 text (byte {exc.start}): it is not a results "
            "file; give the file --ragproof-report wrote"
        ) from None
    data = loads_checked(text, path)
    if not isinstance(data, dict) or data.get("format") != RESULTS_FORMAT:
        raise ConfigError(f"{path} is not a ragproof results file (format {RESULTS_FORMAT})")
    if check:
        from pytest_ragproof.results.schema import check_results

        check_results(data, shown or str(path))
    return data


def read_model(path: Path, *, check: bool = False, shown: str | None = None) -> Results:
    """A results file as its typed model (:class:`~pytest_ragproof.results.models.Results`).

    ``check``: validated as :func:`read_results` validates it (merges, baselines); without
    it, the schema only (:func:`pytest_ragproof.results.schema.results_model`).
    """
    from pytest_ragproof.results.schema import load_results, results_model

    data = read_results(path)
    return (
        load_results(data, shown or str(path)) if check else results_model(data, shown or str(path))
    )


#: A ``\\uD800``-``\\uDFFF`` escape: half of a surrogate pair, which alone is no character.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def loads_checked(text: str, path: Path) -> Any:
    """``json.loads`` of a results file's text; ConfigError (one line naming the file and
    where) when it is not JSON, nests deeper than the decoder goes, holds an integer longer
    than Python converts (``sys.get_int_max_str_digits()``, 4,300 digits) or a lone
    surrogate escape (no character: nothing could print, hash or store it)."""
    from pytest_ragproof.errors import ConfigError

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(invalid_json(path, exc)) from None
    except ValueError:  # int(): an integer literal past the conversion limit
        raise ConfigError(_long_integer(text, path)) from None
    except RecursionError:
        raise ConfigError(
            f"{path} is not a ragproof results file: its JSON nests deeper than any results "
            "file (thousands of brackets); give the file pytest --ragproof-report=PATH wrote"
        ) from None
    if _SURROGATE_ESCAPE.search(text) is not None:
        try:
            _ENCODER.encode(data).encode("utf-8")
        except UnicodeEncodeError:
            where = _line_column(text, _lone_surrogate(text))
            raise ConfigError(
                f"results file {path} holds a lone surrogate escape at {where} (half of a "
                "UTF-16 pair, no character; edited or written by another tool?); write it "
                "again (pytest --ragproof-report=PATH) or use an intact copy"
            ) from None
    return data


#: A JSON string (skipped whole) or an integer literal: digits outside any string.
_STRING_OR_INTEGER = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|(?<![\d.eE+-])-?(\d+)(?![\d.eE])')


def _long_integer(text: str, path: Path) -> str:
    """The message of a results file whose JSON holds an integer longer than Python
    converts: how many digits, and where the first such integer is."""
    import sys

    limit = sys.get_int_max_str_digits()
    for match in _STRING_OR_INTEGER.finditer(text):
        digits = match.group(1)
        if digits is not None and len(digits) > limit:
            found = f"an integer of {len(digits):,} digits at {_line_column(text, match.start())}"
            break
    else:  # pragma: no cover - json raised for an integer the scan does not see
        found = f"an integer of more than {limit:,} digits"
    return (
        f"results file {path} holds {found} (Python reads at most {limit:,}; no run writes "
        "one: edited or written by another tool?); write it again (pytest "
        "--ragproof-report=PATH) or use an intact copy"
    )


def _lone_surrogate(text: str) -> int:
    """The offset of the first surrogate escape that is not half of a well-formed pair."""
    paired_low = -1  # offset of the low half that completes the pair just seen
    for match in _SURROGATE_ESCAPE.finditer(text):
        at, high = match.start(), match.group(0)[3].lower() in "89ab"
        if at == paired_low:
            continue
        following = _SURROGATE_ESCAPE.match(text, match.end())
        if high and following is not None and following.group(0)[3].lower() in "cdef":
            paired_low = following.start()
            continue
        return at
    return 0


def _line_column(text: str, offset: int) -> str:
    line_start = text.rfind("\n", 0, offset) + 1
    return f"line {text.count(chr(10), 0, offset) + 1}, column {offset - line_start + 1}"


def invalid_json(path: Path, exc: json.JSONDecodeError) -> str:
    """The one-line message of a results file that does not parse: where, and what to do.

    A results file is one JSON object: ``{`` to ``}``. One that starts so but does not
    end so was cut short (a write or a copy interrupted); one that does both was edited
    into invalid JSON; one that does not start so, or holds more (JSONL), is another file.
    """
    where = f"line {exc.lineno}, column {exc.colno}"
    again = "write it again (pytest --ragproof-report=PATH) or use an intact copy"
    text = exc.doc.strip()
    if not text.startswith("{") or exc.msg == "Extra data":  # e.g. a JSONL dataset
        return (
            f"{path} is not a ragproof results file: not one JSON object ({exc.msg} at "
            f"{where}); give the file pytest --ragproof-report=PATH wrote"
        )
    if not text.endswith("}"):
        return (
            f"results file {path} is truncated: its JSON breaks off at {where} (a write or "
            f"copy cut off?); {again}"
        )
    return f"results file {path} is not valid JSON at {where}: {exc.msg} (edited by hand?); {again}"


def is_flaky(case: Any) -> bool:
    """Did some but not all repeats of a case (a case record or a results entry) pass?"""
    repeats = case.get("repeats") if isinstance(case, dict) else getattr(case, "repeats", None)
    return isinstance(repeats, dict) and 0 < float(repeats["pass_rate"]) < 1
