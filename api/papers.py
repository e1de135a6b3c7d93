"""Paper metadata and a passage with its neighbours: what the page shows for a citation."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status
from pydantic import BaseModel

from api.auth import CurrentUser, State
from api.fields import checked
from corpus import papers
from corpus.ids import abs_url, chunk_id, stored_paper_id
from corpus.models import ChunkHit, PaperRecord

router = APIRouter(prefix="/api/papers", tags=["papers"])


class Passage(BaseModel):
    paper_id: str
    title: str
    url: str
    chunk: ChunkHit
    prior: ChunkHit | None
    next: ChunkHit | None


def paper_id_of(text: str) -> str:
    pid = stored_paper_id(text) if checked(text) is None and len(text) <= 200 else None
    if pid is None:  # the value is not repeated: it may be anything
        raise HTTPException(status.HTTP_404_NOT_FOUND, "not an arXiv id (expected e.g. 1706.03762)")
    return pid


# Declared before the paper route: old-style ids contain a slash (cs/0112017), so both use `:path`.
@router.get("/{paper_id:path}/chunks/{seq}", response_model=Passage)
def passage(paper_id: str, seq: int, user: CurrentUser, state: State) -> Passage:
    """Chunk `seq` of a paper with the chunks just before and after it (null at either end)."""
    pid = paper_id_of(paper_id)
    with state.db.pooled() as conn:
        paper = papers.get_paper(conn, pid)
        chunk = papers.get_chunk(conn, pid, seq) if paper else None
        if paper is None or chunk is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no chunk {chunk_id(pid, seq)} in the corpus")
        prior = papers.get_chunk(conn, pid, seq - 1) if seq > 0 else None
        following = papers.get_chunk(conn, pid, seq + 1)
    return Passage(
        paper_id=pid, title=paper.title, url=abs_url(pid), chunk=chunk, prior=prior, next=following
    )


@router.get("/{paper_id:path}", response_model=PaperRecord)
def paper(paper_id: str, user: CurrentUser, state: State) -> PaperRecord:
    """A paper's metadata; the id may be written in any usual form (arXiv:1706.03762v5, a URL, ...)."""
    pid = paper_id_of(paper_id)
    with state.db.pooled() as conn:
        found = papers.get_paper(conn, pid)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"{pid} is not in the corpus")
    return found
