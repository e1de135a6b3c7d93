"""`chatpapers ingest`: arXiv categories, a folder of PDFs or arXiv's PDF tar archives into the
corpus."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from chatpapers.services import Services
from ground.console import IngestProgress, err, out
from ingest.arxiv_api import ArxivClient, category_query
from ingest.pipeline import IngestPipeline, IngestReport
from ingest.runs import ingest_category
from ingest.snapshot import backfill_snapshot
from ingest.sources import ArchiveProblem, PdfTarSource, SourceError, WorkItem, pdf_dir_items


class Engine(StrEnum):
    inprocess = "inprocess"
    ray = "ray"


def ingest(
    ctx: typer.Context,
    category: Annotated[
        list[str] | None,
        typer.Option(
            "--category",
            "-c",
            help="arXiv category: 'cs' means every cs.* subcategory; repeatable (-c cs.CL -c cs.LG).",
        ),
    ] = None,
    max_results: Annotated[
        int | None,
        typer.Option(min=1, help="At most this many new or updated papers per category in this run."),
    ] = None,
    since: Annotated[
        datetime | None,
        typer.Option(formats=["%Y-%m-%d"], help="Only papers updated on or after this date (YYYY-MM-DD)."),
    ] = None,
    pdf_dir: Annotated[
        Path | None, typer.Option(help="Ingest the PDFs in this folder instead of querying arXiv.")
    ] = None,
    pdf_tar: Annotated[
        Path | None,
        typer.Option(
            help="Ingest the PDFs inside arXiv's bulk tar archives (arXiv_pdf_2311_001.tar, ...): "
            "one .tar, or every .tar of a folder; read member by member, never unpacked."
        ),
    ] = None,
    metadata: Annotated[
        Path | None,
        typer.Option(
            help="JSON lines with arxiv_id, version, title, authors, abstract, categories, dates "
            "and `file` (name of the PDF) for --pdf-dir or --pdf-tar."
        ),
    ] = None,
    snapshot: Annotated[
        Path | None,
        typer.Option(
            help="Backfill paper metadata (no PDFs) from an arXiv metadata snapshot in JSON lines "
            "(the Kaggle arxiv-metadata-oai-snapshot format); combine with --category to filter."
        ),
    ] = None,
    engine: Annotated[
        Engine,
        typer.Option(
            help="inprocess: a worker process extracts while this one embeds (the default); ray: "
            "extraction as Ray tasks and embedding on Ray actors (one per GPU of the cluster); "
            "needs `pip install 'chatpapers[ray]'`."
        ),
    ] = Engine.inprocess,
    ray_address: Annotated[
        str | None,
        typer.Option(
            help="The Ray cluster for --engine ray: HOST:PORT of its head, or auto; unset: a local "
            "cluster on this machine's CPUs, started and stopped by the run."
        ),
    ] = None,
    embed_actors: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Embedding actors for --engine ray, each holding the model; every group of texts "
            "is split across them. Default: one per GPU of the cluster (one on CPUs only).",
        ),
    ] = None,
    force: Annotated[bool, typer.Option(help="Re-process papers even if this version is stored.")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    refresh_inboxes: Annotated[
        bool,
        typer.Option(
            help="At the end, learn every user's inbox ranker again and score the new papers for them."
        ),
    ] = True,
) -> None:
    """Fetch new arXiv papers (or local PDFs), extract their text, chunk, embed and store them.

    Runs are incremental: each category remembers the newest paper it has handled (its watermark)
    and the next run stops there; papers already stored at the same version are skipped, so running
    the same input twice adds nothing. A newer arXiv version replaces the old chunks atomically, and
    a paper whose text an older release extracted is read again (`chatpapers db refresh` reads
    those this run does not meet). PDFs that cannot be used (encrypted, image-only, not a PDF) are
    recorded with a reason and the run goes on. Safe to interrupt at any moment: rerun to finish.

    Examples:

    * `chatpapers ingest --category cs --max-results 50`
    * `chatpapers ingest -c cs.CL -c cs.LG --since 2026-11-01`
    * `chatpapers ingest --pdf-dir ~/papers --metadata ~/papers/meta.jsonl`
    * `chatpapers ingest --pdf-tar ~/arxiv-tars --category cs`
    """
    services = Services.of(ctx)
    settings, db, embedder = services.settings, services.db, services.embedder
    categories = tuple(category or ())
    if pdf_dir is not None and pdf_tar is not None:
        raise typer.BadParameter("one source at a time: --pdf-dir or --pdf-tar", param_hint="--pdf-tar")
    if pdf_dir is None and pdf_tar is None and not categories:
        raise typer.BadParameter(
            "say what to ingest: --category cs (arXiv), --pdf-dir DIR or --pdf-tar DIR_OR_FILE",
            param_hint="--category",
        )
    if metadata is not None and pdf_dir is None and pdf_tar is None:
        raise typer.BadParameter("--metadata goes with --pdf-dir or --pdf-tar", param_hint="--metadata")
    if ray_address is not None and engine is not Engine.ray:
        raise typer.BadParameter("--ray-address goes with --engine ray", param_hint="--ray-address")
    if embed_actors is not None and engine is not Engine.ray:
        raise typer.BadParameter("--embed-actors goes with --engine ray", param_hint="--embed-actors")
    if engine is Engine.ray:
        from ingest.ray_engine import import_ray

        import_ray()  # one line telling how to install it, before anything starts
    for cat in categories:
        category_query(cat)  # validates before anything starts
    since_utc = since.replace(tzinfo=UTC) if since else None

    items: list[WorkItem] | PdfTarSource | None = None
    problems: list[ArchiveProblem] = []
    if pdf_dir is not None:
        items = pdf_dir_items(pdf_dir, metadata, categories)
    elif pdf_tar is not None:
        with err.status(f"reading the archive headers in {pdf_tar} ..."):
            items = PdfTarSource(pdf_tar, metadata, categories)
        problems = items.problems

    err.print(f"[dim]database: {db.describe()}[/dim]")
    _ = db.url  # start the embedded server / migrate now, so failures surface before any work

    if snapshot is not None:
        if not snapshot.is_file():
            raise SourceError(f"snapshot file not found: {snapshot}")
        with err.status(f"backfilling metadata from {snapshot.name} ..."):
            result = backfill_snapshot(db, embedder, snapshot, categories)
        out.print(
            f"snapshot: {result.added} papers added, {result.skipped} already stored, "
            f"{result.outside_category} outside the category, {result.invalid} unusable lines",
            soft_wrap=True,
        )
        return

    total = IngestReport()
    run_started = datetime.now(UTC)
    with contextlib.ExitStack() as stack:
        if engine is Engine.ray:
            from ingest.ray_engine import RayIngestPipeline

            where = ray_address or "a local Ray cluster"
            with err.status(f"starting the Ray engine on {where} (the model loads on its actor) ..."):
                pipeline: IngestPipeline = stack.enter_context(
                    RayIngestPipeline(
                        settings,
                        db,
                        embedder,
                        force=force,
                        notify=err.print,
                        address=ray_address,
                        embed_actors=embed_actors,
                    )
                )
        else:
            pipeline = IngestPipeline(settings, db, embedder, force=force, notify=err.print)
        bar = stack.enter_context(IngestProgress("ingest", enabled=progress))
        pipeline.progress = bar
        _run(pipeline, items, categories, since_utc, max_results, total)
    _print_summary(total, problems)
    if refresh_inboxes:
        _refresh_inboxes(services, run_started)


def _refresh_inboxes(services: Services, since: datetime) -> None:
    """The run's new papers reach each user's inbox ranked by a model that knows today's ratings
    and chats."""
    from inbox.refresh import refresh_all

    try:
        with services.db.connect() as conn:
            done = refresh_all(conn, since)
    except Exception as exc:  # the papers are in; a failed refresh must not fail the run
        err.print(f"[yellow]warning:[/yellow] inboxes not refreshed: {escape(str(exc))}", soft_wrap=True)
        return
    if done.users:
        out.print(
            f"inboxes: {done.users} user(s) refreshed ({done.trained} with a trained ranker), "
            f"{done.new_papers} new paper(s) scored; {done.train_seconds:.2f} s training, "
            f"{done.score_seconds:.3f} s scoring",
            soft_wrap=True,
        )


def _run(
    pipeline: IngestPipeline,
    items: list[WorkItem] | PdfTarSource | None,
    categories: tuple[str, ...],
    since_utc: datetime | None,
    max_results: int | None,
    total: IngestReport,
) -> None:
    if items is not None:
        try:
            total.merge(pipeline.run(items, max_new=max_results))
        finally:
            if isinstance(items, PdfTarSource):
                items.close()
        return
    client = ArxivClient(pipeline.settings)
    try:
        for cat in categories:
            total.merge(
                ingest_category(pipeline, client, pipeline.db, cat, since_utc, max_results, notify=err.print)
            )
    finally:
        client.close()


def _print_summary(report: IngestReport, problems: list[ArchiveProblem] | None = None) -> None:
    table = Table(title="ingest summary", show_header=True, header_style="bold")
    for col in ("new", "updated", "skipped", "empty", "failed", "chunks", "seconds", "chunks/s"):
        table.add_column(col, justify="right")
    rate = report.chunks / report.seconds if report.seconds > 0 else 0.0
    table.add_row(
        str(report.new),
        str(report.updated),
        str(report.skipped),
        str(report.empty),
        str(len(report.failed)),
        str(report.chunks),
        f"{report.seconds:.1f}",
        f"{rate:.1f}",
    )
    out.print(table)
    if report.skip_reasons:
        out.print(
            "skipped: " + ", ".join(f"{n} {why}" for why, n in sorted(report.skip_reasons.items())),
            soft_wrap=True,
        )
    for failure in report.failed[:20]:
        out.print(
            f"[red]failed[/red] {failure.paper_id} ({failure.location}): {failure.reason}", soft_wrap=True
        )
    if len(report.failed) > 20:
        out.print(f"... and {len(report.failed) - 20} more (chatpapers db status --json)")
    for problem in (problems or [])[:20]:
        out.print(f"[yellow]archive[/yellow] {problem.location}: {problem.reason}", soft_wrap=True)
    if problems and len(problems) > 20:
        out.print(f"... and {len(problems) - 20} more archive problems")
    if report.index is not None and report.index.build_seconds is not None:
        out.print(
            f"chunk index dropped for the bulk load and built again in {report.index.build_seconds:.1f} s",
            soft_wrap=True,
        )
