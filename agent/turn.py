"""The state of one turn of the agent: fed by every tool result, read by the answer request and
the citations, returned with the final event (the eval runner reads its evidence from there)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agent.tools.base import ToolResult
from agent.tools.search import PaperList
from corpus.ids import paper_of_chunk
from corpus.models import PaperRecord


class TurnState(BaseModel):
    level: str
    allowed: set[str] = Field(default_factory=set)  # citable in this chat: earlier turns and this one
    papers: list[str] = []  # papers tools returned in this turn, first seen first
    read: list[str] = []  # of those, papers a tool read inside (not only listed)
    records: dict[str, PaperRecord] = {}
    focus: list[str] = []  # the earlier paper(s) this question refers to ("the second one")
    # paper -> the first, most relevant passage shown of it: by a tool that read the paper, by a
    # listing (where the paper says what its title and abstract say), or by an earlier turn
    read_passages: dict[str, str] = {}
    listed_passages: dict[str, str] = {}
    earlier_passages: dict[str, str] = {}
    evidence: list[str] = []  # what successful tools returned, as the model read it
    # text -> its MiniLM query vector, for the turn's grounding checks (a draft's and the answer's)
    query_vectors: dict[str, Any] = {}
    results: list[ToolResult] = []
    tokens_in: int = 0
    tokens_out: int = 0

    def record(self, result: ToolResult, lists_papers: bool, observation: str) -> None:
        ids = result.paper_ids()
        self.allowed.update(ids)
        self.papers.extend(p for p in ids if p not in self.papers)
        if not lists_papers:
            self.read.extend(p for p in ids if p not in self.read)
        for record in result.records():
            self.records.setdefault(record.paper_id, record)
        passages = self.listed_passages if lists_papers else self.read_passages
        for chunk in result.chunk_ids():
            passages.setdefault(paper_of_chunk(chunk), chunk)
        self.evidence.append(observation)

    def count_tokens(self, tokens_in: int | None, tokens_out: int | None) -> None:
        self.tokens_in += tokens_in or 0
        self.tokens_out += tokens_out or 0

    def sources(self, n: int) -> list[str]:
        """The papers offered to the answer to cite, numbered in this order: the papers the
        question refers to, then those the turn's tools showed."""
        return list(dict.fromkeys([*self.focus, *self.papers]))[:n]

    def quotable(self, first: list[str]) -> list[tuple[str, str]]:
        """The papers' own words the turn's tools returned: of the papers `first` if any, else all."""
        found = [q for result in self.results for q in result.quotable()]
        preferred = [q for q in found if q[0] in first]
        return preferred or found

    def search_result(self) -> PaperList | None:
        """The turn's (first) search: the papers it found, with their scores."""
        return next((r for r in self.results if isinstance(r, PaperList)), None)

    def title(self, paper_id: str) -> str:
        record = self.records.get(paper_id)
        return record.title if record else ""

    def passages_for(self, cited: list[str]) -> dict[str, str]:
        """The passage each cited paper points at, best first: read, listed, earlier."""
        found = {}
        for paper in cited:
            for source in (self.read_passages, self.listed_passages, self.earlier_passages):
                if paper in source:
                    found[paper] = source[paper]
                    break
        return found
