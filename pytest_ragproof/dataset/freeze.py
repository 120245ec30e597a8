"""Freezing: validate a dataset and write its canonical, hashed frozen file.

Freezing writes only where it may: a new file, or a file that is already a
ragproof frozen file (re-freezing replaces it). The input itself is rewritten only
when it is a frozen file, which upgrades it to the current format in place.

Review statuses: ``rejected`` cases are always left out; ``approved_only`` also
leaves out every case that is not ``approved`` or ``edited`` (a reviewer changed
it and approved the change), counted per status in ``FreezeResult.left_out``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from pytest_ragproof.dataset.canonical import FORMAT, case_digests, frozen_parts
from pytest_ragproof.dataset.changes import case_changes
from pytest_ragproof.dataset.fieldmap import DatasetFieldMap
from pytest_ragproof.dataset.io import Dataset, load_dataset, load_to_write
from pytest_ragproof.dataset.models import SCHEMA_VERSION
from pytest_ragproof.errors import DatasetError
from pytest_ragproof.fileio import paused_gc, write_atomic

__all__ = [
    "FreezeCheck",
    "FreezeResult",
    "check_frozen",
    "default_output",
    "freeze",
    "freeze_dataset",
    "freeze_file",
    "stale_message",
    "stale_source",
    "write_atomic",
]


@dataclass(frozen=True)
class FreezeResult:
    """What a freeze wrote and left out."""

    path: Path
    dataset: Dataset
    n_cases: int
    n_pending: int
    n_rejected: int
    upgraded_from_format: str | None = None
    #: ``approved_only``: the cases left out besides rejected ones, by review status
    #: (``none`` for a case without one).
    left_out: dict[str, int] = field(default_factory=dict)


def default_output(path: Path) -> Path:
    """``<stem>.frozen.json`` beside the input (``cases.jsonl`` -> ``cases.frozen.json``)."""
    stem = path.name
    for suffix in (".frozen.json", ".jsonl", ".json", ".csv"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    return path.with_name(f"{stem}.frozen.json")


_FROZEN_START = b'{"format":"ragproof.dataset/'


def is_frozen_file(path: Path) -> bool:
    """Does ``path`` start like a file ``ragproof freeze`` writes (any format, any state)?"""
    try:
        with path.open("rb") as fh:
            return fh.read(len(_FROZEN_START)) == _FROZEN_START
    except OSError:
        return False


def _check_target(out: Path) -> None:
    if (out.exists() or out.is_symlink()) and not is_frozen_file(out):
        raise DatasetError(
            "exists and is not a ragproof frozen file; freezing never overwrites other files",
            source=str(out),
            hint="choose another output path with -o, or move that file away",
        )


APPROVED = frozenset({"approved", "edited"})


def approved_only(dataset: Dataset) -> tuple[Dataset, dict[str, int]]:
    """The approved and edited cases of ``dataset`` (hashed anew), and the others' counts
    by review status (``none`` for a case without one)."""
    from pytest_ragproof.dataset.canonical import dataset_hash

    keep = [i for i, case in enumerate(dataset.cases) if case.review_status in APPROVED]
    left_out: dict[str, int] = {}
    for case in dataset.cases:
        if case.review_status not in APPROVED:
            status = case.review_status or "none"
            left_out[status] = left_out.get(status, 0) + 1
    if not keep:
        raise DatasetError(
            "no case is approved or edited, so --approved-only would freeze nothing"
            + (
                f" ({', '.join(f'{n} {s}' for s, n in sorted(left_out.items()))})"
                if left_out
                else ""
            ),
            source=dataset.source,
            hint="review the cases (review_status approved or edited) first",
        )
    if not left_out:
        return dataset, left_out
    assert len(dataset.canonical_cases) == len(dataset.cases)
    jsons = tuple(dataset.canonical_cases[i] for i in keep)
    kept = replace(
        dataset,
        cases=tuple(dataset.cases[i] for i in keep),
        canonical_cases=jsons,
        sha256=dataset_hash(jsons),
        frozen=False,
    )
    return kept, left_out


def freeze_dataset(
    dataset: Dataset, out: Path, *, require_review: bool = False, only_approved: bool = False
) -> FreezeResult:
    """Write ``dataset`` as a frozen file at ``out`` (new, or a frozen file already).

    ``only_approved``: freeze the approved and edited cases only (see :func:`approved_only`).
    """
    left_out: dict[str, int] = {}
    if only_approved:
        dataset, left_out = approved_only(dataset)
    if require_review and dataset.n_pending:
        raise DatasetError(
            f"{dataset.n_pending} case(s) are still pending review",
            source=dataset.source,
            hint="set review_status to approved or rejected for every case, "
            "or freeze without --require-review",
        )
    _check_target(out)
    ids = [case.id for case in dataset.cases]
    write_atomic(out, frozen_parts(dataset.canonical_cases, SCHEMA_VERSION, dataset.sha256, ids))
    old_format = dataset.frozen_format
    return FreezeResult(
        path=out,
        dataset=dataset,
        n_cases=len(dataset.cases),
        n_pending=dataset.n_pending,
        n_rejected=dataset.n_rejected,
        upgraded_from_format=old_format if old_format not in (None, FORMAT) else None,
        left_out=left_out,
    )


def freeze_file(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    require_review: bool = False,
    field_map: DatasetFieldMap | None = None,
    only_approved: bool = False,
) -> FreezeResult:
    """Load and validate ``path``, write its frozen file; what ``ragproof freeze`` runs.

    A frozen ``path`` (of an older format) is rewritten in place in the current one
    unless ``out`` is given.
    """
    src = Path(path)
    target = Path(out) if out is not None else default_output(src)
    in_place = target.resolve() == src.resolve()
    if in_place and not is_frozen_file(src):
        raise DatasetError(
            "the output would overwrite the input",
            source=str(src),
            hint="choose another output path with -o",
        )
    with paused_gc():  # see paused_gc: loading and writing build no cycles
        dataset = load_to_write(src, field_map=field_map)
        if in_place and not dataset.frozen:
            raise DatasetError(
                "the output would overwrite the input",
                source=str(src),
                hint="choose another output path with -o",
            )
        return freeze_dataset(
            dataset, target, require_review=require_review, only_approved=only_approved
        )


def freeze(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    require_review: bool = False,
    field_map: DatasetFieldMap | None = None,
    only_approved: bool = False,
) -> Path:
    """Validate ``path`` and write ``<stem>.frozen.json`` beside it (or ``out``).

    Rejected cases are left out; pending ones are frozen (``require_review=True``
    refuses while any is pending; ``only_approved=True`` leaves out every case not
    approved or edited). Returns the path written.
    """
    with paused_gc():
        result = freeze_file(
            path,
            out,
            require_review=require_review,
            field_map=field_map,
            only_approved=only_approved,
        )
        written = result.path
        del result  # the cases are freed while paused: the collector has nothing to scan
    return written


def stale_message(command: str) -> str:
    """The one wording of a stale frozen file; ``command`` re-freezes it (``cases.jsonl``)."""
    return f"the frozen file is stale: run ragproof freeze {command}"


@dataclass(frozen=True)
class FreezeCheck:
    """Whether a frozen file is current with its source (``ragproof freeze --check``)."""

    target: Path
    current: bool
    reason: str  # why it is stale; empty when current
    source: Dataset
    frozen: Dataset | None


def _pairs(dataset: Dataset) -> list[tuple[str, str]]:
    ids = [case.id for case in dataset.cases]
    return list(zip(ids, case_digests(dataset.canonical_cases), strict=True))


def check_frozen(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    field_map: DatasetFieldMap | None = None,
    only_approved: bool = False,
) -> FreezeCheck:
    """Is the frozen file of ``path`` (``out``, or ``<stem>.frozen.json``) current?

    Current means it exists, verifies, and holds exactly the cases freezing ``path``
    would write now (same dataset hash; ``only_approved``: as ``--approved-only``
    freezes it). A source that does not load raises its :class:`DatasetError`; a
    frozen file that does not verify is stale.
    """
    src = Path(path)
    target = Path(out) if out is not None else default_output(src)
    with paused_gc():
        source = load_to_write(src, field_map=field_map)
        if only_approved:
            source = approved_only(source)[0]
        if not target.is_file():
            return FreezeCheck(target, False, f"{target} does not exist", source, None)
        try:
            frozen = load_dataset(target)
        except DatasetError as exc:
            return FreezeCheck(
                target, False, f"{target} does not verify: {exc.reason}", source, None
            )
        if not frozen.frozen:
            return FreezeCheck(target, False, f"{target} is not a frozen file", source, frozen)
        if frozen.sha256 != source.sha256:
            changes = case_changes(_pairs(frozen), _pairs(source)).describe()
            detail = f" ({changes})" if changes else ""
            reason = f"{target} does not match {src}{detail}"
            return FreezeCheck(target, False, reason, source, frozen)
    return FreezeCheck(target, True, "", source, frozen)


_FROZEN_SUFFIX = ".frozen.json"


def stale_source(
    frozen_path: str | os.PathLike[str],
    frozen: Dataset | None = None,
    *,
    edited_after_only: bool = False,
) -> Path | None:
    """The same-stem JSONL beside a frozen file when its cases differ from the frozen ones.

    ``cases.frozen.json`` -> ``cases.jsonl`` in the same folder. None when there is no
    such JSONL, when it holds the frozen cases, or when it does not load as it is
    (it may have been frozen with a field map; ``ragproof freeze --check`` is the
    exact check). ``frozen`` is the already loaded frozen dataset, if any. Reads
    and validates the whole JSONL: call it once per run. ``edited_after_only``: compare
    only a JSONL modified after the frozen file (by mtime), so an unchanged pair costs
    two stats. Word the warning with ``stale_message(str(source))``.
    """
    path = Path(frozen_path)
    if not path.name.lower().endswith(_FROZEN_SUFFIX):
        return None
    source = path.with_name(path.name[: -len(_FROZEN_SUFFIX)] + ".jsonl")
    if not source.is_file():
        return None
    if edited_after_only and source.stat().st_mtime <= path.stat().st_mtime:
        return None
    try:
        with paused_gc():
            sha256 = frozen.sha256 if frozen is not None else load_dataset(path).sha256
            loaded = load_to_write(source)
            if loaded.sha256 == sha256:
                return None
            if not any(case.review_status in APPROVED for case in loaded.cases):
                return source
            # Frozen with --approved-only: current when it holds the approved cases.
            return source if approved_only(loaded)[0].sha256 != sha256 else None
    except DatasetError:
        return None
