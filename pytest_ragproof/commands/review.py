"""``ragproof review``: the local review app (extra ``review``: starlette, uvicorn).

``ragproof review --history STORE`` serves the run history pages (Runs, Run, Compare)
of a history store; with a results file as well, beside its case pages.
``ragproof review RESULTS.json [--labels labels.jsonl] [--reviewer NAME]`` reviews the
judged cases of a results file and appends human verdicts to the labels file
(default ``labels.jsonl`` in the current folder). ``ragproof review cases.jsonl -o
reviewed.jsonl [--corpus PATH]`` reviews a generated dataset and writes the reviewed
file (default ``<stem>.reviewed.jsonl`` beside the input). The app listens on
127.0.0.1 (a free port unless ``--port``) and prints a URL with a session token.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pytest_ragproof.errors import ConfigError, MissingExtraError

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "input",
        nargs="?",
        help="a results file (ragproof.results/1) to label, or a generated review file "
        "(JSONL) to approve, reject and edit; optional with --history",
    )
    parser.add_argument(
        "--history",
        metavar="STORE",
        help="also serve the run history pages (Runs, Run, Compare) of this history store "
        "(a SQLite path, 'default' for .ragproof/history.sqlite, or a database URL); "
        "alone, or beside a results file's case pages",
    )
    parser.add_argument(
        "--labels",
        help="labels file the verdicts are appended to (results review; default: "
        "labels.jsonl in the current folder)",
    )
    parser.add_argument(
        "-o",
        "--output",
        help="reviewed file to write (dataset review; default: <stem>.reviewed.jsonl "
        "beside the input; never the input itself)",
    )
    parser.add_argument(
        "--corpus",
        help="the corpus the cases were generated from, to show each source span in its "
        "document (dataset review)",
    )
    parser.add_argument(
        "--reviewer",
        help="your name in the labels and edits (default: git config user.name, else the OS user)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=port_number, default=0, help="port 1-65535 (default, or 0: a free one)"
    )
    parser.add_argument(
        "--no-browser", action="store_true", help="print the URL without opening a browser"
    )


def port_number(text: str) -> int:
    """``--port``: a TCP port, 1..65535, or 0 for a free one (argparse shows the message)."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a port: give a number from 1 to 65535 (or 0 for a free one), "
            "e.g. --port 8765"
        )
    return port


def default_reviewer() -> str:
    """``git config user.name``, else the OS user name."""
    import getpass
    import subprocess

    try:
        proc = subprocess.run(
            ["git", "config", "user.name"], capture_output=True, text=True, timeout=5, check=False
        )
        name = proc.stdout.strip()
        if proc.returncode == 0 and name and "\n" not in name:
            return name
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # pragma: no cover - no user name at all
        return "reviewer"


def is_results_file(path: Path) -> bool:
    """Does ``path`` hold a results document (a JSON object of format ragproof.results/1)?

    ConfigError for a results file that does not parse (cut off, edited): a JSON
    document over several lines (``{`` alone on the first, as every results file is
    written) is never a JSONL review file, so it is not handed to the dataset review.
    """
    import json

    from pytest_ragproof.results.document import loads_checked

    try:
        with path.open(encoding="utf-8") as fh:
            head = first = fh.readline()
            while first and not first.strip():  # blank lines kept: errors say the line
                first = fh.readline()
                head += first
            if not first.lstrip().startswith("{"):
                return False  # read no further: a JSONL review file is read once, later
            text = head + fh.read()
    except (OSError, UnicodeDecodeError):
        return False  # the dataset review says what is wrong with it
    if first.strip() == "{":  # one object over several lines: a results file's checked read
        data = loads_checked(text, path)
    else:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return False  # JSONL: one object a line, which the dataset review reads
    return isinstance(data, dict) and str(data.get("format", "")).startswith("ragproof.results/")


