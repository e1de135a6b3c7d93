"""A model call streamed as Token events: the call runs in a thread while its tokens are yielded,
and a stop switch ends the generation at the next token."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Generator
from typing import Any

from agent.events import Token
from agent.llm.base import Completion, Stopped
from ground import workers


def streamed(
    call: Callable[[Callable[[str], None]], Completion],
    stop: threading.Event | None = None,
    enough: Callable[[str], int | None] | None = None,
) -> Generator[Token, None, Completion]:
    """Yield a Token per piece `call(on_token)` writes; returns its Completion. When `stop` is set
    the generation ends at the next token: Stopped, with the text written so far. `enough(text)`,
    given the text so far, returns where to cut it once the answer is long enough: the generation
    ends there and the piece that went past it is not yielded."""
    tokens: queue.Queue = queue.Queue()
    outcome: dict[str, Any] = {}
    so_far: list[str] = []

    def on_token(text: str) -> None:
        if stop is not None and stop.is_set():
            raise Stopped
        if enough is not None:
            so_far.append(text)
            cut = enough("".join(so_far))
            if cut is not None:
                outcome["cut"] = "".join(so_far)[:cut]
                raise Stopped
        tokens.put(text)

    def run() -> None:
        try:
            outcome["completion"] = call(on_token)
        except BaseException as exc:
            outcome["error"] = exc
        finally:
            tokens.put(None)

    # the call runs with this thread's context: its trace span is a child of the caller's
    worker = workers.start(run, name="stream")
    written: list[str] = []
    while (text := tokens.get()) is not None:
        written.append(text)
        yield Token(text=text)
    worker.join()
    if "cut" in outcome:
        return Completion(text=outcome["cut"], tokens_out=len(written))
    if isinstance(outcome.get("error"), Stopped):
        raise Stopped("".join(written))
    if "error" in outcome:
        raise outcome["error"]
    return outcome["completion"]
