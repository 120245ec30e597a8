"""The options of ``ragproof import --from otel``: which traces to keep, what to redact.

Kept apart from ``import_.py`` so that the tool-specific checks stay short there;
the selection itself is :mod:`pytest_ragproof.interop.otel_select`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from pytest_ragproof.errors import UsageError

if TYPE_CHECKING:
    from pytest_ragproof.interop.otel_select import Selection

_OTEL_ONLY = ("since", "until", "service", "sample", "max_cases", "redact")

TRACE_TOOLS = ("otel", "phoenix")
"""The ``--from`` choices that read traces: these options apply to both."""


def _positive(text: str | None, option: str) -> int | None:
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"{option} {text[:20]!r} is not a whole number") from None
    if value < 1:
        raise UsageError(f"{option} must be at least 1")
    return value


def add_otel_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("traces (--from otel or phoenix; see docs/traces.md)")
    group.add_argument(
        "--since",
        metavar="TIME",
        help="keep traces that started at or after TIME (ISO 8601; UTC unless it has an offset)",
    )
    group.add_argument(
        "--until", metavar="TIME", help="keep traces that started before TIME (ISO 8601)"
    )
    group.add_argument(
        "--service",
        metavar="NAME",
        action="append",
        default=None,
        help="keep traces of this service.name (repeatable)",
    )
    group.add_argument(
        "--sample",
        metavar="N",
        help="keep N of the traces, chosen by --seed (the same N whatever the file order)",
    )
    group.add_argument(
        "--seed", metavar="S", type=int, default=None, help="seed of --sample (default 0)"
    )
    group.add_argument(
        "--max-cases",
        metavar="N",
        help="write at most N cases (the earliest)",
    )
    group.add_argument(
        "--redact",
        metavar="PATTERN",
        action="append",
        default=None,
        help="replace every match of this regular expression with [REDACTED] in every text "
        "written (repeatable)",
    )
    group.add_argument(
        "--redact-pii",
        action="store_true",
        help="replace e-mail addresses with [EMAIL] and phone numbers with [PHONE]",
    )


def check_otel_arguments(args: argparse.Namespace) -> None:
    """Refuse trace options with another --from."""
    if args.tool in TRACE_TOOLS:
        if args.var:
            raise UsageError("--var applies to --from promptfoo only")
        return
    used = [name for name in _OTEL_ONLY if getattr(args, name) is not None]
    if args.seed is not None:
        used.append("seed")
    if args.redact_pii:
        used.append("redact_pii")
    if used:
        flag = "--" + used[0].replace("_", "-")
        raise UsageError(f"{flag} applies to --from otel and --from phoenix only")


def selection(args: argparse.Namespace) -> Selection:
    from pytest_ragproof.interop.otel_select import Selection, compile_patterns, parse_time

    if args.seed is not None and args.sample is None:
        raise UsageError("--seed chooses the --sample; give --sample N with it")
    seed = args.seed if args.seed is not None else 0
    try:
        since = parse_time(args.since, "--since") if args.since is not None else None
        until = parse_time(args.until, "--until") if args.until is not None else None
        patterns = compile_patterns(args.redact)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if since is not None and until is not None and until <= since:
        raise UsageError("--until must be later than --since")
    return Selection(
        since_ns=since,
        until_ns=until,
        services=frozenset(args.service or ()),
        sample=_positive(args.sample, "--sample"),
        seed=seed,
        max_cases=_positive(args.max_cases, "--max-cases"),
        redact=patterns,
        redact_pii=args.redact_pii,
    )
