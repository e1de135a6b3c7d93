"""Typed records that cross the store boundary."""

from __future__ import annotations

import unicodedata
from datetime import datetime

from pydantic import BaseModel, Field, field_validator

from corpus.ids import chunk_id


class PaperMeta(BaseModel):
    """What is known about a paper before its PDF is read."""

    paper_id: str
    version: int | None = None
    title: str | None = None
    authors: list[str] = Field(default_factory=list)
    abstract: str | None = None
    categories: list[str] = Field(default_factory=list)
    primary_category: str | None = None
    published: datetime | None = None
    updated: datetime | None = None
    pdf_url: str | None = None

    @field_validator("title", "abstract")
    @classmethod
    def _ligatures_unfolded(cls, text: str | None) -> str | None:
        # Metadata copied from a PDF keeps its ligatures ("modiﬁcations": 37 of the 66 abstracts of
        # the shared corpus's metadata.jsonl): no query word meets them in the lexical index, and
        # MiniLM reads the word as unknown in the paper's vector. The chunks are unfolded alike
        # (ingest/chunking.py).
        return unicodedata.normalize("NFKC", text) if text else text


class ChunkRecord(BaseModel):
    seq: int
    text: str
    page: int | None = None
    char_start: int | None = None


class ChunkHit(BaseModel):
    paper_id: str
    seq: int
    text: str
    page: int | None
    score: float  # cosine similarity

    @property
    def chunk_id(self) -> str:
        return chunk_id(self.paper_id, self.seq)


class PaperHit(BaseModel):
    paper_id: str
    title: str
    score: float


class PaperRecord(BaseModel):
    """A stored paper as the agent and the API show it."""

    paper_id: str
    version: int | None
    title: str
    authors: list[str]
    abstract: str | None
    categories: list[str]
    primary_category: str | None
    published: datetime | None
    updated: datetime | None
    pdf_url: str | None
    n_chunks: int
