"""Where papers come from: the arXiv API by category, or a folder of PDFs (+ optional metadata)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from corpus.ids import find_arxiv_id, parse_arxiv_id
from corpus.models import PaperMeta
from ingest.arxiv_api import ArxivClient


class SourceError(RuntimeError):
    """A problem with what the user asked for (missing folder, bad metadata file)."""


@dataclass
class WorkItem:
    meta: PaperMeta  # paper_id '' until known (a local PDF without an id in its name or metadata)
    source: str  # 'arxiv' | 'pdf-dir'
    location: str
    fetch: Callable[[], bytes | Path]
    sha256: str | None = None
    categories_filter: tuple[str, ...] = ()


def category_matches(categories: list[str], wanted: tuple[str, ...]) -> bool:
    """'cs' matches every cs.*; 'cs.CL' matches itself."""
    if not wanted:
        return True
    return any(c == w or c.startswith(w + ".") for c in categories for w in wanted)


def canonical_pdf_url(meta: PaperMeta) -> str:
    """Stored for people: always arxiv.org, whatever host the PDF was fetched from."""
    version = f"v{meta.version}" if meta.version else ""
    return f"https://arxiv.org/pdf/{meta.paper_id}{version}"


class ArxivCategorySource:
    """Walks one category query newest-first down to the previous watermark (or --since)."""

    def __init__(
        self, client: ArxivClient, category: str, watermark: datetime | None, since: datetime | None
    ) -> None:
        self.client = client
        self.category = category
        self.watermark = watermark
        self.since = since
        self.newest: datetime | None = None
        self.reached_end = False

    def __iter__(self) -> Iterator[WorkItem]:
        for meta in self.client.iter_category(self.category):
            if meta.updated is not None:
                if self.since is not None and meta.updated < self.since:
                    break
                if self.since is None and self.watermark is not None and meta.updated <= self.watermark:
                    break
                self.newest = max(self.newest or meta.updated, meta.updated)
            if not category_matches(meta.categories, (self.category,)):
                continue
            meta.pdf_url = canonical_pdf_url(meta)
            yield WorkItem(
                meta=meta,
                source="arxiv",
                location=self.client.pdf_url(meta),
                fetch=lambda m=meta: self.client.download_pdf(m),
            )
        # Reached on a natural end (feed exhausted or boundary hit), not when the consumer stops early.
        self.reached_end = True

    def next_watermark(self, retry_from: list[datetime]) -> datetime | None:
        """Advance to the newest paper seen, unless papers failed for reasons worth retrying: then
        stop just above the oldest of them, so the next run walks down to it again."""
        if self.newest is None or not (self.reached_end or self.watermark is None):
            return None
        mark = self.newest
        if retry_from:
            mark = min(mark, min(retry_from) - timedelta(microseconds=1))
        if self.watermark is not None and mark <= self.watermark:
            return None
        return mark


def _parse_date(value: object) -> datetime | None:
    if not value or not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def load_metadata(path: Path) -> dict[str, dict]:
    """JSON lines keyed by file name (field `file`) and by arXiv id (`arxiv_id` or `id`)."""
    if not path.is_file():
        raise SourceError(f"metadata file not found: {path}")
    index: dict[str, dict] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SourceError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        if record.get("file"):
            index[Path(record["file"]).name] = record
        rid = record.get("arxiv_id") or record.get("id")
        if rid:
            index.setdefault(f"id:{rid}", record)
    return index


def meta_from_record(record: dict, fallback_id: str, fallback_version: int | None) -> PaperMeta:
    rid = record.get("arxiv_id") or record.get("id")
    parsed = parse_arxiv_id(str(rid)) if rid else None
    version = record.get("version")
    if isinstance(version, str):
        version = int(version.lstrip("v")) if version.lstrip("v").isdigit() else None
    authors = record.get("authors") or []
    if isinstance(authors, str):  # the Kaggle snapshot writes one comma-separated string
        authors = [a.strip() for a in authors.replace(" and ", ", ").split(",") if a.strip()]
    categories = record.get("categories") or []
    if isinstance(categories, str):
        categories = categories.split()
    return PaperMeta(
        paper_id=parsed.paper_id if parsed else fallback_id,
        version=version or (parsed.version if parsed else None) or fallback_version,
        title=" ".join(str(record["title"]).split()) if record.get("title") else None,
        authors=authors,
        abstract=" ".join(str(record["abstract"]).split()) if record.get("abstract") else None,
        categories=categories,
        primary_category=record.get("primary_category") or (categories[0] if categories else None),
        published=_parse_date(record.get("published")),
        updated=_parse_date(record.get("version_date") or record.get("updated") or record.get("update_date")),
    )


def pdf_dir_items(
    folder: Path, metadata: Path | None = None, categories: tuple[str, ...] = ()
) -> list[WorkItem]:
    """Every *.pdf under `folder` (sorted). The arXiv id comes from the metadata, else the file name,
    else (later, after extraction) the arXiv stamp on page 1, else a stable local id."""
    if not folder.is_dir():
        raise SourceError(f"PDF folder not found: {folder}")
    index = load_metadata(metadata) if metadata else {}
    items: list[WorkItem] = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix.lower() != ".pdf":
            continue
        from_name = find_arxiv_id(path.name)
        record = index.get(path.name) or (index.get(f"id:{from_name.paper_id}") if from_name else None)
        if record:
            meta = meta_from_record(
                record, from_name.paper_id if from_name else "", from_name and from_name.version
            )
        elif from_name:
            meta = PaperMeta(paper_id=from_name.paper_id, version=from_name.version)
        else:
            meta = PaperMeta(paper_id="")
        if categories and meta.categories and not category_matches(meta.categories, categories):
            continue
        items.append(
            WorkItem(
                meta=meta,
                source="pdf-dir",
                location=str(path.resolve()),
                fetch=lambda p=path: p,
                categories_filter=categories,
            )
        )
    return items
