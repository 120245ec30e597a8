"""pytest's JUnit XML report (``--junitxml=junit.xml``), written atomically in a ragproof run.

pytest's writer opens the report file for writing (truncating it) and then writes it: a
CI job killed in between (a timeout, an out-of-memory kill) leaves a cut-off file and
loses the previous report as well. In a run that evaluates a dataset, the report is
written to a temporary file beside it and moved into place once it is complete
(``os.replace``, atomic on one file system); a write that fails leaves the previous file
as it was. ragproof's own files are written the same way (``fileio.write_atomic``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from pathlib import Path

import pytest


class AtomicJUnit:
    """Points pytest's JUnit writer at a temporary file for the length of its write."""

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, object, object]:
        # trylast: the innermost wrapper, so the terminal summary (an outer wrapper) names
        # the real path again.
        from _pytest.junitxml import xml_key

        xml = session.config.stash.get(xml_key, None)
        real = getattr(xml, "logfile", None)
        if xml is None or not isinstance(real, str):
            return (yield)
        from pytest_ragproof.fileio import atomic_target

        with contextlib.ExitStack() as stack:
            try:
                temporary = stack.enter_context(atomic_target(Path(real)))
            except OSError:  # the folder cannot take a file: pytest's own write will say so
                return (yield)
            xml.logfile = str(temporary)
            try:
                return (yield)
            finally:
                xml.logfile = real
