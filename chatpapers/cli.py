"""The `chatpapers` command: a thin dispatcher over the packages. Its callback builds the
services (settings, database, embedder, model; each lazily) once and hands them to the command."""

from __future__ import annotations

import signal
import sys
from typing import Annotated, NoReturn

import typer
from rich.markup import escape

from chatpapers.commands.chat import chat
from chatpapers.commands.db import db_app
from chatpapers.commands.evaluate import evaluate
from chatpapers.commands.export import export
from chatpapers.commands.inbox import inbox_app
from chatpapers.commands.ingest import ingest
from chatpapers.commands.interview import interview
from chatpapers.commands.serve import serve
from chatpapers.commands.users import users_app
from chatpapers.services import Services
from ground import __version__
from ground.console import err

app = typer.Typer(
    name="chatpapers",
    help="Chat with the arXiv computer-science literature. Configuration comes from environment "
    "variables or a .env file: DATABASE_URL, CHATPAPERS_DATA_DIR, ... (every setting, with its "
    "default: .env.example).",
    no_args_is_help=True,
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(db_app, name="db")
app.add_typer(users_app, name="users")
app.add_typer(inbox_app, name="inbox")
app.command("ingest")(ingest)
app.command("chat")(chat)
app.command("serve")(serve)
app.command("export")(export)
app.command("interview")(interview)
app.command("eval")(evaluate)


def _show_version(wanted: bool) -> None:
    """`--version`: the installed package's version (ground reads it from its metadata), printed
    before any service is built, so it answers even with a broken configuration."""
    if wanted:
        typer.echo(f"chatpapers {__version__}")
        raise typer.Exit()


@app.callback()
def build_services(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Show the version and exit."),
    ] = False,
) -> None:
    ctx.obj = Services.from_environment()


_terminated: list[int] = []


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM (`kill`, systemd, `docker stop`) takes Ctrl+C's orderly way out, KeyboardInterrupt:
    the open transaction rolls back, the worker stops and exit handlers run (the embedded
    PostgreSQL's); without a handler the process would just vanish."""
    _terminated.append(signum)
    raise KeyboardInterrupt


def _stopped() -> NoReturn:
    how = "terminated" if _terminated else "interrupted"
    err.print(
        f"{how} — nothing half-written is visible; run the same command again to resume", soft_wrap=True
    )
    sys.exit(143 if _terminated else 130)  # as shells report a job that SIGTERM / SIGINT ended


def main() -> None:
    """Entry point: user mistakes and unreachable services end with a message, never a traceback."""
    from pydantic import ValidationError

    from agent.llm.base import LLMError
    from corpus.db import DatabaseUnavailable
    from eval.runner import RunMismatch
    from ingest.arxiv_api import ArxivError
    from ingest.sources import SourceError

    signal.signal(signal.SIGTERM, _terminate)  # `serve` hands it and SIGINT to uvicorn while it runs
    try:
        code = app(standalone_mode=False)  # click returns typer.Exit's code here instead of raising
        if code == 130:  # what typer makes of a KeyboardInterrupt
            _stopped()
        if isinstance(code, int) and code:
            sys.exit(code)
    except (DatabaseUnavailable, ArxivError, SourceError, LLMError, RunMismatch) as exc:
        # escaped: messages quote paths and pip extras ('chatpapers[ray]') that are no markup;
        # one line, however long, so it reads (and greps) as one
        err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)
        sys.exit(1)
    except ValidationError as exc:  # a setting from the environment or .env that is not valid
        err.print(f"[red]error:[/red] invalid configuration: {exc}")
        sys.exit(2)
    except typer.Abort:
        err.print("aborted")
        sys.exit(130)
    except KeyboardInterrupt:
        _stopped()
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.TyperException as exc:  # usage errors: typer formats them itself
        show = getattr(exc, "show", None)
        if show is not None:
            show()
        else:
            err.print(f"[red]error:[/red] {exc}")
        sys.exit(getattr(exc, "exit_code", 2))


if __name__ == "__main__":
    main()
