"""Every command in docs/ still exists and still does what the page says.

The shell blocks of ``docs/*.md`` (fenced blocks without a language or marked
bash/sh/shell/console, the ``run:`` steps of the yaml workflow blocks) and the inline
`` `ragproof ...` `` spans are read as commands. Every one is checked against the real
parsers: ``ragproof SUBCOMMAND`` must be a subcommand of the ``ragproof`` CLI and each
option it names one of that subcommand's options; every ``--ragproof-*`` option named
anywhere in docs/ must be declared. The practical ones (:data:`RUNS`: the quickstart
example's pytest runs, ``ragproof init``, ``validate``, ``freeze``, ``split``, ``ingest``,
``report``, ``merge``, ``export``) run for real through bash, word for word, in a temp
copy of the bundled example, and their output is checked against what the page shows.
Commands that need an LLM, a service or the user's own files are the parsers' only.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_ragproof.plugin.options import OPTIONS

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
SHELL = ("", "bash", "sh", "shell", "console")
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[a-z]*)\n(?P<body>.*?)^(?P=indent)```", re.S | re.M)
INLINE = re.compile(r"`(ragproof [^`]+)`")


@dataclass(frozen=True)
class Command:
    where: str  # docs/page.md:LINE
    text: str  # as written, continuation lines joined
    words: tuple[str, ...]  # shell words, environment assignments left out


def _words(text: str) -> tuple[str, ...]:
    words = shlex.split(text, comments=True)
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        words.pop(0)
    return tuple(words)


def _is_command(line: str) -> bool:
    """``pytest ...`` or ``ragproof SUB ...``, not a line of output (``ragproof case x:``)."""
    raw = line.split()
    while raw and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", raw[0]):
        raw.pop(0)
    if not raw or raw[0] not in ("pytest", "ragproof"):
        return False
    return raw[0] == "pytest" or not (
        len(raw) < 2 or raw[1] in ("case", "gate") or any(w.endswith(":") for w in raw[:3])
    )


def _shell_lines(body: str) -> Iterator[tuple[int, str]]:
    """(offset, line) of a shell block, ``\\`` continuations joined, ``$ `` prompts dropped."""
    lines = body.splitlines()
    prompted = any(line.startswith("$ ") for line in lines)
    i = 0
    while i < len(lines):
        start = i
        line = lines[i]
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i].strip()
        i += 1
        if prompted:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        yield start, line.strip()


def _yaml_runs(body: str) -> Iterator[str]:
    import yaml

    def walk(node: object) -> Iterator[str]:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "run" and isinstance(value, str):
                    yield from (v for v in value.strip().splitlines() if v.strip())
                else:
                    yield from walk(value)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)

    yield from walk(yaml.safe_load(textwrap.dedent(body)))


def doc_commands() -> list[Command]:
    found: list[Command] = []
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        name = f"docs/{page.name}"
        for m in FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 2
            body = textwrap.dedent(m.group("body"))
            if m.group("lang") == "yaml":
                lines = [(0, run) for run in _yaml_runs(body)]
            elif m.group("lang") in SHELL:
                lines = list(_shell_lines(body))
            else:
                continue
            for offset, command in lines:
                if _is_command(command):
                    found.append(Command(f"{name}:{line + offset}", command, _words(command)))
        for m in INLINE.finditer(text):
            if _is_command(m.group(1)):
                line = text.count("\n", 0, m.start()) + 1
                found.append(Command(f"{name}:{line}", m.group(1), _words(m.group(1))))
    return found


COMMANDS = doc_commands()


# -- every command names what exists ------------------------------------------------


def _subcommands() -> dict[str, set[str]]:
    """Each ``ragproof`` subcommand with its option strings, from the CLI's own parser."""
    import argparse

    from pytest_ragproof.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    options = {name: set(p._option_string_actions) for name, p in sub.choices.items()}
    for name, p in sub.choices.items():  # ragproof labels merge: the action's options too
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for nested in action.choices.values():
                    options[name] |= set(nested._option_string_actions)
    options[""] = set(parser._option_string_actions)  # ragproof --version, ragproof --help
    for name, p in sub.choices.items():  # nested ones: ragproof history add, …
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for inner, q in action.choices.items():
                    options[f"{name} {inner}"] = set(q._option_string_actions)
    return options


