"""The state of one turn of the agent: fed by every tool result, read by the answer request and
the citations, returned with the final event (the eval runner reads its evidence from there)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent.tools.base import ToolResult
from corpus.ids import paper_of_chunk


class TurnState(BaseModel):
    level: str
    allowed: set[str] = Field(default_factory=set)  # citable in this chat: earlier turns and this one
    papers: list[str] = []  # papers tools returned in this turn, first seen first
    read: list[str] = []  # of those, papers a tool read inside (not only listed)
    titles: dict[str, str] = {}
    # paper -> the first, most relevant passage shown of it: by a tool that read the paper, by a
    # listing (where the paper says what its title and abstract say), or by an earlier turn
    read_passages: dict[str, str] = {}
    listed_passages: dict[str, str] = {}
    earlier_passages: dict[str, str] = {}
    evidence: list[str] = []  # what successful tools returned, as the model read it
    tokens_in: int = 0
    tokens_out: int = 0

    def record(self, result: ToolResult, lists_papers: bool, observation: str) -> None:
        ids = result.paper_ids()
        self.allowed.update(ids)
        self.papers.extend(p for p in ids if p not in self.papers)
        if not lists_papers:
            self.read.extend(p for p in ids if p not in self.read)
        for paper, title in result.titles().items():
            self.titles.setdefault(paper, title)
        passages = self.listed_passages if lists_papers else self.read_passages
        for chunk in result.chunk_ids():
            passages.setdefault(paper_of_chunk(chunk), chunk)
        self.evidence.append(observation)

    def count_tokens(self, tokens_in: int | None, tokens_out: int | None) -> None:
        self.tokens_in += tokens_in or 0
        self.tokens_out += tokens_out or 0

    def citable(self, n: int) -> list[tuple[str, str]]:
        """(paper, title) of the first `n` papers of this turn: offered to the answer to cite."""
        return [(p, self.titles.get(p, "")) for p in self.papers[:n]]

    def passages_for(self, cited: list[str]) -> dict[str, str]:
        """The passage each cited paper points at, best first: read, listed, earlier."""
        found = {}
        for paper in cited:
            for source in (self.read_passages, self.listed_passages, self.earlier_passages):
                if paper in source:
                    found[paper] = source[paper]
                    break
        return found
