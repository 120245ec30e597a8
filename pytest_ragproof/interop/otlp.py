"""The OTLP JSON envelope that trace and log exports share (``otel.py``, ``otel_logs.py``).

A request is ``resource* → scope* → items``, each level a list that may be left out, a
member named in camelCase (the JSON mapping) or snake_case (the proto field names some
exporters write), and each resource names its service in its ``service.name`` attribute.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_ragproof.interop.otel_spans import SpanShapeError, attributes

__all__ = ["as_list", "member", "resource_service"]


def member(value: Mapping[str, Any], *names: str) -> Any:
    """The first of ``names`` that ``value`` has, else None."""
    for name in names:
        if name in value:
            return value[name]
    return None


def as_list(value: Any, what: str) -> list[Any]:
    """A level of the envelope: absent is empty; anything but a list is SpanShapeError."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise SpanShapeError(f"{what} is not a list")
    return value


def resource_service(entry: Mapping[str, Any]) -> str | None:
    """The ``service.name`` of a ``resourceSpans`` / ``resourceLogs`` entry's resource."""
    resource = entry.get("resource") or {}
    if not isinstance(resource, Mapping):
        raise SpanShapeError("a resource is not an object")
    service = attributes(resource.get("attributes")).get("service.name")
    return service if isinstance(service, str) and service else None
