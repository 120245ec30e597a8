"""One exception tree for everything pytest-ragproof raises on purpose.

::

    RagproofError                      base of every deliberate error
    ├── DatasetError                   a dataset file or record is invalid (never echoes values)
    │   ├── FrozenDatasetModifiedError a frozen file no longer matches its hash / canonical form
    │   └── LabelError                 a human label or a labels file is invalid
    ├── ConfigError                    a bad option, threshold expression or setting
    │   └── PipelineSignatureError     the pipeline requires a parameter ragproof never passes
    ├── MissingExtraError              an optional dependency ("extra") is not installed
    ├── IngestError                    a corpus path cannot be read at all
    ├── OutputShapeError               a pipeline returned something we cannot score
    ├── EndpointError                  a --ragproof-endpoint call failed (status / JSON path only)
    ├── HistoryError                   the run history store cannot be opened, read or written
    ├── UsageError                     a ragproof command used wrongly (exit 2)
    └── LLMError                       anything from the LLM layer
        ├── LLMConfigError             no model configured / bad model settings
        │   └── LLMUnreachableError    the model's server refused the connection
        ├── ProviderError              the provider failed (type + HTTP status only)
        │   └── LLMTimeoutError        the call or the retry budget timed out
        └── InvalidOutputError         the model's output did not validate, even after repair

The plugin turns these into ``pytest.UsageError`` (configuration, datasets) or item
failures (pipeline outputs). Messages never contain dataset values: questions,
answers and contexts are sensitive.

The ``ragproof`` command's exit status comes from the error that stopped it: its
class's ``exit_code``, read in one place (``cli.main``, which prints the one-line
message). 1 (every error): the command ran and found a problem; 2
(:class:`UsageError`): the command was used wrongly. A command whose contract counts
an error of the library as a usage error (a bad store for ``ragproof history``)
raises ``UsageError`` from it, with the same message.
"""

from __future__ import annotations

from typing import ClassVar


class RagproofError(Exception):
    """Base class of every error pytest-ragproof raises deliberately."""

    #: The ``ragproof`` command's exit status when this error stops it (``cli.main``).
    exit_code: ClassVar[int] = 1


class UsageError(RagproofError):
    """A ``ragproof`` command was used wrongly: options that do not go together, an
    output it will not replace, an input its contract counts as usage. Exit status 2."""

    exit_code = 2


