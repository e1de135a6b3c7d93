"""Limits at the HTTP edge, before any route runs: body size (declared or chunked), the time a
client may take to send its body, header size, and HEAD on every GET route.

The body is read here in full (it is small: a question, a transcript) so that an over-limit
chunked body is a 413 rather than the body parser's 400, and a client that holds its body open
costs a 408 after BODY_SECONDS instead of a worker forever."""

from __future__ import annotations

import asyncio
import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

BODY_SECONDS = 20.0  # a whole body, from the first byte asked for to the last
MAX_HEADER_BYTES = 16 * 1024  # browsers send 1–2 KB; nginx's default buffers hold 8–32 KB


class RequestEdge:
    def __init__(
        self,
        app: ASGIApp,
        max_body_bytes: int,
        body_seconds: float = BODY_SECONDS,
        larger_bodies: dict[str, int] | None = None,
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.body_seconds = body_seconds
        # {path: limit} for the few routes that take files (an imported library), not questions
        self.larger_bodies = larger_bodies or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if sum(len(k) + len(v) for k, v in scope["headers"]) > MAX_HEADER_BYTES:
            await _refuse(send, 431, "the request's headers are too large")
            return
        limit = self.larger_bodies.get(scope["path"], self.max_body_bytes)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _refuse(send, 413, "the request is too large")
            return
        try:
            async with asyncio.timeout(self.body_seconds):
                first = await self._read_body(receive, limit)
        except TimeoutError:
            await _refuse(send, 408, "the request body took too long to arrive")
            return
        except _TooLarge:
            await _refuse(send, 413, "the request is too large")
            return
        if first["type"] == "http.disconnect":
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return first
            return await receive()  # after the body: the disconnect a streamed answer watches for

        if scope["method"] == "HEAD":
            await self._head(scope, replay, send)
        else:
            await self.app(scope, replay, send)

    async def _read_body(self, receive: Receive, limit: int) -> Message:
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return message
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > limit:
                raise _TooLarge
            if not message.get("more_body", False):
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

    async def _head(self, scope: Scope, receive: Receive, send: Send) -> None:
        """HEAD as GET without the body (FastAPI's GET routes answer HEAD with 405 otherwise);
        a streamed body is not waited for: the route stops at its first chunk."""

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.start":
                await send(message)
            elif message["type"] == "http.response.body":
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                raise _HeadDone

        try:
            await self.app({**scope, "method": "GET"}, receive, headers_only)
        except* _HeadDone:  # a streamed response raises it from inside its task group
            pass


class _TooLarge(Exception):
    pass


class _HeadDone(Exception):
    pass


async def _refuse(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