def _options_named(words: tuple[str, ...]) -> list[str]:
    """The options of a command line, placeholders' brackets and ``=VALUE`` left out."""
    named = []
    for word in words:
        word = word.strip("[]")
        if word.startswith("-") and not re.fullmatch(r"-?[0-9.]+", word):
            named.append(word.split("=", 1)[0])
    return named


def test_the_docs_hold_commands_to_check() -> None:
    pages = {c.where.split(":")[0] for c in COMMANDS}
    assert len(COMMANDS) > 40 and len(pages) >= 10, pages


def test_every_ragproof_subcommand_and_option_in_the_docs_exists() -> None:
    subcommands = _subcommands()
    wrong = []
    for c in COMMANDS:
        if c.words[0] != "ragproof":
            continue
        if c.words[1].startswith("-"):
            c = Command(c.where, c.text, ("ragproof", "", *c.words[1:]))
        if len(c.words) > 2 and f"{c.words[1]} {c.words[2]}" in subcommands:
            c = Command(c.where, c.text, ("ragproof", f"{c.words[1]} {c.words[2]}", *c.words[3:]))
        options = subcommands.get(c.words[1])
        if options is None:
            wrong.append(f"{c.where}: no subcommand '{c.words[1]}' in `{c.text}`")
            continue
        wrong += [
            f"{c.where}: ragproof {c.words[1]} has no option {o} (`{c.text}`)"
            for o in _options_named(c.words[2:])
            if o not in options
        ]
    assert not wrong, "\n".join(wrong)


def test_every_ragproof_option_the_docs_name_is_declared() -> None:
    declared = {o.cli for o in OPTIONS}
    wrong = []
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"--ragproof-[a-z0-9-]*[a-z0-9](?P<star>-\*)?", text):
            flag = m.group(0)
            line = text.count("\n", 0, m.start()) + 1
            known = (
                any(d.startswith(flag[:-1]) for d in declared)
                if m.group("star")
                else flag in declared
            )
            if not known:
                wrong.append(f"docs/{page.name}:{line}: {flag} is not an option")
    assert not wrong, "\n".join(wrong)


def test_pytest_commands_in_the_docs_name_declared_options() -> None:
    values = {o.cli: not o.flag for o in OPTIONS}
    wrong = []
    for c in COMMANDS:
        if c.words[0] != "pytest":
            continue
        words = list(c.words)
        for i, word in enumerate(words):
            flag, eq, _ = word.partition("=")
            if not flag.startswith("--ragproof-"):
                continue
            if flag not in values:
                wrong.append(f"{c.where}: {flag} is not an option (`{c.text}`)")
            elif values[flag] and not eq and (i + 1 == len(words) or words[i + 1][:1] == "-"):
                wrong.append(f"{c.where}: {flag} takes a value (`{c.text}`)")
            elif not values[flag] and eq:
                wrong.append(f"{c.where}: {flag} takes no value (`{c.text}`)")
    assert not wrong, "\n".join(wrong)


# -- the practical commands run ---------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """A documented command, run word for word in ``cwd`` (of the temp copy)."""

    page: str
    command: str  # as the page writes it (its comment left out)
    cwd: str = "."
    status: int = 0
    shows: tuple[str, ...] = ()  # lines (or parts of one) the output must hold
    writes: tuple[str, ...] = ()  # files the command must leave, relative to cwd
    extra: str = ""  # appended for the test's needs (a report file), never an option tested
    before: tuple[str, ...] = field(default=())  # shell lines that set the stage
    # the page's generic form when it writes a placeholder (PATH, a|b, [optional])
    documented: str | None = None
    # output blocks of the page (by a part of their first line) whose every line, timings
    # apart, the output must hold
    blocks: tuple[str, ...] = ()


TIMING = re.compile(r"latency|passed in|[0-9]s\b")


