"""Testing a deployed RAG service over HTTP: ``--ragproof-endpoint`` (no fixture code).

Imported only when an endpoint is configured (the plugin's import stays cheap).

- :mod:`~pytest_ragproof.endpoint.jsonpath`: the JSON path subset ($.a.b, $.a[0], $['k']);
- :mod:`~pytest_ragproof.endpoint.settings`: the options, validated (body template,
  headers with ``${VAR}`` from the environment, paths, timeout, retries, the largest
  response body read);
- :mod:`~pytest_ragproof.endpoint.client`: the pipeline callable, one POST per case;
- :mod:`~pytest_ragproof.plugin.endpoint`: the pytest side, a session-scoped fixture
  that the run's dataset items use instead of ``rag_pipeline``.

``endpoint_pipeline()`` builds the same callable for ``evaluate()`` in a notebook.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from pytest_ragproof import defaults
from pytest_ragproof.endpoint.client import EndpointPipeline
from pytest_ragproof.endpoint.settings import make_settings

__all__ = ["EndpointPipeline", "endpoint_pipeline"]


def endpoint_pipeline(
    url: str,
    *,
    body: str = defaults.ENDPOINT_BODY,
    headers: Sequence[str] = (),
    answer: str = defaults.ENDPOINT_ANSWER,
    contexts: str | None = None,
    context_id: str | None = None,
    context_text: str | None = None,
    timeout: float = defaults.ENDPOINT_TIMEOUT,
    retries: int = defaults.ENDPOINT_RETRIES,
    max_bytes: int | str = defaults.ENDPOINT_MAX_BYTES,
) -> EndpointPipeline:
    """The ``--ragproof-endpoint`` pipeline as a callable, with the options' meanings.

    ``headers`` are ``"Name: value"`` lines whose ``${VAR}`` come from ``os.environ``.
    Raises :class:`~pytest_ragproof.errors.ConfigError` on a bad setting.
    """
    settings = make_settings(
        url=url,
        body=body,
        header_lines=headers,
        answer=answer,
        contexts=contexts,
        context_id=context_id,
        context_text=context_text,
        timeout=timeout,
        retries=retries,
        max_bytes=max_bytes,
        environ=os.environ,
    )
    return EndpointPipeline(settings)
