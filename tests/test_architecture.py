"""The package's shape: the layer contracts (import-linter) and a pytest-free ``evaluate()``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_ragproof"


ROOT = PACKAGE.parent
LINT = Path(sys.executable).parent / "lint-imports"  # import-linter, a dev dependency


def test_the_layer_contracts_hold() -> None:
    """The contracts in pyproject.toml ([tool.importlinter]) hold: layers, no cycle, and who
    may import pytest and litellm. `.ci/run` runs `lint-imports` too; this keeps a plain
    pytest run honest."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command; lint_imports_command()",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


def test_a_broken_layer_is_reported(tmp_path: Path) -> None:
    """The same checker fails on an upward import (a contract that cannot fail proves nothing)."""
    pkg = tmp_path / "toy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "high.py").write_text("")
    (pkg / "low.py").write_text("import toy.high\n")
    (tmp_path / ".importlinter").write_text(
        "[importlinter]\nroot_package = toy\n\n"
        "[importlinter:contract:1]\nname = layers\ntype = layers\n"
        "layers =\n    toy.high\n    toy.low\n"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command; lint_imports_command()",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode != 0, out.stdout
    assert "BROKEN" in out.stdout


def test_evaluate_does_not_import_pytest(tmp_path: Path) -> None:
    script = """
import sys
import pytest_ragproof
cases = [{"id": "q1", "kind": "qa", "question": "Refund window?", "expected_answer": "30 days",
          "expected_source_ids": ["refunds.md"]}]
results = pytest_ragproof.evaluate(
    cases, lambda q: {"answer": "30 days", "contexts": [{"id": "refunds.md", "text": "30 days"}]}
)
assert results.passed, results.document
print(sorted(m for m in sys.modules if m == "pytest" or m.startswith("_pytest")))
"""
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(PACKAGE.parent), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == "[]", out.stderr


# Who may import each external package directly; every other top-level package or module of
# pytest_ragproof must be a source of that package's "forbidden" contract.
OWNERS = {
    "pytest": {"plugin"},
    "litellm": {"llm"},
    "sqlalchemy": {"history"},
}


def _top_level() -> set[str]:
    names = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    names |= {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    return names


def test_every_forbidden_contract_names_every_top_level_package() -> None:
    """A package added to pytest_ragproof is covered by each "only X imports Y" contract at
    once: a contract that lists its sources by hand silently exempts every package it forgot."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    packages = _top_level()
    assert {"plugin", "llm", "history", "cli", "textnorm"} <= packages
    checked = set()
    for contract in contracts:
        if contract["type"] != "forbidden":
            continue
        external = [m for m in contract["forbidden_modules"] if not m.startswith("pytest_ragproof")]
        owner_keys = [m for m in external if m in OWNERS]
        if not owner_keys:
            continue
        owners = OWNERS[owner_keys[0]]
        sources = {m.removeprefix("pytest_ragproof.") for m in contract["source_modules"]}
        missing = packages - owners - sources
        assert not missing, f"{contract['name']!r} does not list {sorted(missing)}"
        assert not sources & owners, f"{contract['name']!r} forbids its own owner"
        checked.add(owner_keys[0])
    assert checked == set(OWNERS)


def test_shared_numeric_helpers_are_defined_once() -> None:
    """percentile, the ranking with ties and the 0/1 test live in pytest_ragproof/numeric.py;
    a second definition (there were two percentiles and two rankings) can drift."""
    import re

    shapes = re.compile(
        r"^\s*def _?(percentile|average_ranks|ranks_and_ties|is_binary)\(|"
        r"all\(\w+ in \(0(\.0)?, 1(\.0)?\) for |any\(\w+ not in \(0(\.0)?, 1(\.0)?\) for ",
        re.MULTILINE,
    )
    found = [
        f"{path.relative_to(PACKAGE)}: {m.group(0).strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "numeric.py"
        for m in shapes.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []
