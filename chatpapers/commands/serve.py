"""`chatpapers serve`: the web app (API + chat page) with uvicorn."""

from __future__ import annotations

import contextlib
import signal
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated

import typer

from chatpapers.services import Services
from ground.console import err

if TYPE_CHECKING:
    import uvicorn


def serve(
    ctx: typer.Context,
    host: Annotated[
        str, typer.Option(help="Address to listen on; 0.0.0.0 makes it reachable from other machines.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.", min=1, max=65535)] = 8000,
    forwarded_allow_ips: Annotated[
        str | None,
        typer.Option(
            help="Reverse proxies whose X-Forwarded-For/-Proto headers are believed (comma-separated "
            "IPs or networks, or *), e.g. 127.0.0.1 behind a local nginx. Default: "
            "CHATPAPERS_TRUSTED_PROXIES, empty: none.",
        ),
    ] = None,
) -> None:
    """Run the web chat: the page at http://HOST:PORT/, the API under /api, docs at /docs.

    Uses the embedded PostgreSQL unless DATABASE_URL is set, and the model of CHATPAPERS_LLM
    (the embedded local model by default). CHATPAPERS_AUTH=none turns accounts off for a
    single-user laptop. Stop it with Ctrl+C or SIGTERM (systemd, docker stop): answers being
    written are finished and saved first, the embedded PostgreSQL is stopped if nothing else
    uses it, and the exit status is 0.
    """
    import uvicorn

    from api.app import create_app
    from api.server import uvicorn_config

    services = Services.of(ctx)
    services.embed_threads = 1  # a question's vector is small work; the other core keeps serving
    settings = services.settings
    if settings.auth == "none" and host not in ("127.0.0.1", "localhost", "::1"):
        err.print(
            "[yellow]warning:[/yellow] CHATPAPERS_AUTH=none on a public address: anybody who can "
            "reach it uses your chats"
        )
    listener = _listen(host, port)
    err.print(f"[dim]database: {services.db.describe()}[/dim]")
    _ = services.db.url  # start the embedded server and migrate now, so problems show before the URL does
    supervisor = services.db.supervise()  # a dead embedded PostgreSQL is started again
    app = create_app(settings, db=services.db, embedder=services.embedder, llm=services.llm)
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    server = uvicorn.Server(uvicorn_config(app, settings, host, port, forwarded_allow_ips))
    err.print(f"[bold green]chatpapers is running: open http://{shown}:{port}/ in your browser[/bold green]")
    err.print("[dim]API docs at /docs · Ctrl+C stops[/dim]")
    with _graceful_stop(server):
        server.run(sockets=[listener])
    if supervisor is not None:
        supervisor.stop()  # before the exit handlers stop the server: it must stay stopped
    err.print("[dim]stopped[/dim]")


@contextlib.contextmanager
def _graceful_stop(server: uvicorn.Server) -> Iterator[None]:
    """SIGINT and SIGTERM stop the server gracefully and `serve` returns, so the exit handlers run
    (the last holder of the embedded PostgreSQL stops it). uvicorn catches both while it serves,
    but once shut down it raises the signal again with the handler it found, which would kill the
    process (SIGTERM) or raise KeyboardInterrupt (SIGINT); that handler is this one, and by then
    there is nothing left to do. A signal before uvicorn took over asks it to stop as soon as it
    has started."""

    def handle(signum: int, frame: object) -> None:
        if not server.should_exit:
            server.handle_exit(signum, frame)

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _listen(host: str, port: int) -> socket.socket:
    """Bind first, so a port in use is a clear message before anything else starts."""
    from api.server import listening_socket

    try:
        return listening_socket(host, port)
    except OSError as exc:
        err.print(f"[red]error:[/red] cannot listen on {host}:{port}: {exc.strerror}; choose another --port")
        raise typer.Exit(1) from None
