"""The FastAPI app: JSON API under /api, SSE answers, /health, OpenAPI docs at /docs, and the chat
page from web/."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import asynccontextmanager
from importlib import resources

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent.llm.base import ChatModel
from api import auth, chats, docs, errors, health, inbox, interviews, papers
from api.edge import RequestEdge
from api.encodable import EncodableJSON
from api.errors import ErrorBoundary
from api.state import AppState
from corpus.db import Database
from corpus.embedder import Embedder
from ground import __version__, workers
from ground.settings import Settings
from inbox.library import MAX_BYTES as MAX_LIBRARY_BYTES

log = logging.getLogger("chatpapers.api")
SHUTDOWN_GRACE_SECONDS = 120.0  # answers still being written get this long to finish and save
# A warm-up still inside torch when the interpreter finalises aborts the process ("terminate called
# without an active exception", SIGABRT): torch's worker threads are torn down under it. So the
# shutdown waits for it; loading the embedder takes seconds, and a stop skips the steps not begun.
WARM_UP_JOIN_SECONDS = 60.0

# The page loads only its own files: a prompt-injected answer cannot pull in scripts or beacons.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; "
    "script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'none'; object-src 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


class SecurityHeaders:
    """Adds SECURITY_HEADERS to every response (plain ASGI: streamed answers pass untouched)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.headers = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *self.headers]
            await send(message)

        await self.app(scope, receive, with_headers)


def web_dir():
    return resources.files("web")


def create_app(
    settings: Settings, *, db: Database, embedder: Embedder, llm: Callable[[], ChatModel]
) -> FastAPI:
    """The app over the services the composition root built; `llm` gives the chat model (or
    raises LLMError, which the page shows as a banner)."""
    state = AppState(settings=settings, db=db, embedder=embedder, llm=llm)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        stopping = threading.Event()
        warm_up = workers.start(lambda: _warm_up(state, stopping), name="warm-up")
        yield
        stopping.set()
        if not await run_in_threadpool(state.turns.wait_idle, SHUTDOWN_GRACE_SECONDS):
            log.warning("stopping with answers still being written; they are lost")
        await run_in_threadpool(warm_up.join, WARM_UP_JOIN_SECONDS)
        state.db.close()

    app = FastAPI(
        title="chatpapers",
        version=__version__,
        description="Chat with the arXiv computer-science literature. State-changing requests need "
        "the `X-CSRF-Token` header (from `GET /api/auth/session`).",
        lifespan=lifespan,
        docs_url=None,  # api/docs.py serves /docs from the app itself (the CSP allows no CDN)
        redoc_url=None,
        default_response_class=EncodableJSON,
    )
    # A trailing slash answers 404 instead of a redirect: Starlette builds the redirect from the
    # Host header, so a forged Host sent people elsewhere.
    app.router.redirect_slashes = False
    app.state.chatpapers = state
    errors.install(app)
    # Room for the longest allowed question in JSON (escapes can double it) and a little more.
    app.add_middleware(
        RequestEdge,
        max_body_bytes=settings.max_message_chars * 6 + 4096,
        body_seconds=settings.body_seconds,
        larger_bodies={"/api/inbox/library": MAX_LIBRARY_BYTES},
    )

    app.add_middleware(ErrorBoundary)
    app.add_middleware(SecurityHeaders)  # outermost: errors and 413s get the headers too

    # interviews before papers: both take `{paper_id:path}`, and the paper route would swallow theirs
    for router in (
        auth.router,
        chats.router,
        interviews.router,
        inbox.router,
        inbox.feeds,
        papers.router,
        health.router,
        docs.router,
    ):
        app.include_router(router)

    web = web_dir()
    app.mount("/static", StaticFiles(directory=str(web)), name="static")

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(str(web / "index.html"), headers={"Cache-Control": "no-cache"})

    return app


def _warm_up(state: AppState, stopping: threading.Event) -> None:
    """Start what the first question needs while nobody waits: the database, the embedder and
    the syllable dictionary of the level judgement. Once `stopping` is set, nothing more starts."""
    from agent.readability import ensure_cmudict

    steps = (lambda: state.db.url, lambda: state.embedder.embed_query("warm up"), ensure_cmudict)
    try:
        for step in steps:
            if stopping.is_set():
                return
            step()
        state.warmed_up = True
    except Exception as exc:  # /health and the requests report problems; this is only a head start
        log.warning("warm-up: %s", exc)
