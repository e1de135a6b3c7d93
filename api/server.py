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
        http=_protocol_with_security_headers(),
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


def _protocol_with_security_headers() -> type:
    """uvicorn's HTTP protocol, whose own 400 for a request it cannot parse (no app involved)
    carries the security headers too; every other response gets them from the app."""
    from api.app import SECURITY_HEADERS

    extra = "".join(f"{name.lower()}: {value}\r\n" for name, value in SECURITY_HEADERS.items()).encode()
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as Base
    except ImportError:  # no httptools: uvicorn's pure-Python h11 protocol
        from uvicorn.protocols.http.h11_impl import H11Protocol as Base

        class SecureH11(Base):
            def send_400_response(self, msg: str) -> None:
                import h11

                headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]
                headers += [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                for event in (
                    h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                    h11.Data(data=msg.encode("ascii")),
                    h11.EndOfMessage(),
                ):
                    self.transport.write(self.conn.send(event))
                self.transport.close()

        return SecureH11

    class SecureHttpTools(Base):
        def send_400_response(self, msg: str) -> None:
            body = msg.encode("ascii")
            self.transport.write(
                b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n"
                + extra
                + b"content-length: "
                + str(len(body)).encode()
                + b"\r\nconnection: close\r\n\r\n"
                + body
            )
            self.transport.close()

    return SecureHttpTools
