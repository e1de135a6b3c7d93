"""Per-user send rate limit and a request body size cap."""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class RateLimiter:
    """At most `limit` events per key within any `per_seconds` window (sliding log)."""

    def __init__(self, limit: int, per_seconds: float, clock=time.monotonic) -> None:
        self.limit = limit
        self.per_seconds = per_seconds
        self.clock = clock
        self._log: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def hit(self, key: str) -> float | None:
        """Record one event; None if allowed, else seconds until the next one would be."""
        return self._check(key, record=True)

    def wait(self, key: str) -> float | None:
        """Like `hit` without recording: is `key` over its limit now?"""
        return self._check(key, record=False)

    def _check(self, key: str, record: bool) -> float | None:
        now = self.clock()
        with self._lock:
            log = self._log[key]
            while log and log[0] <= now - self.per_seconds:
                log.popleft()
            if len(log) >= self.limit:
                return log[0] + self.per_seconds - now
            if record:
                log.append(now)
            elif not log:
                del self._log[key]
            return None


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
