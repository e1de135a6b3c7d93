"""`chatpapers db init`, `db status`, `db index` and `db refresh`."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from chatpapers.services import Services
from corpus import chunk_index, ingest_state, papers
from corpus.migrations import applied
from ground.console import IngestProgress, err, out
from ingest.prepare import TEXT_VERSION
from ingest.reextract import older_papers, reextract
from ingest.refresh import refresh

db_app = typer.Typer(help="Inspect and set up the corpus database.", no_args_is_help=True)


@db_app.command("init")
def db_init(ctx: typer.Context) -> None:
    """Create the database (embedded or DATABASE_URL) and apply pending schema migrations."""
    db = Services.of(ctx).db
    with db.connect(autocommit=True) as conn:
        versions = applied(conn)
    out.print(f"database ready: {db.describe()} (schema version {max(versions)})")


@db_app.command("status")
def db_status(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Papers, chunks, failed/empty PDFs, per-category watermarks and database size."""
    services = Services.of(ctx)
    db = services.db
    with db.connect(autocommit=True) as conn:
        status: dict = {"database": db.describe()}
        status.update(papers.corpus_counts(conn))
        status.update(ingest_state.status_summary(conn))
        status["older_text"] = ingest_state.count_older_text(conn, TEXT_VERSION)
        sizes = papers.storage_bytes(conn)
        status["db_size_bytes"] = sizes["database"]
        status["chunk_storage_bytes"] = sizes["chunks_table"] + sizes["chunks_indexes"]
        status["schema_version"] = max(applied(conn))
        status["chunk_index"] = chunk_index.chunk_index_exists(conn)
        built_with = chunk_index.index_parameters(conn)
        status["chunk_index_parameters"] = (
            {"m": built_with[0], "ef_construction": built_with[1]} if built_with else None
        )
    if as_json:
        print(json.dumps(status, indent=None))
        return
    out.print(f"database      {status['database']}")
    out.print(f"papers        {status['papers']}")
    out.print(f"chunks        {status['chunks']}")
    out.print(f"failed PDFs   {status['failed']}")
    out.print(f"empty PDFs    {status['empty']}")
    out.print(f"size          {status['db_size_bytes'] / 1e6:.1f} MB")
    if status["older_text"]:
        out.print(
            f"older text    {status['older_text']} papers hold text an older extraction made:"
            " chatpapers db refresh reads them again (--refetch: those fetched from arXiv too)",
            soft_wrap=True,
        )
    if not status["chunk_index"]:
        out.print(
            "chunk index   missing (a bulk load was interrupted): chatpapers db index builds it",
            soft_wrap=True,
        )
    elif built_with:
        wanted = (services.settings.index_m, services.settings.index_ef_construction)
        line = f"chunk index   HNSW m {built_with[0]}, ef_construction {built_with[1]}"
        if built_with != wanted:
            line += f" (settings ask for m {wanted[0]}, ef_construction {wanted[1]}:"
            line += " chatpapers db index --rebuild)"
        out.print(line, soft_wrap=True)
    for cat, mark in status["watermarks"].items():
        out.print(f"watermark     {cat}: {mark}")


@db_app.command("index")
def db_index(
    ctx: typer.Context,
    rebuild: Annotated[
        bool,
        typer.Option(
            "--rebuild",
            help="Build it again with CHATPAPERS_INDEX_M / CHATPAPERS_INDEX_EF_CONSTRUCTION while searches "
            "go on using the old one (needs the disk of a second index until it is done).",
        ),
    ] = False,
) -> None:
    """Build the chunk search index if it is missing (a bulk ingest interrupted while it built it;
    the next ingest would build it too; search is correct without it, only slower), or --rebuild it
    with other graph parameters (better recall for a slower build: see README, Scale)."""
    services = Services.of(ctx)
    settings = services.settings
    wanted = {"m": settings.index_m, "ef_construction": settings.index_ef_construction}
    with services.db.connect(autocommit=True) as conn:
        exists = chunk_index.chunk_index_exists(conn)
        if (rebuild or not exists) and not chunk_index.claim_index_work(conn):
            err.print(
                "a bulk ingest run or another index build is under way (it builds the chunk index"
                " when it ends): try again after it",
                soft_wrap=True,
            )
            raise typer.Exit(1)
        if exists and not rebuild:
            built_with = chunk_index.index_parameters(conn)
            out.print(
                f"the chunk index is there (m {built_with[0]}, ef_construction {built_with[1]})"
                if built_with
                else "the chunk index is there"
            )
            return
        what = f"m {wanted['m']}, ef_construction {wanted['ef_construction']}"
        with err.status(f"{'rebuilding' if exists else 'building'} the chunk index ({what}) ..."):
            if exists:
                seconds = chunk_index.rebuild_chunk_index(conn, settings.index_build_memory_mb, **wanted)
            else:
                seconds = chunk_index.build_chunk_index(conn, settings.index_build_memory_mb, **wanted)
    out.print(f"chunk index {'rebuilt' if exists else 'built'} in {seconds:.1f} s ({what})")


