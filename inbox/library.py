"""A reference library imported as 👍: a BibTeX or RIS export (Zotero, Mendeley, JabRef, ...).
Entries are matched to the corpus by arXiv id (eprint, URL, arXiv DOI, journal/note), then by
title; what does not match is reported with the reason. Parsing is the libraries' job
(bibtexparser, rispy); what a file holds is never trusted beyond text."""

from __future__ import annotations

import re

import bibtexparser
import psycopg
import rispy
from pydantic import BaseModel
from pylatexenc.latex2text import LatexNodes2Text

from corpus import interests
from corpus.ids import find_arxiv_id, parse_arxiv_id

MAX_ENTRIES = 5000
MIN_TITLE_KEY = 16  # letters and digits a title needs to be matched by title alone
MAX_BYTES = 5 * 1024 * 1024
_ARXIV_DOI = re.compile(r"10\.48550/arxiv\.(\S+)", re.IGNORECASE)
_ID_FIELDS = ("eprint", "arxivid", "doi", "url", "journal", "note", "howpublished")
_LATEX = re.compile(r"[{}\\]|\$")


class LibraryError(ValueError):
    """The file is not a BibTeX or RIS export (the message says what is wrong)."""


class Entry(BaseModel):
    title: str
    arxiv_id: str | None = None

    @property
    def key(self) -> str | None:
        """The title to match by, when it says enough ("Introduction" does not)."""
        key = title_key(self.title)
        return key if len(key) >= MIN_TITLE_KEY else None


class Matched(BaseModel):
    title: str
    paper_id: str
    by: str  # "arXiv id" or "title"


class Unmatched(BaseModel):
    title: str
    reason: str


class Imported(BaseModel):
    format: str
    entries: int
    matched: list[Matched]
    unmatched: list[Unmatched]
    unreadable: int  # blocks of the file that are not an entry (a syntax error)
    rated: int  # new 👍 (papers rated before keep their rating)


def plain(latex: str) -> str:
    """A BibTeX title as text: {\\em Deep} -> Deep, {\\"o} -> ö (pylatexenc, tolerant of errors)."""
    try:
        text = LatexNodes2Text().latex_to_text(latex)
    except Exception:  # a title too broken to parse keeps its letters
        text = _LATEX.sub("", latex)
    return " ".join(text.split())


def title_key(title: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", plain(title).lower())


def _arxiv_of(values: list[str]) -> str | None:
    for value in values:
        doi = _ARXIV_DOI.search(value)
        parsed = parse_arxiv_id(doi.group(1)) if doi else parse_arxiv_id(value)
        if parsed is None and "arxiv" in value.lower():
            parsed = find_arxiv_id(value)
        if parsed is not None:
            return parsed.paper_id
    return None


def _bibtex(text: str) -> tuple[list[Entry], int]:
    library = bibtexparser.parse_string(text)
    if not library.entries:
        what = "entries that could not be read" if library.failed_blocks else "no entries"
        raise LibraryError(f"not a BibTeX file this can read: {what}")
    out = []
    for entry in library.entries:
        fields = {k.lower(): str(f.value) for k, f in entry.fields_dict.items()}
        title = plain(fields.get("title", ""))
        keyed = [
            fields.get(k, "") for k in ("eprint", "arxivid", "doi", "url", "journal", "note", "howpublished")
        ]
        out.append(Entry(title=title, arxiv_id=_arxiv_of([v for v in keyed if v])))
    return out, len(library.failed_blocks)


def _ris(text: str) -> list[Entry]:
    try:
        records = rispy.loads(text)
    except Exception as exc:  # rispy raises plain IOError / ValueError / KeyError on a broken file
        raise LibraryError(f"not a RIS file this can read: {exc}") from None
    if not records:
        raise LibraryError("not a RIS file this can read: no entries")
    out = []
    for record in records:
        title = " ".join(str(record.get("title") or record.get("primary_title") or "").split())
        keyed = [str(record.get("doi", ""))] + [str(u) for u in record.get("urls", []) or []]
        keyed += [str(record.get(k, "")) for k in ("journal_name", "notes", "number")]
        out.append(Entry(title=title, arxiv_id=_arxiv_of([v for v in keyed if v])))
    return out


def parse(text: str) -> tuple[str, list[Entry], int]:
    """("bibtex" | "ris", entries, blocks that could not be read). LibraryError when the file is
    neither format, has no readable entry, or is too large."""
    if len(text) > MAX_BYTES:  # characters: a latin-1 file decoded is not larger than its bytes
        raise LibraryError(f"the file is larger than {MAX_BYTES // (1024 * 1024)} MB")
    # counted before parsing: a file of many tiny entries costs the parsers a minute
    starts = len(re.findall(r"^TY  - |@\s*\w+\s*[{(]", text, re.MULTILINE))
    if starts > MAX_ENTRIES:
        raise LibraryError(f"about {starts} entries; at most {MAX_ENTRIES} are imported at once")
    if re.search(r"^TY  - ", text, re.MULTILINE):
        kind, entries, unreadable = "ris", _ris(text), 0
    elif re.search(r"@\s*\w+\s*[{(]", text):
        kind, (entries, unreadable) = "bibtex", _bibtex(text)
    else:
        raise LibraryError("not a BibTeX (@article{...}) or RIS (TY  - ...) export")
    if len(entries) > MAX_ENTRIES:
        raise LibraryError(f"{len(entries)} entries; at most {MAX_ENTRIES} are imported at once")
    return kind, entries, unreadable


def import_library(
    conn: psycopg.Connection, owner: str, kind: str, entries: list[Entry], unreadable: int
) -> Imported:
    """Matches parsed entries (`parse`, before any connection is taken) to the corpus and rates the
    matched papers 👍 (source 'library')."""
    keys = [e.key for e in entries]  # pylatexenc once per entry
    known = interests.existing(conn, [e.arxiv_id for e in entries if e.arxiv_id])
    by_title = interests.find_by_titles(conn, sorted({k for k in keys if k}))
    matched: list[Matched] = []
    unmatched: list[Unmatched] = []
    for e, key in zip(entries, keys, strict=True):
        if e.arxiv_id and e.arxiv_id in known:
            matched.append(Matched(title=e.title, paper_id=e.arxiv_id, by="arXiv id"))
        elif key and key in by_title:
            matched.append(Matched(title=e.title, paper_id=by_title[key], by="title"))
        elif e.arxiv_id:
            unmatched.append(Unmatched(title=e.title, reason=f"arXiv {e.arxiv_id} is not in this corpus"))
        else:
            unmatched.append(Unmatched(title=e.title, reason="no arXiv id, and no paper with this title"))
    rated = interests.rate_many(conn, owner, sorted({m.paper_id for m in matched}), 1, "library")
    return Imported(
        format=kind,
        entries=len(entries),
        matched=matched,
        unmatched=unmatched,
        unreadable=unreadable,
        rated=rated,
    )
