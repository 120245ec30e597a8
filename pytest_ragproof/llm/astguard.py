"""AST work serialized while litellm is imported off the main thread.

CPython before 3.13 keeps the recursion depth of its AST conversion per interpreter,
not per thread (python/cpython#106905): when two threads build or compile a Python
AST at the same moment, one may fail with ``SystemError: AST constructor recursion
depth mismatch``. Importing litellm does build some (``inspect`` parsing signatures,
anyio's lazy imports), and pytest does too on the main thread (assertion rewriting,
the source lines of a failure). While litellm is imported on the judges' thread,
:func:`serialized_ast` puts one lock around every ``compile()`` that takes or makes an
AST (``ast.parse`` goes through it); compiling source to bytecode, as imports do, is
not affected and takes no lock.
"""

from __future__ import annotations

import ast
import builtins
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["serialized_ast"]

_LOCK = threading.RLock()
_AFFECTED = sys.version_info < (3, 13)


@contextmanager
def serialized_ast() -> Iterator[None]:
    """While inside, AST compiles of every thread take turns (where CPython needs it)."""
    if not _AFFECTED:
        yield
        return
    original = builtins.compile

    def compile(  # stands in for the builtin while inside
        source: Any,
        filename: Any,
        mode: str,
        flags: int = 0,
        dont_inherit: bool = False,
        optimize: int = -1,
        **kwargs: Any,
    ) -> Any:
        if isinstance(source, ast.AST) or flags & ast.PyCF_ONLY_AST:
            with _LOCK:
                return original(source, filename, mode, flags, dont_inherit, optimize, **kwargs)
        return original(source, filename, mode, flags, dont_inherit, optimize, **kwargs)

    builtins.compile = compile
    try:
        yield
    finally:
        if builtins.compile is compile:  # unless someone replaced it meanwhile
            builtins.compile = original
