"""One incremental arXiv category run: walk the feed to the watermark, ingest, move the watermark."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from corpus import ingest_state
from corpus.db import Database
from ingest.arxiv_api import ArxivClient
from ingest.pipeline import IngestPipeline, IngestReport
from ingest.sources import ArxivCategorySource


def ingest_category(
    pipeline: IngestPipeline,
    client: ArxivClient,
    db: Database,
    category: str,
    since: datetime | None = None,
    max_results: int | None = None,
    notify: Callable[[str], None] = lambda message: None,
) -> IngestReport:
    with db.connect(autocommit=True) as conn:
        watermark = ingest_state.get_watermark(conn, category)
    if watermark is None and since is None and max_results is None:
        max_results = pipeline.settings.first_run_max_results
        notify(
            f"first run for {category}: taking the newest {max_results} papers "
            "(use --max-results or --since for more)"
        )
    elif watermark is not None and since is None:
        notify(f"{category}: papers updated after {watermark.isoformat()}")
    source = ArxivCategorySource(client, category, watermark=watermark, since=since)
    report = pipeline.run(source, max_new=max_results)
    retry_from = [f.updated for f in report.failed if f.retryable and f.updated is not None]
    mark = source.next_watermark(retry_from)
    if mark is not None:
        with db.connect(autocommit=True) as conn:
            ingest_state.set_watermark(conn, category, mark)
    if report.new + report.updated + report.empty + len(report.failed) == 0:
        notify(f"{category}: no new papers")
    return report
