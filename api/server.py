"""How uvicorn serves the app: the one place its options are chosen (`chatpapers serve` and the
tests' live servers use it, so what is tested is what runs)."""

from __future__ import annotations

import socket

from fastapi import FastAPI

from ground.settings import Settings

# Browsers keep idle connections for a minute or more; uvicorn's 5 s default makes them reconnect
# (and race the server's close) between two questions.
KEEP_ALIVE_SECONDS = 75
GRACEFUL_SHUTDOWN_SECONDS = 150  # answers being written are finished and saved first


def uvicorn_config(
    app: FastAPI, settings: Settings, host: str, port: int, trusted_proxies: str | None = None
):
    """uvicorn's Config for `app`. Forwarded headers (X-Forwarded-For/-Proto) are believed only
    from `trusted_proxies` (else settings.trusted_proxies): uvicorn's own default trusts them from
    127.0.0.1, so any local client could pose as any address and dodge the sign-in limits."""
    import uvicorn

    trusted = (settings.trusted_proxies if trusted_proxies is None else trusted_proxies).strip()
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted or "",
        server_header=False,
    )


def listening_socket(host: str, port: int) -> socket.socket:
    """The bound listening socket uvicorn serves on (`serve`, the tests' live servers, the API
    benchmark). Made with protocol IPPROTO_TCP, not 0: accepted sockets inherit it, and asyncio
    sets TCP_NODELAY only on sockets whose protocol says TCP. Without it, small writes on a
    reused connection wait for the client's delayed ACK: ~40 ms added to every response and to
    every streamed token event. Raises OSError when the address cannot be bound."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock
