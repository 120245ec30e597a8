"""A run's defaults are written once, in ``pytest_ragproof/defaults.py``.

Settings classes, keyword defaults and the CLI's module constants name the figure from
there; a number written beside one of these names anywhere else is a second copy that can
drift (60 s / 4 retries / 8 / 4 were spelled in three packages)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_ragproof"

NAMES = {
    "timeout_s",
    "max_retries",
    "concurrency",
    "judge_concurrency",
    "evaluator_concurrency",
    "max_file_bytes",
    "chunk_size",
    "chunk_overlap",
    "items_per_request",
    "max_rounds",
}
# Command-line flags of the same settings (judge-check --timeout / --retries).
CLI_NAMES = NAMES | {"timeout", "retries"}


def _number(node: ast.expr | None) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    )


def _copies(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name, value = node.target.id, node.value
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "field"  # field(default=...)
            ):
                value = next((k.value for k in value.keywords if k.arg == "default"), None)
            if name in NAMES and _number(value):
                found.append(f"{path.name}:{node.lineno} {name}")
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if (
                isinstance(target, ast.Name)
                and target.id.removeprefix("DEFAULT_").lower() in NAMES
                and target.id.startswith("DEFAULT_")
                and _number(node.value)
            ):
                found.append(f"{path.name}:{node.lineno} {target.id}")
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            # argparse: add_argument("--timeout", default=60.0)
            flag = str(node.args[0].value)
            default = next((k.value for k in node.keywords if k.arg == "default"), None)
            if flag.removeprefix("--").replace("-", "_") in CLI_NAMES and _number(default):
                found.append(f"{path.name}:{node.lineno} {flag}")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            tail = positional[len(positional) - len(args.defaults) :]
            pairs = list(zip(tail, args.defaults, strict=True))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d]
            for arg, default in pairs:
                if arg.arg in NAMES and _number(default):
                    found.append(f"{path.name}:{node.lineno} {node.name}({arg.arg}=...)")
    return found


def test_no_default_is_written_outside_defaults_py() -> None:
    copies = [
        copy
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "defaults.py"
        for copy in _copies(path)
    ]
    assert copies == []


def test_the_scan_finds_a_copy(tmp_path: Path) -> None:
    """The scan is not blind: each shape it looks for is found in a planted module."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from dataclasses import dataclass, field\n"
        "DEFAULT_CHUNK_SIZE = 1000\n"
        "@dataclass\n"
        "class S:\n"
        "    timeout_s: float = 60.0\n"
        "    max_file_bytes: int = field(default=5)\n"
        "def f(x, *, concurrency: int = 8) -> None: ...\n"
        "add('--retries', type=int, default=4)\n",
        encoding="utf-8",
    )
    assert len(_copies(planted)) == 5
