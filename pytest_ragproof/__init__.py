"""pytest-ragproof: RAG regression tests in plain pytest.

This module re-exports the public API lazily, so ``import pytest_ragproof`` (which
pytest does for the plugin) imports nothing heavy: pydantic and the dataset code
load on first use of a name below.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = [
    "Case",
    "Dataset",
    "DatasetError",
    "DatasetFieldMap",
    "RagproofError",
    "Results",
    "evaluate",
    "freeze",
    "load_dataset",
]

_LAZY: dict[str, str] = {
    "Case": "pytest_ragproof.dataset.models",
    "Dataset": "pytest_ragproof.dataset.io",
    "DatasetFieldMap": "pytest_ragproof.dataset.io",
    "load_dataset": "pytest_ragproof.dataset.io",
    "freeze": "pytest_ragproof.dataset.freeze",
    "evaluate": "pytest_ragproof.evaluation",
    "Results": "pytest_ragproof.evaluation",
    "DatasetError": "pytest_ragproof.errors",
    "RagproofError": "pytest_ragproof.errors",
}

if TYPE_CHECKING:  # pragma: no cover
    from pytest_ragproof.dataset.freeze import freeze
    from pytest_ragproof.dataset.io import Dataset, DatasetFieldMap, load_dataset
    from pytest_ragproof.dataset.models import Case
    from pytest_ragproof.errors import DatasetError, RagproofError
    from pytest_ragproof.evaluation import Results, evaluate


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_ragproof' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
