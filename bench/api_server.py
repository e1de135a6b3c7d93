"""The web app as bench/api.py serves it: the real app and database, a scripted chat model.

python -m bench.api_server --database-url URL --port N [--listener tcp|untyped] [--token-ms 20]

`--listener untyped` binds the socket the way `serve` did before (protocol 0, so no TCP_NODELAY):
bench/api.py serves both side by side to measure what TCP_NODELAY changes.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import uvicorn

from agent.llm.scripted import RuleModel
from api.app import create_app
from api.server import listening_socket, uvicorn_config
from chatpapers.services import Services


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--listener", choices=["tcp", "untyped"], default="tcp")
    parser.add_argument("--token-ms", type=float, default=0.0, help="pause before each streamed word")
    args = parser.parse_args()
    # every benchmark user signs up from loopback: lift the per-address registration limit
    services = Services.from_environment(
        env_file=None, database_url=args.database_url, data_dir=args.data_dir, registrations_per_hour=100_000
    )
    services.embed_threads = 1  # as `chatpapers serve` does
    model = RuleModel(token_seconds=args.token_ms / 1000)
    app = create_app(services.settings, db=services.db, embedder=services.embedder, llm=lambda: model)
    if args.listener == "tcp":
        listener = listening_socket("127.0.0.1", args.port)
    else:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # protocol 0: no TCP_NODELAY
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", args.port))
    uvicorn.Server(uvicorn_config(app, services.settings, "127.0.0.1", args.port)).run(sockets=[listener])


if __name__ == "__main__":
    main()
