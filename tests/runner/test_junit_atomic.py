"""pytest's JUnit report in a ragproof run is written to a temporary file and moved into
place: a run killed during the write leaves the previous report whole."""

from __future__ import annotations

import os

import pytest

# A plugin that kills the process (as a CI timeout would) half-way through pytest's own
# JUnit write: it writes the first half of the report to the file pytest writes to, then
# exits without cleaning up.
KILLER = """
import os

import pytest
from _pytest import junitxml

_write = junitxml.LogXML.pytest_sessionfinish


def _killed_half_way(self):
    _write(self)
    with open(self.logfile, encoding="utf-8") as fh:
        text = fh.read()
    with open(self.logfile, "w", encoding="utf-8") as fh:
        fh.write(text[: len(text) // 2])
    os._exit(137)


if os.environ.get("KILL_DURING_JUNIT"):
    junitxml.LogXML.pytest_sessionfinish = _killed_half_way
"""

PREVIOUS = '<?xml version="1.0" encoding="utf-8"?><testsuites name="previous run"/>\n'


def _run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest_subprocess(
        "-p",
        "killer",
        "--ragproof-dataset=cases.frozen.json",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:asyncio",
        "--junitxml=junit.xml",
        *args,
    )


def test_a_run_killed_while_writing_junit_keeps_the_previous_report(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(killer=KILLER)
    monkeypatch.syspath_prepend(project.path)
    monkeypatch.setenv(
        "PYTHONPATH",
        os.pathsep.join(filter(None, [str(project.path), os.environ.get("PYTHONPATH")])),
    )
    report = project.path / "junit.xml"
    report.write_text(PREVIOUS, encoding="utf-8")
    monkeypatch.setenv("KILL_DURING_JUNIT", "1")
    killed = _run(project)
    assert killed.ret == 137
    assert report.read_text(encoding="utf-8") == PREVIOUS
    monkeypatch.delenv("KILL_DURING_JUNIT")
    done = _run(project)
    assert done.ret == 0
    text = report.read_text(encoding="utf-8")
    assert text.startswith('<?xml version="1.0" encoding="utf-8"?><testsuites')
    assert text.rstrip().endswith("</testsuites>") and 'tests="4"' in text
    assert f"generated xml file: {report}" in done.stdout.str()
    assert sorted(p.name for p in project.path.iterdir() if "junit" in p.name) == ["junit.xml"]
