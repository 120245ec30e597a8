"""llm.astguard: while litellm is imported off the main thread, AST compiles take turns
(python/cpython#106905); bytecode compiles of source do not wait."""

from __future__ import annotations

import ast
import builtins
import threading
import time

import pytest

from pytest_ragproof.llm import astguard


@pytest.mark.skipif(not astguard._AFFECTED, reason="CPython 3.13+ keeps AST state per thread")
def test_ast_compiles_wait_for_each_other_and_source_compiles_do_not() -> None:
    original = builtins.compile
    held, release = threading.Event(), threading.Event()

    def hold() -> None:  # another thread in the middle of its AST work
        with astguard._LOCK:
            held.set()
            release.wait(5)

    with astguard.serialized_ast():
        assert builtins.compile is not original
        holder = threading.Thread(target=hold)
        holder.start()
        held.wait(5)
        # Source to bytecode (what an import does) goes straight through.
        code = compile("x = 1", "<src>", "exec")
        assert isinstance(
            code, type(test_ast_compiles_wait_for_each_other_and_source_compiles_do_not.__code__)
        )
        parsed: list[float] = []

        def parse() -> None:
            ast.parse("y = 2")
            parsed.append(time.perf_counter())

        parser = threading.Thread(target=parse)
        parser.start()
        time.sleep(0.2)
        assert parsed == []  # ast.parse waits for the holder
        released_at = time.perf_counter()
        release.set()
        parser.join(5)
        holder.join(5)
        assert parsed and parsed[0] >= released_at
        # An AST compiled from an AST object works as before.
        tree = ast.parse("z = 3")
        namespace: dict[str, int] = {}
        exec(compile(tree, "<ast>", "exec"), namespace)
        assert namespace["z"] == 3
    assert builtins.compile is original


def test_a_compile_replaced_meanwhile_is_left_in_place() -> None:
    original = builtins.compile
    try:
        with astguard.serialized_ast():
            builtins.compile = original  # someone else's change while inside
        assert builtins.compile is original
    finally:
        builtins.compile = original
