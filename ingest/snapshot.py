"""Metadata backfill from the arXiv metadata snapshot (JSON lines, the Kaggle/OAI field set).

Papers get their metadata and a title+abstract vector for paper search, without PDFs or chunks;
a later PDF ingest of the same paper fills in the chunks. Rows that came from PDFs are never
overwritten by the snapshot."""

from __future__ import annotations

import json
from collections.abc import Iterator
from email.utils import parsedate_to_datetime
from pathlib import Path

from pydantic import BaseModel

from corpus import papers
from corpus.db import Database
from corpus.embedder import Embedder
from corpus.ids import parse_arxiv_id
from corpus.models import PaperMeta
from ingest.sources import SourceError, canonical_pdf_url, category_matches


class SnapshotReport(BaseModel):
    added: int = 0
    skipped: int = 0
    outside_category: int = 0
    invalid: int = 0


def snapshot_records(path: Path) -> Iterator[PaperMeta | None]:
    """One PaperMeta per line (None for a line that is not a usable record)."""
    if not path.is_file():
        raise SourceError(f"snapshot file not found: {path}")
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                parsed = parse_arxiv_id(str(rec["id"]))
                versions = rec.get("versions") or []
                yield PaperMeta(
                    paper_id=parsed.paper_id if parsed else "",
                    version=len(versions) or None,
                    title=" ".join(rec["title"].split()),
                    authors=[
                        a.strip()
                        for a in rec.get("authors", "").replace(" and ", ", ").split(",")
                        if a.strip()
                    ],
                    abstract=" ".join((rec.get("abstract") or "").split()) or None,
                    categories=(rec.get("categories") or "").split(),
                    primary_category=((rec.get("categories") or "").split() or [None])[0],
                    published=parsedate_to_datetime(versions[0]["created"]) if versions else None,
                    updated=parsedate_to_datetime(versions[-1]["created"]) if versions else None,
                )
            except (KeyError, TypeError, ValueError, AttributeError):
                yield None


def backfill_snapshot(
    db: Database, embedder: Embedder, path: Path, categories: tuple[str, ...] = (), batch_size: int = 256
) -> SnapshotReport:
    report = SnapshotReport()
    batch: list[PaperMeta] = []
    with db.connect(autocommit=True) as conn:

        def flush() -> None:
            stored = papers.stored_ids(conn, [m.paper_id for m in batch])
            todo = [m for m in batch if m.paper_id not in stored]
            report.skipped += len(batch) - len(todo)
            if todo:
                vectors = embedder.embed([f"{m.title}. {m.abstract or ''}".strip() for m in todo])
                with conn.transaction():
                    papers.copy_metadata_only(conn, todo, [canonical_pdf_url(m) for m in todo], vectors)
                report.added += len(todo)
            batch.clear()

        for meta in snapshot_records(path):
            if meta is None or not meta.paper_id:
                report.invalid += 1
                continue
            if not category_matches(meta.categories, categories):
                report.outside_category += 1
                continue
            batch.append(meta)
            if len(batch) >= batch_size:
                flush()
        if batch:
            flush()
    return report