class DatasetError(RagproofError):
    """A dataset source or one of its records is invalid.

    The message names the source, the 1-based record and line where known, the
    underlying exception type and the fix, and never any value from the record.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        record: int | None = None,
        line: int | None = None,
        exc_type: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.reason = message
        self.source = source
        self.record = record
        self.line = line
        self.exc_type = exc_type
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        where: list[str] = []
        if self.source is not None:
            where.append(str(self.source))
        if self.record is not None:
            where.append(f"record {self.record}")
        if self.line is not None:
            where.append(f"line {self.line}")
        text = ", ".join(where)
        out = f"{text}: {self.reason}" if text else self.reason
        if self.exc_type:
            out += f" [{self.exc_type}]"
        if self.hint:
            out += (" " if out.endswith("?") else ". ") + f"Fix: {self.hint}"
        return out


class FrozenDatasetModifiedError(DatasetError):
    """A frozen dataset file was changed after it was frozen."""


class LabelError(DatasetError):
    """A human label (``ragproof.label/1``) or a labels file is invalid.

    Raised by the label's constructor (field and problem, no source) and by the
    reader and the appender (file, line, field and the fix); never the note's text.
    """


class ConfigError(RagproofError):
    """An option, ini value, threshold expression or setting is invalid."""


class PipelineSignatureError(ConfigError):
    """The pipeline declares a required parameter that ragproof never passes.

    Raised (as the case's error) by the call of every case of such a pipeline, so the
    runner can stop at the first one with one usage error; ``evaluate()`` raises it
    before running any case. ``parameters`` are the offending parameter names.
    """

    def __init__(self, message: str, parameters: tuple[str, ...]) -> None:
        self.parameters = parameters
        super().__init__(message)


class MissingExtraError(RagproofError):
    """An optional dependency is missing; the message carries the install command."""

    def __init__(self, extra: str, module: str, purpose: str) -> None:
        self.extra = extra
        self.module = module
        super().__init__(
            f"{purpose} needs the '{module}' package, which is not installed. "
            f"Install it with: pip install 'pytest-ragproof[{extra}]'"
        )


class HistoryError(RagproofError):
    """The run history store (``--ragproof-history``, ``ragproof history``) cannot be used.

    The message names the store (a URL without its password) and the fix.
    """


class IngestError(RagproofError):
    """A corpus path cannot be read at all (missing path, unusable arguments)."""


class OutputShapeError(RagproofError):
    """A pipeline output has a shape that cannot be scored."""


class EndpointError(RagproofError):
    """A call of the ``--ragproof-endpoint`` service failed for one case.

    The message names the HTTP status, the JSON path or the exception type and the
    option that changes it; never the request or response body, nor a header value.
    """


class LLMError(RagproofError):
    """Base class of the LLM layer's errors.

    ``attempts`` counts the HTTP requests the failed call made and ``waited_s`` the
    seconds from its first request to giving up: usage lines count failed calls too.
    ``prompt_tokens``, ``completion_tokens`` and ``cost`` are those of the replies the
    call did receive (a reply refused after its repair was generated, and billed, all the
    same; ``cost`` None when litellm has no price for it); 0 when no reply came.
    """

    attempts: int = 0
    waited_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = 0.0

    @property
    def kind(self) -> str:
        """How the call failed, in a few words for usage lines (``timeout``, ``HTTP 500``)."""
        return type(self).__name__


class LLMConfigError(LLMError):
    """No model is configured, or the model settings are unusable."""


class LLMUnreachableError(LLMConfigError):
    """Nothing listens at the model's address: the connection was refused.

    Every call would fail alike (a server not started, a wrong port), so it is a
    configuration error, said once, not a provider failure per call.
    """

    kind = "connection refused"

    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__(
            f"cannot reach {address} (connection refused): start the model server or "
            "correct the API base"
        )


class LLMUnresponsiveError(LLMConfigError):
    """The model's endpoint answered nothing, even at a lowered concurrency (llm.breaker).

    Every later call would wait out its timeouts too: a configuration error, said once.
    """

    kind = "no answer, given up"

    def __init__(self, endpoint: str, what: str) -> None:
        self.endpoint = endpoint
        super().__init__(
            f"{endpoint} answers nothing: {what}; stopped calling it. Check that the server "
            "is running and can serve the model (a local model may need a completion budget, "
            "--ragproof-judge-max-tokens, a longer --ragproof-judge-timeout or "
            "--ragproof-judge-concurrency=1)"
        )


class ProviderError(LLMError):
    """The provider failed. Only the exception type and HTTP status are kept."""

    def __init__(self, exc_type: str, status: int | None = None, attempts: int = 1) -> None:
        self.exc_type = exc_type
        self.status = status
        self.attempts = attempts
        self.waited_s = 0.0
        status_text = f" (HTTP {status})" if status is not None else ""
        hint = ""
        if status in (401, 403):
            hint = ": check the provider's API key (its variable, or api_key_env)"
        super().__init__(
            f"provider call failed: {exc_type}{status_text} after {attempts} attempt(s){hint}"
        )

    @property
    def kind(self) -> str:
        return f"HTTP {self.status}" if self.status is not None else self.exc_type


class LLMTimeoutError(ProviderError):
    """A call, or the total retry budget, ran out of time."""

    @property
    def kind(self) -> str:
        return "timeout"


class InvalidOutputError(LLMError):
    """The model's output did not validate against the expected schema, even after repair.

    ``cut_at`` is the completion budget (tokens) when the last reply was cut by it
    (``finish_reason: length``): the kind is then ``cut at N tokens``.
    """

    def __init__(self, message: str, *, cut_at: int | None = None, attempts: int = 0) -> None:
        super().__init__(message)
        self.cut_at = cut_at
        self.attempts = attempts

    @property
    def kind(self) -> str:
        return "invalid output" if self.cut_at is None else f"cut at {self.cut_at} tokens"
