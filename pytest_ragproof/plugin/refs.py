"""What a ragproof test item carries, and how the run names paths (pytest stash keys).

Shared by the run's parts (:mod:`~pytest_ragproof.plugin.state`,
:mod:`~pytest_ragproof.plugin.items`, :mod:`~pytest_ragproof.plugin.finish`) and by
marker mode; imports nothing of the run.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_ragproof.dataset.models import Case


@dataclass(frozen=True, slots=True)
class CaseRef:
    """What a ragproof test item evaluates: a case, for a pipeline, from a dataset file."""

    case: Case
    pipeline: str
    dataset: Path
    origin: str = "dataset"  # "dataset" (a dataset file's item) or "marker" (@pytest.mark.rag)


CASE_KEY = pytest.StashKey[CaseRef]()


def case_ref(item: pytest.Item) -> CaseRef | None:
    """The case of a ragproof item (dataset item or ``@pytest.mark.rag`` test), else None."""
    return item.stash.get(CASE_KEY, None)


@functools.lru_cache(maxsize=1024)
def property_name(metric: str) -> str:
    return f"ragproof.{metric}"


@functools.lru_cache(maxsize=256)
def _relpath_cached(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def relpath(config: pytest.Config, path: Path) -> str:
    """``path`` relative to the rootdir with ``/`` (absolute when outside it)."""
    return _relpath_cached(config.rootpath, path)
