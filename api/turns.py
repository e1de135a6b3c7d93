"""Answers run in their own threads, not in the request: the agent and the LLM block, and an answer
must be finished and saved even when the browser that asked has gone away."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from uuid import UUID

import psycopg
from psycopg_pool import PoolTimeout

from agent.events import AgentEvent, ErrorEvent
from corpus.db import DatabaseUnavailable

log = logging.getLogger("chatpapers.api")
KEEPALIVE_SECONDS = 15.0  # proxies drop silent streams; a local model can think for a minute


class ChatBusy(Exception):
    """This chat is already being answered."""


class ServerBusy(Exception):
    """Too many answers are being written at once."""


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
        self._active: set[tuple[str, UUID]] = set()
        self._changed = threading.Condition()

    def answering(self, owner: str, chat_id: UUID) -> bool:
        with self._changed:
            return (owner, chat_id) in self._active

    def start(self, owner: str, chat_id: UUID, events: Iterator[AgentEvent]) -> asyncio.Queue:
        """Run `events` to the end in a thread; the returned queue gets each event, then None."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        with self._changed:
            if (owner, chat_id) in self._active:
                raise ChatBusy
            if len(self._active) >= self.max_active:
                raise ServerBusy
            self._active.add((owner, chat_id))
        self._threads.submit(self._run, (owner, chat_id), events, loop, queue)
        return queue

    def _run(self, key: tuple[str, UUID], events: Iterator[AgentEvent], loop, queue) -> None:
        def emit(item: AgentEvent | Exception | None) -> None:
            # RuntimeError: the server's loop is gone; nobody listens, but the answer still saves
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(queue.put_nowait, item)

        try:
            events = iter(events)
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
                self._active.discard(key)
                self._changed.notify_all()
            emit(None)

    @staticmethod
    async def first_event(queue: asyncio.Queue) -> AgentEvent | None:
        """The turn's first event; what went wrong before it is raised here instead."""
        first = await queue.get()
        if isinstance(first, Exception):
            await queue.get()  # the closing None
            raise first
        return first

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no answer is being written; False if `timeout` passed first."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._active, timeout)


async def sse_stream(first: AgentEvent | None, queue: asyncio.Queue[AgentEvent | None]) -> AsyncIterator[str]:
    """Server-Sent Events: `event:` is the agent event's type, `data:` its JSON. Events that queued
    up meanwhile (answer tokens come fast) go out in one write."""
    number = 0
    pending: list[AgentEvent | None] = [first]
    while True:
        try:
            items = pending or [await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)]
            pending = []
        except TimeoutError:
            yield ": keep-alive\n\n"
            continue
        while items[-1] is not None and not queue.empty():
            items.append(queue.get_nowait())
        done = items[-1] is None
        parts = []
        for item in items[:-1] if done else items:
            number += 1
            parts.append(f"id: {number}\nevent: {item.type}\ndata: {item.model_dump_json()}\n\n")
        if parts:
            yield "".join(parts)
        if done:
            return
