"""``ragproof generate``: a reviewable dataset from a corpus, written by an LLM.

Exit codes: 0 the run completed (a shortfall is reported, not hidden); 1 with
``--fail-on-shortfall`` and a shortfall, or when every model call failed; 2 on
usage errors (bad options, no model configured, unusable corpus path).
``--dry-run`` prints the plan and an estimate and never imports litellm.
"""

from __future__ import annotations

import argparse

from pytest_ragproof import defaults
from pytest_ragproof.errors import UsageError

DEFAULT_MAX_FILE_BYTES = defaults.MAX_FILE_BYTES
DEFAULT_CHUNK_SIZE = defaults.CHUNK_SIZE
DEFAULT_CONCURRENCY = defaults.GENERATION_CONCURRENCY
DEFAULT_ITEMS_PER_REQUEST = defaults.ITEMS_PER_REQUEST
DEFAULT_MAX_ROUNDS = defaults.MAX_ROUNDS
QA_TYPES = ("simple", "complex", "distracting", "situational", "double", "conversational")


class _IntAtLeast:
    """An argparse ``type``: an integer no smaller than ``minimum``."""

    def __init__(self, minimum: int) -> None:
        self.minimum = minimum
        self.__name__ = "integer"

    def __call__(self, text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < self.minimum:
            raise argparse.ArgumentTypeError(f"must be at least {self.minimum}, got {value}")
        return value


def _name_list(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    count = _IntAtLeast(0)
    positive = _IntAtLeast(1)
    add = parser.add_argument
    add("--corpus", required=True, metavar="PATH", help="a folder, a file, or a .csv/.jsonl KB")
    add("--out", metavar="FILE", help="the JSONL review file to write (required unless --dry-run)")
    add("--qa", type=count, default=0, metavar="N", help="qa cases (split over --types)")
    add("--unanswerable", type=count, default=0, metavar="N", help="unanswerable cases")
    add("--injection", type=count, default=0, metavar="N", help="prompt-injection cases")
    add("--seed", type=count, default=0, metavar="S", help="sampling seed (default 0)")
    add(
        "--types",
        type=_name_list,
        default=None,
        metavar="LIST",
        help=f"qa question types, comma-separated (default: {','.join(QA_TYPES)})",
    )
    add(
        "--language",
        default=None,
        metavar="CODE",
        help="language of the questions (default: detected from a corpus sample)",
    )
    add(
        "--agent-description",
        default=None,
        metavar="TEXT",
        help="what the assistant under test does; sent in every generation prompt",
    )
    add("--model", default=None, help="litellm model string (default: $RAGPROOF_GEN_MODEL)")
    add(
        "--api-base",
        default=None,
        metavar="URL",
        help="provider endpoint (Ollama, vLLM, Azure, any OpenAI-compatible server)",
    )
    add(
        "--response-format",
        choices=defaults.RESPONSE_FORMATS,
        default="auto",
        help="how structured replies are asked for: auto (a JSON-schema response_format when "
        "litellm says the model supports it; a server at --api-base is asked once which form "
        "it takes; else the schema in the prompt), json_schema, json_object_schema "
        "(llama-cpp-python's server), json_object or prompt",
    )
    add(
        "--max-tokens",
        type=positive,
        default=None,
        metavar="N",
        help="completion budget of every call (default: each step's own, sized from its "
        "input and item count); a reply cut there is discarded, never kept",
    )
    add(
        "--instructions",
        choices=("system", "user"),
        default="system",
        help="where instructions go: system messages (default) or the first user message, "
        "for chat templates that drop system messages",
    )
    add(
        "--concurrency",
        type=positive,
        default=DEFAULT_CONCURRENCY,
        metavar="N",
        help=f"model calls in flight at once (default {DEFAULT_CONCURRENCY})",
    )
    add(
        "--items-per-request",
        type=positive,
        default=DEFAULT_ITEMS_PER_REQUEST,
        metavar="N",
        help=f"items asked for per chunk and request (default {DEFAULT_ITEMS_PER_REQUEST})",
    )
    add(
        "--max-rounds",
        type=positive,
        default=DEFAULT_MAX_ROUNDS,
        metavar="N",
        help="rounds in all: the plan, then top-ups from unused chunks for what was "
        f"discarded (default {DEFAULT_MAX_ROUNDS}; 1 = no top-up)",
    )
    add(
        "--columns",
        type=_name_list,
        default=None,
        metavar="LIST",
        help="for a .csv/.jsonl KB: columns joined as the document text (default: all)",
    )
    add(
        "--id-column",
        default=None,
        metavar="NAME",
        help="for a .csv/.jsonl KB: column holding the document id (default: row number)",
    )
    add(
        "--max-file-bytes",
        type=positive,
        default=DEFAULT_MAX_FILE_BYTES,
        metavar="N",
        help=f"skip files larger than N bytes (default {DEFAULT_MAX_FILE_BYTES:,})",
    )
    add(
        "--chunk-size",
        type=positive,
        default=DEFAULT_CHUNK_SIZE,
        metavar="N",
        help=f"chunk size in characters (default {DEFAULT_CHUNK_SIZE})",
    )
    add(
        "--chunk-overlap",
        type=count,
        default=None,
        metavar="N",
        help="characters shared by consecutive chunks (default 100, at most chunk-size // 2)",
    )
    add("--overwrite", action="store_true", help="replace --out if it exists")
    add(
        "--fail-on-shortfall",
        action="store_true",
        help="exit 1 when fewer cases were written than requested",
    )
    add(
        "--dry-run",
        action="store_true",
        help="print the plan and an estimate of calls and tokens; call nothing",
    )
    add("-q", "--quiet", action="store_true", help="no progress and no summary table")
    from_cache = parser.add_argument_group("cache")
    from_cache.add_argument(
        "--cache-dir",
        default=None,
        metavar="DIR",
        help="LLM response cache (default: $RAGPROOF_CACHE_DIR or ./.ragproof_cache)",
    )
    from_cache.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the response cache"
    )


def run(args: argparse.Namespace) -> int:
    import os
    import sys
    from pathlib import Path

    from pytest_ragproof.errors import ConfigError, IngestError, LLMConfigError, MissingExtraError
    from pytest_ragproof.generation import GenerationSettings, plan, summary_path

    if not args.dry_run:
        if not args.out:
            raise UsageError("--out is required (or use --dry-run)")
        if Path(args.out).exists() and not args.overwrite:
            raise UsageError(f"{args.out} exists; pass --overwrite to replace it")
    try:
        settings = GenerationSettings(
            qa=args.qa,
            unanswerable=args.unanswerable,
            injection=args.injection,
            seed=args.seed,
            types=tuple(args.types) if args.types is not None else QA_TYPES,
            language=args.language,
            agent_description=args.agent_description,
            items_per_request=args.items_per_request,
            max_rounds=args.max_rounds,
            chunk_size=args.chunk_size,
            chunk_overlap=args.chunk_overlap,
        )
        the_plan = plan(
            args.corpus,
            settings,
            columns=args.columns,
            id_column=args.id_column,
            max_file_bytes=args.max_file_bytes,
        )
    except (ConfigError, IngestError) as exc:
        raise UsageError(str(exc)) from exc
    if args.dry_run:
        from pytest_ragproof.generation import estimate
        from pytest_ragproof.generation.summary import render_plan

        model = args.model or os.environ.get("RAGPROOF_GEN_MODEL") or None
        print(render_plan(the_plan, estimate(the_plan), model), file=sys.stdout)
        print("dry run: no model was called", file=sys.stdout)
        return 0

    from pytest_ragproof.generation import run_plan
    from pytest_ragproof.generation.summary import STOP_TEXT, ProgressPrinter, render_table
    from pytest_ragproof.llm import LLMClient, ResponseCache, gen_config

    try:
        config = gen_config(
            args.model,
            api_base=args.api_base,
            concurrency=args.concurrency,
            response_format=args.response_format,
            max_tokens=args.max_tokens,
            instructions=args.instructions,
        )
        if args.no_cache:
            # Every call will be sent: a missing key is one error before the first.
            from pytest_ragproof.llm.provider import check_environment

            check_environment(config)
    except (LLMConfigError, MissingExtraError) as exc:
        raise UsageError(str(exc)) from exc
    client = LLMClient(config, ResponseCache(args.cache_dir, enabled=not args.no_cache))
    progress: ProgressPrinter | None = None
    if not args.quiet:
        print(
            f"generate: {len(the_plan.requests)} requests planned over "
            f"{len(the_plan.chunks)} chunks; language {the_plan.language} "
            f"({the_plan.language_source}); model {config.model}",
            file=sys.stderr,
        )
        progress = ProgressPrinter(sys.stderr, len(the_plan.requests), client.stats)
    try:
        result = run_plan(
            the_plan,
            client,
            on_outcome=progress,
            on_round=progress.start_round if progress is not None else None,
        )
    except KeyboardInterrupt:
        if client.cache.enabled:
            print(
                "ragproof generate: interrupted; finished responses are cached, "
                "run the same command again to resume",
                file=sys.stderr,
            )
        raise
    finally:
        client.cache.close()  # one file again; what went wrong with it is said below
    summary = result.summary
    if summary["written"]:
        result.write(args.out)
    # else nothing is written: an empty file would only block the re-run (exists, no
    # --overwrite), and an --overwrite run keeps the file it would have replaced.
    for note in client.cache.notes():
        print(f"ragproof generate: {note}", file=sys.stderr)
    if not args.quiet:
        print(render_table(summary), file=sys.stderr)
        if summary["written"]:
            print(
                f"wrote {summary['written']} case(s) to {args.out} and summary to "
                f"{summary_path(args.out)}",
                file=sys.stderr,
            )
    if not summary["written"]:
        kept = " (the existing file is unchanged)" if Path(args.out).exists() else ""
        print(
            f"ragproof generate: no case was generated, so nothing was written to {args.out}{kept}",
            file=sys.stderr,
        )
    if summary["written"] == 0 and summary["llm"]["requests"] > 0 and _all_failed(summary):
        print(
            "ragproof generate: every model call failed; check --model, --api-base and "
            "the provider's key variable",
            file=sys.stderr,
        )
        return 1
    if summary["shortfall"]:
        rounds = summary["rounds"]
        print(
            f"ragproof generate: shortfall of {summary['shortfall']} case(s) "
            f"({summary['written']} of {summary['requested']} written after "
            f"{rounds['run']} round(s): {STOP_TEXT[rounds['stopped']]})",
            file=sys.stderr,
        )
        return 1 if args.fail_on_shortfall else 0
    return 0


def _all_failed(summary: dict[str, object]) -> bool:
    discarded = summary["discarded"]
    return isinstance(discarded, dict) and set(discarded) == {"provider_error"}
