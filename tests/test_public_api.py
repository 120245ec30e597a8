"""The public names of ``pytest_ragproof`` stay what they are whatever was imported first."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_run_module_never_hides_the_evaluate_function() -> None:
    # A submodule named like a public function would replace it on the package as soon
    # as anything imported the submodule (a test, a plugin, a notebook cell).
    code = (
        "import pytest_ragproof.evaluation, pytest_ragproof.dataset.freeze\n"
        "from pytest_ragproof import evaluate, freeze, Results\n"
        "assert callable(evaluate) and evaluate.__name__ == 'evaluate', evaluate\n"
        "assert callable(freeze) and freeze.__name__ == 'freeze', freeze\n"
        "assert isinstance(Results, type)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
