"""A polite client for the arXiv API (Atom) and PDF host.

arXiv asks for one request every 3 seconds from a single connection; every request here (API
pages and PDFs alike) goes through one rate limiter, and 429/5xx/timeouts are retried with
exponential backoff that honours Retry-After."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from email.utils import parsedate_to_datetime
from xml.etree.ElementTree import Element, ParseError

import defusedxml.ElementTree as SafeET
import httpx

from corpus.ids import parse_arxiv_id
from corpus.models import PaperMeta
from ground.settings import Settings

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
_CATEGORY_RE = re.compile(r"^[a-z][a-z-]*(\.[A-Za-z][A-Za-z-]*)?$")
_RETRY_STATUS = {429, 500, 502, 503, 504}


class ArxivError(RuntimeError):
    """A problem talking to arXiv, worded for people."""


def category_query(category: str) -> str:
    """'cs' -> every cs.* subcategory; 'cs.CL' -> just that one."""
    if not _CATEGORY_RE.match(category):
        raise ArxivError(f"not an arXiv category: {category!r} (examples: cs, cs.CL, stat.ML)")
    return f"cat:{category}.*" if "." not in category else f"cat:{category}"


class PoliteHttp:
    """GETs spaced at least `delay` seconds apart, with retries. `sleep`/`clock` are injectable so
    tests can check the spacing without waiting."""

    def __init__(
        self,
        settings: Settings,
        client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.delay = settings.arxiv_delay_seconds
        self.max_retries = settings.arxiv_max_retries
        self.client = client or httpx.Client(
            timeout=settings.arxiv_timeout_seconds,
            headers={"User-Agent": settings.user_agent},
            follow_redirects=True,
        )
        self.sleep = sleep
        self.clock = clock
        self._last: float | None = None
        self.requests = 0

    def _wait_turn(self) -> None:
        if self._last is not None:
            wait = self._last + self.delay - self.clock()
            if wait > 0:
                self.sleep(wait)
        self._last = self.clock()

    def get(self, url: str, params: dict | None = None) -> httpx.Response:
        attempt = 0
        while True:
            self._wait_turn()
            self.requests += 1
            try:
                response = self.client.get(url, params=params)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                problem = f"{type(exc).__name__}: {exc}"
                retry_after = None
            else:
                if response.status_code not in _RETRY_STATUS:
                    return response
                problem = f"HTTP {response.status_code}"
                retry_after = _retry_after_seconds(response.headers.get("Retry-After"))
            if attempt >= self.max_retries:
                raise ArxivError(f"giving up on {url} after {attempt + 1} attempts ({problem})")
            backoff = max(retry_after or 0.0, self.delay * (2**attempt))
            self.sleep(backoff)
            attempt += 1

    def close(self) -> None:
        self.client.close()


def _retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _text(el: Element | None) -> str | None:
    if el is None or el.text is None:
        return None
    return " ".join(el.text.split())


def _time(el: Element | None) -> datetime | None:
    raw = _text(el)
    return datetime.fromisoformat(raw.replace("Z", "+00:00")) if raw else None


def parse_entry(entry: Element) -> PaperMeta:
    raw_id = _text(entry.find(f"{ATOM}id")) or ""
    parsed = parse_arxiv_id(raw_id.replace("http://", "https://"))
    if parsed is None:
        raise ArxivError(f"arXiv returned an entry with an unexpected id: {raw_id!r}")
    primary = entry.find(f"{ARXIV}primary_category")
    return PaperMeta(
        paper_id=parsed.paper_id,
        version=parsed.version,
        title=_text(entry.find(f"{ATOM}title")),
        abstract=_text(entry.find(f"{ATOM}summary")),
        authors=[_text(a.find(f"{ATOM}name")) or "" for a in entry.findall(f"{ATOM}author")],
        categories=[c.get("term", "") for c in entry.findall(f"{ATOM}category") if c.get("term")],
        primary_category=primary.get("term") if primary is not None else None,
        published=_time(entry.find(f"{ATOM}published")),
        updated=_time(entry.find(f"{ATOM}updated")),
    )


def parse_feed(body: bytes) -> tuple[int, list[PaperMeta]]:
    """(total results, entries). arXiv reports bad queries as an entry titled 'Error'."""
    try:
        root = SafeET.fromstring(body)
    except ParseError as exc:
        raise ArxivError(f"arXiv returned malformed XML ({exc})") from exc
    if root.tag != f"{ATOM}feed":
        raise ArxivError(f"arXiv returned XML that is not an Atom feed (root element {root.tag!r})")
    entries = root.findall(f"{ATOM}entry")
    for entry in entries:
        if "/api/errors" in (_text(entry.find(f"{ATOM}id")) or ""):
            raise ArxivError(f"arXiv rejected the query: {_text(entry.find(f'{ATOM}summary'))}")
    total_text = _text(root.find(f"{OPENSEARCH}totalResults"))
    total = int(total_text) if total_text and total_text.isdigit() else len(entries)
    return total, [parse_entry(e) for e in entries]


class ArxivClient:
    def __init__(self, settings: Settings, http: PoliteHttp | None = None) -> None:
        self.settings = settings
        self.http = http or PoliteHttp(settings)

    def query(
        self,
        search_query: str | None = None,
        id_list: list[str] | None = None,
        start: int = 0,
        max_results: int = 100,
        sort_by: str = "lastUpdatedDate",
    ) -> tuple[int, list[PaperMeta]]:
        params: dict[str, str | int] = {"start": start, "max_results": max_results}
        if search_query:
            params.update(search_query=search_query, sortBy=sort_by, sortOrder="descending")
        if id_list:
            params["id_list"] = ",".join(id_list)
        response = self.http.get(self.settings.arxiv_api_url, params=params)
        if response.status_code == 400:
            try:
                parse_feed(response.content)
            except ArxivError as exc:
                raise ArxivError(f"{exc} (HTTP 400)") from None
            raise ArxivError("arXiv answered HTTP 400 (bad request) to the query")
        if response.status_code != 200:
            raise ArxivError(f"arXiv answered HTTP {response.status_code} for {response.url}")
        return parse_feed(response.content)

    def iter_category(self, category: str, empty_page_retries: int = 3) -> Iterator[PaperMeta]:
        """Newest (by last update) first, page by page, until the feed ends or the caller stops."""
        search = category_query(category)
        start, size = 0, self.settings.arxiv_page_size
        while True:
            total, entries = self.query(search_query=search, start=start, max_results=size)
            retries = 0
            # The API is known to return an empty page now and then although more results exist.
            while not entries and start < total and retries < empty_page_retries:
                retries += 1
                total, entries = self.query(search_query=search, start=start, max_results=size)
            if not entries:
                return
            yield from entries
            start += len(entries)
            if start >= total:
                return

    def pdf_url(self, meta: PaperMeta) -> str:
        version = f"v{meta.version}" if meta.version else ""
        return f"{self.settings.arxiv_pdf_url.rstrip('/')}/{meta.paper_id}{version}"

    def download_pdf(self, meta: PaperMeta) -> bytes:
        url = self.pdf_url(meta)
        response = self.http.get(url)
        if response.status_code != 200:
            raise ArxivError(f"PDF download failed: HTTP {response.status_code} for {url}")
        return response.content

    def close(self) -> None:
        self.http.close()
