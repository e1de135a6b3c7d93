"""`chatpapers serve`: the web app (API + chat page) with uvicorn."""

from __future__ import annotations

import socket
from typing import Annotated

import typer

from chatpapers.services import Services
from ground.console import err

# Browsers keep idle connections for a minute or more; uvicorn's 5 s default makes them reconnect
# (and race the server's close) between two questions.
KEEP_ALIVE_SECONDS = 75


def serve(
    ctx: typer.Context,
    host: Annotated[
        str, typer.Option(help="Address to listen on; 0.0.0.0 makes it reachable from other machines.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.", min=1, max=65535)] = 8000,
) -> None:
    """Run the web chat: the page at http://HOST:PORT/, the API under /api, docs at /docs.

    Uses the embedded PostgreSQL unless DATABASE_URL is set, and the model of CHATPAPERS_LLM
    (the embedded local model by default). CHATPAPERS_AUTH=none turns accounts off for a
    single-user laptop. Stop it with Ctrl+C; answers being written are finished and saved first.
    """
    import uvicorn

    from api.app import create_app

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
    app = create_app(settings, db=services.db, embedder=services.embedder, llm=services.llm)
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=150,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    )
    server = uvicorn.Server(config)
    err.print(f"[bold green]chatpapers is running: open http://{shown}:{port}/ in your browser[/bold green]")
    err.print("[dim]API docs at /docs · Ctrl+C stops[/dim]")
    server.run(sockets=[listener])


def _listen(host: str, port: int) -> socket.socket:
    """Bind first, so a port in use is a clear message before anything else starts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        err.print(f"[red]error:[/red] cannot listen on {host}:{port}: {exc.strerror}; choose another --port")
        raise typer.Exit(1) from None
    return sock
