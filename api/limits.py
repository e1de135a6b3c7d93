"""Rate limits (questions, sign-ins, registrations) and a request body size cap."""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class RateLimiter:
    """At most `limit` events per key within any `per_seconds` window (sliding log). `take`
    checks several keys, each with its own quota, and records on all of them in one step under
    one lock: concurrent requests cannot all pass the check before any of them is counted."""

    _PRUNE_EVERY = 10_000  # calls; keys that fell out of every window are forgotten

    def __init__(self, limit: int, per_seconds: float, clock=time.monotonic) -> None:
        self.limit = limit
        self.per_seconds = per_seconds
        self.clock = clock
        self._log: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()
        self._calls = 0
        self._longest = per_seconds

    def hit(self, key: str) -> float | None:
        """Record one event; None if allowed, else seconds until the next one would be."""
        return self.take({key: (self.limit, self.per_seconds)})

    def wait(self, key: str) -> float | None:
        """Like `hit` without recording: is `key` over its limit now?"""
        return self.take({key: (self.limit, self.per_seconds)}, record=False)

    def take(self, quotas: Mapping[str, tuple[int, float]], record: bool = True) -> float | None:
        """One event on every key of `quotas` ({key: (limit, per_seconds)}) if none is over its
        quota (None); otherwise nothing is recorded and the longest wait is returned."""
        now = self.clock()
        with self._lock:
            self._maybe_prune(now)
            wait = 0.0
            for key, (limit, window) in quotas.items():
                self._longest = max(self._longest, window)
                log = self._log.get(key)
                if not log:
                    continue
                while log and log[0] <= now - window:
                    log.popleft()
                if len(log) >= limit:
                    wait = max(wait, log[len(log) - limit] + window - now)
            if wait > 0:
                return wait
            if record:
                for key in quotas:
                    self._log[key].append(now)
            return None

    def give_back(self, keys: Iterable[str]) -> None:
        """Undo one event on each key (an attempt that turned out not to count)."""
        with self._lock:
            for key in keys:
                log = self._log.get(key)
                if log:
                    log.pop()

    def _maybe_prune(self, now: float) -> None:
        self._calls += 1
        if self._calls % self._PRUNE_EVERY:
            return
        stale = [k for k, log in self._log.items() if not log or log[-1] <= now - self._longest]
        for key in stale:
            del self._log[key]


class BodySizeLimit:
    """413 for request bodies over `max_bytes`, declared or streamed, before any route reads them."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _too_large(send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await _too_large(send)


class _TooLarge(Exception):
    pass


async def _too_large(send: Send) -> None:
    body = b'{"detail":"the request is too large"}'
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
