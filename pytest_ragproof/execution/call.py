"""Calling the user's pipeline: the call convention, timeouts, sync and async callables.

Convention (docs/pipelines.md): the callable gets the question (for injection cases
with delivery ``append``: ``question + "\\n\\n" + adversarial_payload``) and, when
it declares them (or ``**kwargs``), the keyword arguments ``case`` and
``history`` (the case's conversation as a list of ``{role, content}`` dicts).
A callable that requires any other parameter (``chat_history``, ``messages``…)
is refused with :class:`~pytest_ragproof.errors.PipelineSignatureError` instead
of silently never receiving it.
"""

from __future__ import annotations

import asyncio
import inspect
import signal
import threading
from collections.abc import Callable, Mapping
from typing import Any

from pytest_ragproof.dataset.models import Case
from pytest_ragproof.errors import PipelineSignatureError


class NotCallableError(TypeError):
    """The pipeline is something that cannot be called."""

    def __init__(self, pipeline: object) -> None:
        self.type_name = type(pipeline).__name__
        super().__init__(
            f"the pipeline is a {self.type_name}, not a callable; pass the function "
            "(or object with __call__) that answers a question"
        )

    def for_fixture(self, fixture: str) -> str:
        """The same message, for a pipeline that came from a pytest fixture."""
        return (
            f"the '{fixture}' fixture returned a {self.type_name}, not a callable; return "
            "the function (or object with __call__) that answers a question"
        )


class PipelineTimeout(BaseException):
    """Raised inside a pipeline call that ran out of time.

    A BaseException, so a pipeline's own ``except Exception`` cannot swallow it.
    """


def question_text(case: Case, delivery: str) -> str:
    if case.kind == "injection" and delivery == "append" and case.adversarial_payload:
        return case.question + "\n\n" + case.adversarial_payload
    return case.question


PASSED_KEYWORDS = ("history", "case")

# id(callable) -> (callable, wants case, wants history, signature error). The callable
# is kept so its id cannot be reused while cached; pipelines are few and long-lived.
_DECLARED: dict[int, tuple[object, bool, bool, PipelineSignatureError | None]] = {}
# Parameter names of a conversation that ragproof passes as ``history`` only.
CONVERSATION_NAMES = frozenset(
    {
        "chat_history",
        "conversation",
        "conversation_history",
        "messages",
        "chat_messages",
        "dialog",
        "dialogue",
    }
)


def _name(pipeline: object) -> str:
    # __name__, not __qualname__: a fixture's closure would read "rag_pipeline.<locals>.f".
    name = getattr(pipeline, "__name__", None)
    return str(name) if isinstance(name, str) and name else type(pipeline).__name__


def _signature_error(
    pipeline: object, params: Mapping[str, inspect.Parameter]
) -> PipelineSignatureError | None:
    """The error for a signature ragproof cannot call with what it passes, else None.

    The first positional parameter takes the question; ``history`` and ``case`` are
    passed by keyword when declared. Any other parameter must have a default (or be
    ``*args`` / ``**kwargs``), else the pipeline would never receive it.
    """
    kinds = inspect.Parameter
    positional = [
        p for p in params.values() if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)
    ]
    var_positional = any(p.kind is kinds.VAR_POSITIONAL for p in params.values())
    passes = (
        "ragproof passes the question as the first positional argument and, when the "
        "pipeline declares them, the keyword arguments 'history' (the case's "
        "conversation_history as a list of {role, content} dicts) and 'case' (the Case)"
    )
    if not positional and not var_positional:
        return PipelineSignatureError(
            f"the pipeline '{_name(pipeline)}' has no positional parameter for the question; "
            f"{passes}. Fix: declare the question as its first parameter, e.g. "
            "def rag_pipeline(question, history=None)",
            (),
        )
    rest = [p for p in params.values() if not positional or p is not positional[0]]
    free = [p for p in rest if p.kind not in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD)]
    # A conversation under another name would silently get its default on every case.
    chat = tuple(p.name for p in free if p.name.lower() in CONVERSATION_NAMES)
    missing = tuple(
        p.name
        for p in free
        if p.name not in chat
        and p.default is kinds.empty
        and (p.name not in PASSED_KEYWORDS or p.kind is kinds.POSITIONAL_ONLY)
    )
    if not missing and not chat:
        return None
    named = (*chat, *missing)
    names = ", ".join(f"'{n}'" for n in named)
    plural = "s" if len(named) > 1 else ""
    if chat:
        return PipelineSignatureError(
            f"the pipeline '{_name(pipeline)}' declares the parameter{plural} {names}, which "
            f"ragproof never passes (a default would be used for every case, so conversational "
            f"cases would be scored without their history); {passes}. Fix: rename "
            f"'{chat[0]}' to 'history', or take 'case' and read case.conversation_history",
            named,
        )
    return PipelineSignatureError(
        f"the pipeline '{_name(pipeline)}' requires the parameter{plural} {names}, which "
        f"ragproof never passes; {passes}. Fix: give {names} a default value, or take "
        "'case' and read what you need from it",
        named,
    )


def _declared(pipeline: Callable[..., Any]) -> tuple[bool, bool, PipelineSignatureError | None]:
    hit = _DECLARED.get(id(pipeline))
    if hit is not None and hit[0] is pipeline:
        return hit[1], hit[2], hit[3]
    error: PipelineSignatureError | None = None
    try:
        params = inspect.signature(pipeline).parameters
    except (TypeError, ValueError):
        wants_case = wants_history = False  # a builtin or C callable: just call it
    else:
        var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        wants_case, wants_history = var_kw or "case" in params, var_kw or "history" in params
        error = _signature_error(pipeline, params)
    if len(_DECLARED) > 256:  # function-scoped fixtures make a new callable per case
        _DECLARED.clear()
    _DECLARED[id(pipeline)] = (pipeline, wants_case, wants_history, error)
    return wants_case, wants_history, error


