"""``ragproof ingest PATH`` (or ``--corpus PATH``): the dry run of corpus ingest.

Prints what would be read and what is skipped (with reasons), and how many
documents and chunks each format contributes. Exit 0 when at least one
document is readable, 1 when nothing usable was found, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import sys

from pytest_ragproof import defaults
from pytest_ragproof.errors import UsageError

DEFAULT_MAX_FILE_BYTES = defaults.MAX_FILE_BYTES
DEFAULT_CHUNK_SIZE = defaults.CHUNK_SIZE


def _positive_int(text: str) -> int:
    return _bounded_int(text, 1)


def _non_negative_int(text: str) -> int:
    return _bounded_int(text, 0)


def _bounded_int(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "path", nargs="?", metavar="PATH", help="a corpus folder (read recursively) or one file"
    )
    where.add_argument("--corpus", metavar="PATH", help="the same, as an option")
    parser.add_argument(
        "--max-file-bytes",
        type=_positive_int,
        default=DEFAULT_MAX_FILE_BYTES,
        metavar="N",
        help=f"skip files larger than N bytes (default {DEFAULT_MAX_FILE_BYTES:,})",
    )
    parser.add_argument(
        "--chunk-size",
        type=_positive_int,
        default=DEFAULT_CHUNK_SIZE,
        metavar="N",
        help=f"target chunk size in characters (default {DEFAULT_CHUNK_SIZE})",
    )
    parser.add_argument(
        "--chunk-overlap",
        type=_non_negative_int,
        default=None,
        metavar="N",
        help="characters shared by consecutive chunks (default 100, at most chunk-size // 2)",
    )


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from pytest_ragproof.corpus import load_corpus
    from pytest_ragproof.corpus.chunking import chunk_document, resolve_settings
    from pytest_ragproof.errors import ConfigError, IngestError

    corpus_path = args.path if args.path is not None else args.corpus
    try:
        size, overlap = resolve_settings(args.chunk_size, args.chunk_overlap)
        corpus = load_corpus(corpus_path, max_file_bytes=args.max_file_bytes)
    except (ConfigError, IngestError) as exc:
        raise UsageError(str(exc)) from exc

    doc_rows: list[list[object]] = []
    per_format: dict[str, list[int]] = {}  # format -> [documents, chunks, characters]
    for doc in corpus.documents:
        n_chunks = len(chunk_document(doc, chunk_size=size, chunk_overlap=overlap))
        doc_rows.append(
            [
                _shown(doc.id),
                doc.format,
                doc.size_bytes,
                len(doc.text),
                doc.page_count or "",
                n_chunks,
            ]
        )
        totals = per_format.setdefault(doc.format, [0, 0, 0])
        totals[0] += 1
        totals[1] += n_chunks
        totals[2] += len(doc.text)

    print(f"corpus: {corpus_path}")
    print(f"settings: max_file_bytes={corpus.max_file_bytes}", end="")
    print(f" chunk_size={size} chunk_overlap={overlap}")
    print(f"read: {len(corpus.documents)} document(s); skipped: {len(corpus.skipped)} path(s)")
    if doc_rows:
        print()
        headers = ["document", "format", "bytes", "characters", "pages", "chunks"]
        print(tabulate(doc_rows, headers=headers, tablefmt="simple"))
    if corpus.skipped:
        print()
        skip_rows = [[_shown(s.id), s.reason, s.detail] for s in corpus.skipped]
        print(tabulate(skip_rows, headers=["skipped", "reason", "detail"], tablefmt="simple"))
        print()
        counts = corpus.skip_counts()
        print(tabulate(counts.items(), headers=["skip reason", "paths"], tablefmt="simple"))
    if per_format:
        print()
        fmt_rows = [[fmt, *per_format[fmt]] for fmt in sorted(per_format)]
        fmt_rows.append(["total", *(sum(col) for col in zip(*per_format.values(), strict=True))])
        headers = ["format", "documents", "chunks", "characters"]
        print(tabulate(fmt_rows, headers=headers, tablefmt="simple"))

    if any(s.reason == "missing_extra" for s in corpus.skipped):
        print(
            "PDF and DOCX files need the 'ingest' extra. "
            "Install it with: pip install 'pytest-ragproof[ingest]'",
            file=sys.stderr,
        )
    if not corpus.documents:
        print("ragproof ingest: nothing usable in the corpus", file=sys.stderr)
        return 1
    return 0


def _shown(name: str) -> str:
    # A file name may hold newlines or other control characters; escape them so
    # the table stays one row per path.
    return name if name.isprintable() else name.encode("unicode_escape").decode("ascii")
