"""Answers run in their own threads, not in the request: the agent and the LLM block, and an answer
must be finished and saved even when the browser that asked has gone away."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from uuid import UUID

import psycopg
from fastapi.responses import StreamingResponse
from psycopg_pool import PoolTimeout

from agent.events import AgentEvent, ErrorEvent
from corpus.db import DatabaseUnavailable

log = logging.getLogger("chatpapers.api")
KEEPALIVE_SECONDS = 15.0  # proxies drop silent streams; a local model can think for a minute


class ChatBusy(Exception):
    """This chat is already being answered."""


class ServerBusy(Exception):
    """Too many answers are being written at once."""


class RunningTurn:
    """One answer being written: its events so far, kept so that a page opened again (or a
    second tab) replays them and then follows the rest, and the switch that stops it. Events are
    appended on the server's event loop only, so readers there need no lock."""

    def __init__(self, question: str, replaces: int | None = None) -> None:
        self.question = question  # not saved until the answer is: a page opened again shows it from here
        self.replaces = replaces
        self.stop = threading.Event()
        self.events: list[AgentEvent] = []
        self.failure: Exception | None = None  # what went wrong before the first event
        self.finished = False
        self._changed = asyncio.Event()

    def push(self, item: AgentEvent | Exception | None) -> None:
        if item is None:
            self.finished = True
        elif isinstance(item, Exception):
            self.failure, self.finished = item, True
        else:
            self.events.append(item)
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def changed(self, timeout: float) -> bool:
        """Wait for the next event (or the end); False if `timeout` passed first."""
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
            return True
        except TimeoutError:
            return False


class TurnRunner:
    """Each answer gets a thread. Its first event (the level, decided from the chat and the
    question) goes out at once; the rest of the work waits for one of `slots` places, so on a
    small machine a burst of questions is acknowledged quickly and then answered a few at a time
    instead of all of them crawling together."""

    def __init__(self, max_active: int, slots: int) -> None:
        self.max_active = max_active
        self._slots = threading.BoundedSemaphore(slots)
        # Reused threads: starting a new one waits for it to run, which under load stalls the event loop.
        self._threads = ThreadPoolExecutor(max_active, thread_name_prefix="answer")
        # (owner, chat): somebody sending to another's chat id never blocks that chat's owner
        self._active: dict[tuple[str, UUID], RunningTurn] = {}
        self._changed = threading.Condition()

    def running(self, owner: str, chat_id: UUID) -> RunningTurn | None:
        with self._changed:
            return self._active.get((owner, chat_id))

    def stop(self, owner: str, chat_id: UUID) -> bool:
        """Ask the chat's answer to stop (at its next token, or after the step it is in); False
        if nothing is being written."""
        turn = self.running(owner, chat_id)
        if turn is None:
            return False
        turn.stop.set()
        return True

    def start(
        self,
        owner: str,
        chat_id: UUID,
        events: Callable[[threading.Event], Iterator[AgentEvent]],
        question: str,
        replaces: int | None = None,
    ) -> RunningTurn:
        """Run `events(stop)` to the end in a thread, each event pushed to the returned turn."""
        loop = asyncio.get_running_loop()
        turn = RunningTurn(question, replaces)
        with self._changed:
            if (owner, chat_id) in self._active:
                raise ChatBusy
            if len(self._active) >= self.max_active:
                raise ServerBusy
            self._active[(owner, chat_id)] = turn
        self._threads.submit(self._run, (owner, chat_id), events, loop, turn)
        return turn

    def _run(self, key: tuple[str, UUID], events, loop, turn: RunningTurn) -> None:
        def emit(item: AgentEvent | Exception | None) -> None:
            # RuntimeError: the server's loop is gone; nobody listens, but the answer still saves
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(turn.push, item)

        try:
            events = iter(events(turn.stop))
            try:
                # Loads the chat and decides the level: cheap. A failure here is the request's
                # (unknown chat, database down) and becomes its HTTP status; see first_event().
                first = next(events, None)
            except Exception as exc:
                emit(exc)
                return
            if first is not None:
                emit(first)
                with self._slots:
                    for event in events:
                        emit(event)
        except (DatabaseUnavailable, psycopg.OperationalError, PoolTimeout) as exc:
            emit(ErrorEvent(message=f"the database is unavailable: {exc}"))
        except psycopg.errors.ForeignKeyViolation:
            emit(ErrorEvent(message="the chat was deleted while it was being answered"))
        except Exception as exc:
            log.exception("answer failed in chat %s", key[1])
            emit(ErrorEvent(message=f"the answer failed ({type(exc).__name__}); the chat is still usable"))
        finally:
            with self._changed:
                self._active.pop(key, None)
                self._changed.notify_all()
            emit(None)

    @staticmethod
    async def first_event(turn: RunningTurn) -> None:
        """Wait for the turn's first event; what went wrong before it is raised here instead."""
        while not turn.events and not turn.finished:
            await turn.changed(KEEPALIVE_SECONDS)
        if turn.failure is not None:
            raise turn.failure

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no answer is being written; False if `timeout` passed first."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._active, timeout)


async def sse_stream(turn: RunningTurn, after: int = 0) -> AsyncIterator[str]:
    """Server-Sent Events: `event:` is the agent event's type, `data:` its JSON, `id:` its number
    in the turn (a listener that comes back replays from the start, or after `after`). Events that
    queued up meanwhile (answer tokens come fast) go out in one write."""
    number = max(0, after)
    while True:
        if number < len(turn.events):
            batch = turn.events[number:]
            parts = []
            for item in batch:
                number += 1
                parts.append(f"id: {number}\nevent: {item.type}\ndata: {item.model_dump_json()}\n\n")
            yield "".join(parts)
        elif turn.finished:
            return
        elif not await turn.changed(KEEPALIVE_SECONDS):
            yield ": keep-alive\n\n"


def sse_response(turn: RunningTurn, after: int = 0) -> StreamingResponse:
    """The turn's events as a streamed response (proxies told not to buffer it)."""
    return StreamingResponse(
        sse_stream(turn, after),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