def check_signature(pipeline: Any) -> None:
    """Raise :class:`PipelineSignatureError` when ragproof cannot call ``pipeline`` as declared.

    Non-callables are left to :func:`bind` (its :class:`NotCallableError`).
    """
    if callable(pipeline):
        error = _declared(pipeline)[2]
        if error is not None:
            raise PipelineSignatureError(str(error), error.parameters)


_ASYNC: dict[int, tuple[object, bool]] = {}


def _is_async(pipeline: Callable[..., Any]) -> bool:
    """``async def`` (or an object with ``async def __call__``), cached per callable."""
    hit = _ASYNC.get(id(pipeline))
    if hit is not None and hit[0] is pipeline:
        return hit[1]
    result = inspect.iscoroutinefunction(pipeline) or inspect.iscoroutinefunction(
        getattr(pipeline, "__call__", None)  # noqa: B004 - async __call__ objects
    )
    if len(_ASYNC) > 256:  # function-scoped fixtures make a new callable per case
        _ASYNC.clear()
    _ASYNC[id(pipeline)] = (pipeline, result)
    return result


def call_kwargs(pipeline: Callable[..., Any], case: Case) -> dict[str, Any]:
    """``case`` / ``history`` keyword arguments the callable declares."""
    wants_case, wants_history, _ = _declared(pipeline)
    return _kwargs(case, wants_case, wants_history)


def _kwargs(case: Case, wants_case: bool, wants_history: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if wants_case:
        out["case"] = case
    if wants_history:
        out["history"] = [m.model_dump() for m in case.conversation_history]
    return out


def _with_alarm(fn: Callable[[], Any], timeout: float) -> Any:
    __tracebackhide__ = True

    def on_alarm(signum: int, frame: object) -> None:
        raise PipelineTimeout()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _with_thread(fn: Callable[[], Any], timeout: float) -> Any:
    __tracebackhide__ = True
    box: dict[str, Any] = {}

    def target() -> None:
        __tracebackhide__ = True
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed over to the calling thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="ragproof-pipeline", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise PipelineTimeout()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def run_sync(fn: Callable[[], Any], timeout: float | None) -> Any:
    """Run ``fn`` with an optional timeout (SIGALRM in the main thread, else a watcher)."""
    __tracebackhide__ = True
    if timeout is None:
        return fn()
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        return _with_alarm(fn, timeout)
    return _with_thread(fn, timeout)


class LoopOwner:
    """One private event loop for async pipelines, closed at the end of the session.

    Independent of pytest-asyncio: it never touches the policy's current loop.
    """

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop

    def run(self, awaitable: Any, timeout: float | None) -> Any:
        __tracebackhide__ = True

        async def waited() -> Any:
            __tracebackhide__ = True
            if timeout is None:
                return await awaitable
            try:
                return await asyncio.wait_for(awaitable, timeout)
            except TimeoutError:
                raise PipelineTimeout() from None

        try:
            return self.loop.run_until_complete(waited())
        except Exception as exc:
            # Drop asyncio's own frames (run_until_complete and the future's result()):
            # the traceback pytest shows starts at the user's coroutine.
            tb = exc.__traceback__
            while tb is not None and tb.tb_frame.f_code is not waited.__code__:
                tb = tb.tb_next
            if tb is None:
                raise
            raise exc.with_traceback(tb)  # noqa: B904 - the same exception, shorter

    def close(self) -> None:
        loop, self._loop = self._loop, None
        if loop is None or loop.is_closed():
            return
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def _raising(make: Callable[[], Exception]) -> Callable[[], Any]:
    # A fresh exception per call: a cached one would pile up tracebacks case after case.
    def refuse() -> Any:
        __tracebackhide__ = True
        raise make()

    return refuse


def bind(pipeline: Any, case: Case, delivery: str) -> Callable[[], Any]:
    """The call of ``pipeline`` for one case: its question and the keywords it declares.

    Calling the result returns what the pipeline returns (a coroutine for an async
    one); it raises :class:`NotCallableError` when the pipeline cannot be called and
    :class:`PipelineSignatureError` when it requires a parameter ragproof never passes,
    so every way of running cases reports that the same way, as the case's error.
    """
    if not callable(pipeline):
        return _raising(lambda: NotCallableError(pipeline))
    wants_case, wants_history, error = _declared(pipeline)
    if error is not None:
        return _raising(lambda: PipelineSignatureError(str(error), error.parameters))
    question = question_text(case, delivery)
    kwargs = _kwargs(case, wants_case, wants_history)

    def call() -> Any:
        __tracebackhide__ = True
        return pipeline(question, **kwargs)

    return call


def invoke(
    pipeline: Callable[..., Any],
    case: Case,
    *,
    delivery: str,
    timeout: float | None,
    loops: LoopOwner,
) -> Any:
    """Call the pipeline for one case and return its raw output (awaiting if needed).

    The frames of this module are hidden from pytest's tracebacks: a pipeline's
    exception is shown from the user's code down.
    """
    __tracebackhide__ = True
    call = bind(pipeline, case, delivery)
    if _is_async(pipeline):
        return loops.run(call(), timeout)
    result = run_sync(call, timeout)
    if inspect.isawaitable(result):
        return loops.run(result, timeout)
    return result
