"""Answers run in their own threads, not in the request: the agent and the LLM block, and an answer
must be finished and saved even when the browser that asked has gone away."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Iterator
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
    def __init__(self, max_active: int) -> None:
        self.max_active = max_active
        self._active: set[UUID] = set()
        self._changed = threading.Condition()

    def answering(self, chat_id: UUID) -> bool:
        with self._changed:
            return chat_id in self._active

    def start(self, chat_id: UUID, events: Iterator[AgentEvent]) -> asyncio.Queue[AgentEvent | None]:
        """Run `events` to the end in a thread; the returned queue gets each event, then None."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        with self._changed:
            if chat_id in self._active:
                raise ChatBusy
            if len(self._active) >= self.max_active:
                raise ServerBusy
            self._active.add(chat_id)
        thread = threading.Thread(
            target=self._run, args=(chat_id, events, loop, queue), name=f"answer-{chat_id}", daemon=True
        )
        thread.start()
        return queue

    def _run(self, chat_id: UUID, events: Iterator[AgentEvent], loop, queue) -> None:
        def emit(item: AgentEvent | None) -> None:
            # RuntimeError: the server's loop is gone; nobody listens, but the answer still saves
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(queue.put_nowait, item)

        try:
            for event in events:
                emit(event)
        except (DatabaseUnavailable, psycopg.OperationalError, PoolTimeout) as exc:
            emit(ErrorEvent(message=f"the database is unavailable: {exc}"))
        except psycopg.errors.ForeignKeyViolation:
            emit(ErrorEvent(message="the chat was deleted while it was being answered"))
        except Exception as exc:
            log.exception("answer failed in chat %s", chat_id)
            emit(ErrorEvent(message=f"the answer failed ({type(exc).__name__}); the chat is still usable"))
        finally:
            with self._changed:
                self._active.discard(chat_id)
                self._changed.notify_all()
            emit(None)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no answer is being written; False if `timeout` passed first."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._active, timeout)


async def sse_stream(queue: asyncio.Queue[AgentEvent | None]) -> AsyncIterator[str]:
    """Server-Sent Events: `event:` is the agent event's type, `data:` its JSON."""
    number = 0
    while True:
        try:
            item = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
        except TimeoutError:
            yield ": keep-alive\n\n"
            continue
        if item is None:
            return
        number += 1
        yield f"id: {number}\nevent: {item.type}\ndata: {item.model_dump_json()}\n\n"
