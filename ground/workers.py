"""Threads that run native code (torch, llama.cpp) for a caller that may stop waiting for them, and
an exit that waits for them.

A stopped answer stops waiting for its model call at once, but the call's thread stays inside
llama.cpp until its next token or its end. If the interpreter finalises meanwhile, the library is
torn down under that thread and the process dies by a signal instead of with its exit status: a
chat ended by SIGTERM mid-answer exited -11 (SIGSEGV) in 1 of 4 tries, and a daemon thread inside
a torch encode at exit aborts with "terminate called without an active exception" every time. So
the exit waits for these threads, a bounded while: they stay daemons, so one stuck for good cannot
hold the exit forever."""

from __future__ import annotations

import atexit
import contextvars
import threading
import time
from collections.abc import Callable

EXIT_WAIT_SECONDS = 30.0  # a model call runs to its next token, or at worst to its max_tokens

_live: set[threading.Thread] = set()
_lock = threading.Lock()
_exit_hooked = False


def start(run: Callable[[], None], name: str) -> threading.Thread:
    """Start `run` in a daemon thread, in a copy of the caller's context (its trace span and stop
    switch go along); the process's exit waits for it."""
    global _exit_hooked

    context = contextvars.copy_context()

    def body() -> None:
        try:
            context.run(run)
        finally:
            with _lock:
                _live.discard(thread)

    thread = threading.Thread(target=body, name=name, daemon=True)
    with _lock:
        if not _exit_hooked:
            # hooked on first use, so after the embedded PostgreSQL's: atexit runs last-in first, and
            # a model call still writing its turn needs the database
            atexit.register(wait_for_all, EXIT_WAIT_SECONDS)
            _exit_hooked = True
        _live.add(thread)
    thread.start()
    return thread


def running() -> list[threading.Thread]:
    with _lock:
        return [t for t in _live if t.is_alive()]


def wait_for_all(timeout: float) -> bool:
    """Wait up to `timeout` seconds for every worker to end; True when none is left."""
    deadline = time.monotonic() + timeout
    if running():
        from ground.console import err

        err.print(f"[dim]waiting up to {timeout:.0f} s for the model's current step to end…[/dim]")
    for thread in running():
        thread.join(max(0.0, deadline - time.monotonic()))
    return not running()
