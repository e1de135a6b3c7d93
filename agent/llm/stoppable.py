"""Stop reaches the model: while a turn runs with a stop switch, every model call of that turn —
the agent's, the tools', the revision's — is refused once the switch is set, and a call under way
is given up as soon as it is set instead of when the model returns (a stalled remote server took
15 s to notice a stop, and fallback calls were made after it).

The switch travels in a context variable, so the tools and the answer's revision, which get the
model but not the switch, are covered too; calls run in a worker thread (copying the context)
that the turn stops waiting for. A streamed call also ends at its next token (on_token raises),
which closes a remote stream."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any

from agent.llm.base import ChatMessage, ChatModel, Completion, Role, Stopped
from ground import workers

_STOP: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "chatpapers_stop", default=None
)
POLL_SECONDS = 0.05


def set_stop_switch(stop: threading.Event | None) -> None:
    """The switch of the turn now running in this context (None: a turn nobody can stop)."""
    _STOP.set(stop)


def stop_requested() -> bool:
    stop = _STOP.get()
    return stop is not None and stop.is_set()


class Stoppable:
    def __init__(self, model: ChatModel) -> None:
        self.inner = model
        self.name = model.name

    def chat(
        self,
        messages: list[ChatMessage],
        json_schema: dict | None = None,
        max_tokens: int = 512,
        on_token: Callable[[str], None] | None = None,
        role: Role = "agent",
    ) -> Completion:
        stop = _STOP.get()
        if stop is None:
            return self.inner.chat(messages, json_schema, max_tokens, on_token, role)
        if stop.is_set():
            raise Stopped  # no call starts after a stop, fallbacks included
        outcome: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                outcome["completion"] = self.inner.chat(messages, json_schema, max_tokens, on_token, role)
            except BaseException as exc:
                outcome["error"] = exc
            finally:
                done.set()

        workers.start(run, name="model")
        while not done.wait(POLL_SECONDS):
            if stop.is_set():
                raise Stopped  # given up: the worker ends when the model returns or its next token comes
        if "error" in outcome:
            raise outcome["error"]
        return outcome["completion"]
