"""The pytest side of ``--ragproof-endpoint``: the options read once, the pipeline as a fixture.

:func:`install` (called by the run when an endpoint is configured) validates the
settings, registers this module as a plugin (it provides the session-scoped
fixture ``ragproof_endpoint``) and returns the run's settings naming that fixture as the
pipeline: collection, ``--ragproof-concurrency`` (a session-scoped pipeline may
run ahead) and the records then work as with a user's fixture.

An explicitly configured endpoint wins over a ``rag_pipeline`` fixture of the
project: the run tests the service, and the summary says the fixture was not used.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace

import pytest

import pytest_ragproof.plugin.options as options
from pytest_ragproof import defaults
from pytest_ragproof.endpoint.client import EndpointPipeline
from pytest_ragproof.endpoint.settings import EndpointSettings, make_settings
from pytest_ragproof.verdict.config import RunConfig

FIXTURE = "ragproof_endpoint"  # the name of the fixture below


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
        max_bytes=get("endpoint_max_bytes") or defaults.ENDPOINT_MAX_BYTES,
        environ=os.environ,
    )


@dataclass(frozen=True)
class _Endpoint:
    pipeline: EndpointPipeline
    notes: list[str]  # the run's notes (workers send theirs to the controller)
    shadowed: str  # the fixture name a project would define (rag_pipeline)


_KEY = pytest.StashKey[_Endpoint]()


@pytest.fixture(scope="session")
def ragproof_endpoint(pytestconfig: pytest.Config) -> EndpointPipeline:
    """The --ragproof-endpoint pipeline: POSTs a question (and history) to the service."""
    return pytestconfig.stash[_KEY].pipeline


def pytest_collection_finish(session: pytest.Session) -> None:
    """Say once that a project's pipeline fixture was not used."""
    state = session.config.stash.get(_KEY, None)
    # Which fixtures a node sees is the fixture manager's to say (no public API).
    lookup = getattr(getattr(session, "_fixturemanager", None), "getfixturedefs", None)
    item = next((i for i in session.items if FIXTURE in getattr(i, "fixturenames", ())), None)
    if state is None or lookup is None or item is None:
        return
    try:
        defined = lookup(state.shadowed, item)
    except Exception:  # pytest's private API changed: the note is only a courtesy
        return
    if defined:
        state.notes.append(
            f"the fixture '{state.shadowed}' was not used: --ragproof-endpoint supplies the "
            "pipeline (without it, or with -o ragproof_endpoint=, the fixture is tested)"
        )


def install(config: pytest.Config, cfg: RunConfig, notes: list[str]) -> RunConfig:
    """Validate the endpoint settings, provide the fixture, return settings that use it."""
    pipeline = EndpointPipeline(settings_from(config))
    config.stash[_KEY] = _Endpoint(pipeline, notes, cfg.pipeline_fixture)
    # This module is the plugin: its fixture and hook (module-level, as pytest prefers).
    config.pluginmanager.register(sys.modules[__name__], "ragproof-endpoint")
    return replace(cfg, pipeline_fixture=FIXTURE)
