"""The Python entry points of generation: :func:`generate`, :func:`plan`, :func:`load_source`.

::

    from pytest_ragproof.generation import GenerationSettings, generate

    settings = GenerationSettings(qa=40, unanswerable=10, injection=10, seed=0)
    result = generate("docs/", settings)          # model from RAGPROOF_GEN_MODEL
    result.write("dataset.jsonl")                 # + dataset.jsonl.summary.json
    print(result.summary["shortfall"], result.summary["rounds"]["stopped"])

litellm is imported only when a request misses the cache.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof.corpus import DEFAULT_MAX_FILE_BYTES, Corpus
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.generation.plan import GenerationPlan, GenerationSettings, build_plan

if TYPE_CHECKING:
    from pytest_ragproof.dataset.models import Case
    from pytest_ragproof.generation.rounds import RoundStart
    from pytest_ragproof.generation.runner import RequestOutcome
    from pytest_ragproof.llm import LLMClient

#: What :func:`generate` and :func:`plan` accept as a knowledge base.
Source = str | os.PathLike[str] | Corpus | Iterable[Mapping[str, Any]] | Any


def summary_path(out: str | os.PathLike[str]) -> Path:
    """Where the summary of an output file goes: ``<out>.summary.json``."""
    path = Path(out)
    return path.with_name(path.name + ".summary.json")


def load_source(
    source: Source,
    *,
    columns: Sequence[str] | None = None,
    id_column: str | None = None,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> Corpus:
    """A :class:`Corpus` from a folder, a file, a CSV/JSONL of rows, rows or a DataFrame.

    ``columns`` and ``id_column`` apply to rows only; giving them for a folder or
    a document file raises ConfigError.
    """
    from pytest_ragproof.generation.rows import documents_from_rows, is_rows_file, load_rows_file

    if isinstance(source, Corpus):
        return source
    if isinstance(source, str | os.PathLike):
        if is_rows_file(source):
            return load_rows_file(
                source, columns=columns, id_column=id_column, max_file_bytes=max_file_bytes
            )
        if columns is not None or id_column is not None:
            raise ConfigError(
                "--columns and --id-column apply to a .csv or .jsonl knowledge base only"
            )
        from pytest_ragproof.corpus import load_corpus

        return load_corpus(source, max_file_bytes=max_file_bytes)
    return documents_from_rows(source, columns=columns, id_column=id_column)


def plan(
    source: Source,
    settings: GenerationSettings,
    *,
    columns: Sequence[str] | None = None,
    id_column: str | None = None,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> GenerationPlan:
    """The deterministic plan of a run, without any call (what ``--dry-run`` shows)."""
    corpus = load_source(
        source, columns=columns, id_column=id_column, max_file_bytes=max_file_bytes
    )
    return build_plan(corpus, settings)


@dataclass(frozen=True)
class GenerationResult:
    """A finished run: the cases in output order and the summary (ids and numbers only)."""

    cases: tuple[Case, ...]
    summary: dict[str, Any]
    plan: GenerationPlan

    @property
    def shortfall(self) -> int:
        return int(self.summary["shortfall"])

    def write(self, out: str | os.PathLike[str]) -> Path:
        """Write the JSONL review file and ``<out>.summary.json`` (atomically); return ``out``."""
        from pytest_ragproof.dataset.io import write_jsonl
        from pytest_ragproof.fileio import write_atomic

        path = write_jsonl(self.cases, out)
        text = json.dumps(self.summary, indent=2, ensure_ascii=False) + "\n"
        write_atomic(summary_path(out), text)
        return path


def generate(
    source: Source,
    settings: GenerationSettings,
    *,
    client: LLMClient | None = None,
    columns: Sequence[str] | None = None,
    id_column: str | None = None,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    on_outcome: Callable[[RequestOutcome], None] | None = None,
    on_round: RoundStart | None = None,
) -> GenerationResult:
    """Generate a reviewable dataset from ``source`` (see docs/generation.md).

    ``client`` defaults to ``LLMClient(gen_config(), ResponseCache())``: the model
    from ``RAGPROOF_GEN_MODEL`` and the cache in ``.ragproof_cache/``.
    ``on_outcome`` is called as each request's chain finishes (progress);
    ``on_round(round, requests, items)`` before each top-up round runs.
    Provider failures, invalid replies and failed checks are discarded and
    counted, never raised; configuration errors raise.
    """
    the_plan = plan(
        source, settings, columns=columns, id_column=id_column, max_file_bytes=max_file_bytes
    )
    if client is None:
        from pytest_ragproof.llm import LLMClient, ResponseCache, gen_config

        client = LLMClient(gen_config(), ResponseCache())
    return run_plan(the_plan, client, on_outcome=on_outcome, on_round=on_round)


def run_plan(
    the_plan: GenerationPlan,
    client: LLMClient,
    *,
    on_outcome: Callable[[RequestOutcome], None] | None = None,
    on_round: RoundStart | None = None,
) -> GenerationResult:
    """Execute a plan made by :func:`plan` with ``client`` (what :func:`generate` does),
    with top-up rounds for discarded items (``settings.max_rounds``)."""
    from pytest_ragproof.generation.rounds import run_rounds
    from pytest_ragproof.generation.summary import build_summary

    rounds = run_rounds(the_plan, client, on_outcome=on_outcome, on_round=on_round)
    model = client.config.model
    summary = build_summary(the_plan, rounds, client.stats, model=model)
    return GenerationResult(tuple(rounds.assembly.cases), summary, the_plan)