def doc_block(page: str, first: str) -> list[str]:
    """The lines of the fenced block of ``docs/page`` whose first line holds ``first``."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    for m in FENCE.finditer(text):
        lines = textwrap.dedent(m.group("body")).splitlines()
        if lines and first in lines[0]:
            return [line for line in lines if line.strip() and not TIMING.search(line)]
    raise AssertionError(f"docs/{page} has no block starting with {first!r}")


QUICK = "conftest_examples/quickstart"
RUNS = (
    Run(
        "quickstart.md",
        "pytest conftest_examples/quickstart",
        blocks=("ragproof summary",),
        extra="--ragproof-report=results.json",
        writes=("results.json",),
    ),
    Run(
        "quickstart.md",
        "pytest conftest_examples/quickstart --quickstart-pipeline=weak",
        status=1,
        blocks=(
            "ragproof case un-hub-wifi-password",
            "ragproof case qa-station-count",
            "ragproof case inj-closing-tag",
            "ragproof gate FAILED: aggregate qa:recall@5>=0.9",
        ),
    ),
    Run(
        "quickstart.md",
        "ragproof freeze conftest_examples/quickstart/cases.jsonl",
        writes=(f"{QUICK}/cases.frozen.json",),
    ),
    Run(
        "datasets.md",
        "ragproof validate cases.jsonl",
        cwd="data",
        shows=("cases.jsonl: valid, 39 case(s)", "state: not frozen"),
    ),
    Run(
        "datasets.md",
        "ragproof freeze cases.jsonl                 # writes cases.frozen.json beside it",
        cwd="data",
        writes=("cases.frozen.json",),
    ),
    Run(
        "datasets.md",
        "ragproof freeze --check cases.jsonl",
        cwd="data",
        shows=("ragproof freeze --check: cases.frozen.json is current with cases.jsonl",),
    ),
    Run(
        "datasets.md",
        "ragproof split cases.jsonl --seed 7 -o cases.split.jsonl --ratios 0.8,0.1,0.1",
        cwd="data",
        documented="ragproof split cases.jsonl --seed 7 -o cases.split.jsonl "
        "[--ratios 0.8,0.1,0.1] [--group-by doc]",
        writes=("cases.split.jsonl",),
    ),
    Run(
        "datasets.md",
        "ragproof validate cases.jsonl --corpus docs/",
        cwd="data",
        shows=("expected_source_ids: ", "corpus: docs/, 11 document(s)"),
        before=(f"cp -r ../{QUICK}/corpus docs",),
    ),
    Run(
        "corpus.md",
        "ragproof ingest corpus --chunk-size 400",
        cwd=QUICK,
        shows=("11",),
        documented="ragproof ingest PATH [--max-file-bytes N] [--chunk-size N] [--chunk-overlap N]",
    ),
    Run("reports.md", "ragproof report results.json", shows=("ragproof",)),
    Run(
        "reports.md",
        "ragproof report results.json --format html -o report.html",
        writes=("report.html",),
    ),
    Run(
        "reports.md",
        "ragproof report results.json --format inspectorraget -o run.json",
        writes=("run.qa.json", "run.unanswerable.json", "run.injection.json"),
    ),
    Run(
        "reports.md",
        "ragproof report results.json --format inspectorraget --kind qa -o qa.json",
        writes=("qa.json",),
    ),
    Run(
        "interop.md",
        "ragproof export cases.frozen.json --to ragas -o ragas.jsonl",
        cwd="data",
        documented="ragproof export cases.frozen.json --to ragas|deepeval|raget -o FILE",
        writes=("ragas.jsonl",),
    ),
    Run(
        "ci.md",
        "ragproof merge shard-*.json -o results.json",
        cwd="shards",
        writes=("results.json",),
        before=tuple(
            f"pytest ../{QUICK} -q -p no:cacheprovider --ragproof-shard {k}/2 "
            f"--ragproof-report=$PWD/shard-{k}.json >/dev/null"
            for k in (1, 2)
        ),
    ),
    Run(
        "quickstart.md",
        "ragproof init            # writes into the current folder",
        cwd="my-project",
        writes=("conftest.py", "cases.jsonl", "cases.frozen.json"),
    ),
    Run(
        "quickstart.md",
        "pytest                   # 5 sample cases pass, with the summary table",
        cwd="my-project",
        shows=("5 passed", "ragproof summary"),
    ),
    Run(
        "pipelines.md",
        "pytest --ragproof-repeat 5 --ragproof-min-pass-rate 0.8 --ragproof-concurrency 16",
        cwd="my-project",
        shows=("cases: 5 passed, 0 failed, 0 error (5 repeats each, min pass rate 0.8)",),
    ),
    Run(
        "reports.md",
        "pytest --ragproof-dataset=cases.frozen.json --ragproof-html=ragproof-report.html",
        cwd="my-project",
        writes=("ragproof-report.html",),
    ),
)


def _plain(command: str) -> str:
    return re.sub(r"\s+#.*$", "", command).strip()


def test_each_run_is_a_command_of_its_page() -> None:
    documented: dict[str, set[str]] = {}
    for c in COMMANDS:
        documented.setdefault(c.where.split(":")[0].removeprefix("docs/"), set()).add(
            _plain(c.text)
        )
    for run in RUNS:
        command = _plain(run.documented or run.command)
        assert command in documented.get(run.page, set()), f"{run.page} no longer has {command}"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temp folder with the bundled example and shims for ``pytest`` and ``ragproof``."""
    root = tmp_path_factory.mktemp("docs-commands")
    shutil.copytree(ROOT / QUICK, root / QUICK, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "data").mkdir()
    shutil.copy(root / QUICK / "cases.jsonl", root / "data" / "cases.jsonl")
    (root / "shards").mkdir()
    (root / "my-project").mkdir()
    bin_dir = root / ".bin"
    bin_dir.mkdir()
    for name, module in (("pytest", "pytest"), ("ragproof", "pytest_ragproof")):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m {module} "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    return root


