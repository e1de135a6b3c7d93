"""A local stand-in for export.arxiv.org/api/query and arxiv.org/pdf, on 127.0.0.1.

- Queries that arXiv answered in `../shared/corpus/atom/arxiv.py_recorded_json` are replayed
  verbatim (status and body), e.g. id_list=abc -> the real HTTP 400 error feed.
- `cat:` queries get a feed built like arXiv's (Atom, opensearch totals, paging, newest update
  first) from `../shared/corpus/metadata.jsonl`; stat.ML papers count as cross-listed to cs.LG, as
  they almost always are on arXiv.
- /pdf/<id>v<N> serves the real PDF of that paper.
- Tests can script faults (`fail_next`), break the XML (`malformed`) and publish new versions.

Run by hand for a demo: `python -m tests.fake_arxiv --port 8765`.
"""

from __future__ import annotations

import argparse
import json
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse
from xml.sax.saxutils import escape

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


@dataclass
class FakePaper:
    paper_id: str
    version: int
    title: str
    abstract: str
    authors: list[str]
    categories: list[str]
    published: datetime
    updated: datetime
    pdf: Path


def _date(value: str | None) -> datetime | None:
    if not value:
        return None
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def load_papers(corpus: Path = CORPUS, folders: tuple[str, ...] = ("pdfs", "extra")) -> list[FakePaper]:
    papers = []
    for line in (corpus / "metadata.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["file"].split("/")[0] not in folders or not rec.get("arxiv_id") or not rec.get("version"):
            continue
        updated = _date(rec.get("version_date"))
        if updated is None:
            continue
        cats = list(rec.get("categories") or [rec["primary_category"]])
        if "stat.ML" in cats and "cs.LG" not in cats:
            cats.append("cs.LG")
        papers.append(
            FakePaper(
                paper_id=rec["arxiv_id"],
                version=int(str(rec["version"]).lstrip("v")),
                title=rec.get("title") or rec["arxiv_id"],
                abstract=rec.get("abstract") or "",
                authors=rec.get("authors") or [],
                categories=cats,
                published=_date(rec.get("published")) or updated,
                updated=updated,
                pdf=corpus / rec["file"],
            )
        )
    return papers


def _recorded(corpus: Path) -> dict[tuple, tuple[int, bytes]]:
    out = {}
    for f in sorted((corpus / "atom" / "arxiv.py_recorded_json").glob("*.json")):
        rec = json.loads(f.read_text())
        q = parse_qs(urlparse(rec["url"]).query)
        key = (
            q.get("search_query", [""])[0],
            q.get("id_list", [""])[0],
            q.get("start", ["0"])[0],
            q.get("max_results", ["10"])[0],
        )
        out[key] = (rec["status_code"], rec["body"].encode("utf-8"))
    return out


def _matches(category: str, wanted: str) -> bool:
    """arXiv's `cat:` semantics: 'cs.*' matches every cs subcategory, 'cs.CL' only itself."""
    return category == wanted or (wanted.endswith("*") and category.startswith(wanted[:-1]))


def _xml_text(value: str) -> str:
    # metadata abstracts keep pypdf artefacts, some of them characters XML 1.0 forbids
    return escape("".join(ch for ch in value if ch in "\t\n\r" or ord(ch) >= 0x20))


def atom_feed(entries: list[FakePaper], total: int, start: int, base_url: str) -> bytes:
    parts = [
        "<?xml version='1.0' encoding='UTF-8'?>",
        '<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">',
        "  <id>https://arxiv.org/api/fake</id>",
        "  <title>arXiv Query</title>",
        f"  <updated>{datetime.now(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}</updated>",
        f"  <opensearch:itemsPerPage>{len(entries)}</opensearch:itemsPerPage>",
        f"  <opensearch:totalResults>{total}</opensearch:totalResults>",
        f"  <opensearch:startIndex>{start}</opensearch:startIndex>",
    ]
    for p in entries:
        vid = f"{p.paper_id}v{p.version}"
        parts += [
            "  <entry>",
            f"    <id>http://arxiv.org/abs/{vid}</id>",
            f"    <title>{_xml_text(p.title)}</title>",
            f"    <updated>{p.updated.strftime('%Y-%m-%dT%H:%M:%SZ')}</updated>",
            f'    <link href="https://arxiv.org/abs/{vid}" rel="alternate" type="text/html"/>',
            f'    <link href="{base_url}/pdf/{vid}" rel="related" type="application/pdf" title="pdf"/>',
            f"    <summary>{_xml_text(p.abstract)}</summary>",
            *[f'    <category term="{c}" scheme="http://arxiv.org/schemas/atom"/>' for c in p.categories],
            f"    <published>{p.published.strftime('%Y-%m-%dT%H:%M:%SZ')}</published>",
            f'    <arxiv:primary_category term="{p.categories[0]}"/>',
            *[f"    <author>\n      <name>{_xml_text(a)}</name>\n    </author>" for a in p.authors],
            "  </entry>",
        ]
    parts.append("</feed>")
    return "\n".join(parts).encode("utf-8")


@dataclass
class FakeArxiv:
    papers: list[FakePaper] = field(default_factory=load_papers)
    corpus: Path = CORPUS
    fail_next: list[tuple] = field(default_factory=list)  # (status, headers[, body])
    malformed: bool = False
    requests: list[str] = field(default_factory=list)
    pdf_overrides: dict[str, Path] = field(default_factory=dict)  # 'idvN' -> file

    def __post_init__(self) -> None:
        self.recorded = _recorded(self.corpus)
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                fake._handle(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/api/query"

    @property
    def pdf_url(self) -> str:
        return f"{self.base_url}/pdf"

    def start(self) -> FakeArxiv:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reset(self, papers: list[FakePaper] | None = None) -> None:
        with self._lock:
            self.papers = papers if papers is not None else load_papers(self.corpus)
            self.fail_next.clear()
            self.malformed = False
            self.requests.clear()
            self.pdf_overrides.clear()

    def publish(self, paper: FakePaper, pdf: Path | None = None) -> None:
        """Add a paper or a new version of one (replacing the older entry, as arXiv's feed does)."""
        with self._lock:
            self.papers = [p for p in self.papers if p.paper_id != paper.paper_id] + [paper]
            if pdf is not None:
                self.pdf_overrides[f"{paper.paper_id}v{paper.version}"] = pdf

    # -- request handling ---------------------------------------------------------------------
    def _send(self, h: BaseHTTPRequestHandler, status: int, body: bytes, ctype: str, headers=None) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self.requests.append(h.path)
            fault = self.fail_next.pop(0) if self.fail_next else None
        if fault:
            status, headers, *body = fault
            self._send(h, status, body[0] if body else b"slow down", "text/plain", headers)
            return
        url = urlparse(h.path)
        if url.path.startswith("/pdf/"):
            self._pdf(h, url.path.removeprefix("/pdf/"))
        elif url.path == "/api/query":
            self._query(h, parse_qs(url.query))
        else:
            self._send(h, 404, b"not found", "text/plain")

    def _pdf(self, h: BaseHTTPRequestHandler, vid: str) -> None:
        path = self.pdf_overrides.get(vid)
        if path is None:
            match = [p for p in self.papers if f"{p.paper_id}v{p.version}" == vid]
            path = match[0].pdf if match else None
        if path is None or not path.exists():
            self._send(h, 404, b"no such paper", "text/plain")
            return
        self._send(h, 200, path.read_bytes(), "application/pdf")

    def _query(self, h: BaseHTTPRequestHandler, q: dict[str, list[str]]) -> None:
        if self.malformed:
            self._send(h, 200, b"<?xml version='1.0'?><feed><entry>broken", "application/atom+xml")
            return
        search = q.get("search_query", [""])[0]
        ids = q.get("id_list", [""])[0]
        start = int(q.get("start", ["0"])[0])
        size = int(q.get("max_results", ["10"])[0])
        key = (search, ids, str(start), str(size))
        if key in self.recorded:
            status, body = self.recorded[key]
            self._send(h, status, body, "application/atom+xml")
            return
        if ids and not search:
            wanted_ids = {i.split("v")[0] for i in ids.split(",")}
            with self._lock:
                hits = [p for p in self.papers if p.paper_id in wanted_ids]
            self._send(h, 200, atom_feed(hits[start : start + size], len(hits), start, self.base_url),
                       "application/atom+xml")  # fmt: skip
            return
        if search.startswith("cat:"):
            wanted = search.removeprefix("cat:")
            with self._lock:
                hits = [p for p in self.papers if any(_matches(c, wanted) for c in p.categories)]
            hits.sort(key=lambda p: p.updated, reverse=True)
            page = hits[start : start + size]
            self._send(h, 200, atom_feed(page, len(hits), start, self.base_url), "application/atom+xml")
            return
        self._send(h, 200, atom_feed([], 0, start, self.base_url), "application/atom+xml")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    fake = FakeArxiv()
    fake.server.server_close()
    fake.server = ThreadingHTTPServer(("127.0.0.1", args.port), fake.server.RequestHandlerClass)
    print(
        f"fake arXiv on {fake.base_url}: CHATPAPERS_ARXIV_API_URL={fake.api_url} "
        f"CHATPAPERS_ARXIV_PDF_URL={fake.pdf_url}",
        flush=True,
    )
    fake.server.serve_forever()


if __name__ == "__main__":
    main()