@db_app.command("refresh")
def db_refresh(
    ctx: typer.Context,
    arxiv: Annotated[
        bool,
        typer.Option("--arxiv/--no-arxiv", help="Ask arXiv for papers with an arXiv id (skipped offline)."),
    ] = True,
    everything: Annotated[
        bool,
        typer.Option("--all", help="Also papers ingested with metadata (arXiv still wins over the PDF)."),
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the corrections, store nothing.")] = False,
    text: Annotated[
        bool,
        typer.Option(
            "--text/--no-text",
            help="Read again the papers whose text an older extraction made, from the file or archive they "
            "came from (new text, chunks and vectors).",
        ),
    ] = True,
    refetch: Annotated[
        bool,
        typer.Option(
            "--refetch",
            help="... and download again from arXiv those fetched from there (3 s apart: about 1,200 papers "
            "an hour; a whole corpus takes days).",
        ),
    ] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar while texts are read again.")] = True,
) -> None:
    """Correct what earlier ingests stored: the text of papers an older extraction read (running
    headers inside sentences, math signs lost), titles, abstracts and authors of papers ingested
    from PDF files without metadata (read again from each PDF's first page, and from arXiv by id),
    and the full-text index of papers stored before full-text search existed."""
    services = Services.of(ctx)
    if text:
        older = older_papers(services.db)
        with IngestProgress("text read again", enabled=progress and not dry_run and bool(older)) as bar:
            again = reextract(services.settings, services.db, services.embedder, refetch=refetch,
                              dry_run=dry_run, progress=bar, older=older)  # fmt: skip
        if dry_run:
            out.print(f"{again.older} papers hold text an older extraction made (would be read again)")
        elif again.older:
            out.print(
                f"text read again for {again.reread} of {again.older} papers an older extraction read"
                + (f"; {len(again.missing)} whose PDF is gone or changed (kept)" if again.missing else "")
                + (f"; {len(again.failed)} that now fail or read empty (kept)" if again.failed else ""),
                soft_wrap=True,
            )
            if again.arxiv != "not asked":
                out.print(f"arXiv: {again.arxiv}", soft_wrap=True)
        if again.on_arxiv:
            hours = again.on_arxiv * services.settings.arxiv_delay_seconds / 3600
            out.print(
                f"{again.on_arxiv} papers fetched from arXiv keep their older text: db refresh --refetch"
                f" downloads them again (about {hours:.1f} h at arXiv's pace)",
                soft_wrap=True,
            )
    out.print("reading first pages again" + (" and asking arXiv by id" if arxiv else "") + " ...")
    report = refresh(
        services.settings,
        services.db,
        services.embedder,
        use_arxiv=arxiv,
        everything=everything,
        dry_run=dry_run,
    )
    for fix in report.corrections:
        out.print(f"  {fix.paper_id}: {fix.old_title!r} -> {fix.title!r} (from the {fix.source})")
    verb = "would correct" if dry_run else "corrected"
    out.print(
        f"{report.checked} papers checked: {verb} {len(report.corrections)}, {report.unchanged} already right"
        + (f", {len(report.unreadable)} whose PDF is gone" if report.unreadable else "")
    )
    if arxiv:
        out.print(f"arXiv: {report.arxiv}")
    if report.reindexed:
        out.print(f"full text indexed for {report.reindexed} papers stored before full-text search")


@db_app.command("sizing")
def db_sizing(
    ctx: typer.Context,
    ram_mb: Annotated[
        int | None,
        typer.Option(min=256, help="Size for a server with this much memory (MB); default: this machine."),
    ] = None,
    cores: Annotated[
        int | None, typer.Option(min=1, help="... and this many CPU cores; default: this machine.")
    ] = None,
) -> None:
    """The PostgreSQL settings chatpapers sizes for a machine, as postgresql.conf lines.

    The embedded server uses them at every start (overrides: CHATPAPERS_PG_RAM_MB,
    CHATPAPERS_PG_SETTINGS). For a server of your own (DATABASE_URL), paste them into its
    postgresql.conf (or run them as ALTER SYSTEM SET) and restart it."""
    from corpus.server_sizing import conf_text, sized_for

    settings = Services.of(ctx).settings
    overrides = settings.pg_settings if ram_mb is None and cores is None else None
    values = sized_for(ram_mb if ram_mb is not None else settings.pg_ram_mb, cores, overrides)
    print(conf_text(values), end="")
