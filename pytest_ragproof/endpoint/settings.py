"""The settings of ``--ragproof-endpoint``, validated once when the run starts (pytest-free).

The URL, the JSON body template, the headers (``${VAR}`` taken from the
environment), the JSON paths of the answer and the contexts, the per-request
timeout, the retries and the largest response body read. Errors are
:class:`~pytest_ragproof.errors.ConfigError` naming the option and the fix; a
header's value (or the variable's) is never part of a message, nor of the settings'
``repr``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from pytest_ragproof import defaults
from pytest_ragproof.endpoint.jsonpath import JsonPath, parse
from pytest_ragproof.errors import ConfigError

PLACEHOLDERS = ("question", "history")
_PLACEHOLDER = re.compile(r"\{(question|history)\}")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP token (RFC 9110)


@dataclass(frozen=True)
class BodyTemplate:
    """A JSON body with ``{question}`` and ``{history}`` filled in, JSON-escaped.

    Only those two placeholders are replaced; every other brace is left as written
    (a JSON template is full of them). Inside a JSON string (``"{question}"``) the
    value's escaped characters are inserted; outside one (``{question}``) a whole
    JSON value: the question as a string, the history as a list of
    ``{"role", "content"}`` objects.
    """

    # (literal text, None) or (placeholder name, inside a JSON string?)
    parts: tuple[tuple[str, bool | None], ...]

    def render(self, question: str, history: Sequence[Mapping[str, Any]]) -> str:
        values = {"question": question, "history": list(history)}
        out: list[str] = []
        for text, in_string in self.parts:
            if in_string is None:
                out.append(text)
                continue
            value = values[text]
            encoded = json.dumps(value, ensure_ascii=False)
            if in_string:
                # Inside quotes: the question's characters, or the history's JSON text,
                # escaped as the content of a JSON string (its own quotes dropped).
                shown = value if isinstance(value, str) else encoded
                out.append(json.dumps(shown, ensure_ascii=False)[1:-1])
            else:
                out.append(encoded)
        return "".join(out)


def _string_spans(template: str) -> list[tuple[int, int]]:
    """Where the template's JSON strings are (start and end of their contents)."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    i = 0
    while i < len(template):
        char = template[i]
        if start is None and char == '"':
            start = i + 1
        elif start is not None and char == "\\":
            i += 1  # skip the escaped character
        elif start is not None and char == '"':
            spans.append((start, i))
            start = None
        i += 1
    if start is not None:
        spans.append((start, len(template)))
    return spans


def body_template(text: str, option: str = "--ragproof-endpoint-body") -> BodyTemplate:
    """Parse and check a body template: it must hold {question} and fill in to valid JSON."""
    spans = _string_spans(text)
    parts: list[tuple[str, bool | None]] = []
    last = 0
    for match in _PLACEHOLDER.finditer(text):
        if match.start() > last:
            parts.append((text[last : match.start()], None))
        inside = any(a <= match.start() and match.end() <= b for a, b in spans)
        parts.append((match.group(1), inside))
        last = match.end()
    if last < len(text):
        parts.append((text[last:], None))
    template = BodyTemplate(tuple(parts))
    if not any(name == "question" and kind is not None for name, kind in parts):
        raise ConfigError(
            f"{option} has no {{question}} placeholder, so every case would send the same "
            f"body; e.g. {option} '{defaults.ENDPOINT_BODY}'"
        )
    sample = template.render('a "quoted"\nquestion', [{"role": "user", "content": "hi"}])
    try:
        json.loads(sample)
    except ValueError as exc:
        reason = getattr(exc, "msg", type(exc).__name__)
        raise ConfigError(
            f"{option} is not valid JSON once {{question}} and {{history}} are filled in "
            f"({reason}); write {{question}} inside quotes or bare, {{history}} bare, e.g. "
            f"{option} '{defaults.ENDPOINT_BODY}'"
        ) from None
    return template


class Headers:
    """The request headers, expanded. Their values never reach a ``repr`` or a message."""

    def __init__(self, pairs: Sequence[tuple[str, str]]) -> None:
        self._pairs = tuple(pairs)

    def items(self) -> tuple[tuple[str, str], ...]:
        return self._pairs

    def names(self) -> frozenset[str]:
        return frozenset(name.lower() for name, _ in self._pairs)

    def __repr__(self) -> str:
        names = ", ".join(name for name, _ in self._pairs)
        return f"Headers({names}; values hidden)"


def headers(
    lines: Sequence[str], environ: Mapping[str, str], option: str = "--ragproof-endpoint-header"
) -> Headers:
    """``Name: value`` lines with ``${VAR}`` expanded from ``environ``; the last of a name wins."""
    chosen: dict[str, tuple[str, str]] = {}
    for number, line in enumerate(lines, 1):
        name, colon, raw = line.partition(":")
        name = name.strip()
        if not colon or not _HEADER_NAME.fullmatch(name):
            # Not echoed: a malformed line may well be the token itself.
            raise ConfigError(
                f"{option} #{number} is not 'Name: value' (a header name, a colon, the value); "
                f"e.g. {option} 'Authorization: Bearer ${{RAG_TOKEN}}'"
            )

        def expand(match: re.Match[str], header: str = name) -> str:
            variable = match.group(1)
            if variable not in environ:
                raise ConfigError(
                    f"{option} '{header}' uses ${{{variable}}}, which is not set in the "
                    f"environment; set {variable} before running pytest"
                )
            return environ[variable]

        value = _VARIABLE.sub(expand, raw.strip())
        if any(c in value for c in "\r\n\0"):
            raise ConfigError(
                f"{option} '{name}': the value holds a line break or NUL once its variables "
                "are expanded, which no HTTP header may contain"
            )
        chosen[name.lower()] = (name, value)
    return Headers(list(chosen.values()))


