"""Where litellm is imported: once, quietly and offline, from any thread.

With :mod:`llm.provider` (which calls it) the only modules that touch litellm; the rest
of the package reaches it through them.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from pytest_ragproof.errors import MissingExtraError

__all__ = ["OFFLINE_ENV", "load_litellm"]

#: Set (unless already set) before litellm is imported: no fetch of its own catalogs.
OFFLINE_ENV = ("LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_OFFLINE_MODE")

_litellm_module: Any = None
_LOAD_LOCK = threading.Lock()


def load_litellm() -> Any:
    """Import litellm once, quietly and offline, or raise :class:`MissingExtraError`.

    Any thread may call it (the judges' thread does, early: ``JudgeStage.warm_up``).
    """
    if _litellm_module is not None:
        return _litellm_module
    with _LOAD_LOCK:
        if _litellm_module is not None:
            return _litellm_module
        if threading.current_thread() is threading.main_thread():
            return _import_litellm(main_thread=True)
        from pytest_ragproof.llm.astguard import serialized_ast

        # The main thread may be running tests meanwhile: their AST work and ours take
        # turns (llm.astguard), and the warning filters are left alone (catch_warnings
        # is not thread-safe: it would undo what pytest records for the running test).
        with serialized_ast():
            return _import_litellm(main_thread=False)


def _import_litellm(*, main_thread: bool) -> Any:
    global _litellm_module
    # Without these litellm fetches its price table at import time (three attempts
    # with backoff: seconds lost where the network is closed) and other catalogs
    # (e.g. Anthropic beta headers) on first use; its bundled copies serve us.
    for variable in OFFLINE_ENV:
        os.environ.setdefault(variable, "True")
    # litellm logs while importing, so its loggers are silenced before and after.
    _silence_litellm_loggers()
    import gc

    collecting = gc.isenabled()
    try:
        import warnings

        # litellm (at import and on its first calls, which import provider modules)
        # warns about its own pydantic models: not the user's concern, and pytest would
        # pin the warnings on whichever case was running.
        warnings.filterwarnings(
            "ignore", message=r"Items? .* on TypedDict class .* `ReadOnly` qualifier"
        )
        # The import creates some 300,000 objects that live until exit. The cyclic GC
        # would scan them over and over while they are created, in every later full
        # collection, and once more at interpreter exit: about 40% of the CPU time
        # of importing litellm and leaving (benchmarks/bench_startup.py). So no
        # collection during the import, and what exists then is moved out of the
        # collector's sight (gc.freeze); objects made later are collected as usual.
        gc.disable()
        if main_thread:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import litellm
        else:
            import litellm
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] != "litellm":
            raise
        raise MissingExtraError(
            "llm", "litellm", "Calling an LLM (dataset generation, LLM judges)"
        ) from None
    finally:
        if collecting:
            gc.enable()
    gc.freeze()
    # Provider error texts can echo prompts or keys: litellm must neither print
    # nor log them, and must not phone home or run callbacks we did not ask for.
    litellm.suppress_debug_info = True
    litellm.telemetry = False
    litellm.set_verbose = False
    litellm.turn_off_message_logging = True  # until a request finds no callback (below)
    litellm.callbacks = []
    litellm.success_callback = []
    litellm.failure_callback = []
    _silence_litellm_loggers()
    _litellm_module = litellm
    return litellm


def _silence_litellm_loggers() -> None:
    import logging

    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