def _env(sandbox: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "RAGPROOF_"))}
    env["PATH"] = f"{sandbox / '.bin'}{os.pathsep}{env.get('PATH', '')}"
    # the code under test is this checkout's, wherever the test runs from
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["RAGPROOF_CACHE_DIR"] = str(sandbox / ".cache")
    # A user's environment has pytest and ragproof, not every plugin of the development
    # install (langsmith's and hypothesis's would add seconds to each run's start).
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTEST_PLUGINS"] = "pytest_ragproof.plugin"
    return env


def test_the_practical_commands_do_what_the_docs_say(sandbox: Path) -> None:
    """One test, in order: later commands use what earlier ones wrote (results.json)."""
    frozen_before = (sandbox / QUICK / "cases.frozen.json").read_bytes()
    timings: list[tuple[float, str]] = []
    for run in RUNS:
        cwd = sandbox / run.cwd
        script = "\n".join([*run.before, f"{_plain(run.command)} {run.extra}".strip()])
        started = time.monotonic()
        done = subprocess.run(
            ["bash", "-c", "set -e\n" + script],
            cwd=cwd,
            env=_env(sandbox),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        out = done.stdout + done.stderr
        what = f"{run.page}: `{run.command}` in {run.cwd}"
        timings.append((round(time.monotonic() - started, 1), run.command))
        assert done.returncode == run.status, f"{what} exited {done.returncode}:\n{out[-3000:]}"
        assert "Traceback" not in out, f"{what}:\n{out[-3000:]}"
        shown = [*run.shows, *(ln for b in run.blocks for ln in doc_block(run.page, b))]
        for line in shown:
            assert line in out, f"{what} did not show {line!r}:\n{out[-3000:]}"
        for name in run.writes:
            assert (cwd / name).is_file(), f"{what} did not write {name}"
    # The committed frozen file of the example is what `ragproof freeze` makes of its source.
    assert (sandbox / QUICK / "cases.frozen.json").read_bytes() == frozen_before
    print(*sorted(timings, reverse=True), sep="\n")


def test_inspectorraget_is_started_as_its_readme_says() -> None:
    # IBM/InspectorRAGet's README: "Node.js >= 24.0.0", `npm install`, `npm run dev`
    # (it documented yarn and Node 20.12 before).
    reports = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")
    assert "Node.js 24 or newer: `npm install` then `npm run dev`" in reports
    assert not [p.name for p in DOCS if "yarn" in p.read_text(encoding="utf-8")]