def _url(url: str, option: str = "--ragproof-endpoint") -> str:
    # The URL is not echoed: its query string may carry a key.
    parts = urlsplit(url.strip())
    example = f"e.g. {option}=https://rag.example.com/ask"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{option} must be an http:// or https:// URL with a host; {example}")
    if parts.username is not None or parts.password is not None:
        raise ConfigError(
            f"{option} must not carry credentials (user:password@); send them as a header: "
            f"--ragproof-endpoint-header 'Authorization: Basic ${{RAG_BASIC}}'"
        )
    try:
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        raise ConfigError(f"{option} has an invalid port; {example}") from None
    return url.strip()


def _number(option: str, text: object, kind: type[float] | type[int], minimum: float) -> Any:
    try:
        value = kind(str(text).strip())
    except ValueError:
        raise ConfigError(
            f"{option} expects {'an integer' if kind is int else 'seconds'}, e.g. "
            f"{option}={3 if kind is int else 30}; got '{text}'"
        ) from None
    if value < minimum or (kind is float and value == 0):
        raise ConfigError(f"{option} must be {'positive' if kind is float else 'at least 0'}")
    return value


_SIZE = re.compile(r"([0-9]+)\s*(|B|KB|KiB|K|MB|MiB|M)", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2}
_UNITS["mib"] = 1024**2


def byte_size(text: object, option: str = "--ragproof-endpoint-max-bytes") -> int:
    """``2097152``, ``512KB`` or ``2MB`` (KB and MB count 1024) as a positive byte count."""
    match = _SIZE.fullmatch(str(text).strip())
    if match is None or int(match.group(1)) == 0:
        raise ConfigError(
            f"{option} expects a positive size in bytes, or with KB or MB, e.g. {option}=2MB "
            f"or {option}=500000; got '{text}'"
        )
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


def shown_size(n: int) -> str:
    """A byte count as a user would write it: ``2MB``, ``512KB`` or ``1000 bytes``."""
    for unit, size in (("MB", 1024**2), ("KB", 1024)):
        if n % size == 0:
            return f"{n // size}{unit}"
    return f"{n} bytes"


@dataclass(frozen=True)
class EndpointSettings:
    """Everything one ``--ragproof-endpoint`` run needs, validated."""

    url: str = field(repr=False)  # its query string may carry a key
    body: BodyTemplate
    headers: Headers
    answer: JsonPath
    contexts: JsonPath | None
    context_id: JsonPath | None
    context_text: JsonPath | None
    timeout: float
    retries: int
    max_bytes: int = byte_size(defaults.ENDPOINT_MAX_BYTES)

    @property
    def host(self) -> str:
        """``host:port`` of the URL, for messages (never its path or query)."""
        parts = urlsplit(self.url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return f"{parts.hostname}:{port}"


def make_settings(
    *,
    url: str,
    body: str = defaults.ENDPOINT_BODY,
    header_lines: Sequence[str] = (),
    answer: str = defaults.ENDPOINT_ANSWER,
    contexts: str | None = None,
    context_id: str | None = None,
    context_text: str | None = None,
    timeout: float | str = defaults.ENDPOINT_TIMEOUT,
    retries: int | str = defaults.ENDPOINT_RETRIES,
    max_bytes: int | str = defaults.ENDPOINT_MAX_BYTES,
    environ: Mapping[str, str],
) -> EndpointSettings:
    """Validate the endpoint settings; ConfigError naming the option and the fix otherwise."""

    def path(text: str | None, option: str) -> JsonPath | None:
        return parse(text, option) if text else None

    if (context_id or context_text) and not contexts:
        option = (
            "--ragproof-endpoint-context-id" if context_id else "--ragproof-endpoint-context-text"
        )
        raise ConfigError(
            f"{option} is a path inside each context and needs --ragproof-endpoint-contexts, "
            "the path of the list of contexts, e.g. --ragproof-endpoint-contexts '$.sources'"
        )
    return EndpointSettings(
        url=_url(url),
        body=body_template(body),
        headers=headers(header_lines, environ),
        answer=parse(answer, "--ragproof-endpoint-answer"),
        contexts=path(contexts, "--ragproof-endpoint-contexts"),
        context_id=path(context_id, "--ragproof-endpoint-context-id"),
        context_text=path(context_text, "--ragproof-endpoint-context-text"),
        timeout=_number("--ragproof-endpoint-timeout", timeout, float, 0),
        retries=_number("--ragproof-endpoint-retries", retries, int, 0),
        max_bytes=byte_size(max_bytes),
    )
