"""One error shape for every 4xx and 5xx: `{"detail": "<for people>"}` as JSON, plus `errors`
(where and what, never the value sent) for invalid requests.

FastAPI's default 422 echoes every rejected value back, a password included, and fails on its own
echo when the value holds an unpaired surrogate; an unexpected exception became a plain-text 500
with the keep-alive connection dropped. Here nothing the client sent is repeated, the body is
always ASCII JSON (so it can always be encoded), and the boundary middleware turns whatever
escapes a route into a logged JSON 500 that still carries the security headers."""

from __future__ import annotations

import json
import logging
from typing import Any

import psycopg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from psycopg_pool import PoolTimeout
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from corpus.db import DatabaseUnavailable
from corpus.text import storable

log = logging.getLogger("chatpapers.api")


class ErrorJSON(JSONResponse):
    """JSON in ASCII: any text, even an unpaired surrogate, can be written."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def error_response(
    status: int, detail: str, headers: dict[str, str] | None = None, **extra: Any
) -> ErrorJSON:
    return ErrorJSON({"detail": detail, **extra}, status_code=status, headers=headers)


def _where(loc: tuple | list) -> str:
    # "body", "query", ... then the field path; FastAPI's own "body" prefix says little to people
    parts = [str(p) for p in loc if p != "body"]
    return ".".join(parts) or "body"


def _validation_errors(exc: RequestValidationError) -> list[dict[str, Any]]:
    out = []
    for error in exc.errors():
        msg = str(error.get("msg", "invalid"))
        if error.get("type") == "json_invalid":
            msg = "the body is not valid JSON"
        loc = [storable(str(p))[:100] for p in error.get("loc", ())]
        out.append({"loc": loc, "msg": storable(msg)[:300]})
    return out


def install(app: FastAPI) -> None:
    """Register the handlers on `app` (the boundary middleware is added by create_app)."""

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> ErrorJSON:
        detail = exc.detail if isinstance(exc.detail, str) else "request refused"
        return error_response(exc.status_code, detail, dict(exc.headers or {}))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> ErrorJSON:
        errors = _validation_errors(exc)
        summary = "; ".join(f"{_where(e['loc'])}: {e['msg']}" for e in errors[:5])
        return error_response(422, summary or "invalid request", errors=errors)

    @app.exception_handler(RecursionError)
    async def too_deep(request: Request, exc: RecursionError) -> ErrorJSON:
        return error_response(400, "the request body is nested too deeply")

    @app.exception_handler(DatabaseUnavailable)
    @app.exception_handler(psycopg.OperationalError)
    @app.exception_handler(PoolTimeout)
    async def database_down(request: Request, exc: Exception) -> ErrorJSON:
        return error_response(503, "the database is unavailable; try again in a moment", {"Retry-After": "5"})


class ErrorBoundary:
    """Whatever a route raises that no handler took becomes a JSON 500 (logged with its trace),
    instead of a plain-text page and a dropped connection. Sits inside SecurityHeaders."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception:
            log.exception("unhandled error in %s %s", scope.get("method"), scope.get("path"))
            if started:  # a stream was under way: nothing more can be said on this response
                return
            response = error_response(500, "internal error; it has been logged")
            await response(scope, receive, send)
