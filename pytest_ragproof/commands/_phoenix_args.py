"""The options of ``ragproof import --from phoenix URL --project NAME``.

The reading itself is :mod:`pytest_ragproof.interop.phoenix`; the trace options
(``--since``, ``--sample``, ``--redact``…) are those of ``--from otel``
(``_otel_args.py``), except ``--service``: Phoenix's API returns no resource.
"""

from __future__ import annotations

import argparse
import math
import os
from typing import TYPE_CHECKING

from pytest_ragproof.errors import UsageError

if TYPE_CHECKING:
    from pytest_ragproof.interop.phoenix import Server

_PHOENIX_ONLY = ("project", "api_key_env", "timeout")


def add_phoenix_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Phoenix (--from phoenix URL; see docs/traces.md)")
    group.add_argument("--project", metavar="NAME", help="the Phoenix project to read")
    group.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="the environment variable holding the Phoenix API key (sent as a bearer token)",
    )
    group.add_argument(
        "--timeout",
        metavar="SECONDS",
        help="how long to wait for the server, per request (default 30)",
    )


def check_phoenix_arguments(args: argparse.Namespace) -> None:
    """Refuse the Phoenix options with another --from, and what Phoenix cannot do."""
    if args.tool != "phoenix":
        used = [name for name in _PHOENIX_ONLY if getattr(args, name) is not None]
        if used:
            flag = "--" + used[0].replace("_", "-")
            raise UsageError(f"{flag} applies to --from phoenix only")
        return
    if len(args.files) != 1:
        raise UsageError("--from phoenix reads one URL, the Phoenix server's")
    if args.project is None:
        raise UsageError("--from phoenix needs --project NAME (the project whose spans to read)")
    if args.service is not None:
        raise UsageError(
            "--service does not apply to --from phoenix: Phoenix keeps no service.name "
            "(--project chooses the spans)"
        )
    if args.corpus is not None:
        raise UsageError("--corpus does not apply to --from phoenix (traces carry document ids)")


def server(args: argparse.Namespace) -> Server:
    from pytest_ragproof.interop.phoenix import TIMEOUT, Server, check_url

    url = args.files[0].rstrip("/")
    why = check_url(url)
    if why is not None:
        raise UsageError(f"--from phoenix: the URL {why}")
    timeout = TIMEOUT
    if args.timeout is not None:
        try:
            timeout = float(args.timeout)
        except ValueError:
            raise UsageError(f"--timeout {args.timeout[:20]!r} is not a number") from None
        if not (math.isfinite(timeout) and timeout > 0):
            raise UsageError("--timeout must be a positive number of seconds")
    key = None
    if args.api_key_env is not None:
        key = os.environ.get(args.api_key_env)
        if not key:
            raise UsageError(f"--api-key-env: the environment variable {args.api_key_env} is unset")
        if not key.isascii() or not key.isprintable() or key.strip() != key or " " in key:
            raise UsageError(
                f"--api-key-env: the value of {args.api_key_env} is not an API key "
                "(it has spaces, control or non-ASCII characters)"
            )
    return Server(url, key, args.api_key_env, timeout)
