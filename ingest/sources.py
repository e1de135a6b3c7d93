"""Where papers come from: the arXiv API by category, a folder of PDFs, or arXiv's bulk PDF tar
archives (+ optional metadata for both)."""

from __future__ import annotations

import json
import re
import tarfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import BaseModel

from corpus.ids import ArxivId, find_arxiv_id, parse_arxiv_id
from corpus.models import PaperMeta
from ingest.arxiv_api import ArxivClient


class SourceError(RuntimeError):
    """A problem with what the user asked for (missing folder, bad metadata file)."""


class ItemUnreadable(RuntimeError):
    """One item's bytes could not be read (a member of a truncated archive): recorded as a
    retryable failure of that item, and the run goes on."""


# Sources whose bytes are local: read before the skip check, so the check can compare hashes.
LOCAL_SOURCES = ("pdf-dir", "pdf-tar")


@dataclass
class WorkItem:
    meta: PaperMeta  # paper_id '' until known (a local PDF without an id in its name or metadata)
    source: str  # 'arxiv' | 'pdf-dir' | 'pdf-tar'
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
        meta = _meta_for_name(path.name, index)
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


# arXiv's tars name papers of the old scheme without the slash: 0001/cs0001001v1.pdf
_OLD_IN_NAME_RE = re.compile(
    r"^(?P<archive>[a-z][a-z-]*(?:\.[A-Za-z]{2})?)(?P<number>\d{7})(?P<v>v\d+)?\.pdf$"
)


def _id_from_name(name: str) -> ArxivId | None:
    found = find_arxiv_id(name)
    if found:
        return found
    old = _OLD_IN_NAME_RE.match(name)
    return parse_arxiv_id(f"{old['archive']}/{old['number']}{old['v'] or ''}") if old else None


def _meta_for_name(name: str, index: dict[str, dict]) -> PaperMeta:
    """What is known of a PDF from its file name and the metadata index."""
    from_name = _id_from_name(name)
    record = index.get(name) or (index.get(f"id:{from_name.paper_id}") if from_name else None)
    if record:
        found = from_name.paper_id if from_name else ""
        return meta_from_record(record, found, from_name and from_name.version)
    if from_name:
        return PaperMeta(paper_id=from_name.paper_id, version=from_name.version)
    return PaperMeta(paper_id="")


class ArchiveProblem(BaseModel):
    """Something wrong with an archive as a whole, or a member that is not a PDF: said in the
    run's summary (no paper to record it against)."""

    location: str
    reason: str


class _Archive:
    """One open tar file shared by the items of its members. Members are read one at a time,
    seeking to each member's data: nothing is unpacked to disk and only one PDF is in memory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tar: tarfile.TarFile | None = None
        self._lock = threading.Lock()

    def scan(self) -> tuple[list[tarfile.TarInfo], str | None]:
        """The members (headers only, read sequentially), and why the scan stopped early if it did."""
        members: list[tarfile.TarInfo] = []
        size = self.path.stat().st_size
        try:
            with tarfile.open(self.path, mode="r:*") as tar:
                for member in tar:
                    members.append(member)
                    if member.isfile() and member.offset_data + member.size > size:
                        return members, f"archive truncated in {member.name}"
        except (tarfile.TarError, EOFError, OSError) as exc:
            # tarfile's message for a file of no known format lists every method it tried
            if not members:
                return [], "not a tar archive, or damaged before its first member"
            return members, f"archive damaged after {members[-1].name} ({str(exc).splitlines()[0]})"
        return members, None

    def read(self, member: tarfile.TarInfo) -> bytes:
        with self._lock:
            try:
                if self._tar is None:
                    # one open file for all of its members (closed by close()), not one per PDF
                    self._tar = tarfile.open(self.path, mode="r:*")  # noqa: SIM115
                handle = self._tar.extractfile(member)
                if handle is None:
                    raise ItemUnreadable(f"{member.name} is not a regular file")
                return handle.read()
            except (tarfile.TarError, EOFError, OSError) as exc:
                raise ItemUnreadable(f"cannot read {member.name} from {self.path.name}: {exc}") from None

    def close(self) -> None:
        with self._lock:
            if self._tar is not None:
                self._tar.close()
                self._tar = None


def read_stored_pdf(location: str) -> bytes | None:
    """The PDF at a stored paper's location: a file (`--pdf-dir`) or `/path/archive.tar:member`
    (`--pdf-tar`, read from the archive without unpacking it); None when it cannot be read."""
    path = Path(location)
    if path.is_file():
        return path.read_bytes()
    cut = location.lower().find(".tar:")
    if cut < 0:
        return None
    try:
        with tarfile.open(location[: cut + 4], mode="r:*") as tar:
            member = tar.extractfile(location[cut + 5 :])
            return member.read() if member is not None else None
    except (KeyError, tarfile.TarError, EOFError, OSError):
        return None


class PdfTarSource:
    """The PDFs inside arXiv bulk tar archives (`arXiv_pdf_2311_001.tar` holding
    `2311/2311.00001v1.pdf`, ...): every `.tar` of a folder (sorted), or one archive. Headers are
    scanned up front, so the items (and their ids) are known before any PDF is read; each member's
    bytes are read when the pipeline takes it."""

    def __init__(self, path: Path, metadata: Path | None = None, categories: tuple[str, ...] = ()) -> None:
        if path.is_dir():
            archives = sorted(p for p in path.iterdir() if p.is_file() and p.name.lower().endswith(".tar"))
            if not archives:
                raise SourceError(f"no .tar archives in {path}")
        elif path.is_file():
            archives = [path]
        else:
            raise SourceError(f"PDF archive not found: {path}")
        index = load_metadata(metadata) if metadata else {}
        self.items: list[WorkItem] = []
        self.problems: list[ArchiveProblem] = []
        self._archives = [_Archive(p) for p in archives]
        self._reading: _Archive | None = None
        for archive in self._archives:
            members, broken = archive.scan()
            for member in members:
                where = f"{archive.path.resolve()}:{member.name}"
                if not member.isfile():
                    continue
                if not member.name.lower().endswith(".pdf"):
                    self.problems.append(ArchiveProblem(location=where, reason="not a PDF, skipped"))
                    continue
                meta = _meta_for_name(Path(member.name).name, index)
                if categories and meta.categories and not category_matches(meta.categories, categories):
                    continue
                if meta.paper_id and not meta.paper_id.startswith("local:"):
                    meta.pdf_url = canonical_pdf_url(meta)
                self.items.append(
                    WorkItem(
                        meta=meta,
                        source="pdf-tar",
                        location=where,
                        fetch=lambda a=archive, m=member: self._read(a, m),
                        categories_filter=categories,
                    )
                )
            if broken:
                self.problems.append(ArchiveProblem(location=str(archive.path.resolve()), reason=broken))

    def _read(self, archive: _Archive, member: tarfile.TarInfo) -> bytes:
        # Items come archive by archive: the one before is done with, and a folder of thousands
        # of archives kept open would run out of file handles.
        if self._reading is not None and self._reading is not archive:
            self._reading.close()
        self._reading = archive
        return archive.read(member)

    def __iter__(self) -> Iterator[WorkItem]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def close(self) -> None:
        for archive in self._archives:
            archive.close()