def default_output(path: Path) -> Path:
    stem = path.name
    for suffix in (".jsonl", ".json"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    return path.with_name(f"{stem}.reviewed.jsonl")


def _imports() -> None:
    for module in ("starlette", "uvicorn"):
        try:
            __import__(module)
        except ImportError:
            raise MissingExtraError("review", module, "ragproof review") from None


def build(args: argparse.Namespace, token: str) -> tuple[Any, str]:
    """The app for these arguments and a one-line description of what it writes."""
    from pytest_ragproof.review.app import create_app

    reviewer = args.reviewer or default_reviewer()
    # on every interface the Host header is whatever name other machines use: any
    hosts = ["*"] if args.host in ("0.0.0.0", "::") else [args.host]
    history = _history_areas(args)
    if args.input is None:
        if not history:
            raise ConfigError(
                "give a results file, a generated review file, or --history STORE "
                "(ragproof review results.json; ragproof review --history default)"
            )
        return (
            create_app(history, token=token, reviewer=reviewer, hosts=hosts),
            "the history pages only read the store",
        )
    source = Path(args.input)
    if not source.is_file():
        raise ConfigError(f"{source}: no such file")
    if is_results_file(source):
        if args.output or args.corpus:
            raise ConfigError(
                f"{source} is a results file: -o and --corpus are for a dataset review "
                "(ragproof review cases.jsonl -o reviewed.jsonl); labels go to --labels"
            )
        from pytest_ragproof.review.areas import results_areas
        from pytest_ragproof.review.results import ResultsReview

        labels = Path(args.labels) if args.labels else Path("labels.jsonl")
        review = ResultsReview.open(source, labels)
        areas = results_areas(review) + history
        app = create_app(areas, token=token, reviewer=reviewer, hosts=hosts)
        if not any(review.snapshot(reviewer).metrics):
            print(
                f"ragproof review: note: no case of {source} has a judged metric, so there is "
                "nothing to label (run the tests with --ragproof-judges); the pages show the cases",
                file=sys.stderr,
            )
        return app, f"labels of {reviewer} go to {labels}"
    if history:
        raise ConfigError(
            f"{source} is not a results file: --history goes with a results file or alone "
            "(ragproof review --history STORE)"
        )
    if args.labels:
        raise ConfigError(
            f"{source} is not a results file: --labels is for a results review "
            "(ragproof review results.json --labels labels.jsonl)"
        )
    from pytest_ragproof.review.dataset import DatasetReview, dataset_area
    from pytest_ragproof.review.reviewed import ReviewedFile

    output = Path(args.output) if args.output else default_output(source)
    reviewed = ReviewedFile(source, output)
    corpus = None
    if args.corpus:
        from pytest_ragproof.corpus.loader import load_corpus

        corpus = load_corpus(args.corpus)
    app = create_app(
        [dataset_area(DatasetReview(reviewed, corpus))], token=token, reviewer=reviewer, hosts=hosts
    )
    resumed = " (resuming its decisions)" if reviewed.resumed else ""
    return app, f"decisions of {reviewer} go to {output}{resumed}"


def _history_areas(args: argparse.Namespace) -> list[Any]:
    """The history area when ``--history`` names a store (opened once, read per page)."""
    if not args.history:
        return []
    from pytest_ragproof.history.store import open_store
    from pytest_ragproof.history.target import resolve_target
    from pytest_ragproof.review.history import HistoryView, history_area

    target = resolve_target(args.history, Path.cwd())
    store = open_store(target, create=False)
    return [history_area(HistoryView(store, target.shown))]


def _open_browser(url: str) -> bool:
    import webbrowser

    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return webbrowser.open(url)


def _when_started(server: Any, url: str, *, browser: bool) -> None:
    """Once the server listens: say how to stop it, and open the browser if asked.

    Said only then: uvicorn takes over Ctrl+C when it starts, and a Ctrl+C before
    that would interrupt its start-up instead of stopping it cleanly.
    """
    import threading
    import time

    def ready() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.02)
        if not server.started:
            return
        print("ragproof review: press Ctrl+C to stop", flush=True)
        if browser and not _open_browser(url):
            print("ragproof review: no browser found; open the URL above", file=sys.stderr)

    threading.Thread(target=ready, daemon=True).start()


def run(args: argparse.Namespace) -> int:
    _imports()
    from pytest_ragproof.review.security import new_token
    from pytest_ragproof.review.server import bind, make_server, url_of

    token = new_token()
    app, writes = build(args, token)
    if args.host not in LOOPBACK:
        print(
            f"ragproof review: warning: listening on {args.host}, not 127.0.0.1: other machines "
            "can reach the app; anyone holding the URL below can write labels",
            file=sys.stderr,
        )
    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {args.host}:{args.port} ({exc.strerror})") from None
    url = f"{url_of(sock)}/?token={token}"
    server = make_server(app)
    try:
        print(f"ragproof review: {writes}")
        print(f"ragproof review: open {url}", flush=True)
        _when_started(server, url, browser=not args.no_browser)
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # Ctrl+C: uvicorn shut down, then re-raised the signal
        pass
    finally:
        sock.close()
    print("ragproof review: stopped", file=sys.stderr)
    return 0
