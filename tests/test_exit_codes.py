"""The ``ragproof`` command's exit status comes from the error classes and is set once,
in ``cli.main``: a command returns 0 or 1 for what it found and raises for an error."""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path

import pytest

from pytest_ragproof import cli
from pytest_ragproof.errors import ConfigError, RagproofError, UsageError

COMMANDS = Path(cli.__file__).parent / "commands"

#: (module, line) of a literal exit status a command may still spell: none.
ALLOWED: set[tuple[str, int]] = set()


def _exits(path: Path) -> list[tuple[str, int, str]]:
    """Where a command module spells an exit status itself: ``return N`` with N not 0
    or 1, ``sys.exit(...)``, ``os._exit(...)``, ``exit(...)``, ``raise SystemExit``."""
    found: list[tuple[str, int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant):
            value = node.value.value
            if isinstance(value, int) and not isinstance(value, bool) and value not in (0, 1):
                found.append((path.name, node.lineno, f"return {value}"))
        elif isinstance(node, ast.Call):
            func = node.func
            name = (
                f"{func.value.id}.{func.attr}"
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                else func.id
                if isinstance(func, ast.Name)
                else ""
            )
            if name in ("sys.exit", "os._exit", "exit", "quit"):
                found.append((path.name, node.lineno, f"{name}(...)"))
        elif isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(target, ast.Name) and target.id == "SystemExit":
                found.append((path.name, node.lineno, "raise SystemExit"))
    return sorted(found)


def test_no_command_module_spells_an_exit_status() -> None:
    modules = sorted(COMMANDS.glob("*.py"))
    assert len(modules) > 10
    found = [hit for path in modules for hit in _exits(path) if hit[:2] not in ALLOWED]
    assert found == [], "raise the error (errors.py gives its exit code) instead: " + repr(found)


def test_the_scan_finds_what_it_forbids(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import sys\n"
        "def a():\n    return 2\n"
        "def b():\n    return 4\n"
        "def c():\n    sys.exit(3)\n"
        "def d():\n    raise SystemExit(2)\n"
        "def e():\n    return 1\n",
        encoding="utf-8",
    )
    assert [(line, what) for _, line, what in _exits(sample)] == [
        (3, "return 2"),
        (5, "return 4"),
        (7, "sys.exit(...)"),
        (9, "raise SystemExit"),
    ]


def test_the_error_classes_carry_the_exit_codes() -> None:
    assert RagproofError.exit_code == 1
    assert ConfigError.exit_code == 1  # a library error: the command found a problem
    assert UsageError.exit_code == 2
    assert issubclass(UsageError, RagproofError)


class _Stopped(RagproofError):
    exit_code = 3


@pytest.mark.parametrize(
    ("error", "code"),
    [(ConfigError("bad file x.json"), 1), (UsageError("bad option"), 2), (_Stopped("late"), 3)],
)
def test_main_prints_the_error_and_exits_with_its_class_code(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: RagproofError,
    code: int,
) -> None:
    module = types.ModuleType("ragproof_test_command")

    def run(args: object) -> int:
        raise error

    module.add_arguments = lambda parser: None  # type: ignore[attr-defined]
    module.run = run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(cli.COMMANDS, "probe", (module.__name__, "a probe"))
    assert cli.main(["probe"]) == code
    assert capsys.readouterr().err == f"ragproof probe: error: {error}\n"
