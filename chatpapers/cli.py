"""The `chatpapers` command: a thin dispatcher over the packages."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from agent.cli import chat
from api.cli import serve
from chatpapers.console import err, out
from chatpapers.settings import Settings
from eval.cli import evaluate
from ingest.cli import ingest

app = typer.Typer(
    name="chatpapers",
    help="Chat with the arXiv computer-science literature. Configuration comes from environment "
    "variables or a .env file (see README): DATABASE_URL, CHATPAPERS_DATA_DIR, ...",
    no_args_is_help=True,
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False,
    add_completion=False,
)
db_app = typer.Typer(help="Inspect and set up the corpus database.", no_args_is_help=True)
app.add_typer(db_app, name="db")


app.command("ingest")(ingest)
app.command("chat")(chat)
app.command("serve")(serve)
app.command("eval")(evaluate)


@db_app.command("init")
def db_init() -> None:
    """Create the database (embedded or DATABASE_URL) and apply pending schema migrations."""
    from corpus.db import Database
    from corpus.migrations import applied

    db = Database(Settings())
    with db.connect(autocommit=True) as conn:
        versions = applied(conn)
    out.print(f"database ready: {db.describe()} (schema version {max(versions)})")


@db_app.command("status")
def db_status(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Papers, chunks, failed/empty PDFs, per-category watermarks and database size."""
    from corpus import ingest_state, papers
    from corpus.db import Database
    from corpus.migrations import applied

    db = Database(Settings())
    with db.connect(autocommit=True) as conn:
        status: dict = {"database": db.describe()}
        status.update(papers.corpus_counts(conn))
        status.update(ingest_state.status_summary(conn))
        sizes = papers.storage_bytes(conn)
        status["db_size_bytes"] = sizes["database"]
        status["chunk_storage_bytes"] = sizes["chunks_table"] + sizes["chunks_indexes"]
        status["schema_version"] = max(applied(conn))
    if as_json:
        print(json.dumps(status, indent=None))
        return
    out.print(f"database      {status['database']}")
    out.print(f"papers        {status['papers']}")
    out.print(f"chunks        {status['chunks']}")
    out.print(f"failed PDFs   {status['failed']}")
    out.print(f"empty PDFs    {status['empty']}")
    out.print(f"size          {status['db_size_bytes'] / 1e6:.1f} MB")
    for cat, mark in status["watermarks"].items():
        out.print(f"watermark     {cat}: {mark}")


def main() -> None:
    """Entry point: user mistakes and unreachable services end with a message, never a traceback."""
    from agent.llm.base import LLMError
    from corpus.db import DatabaseUnavailable
    from eval.runner import RunMismatch
    from ingest.arxiv_api import ArxivError
    from ingest.sources import SourceError

    try:
        code = app(standalone_mode=False)  # click returns typer.Exit's code here instead of raising
        if isinstance(code, int) and code:
            sys.exit(code)
    except (DatabaseUnavailable, ArxivError, SourceError, LLMError, RunMismatch) as exc:
        err.print(f"[red]error:[/red] {exc}")
        sys.exit(1)
    except typer.Abort:
        err.print("aborted")
        sys.exit(130)
    except KeyboardInterrupt:
        err.print("interrupted — nothing half-written is visible; run the same command again to resume")
        sys.exit(130)
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
