"""The package's shape: a one-way import graph and a pytest-free core."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_ragproof"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, known: set[str]) -> set[str]:
    """Package modules ``path`` imports, at any depth, except under ``if TYPE_CHECKING``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for stmt in node.orelse:
                visit(stmt)
            return
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    # A name imported from a package counts as that package unless it is a module.
    return {m for m in out if m in known and m != here}


def _graph() -> dict[str, set[str]]:
    files = [p for p in PACKAGE.rglob("*.py") if "templates" not in p.parts]
    known = {_module_name(p) for p in files}
    return {_module_name(p): _imports(p, known) for p in files}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                found = walk(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = walk(node)
            if found:
                return found
    return None


def test_the_import_graph_has_no_cycle() -> None:
    graph = _graph()
    # The package's lazy __init__ re-exports by name; it is not a dependency of anything.
    graph = {m: deps - {"pytest_ragproof"} for m, deps in graph.items()}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_graph_walker_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


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
