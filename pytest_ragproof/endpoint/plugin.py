"""The pytest side of ``--ragproof-endpoint``: the options read once, the pipeline as a fixture.

:func:`install` (called by the run when an endpoint is configured) validates the
settings, registers a plugin object providing the session-scoped fixture
``ragproof_endpoint`` and returns the run's settings naming that fixture as the
pipeline: collection, ``--ragproof-concurrency`` (a session-scoped pipeline may
run ahead) and the records then work as with a user's fixture.

An explicitly configured endpoint wins over a ``rag_pipeline`` fixture of the
project: the run tests the service, and the summary says the fixture was not used.
"""

from __future__ import annotations

import dataclasses
import os

import pytest

from pytest_ragproof import defaults, options
from pytest_ragproof.endpoint.client import EndpointPipeline
from pytest_ragproof.endpoint.settings import EndpointSettings, make_settings
from pytest_ragproof.runner.config import RunConfig

FIXTURE = "ragproof_endpoint"


def settings_from(config: pytest.Config) -> EndpointSettings:
    """The ``--ragproof-endpoint*`` options and ini keys, validated (ConfigError otherwise)."""

    def get(name: str) -> str | None:
        value = options.get(config, name)
        return str(value) if value not in (None, "") else None

    return make_settings(
        url=str(options.get(config, "endpoint")),
        body=get("endpoint_body") or defaults.ENDPOINT_BODY,
        header_lines=options.get(config, "endpoint_header"),
        answer=get("endpoint_answer") or defaults.ENDPOINT_ANSWER,
        contexts=get("endpoint_contexts"),
        context_id=get("endpoint_context_id"),
        context_text=get("endpoint_context_text"),
        timeout=get("endpoint_timeout") or defaults.ENDPOINT_TIMEOUT,
        retries=get("endpoint_retries") or defaults.ENDPOINT_RETRIES,
        environ=os.environ,
    )


class EndpointFixture:
    """Registered plugin object: the endpoint pipeline as the ``ragproof_endpoint`` fixture."""

    def __init__(self, pipeline: EndpointPipeline, notes: list[str], shadowed: str) -> None:
        self.pipeline = pipeline
        self.notes = notes  # the run's notes (workers send theirs to the controller)
        self.shadowed = shadowed  # the fixture name a project would define (rag_pipeline)

    @pytest.fixture(scope="session", name=FIXTURE)
    def ragproof_endpoint(self) -> EndpointPipeline:
        """The --ragproof-endpoint pipeline: POSTs a question (and history) to the service."""
        return self.pipeline

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # Which fixtures a node sees is the fixture manager's to say (no public API).
        manager = getattr(session, "_fixturemanager", None)
        lookup = getattr(manager, "getfixturedefs", None)
        item = next((i for i in session.items if FIXTURE in getattr(i, "fixturenames", ())), None)
        if lookup is None or item is None:
            return
        try:
            defined = lookup(self.shadowed, item)
        except Exception:  # pytest's private API changed: the note is only a courtesy
            return
        if defined:
            self.notes.append(
                f"the fixture '{self.shadowed}' was not used: --ragproof-endpoint supplies the "
                "pipeline (leave --ragproof-endpoint out to test the fixture)"
            )


def install(config: pytest.Config, cfg: RunConfig, notes: list[str]) -> RunConfig:
    """Validate the endpoint settings, provide the fixture, return settings that use it."""
    pipeline = EndpointPipeline(settings_from(config))
    config.pluginmanager.register(
        EndpointFixture(pipeline, notes, cfg.pipeline_fixture), "ragproof-endpoint"
    )
    return dataclasses.replace(cfg, pipeline_fixture=FIXTURE)
