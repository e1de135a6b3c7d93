"""What every tool is: a pydantic input model, a description the LLM reads, and a function that
returns a typed result with `to_observation()`. Tools never raise into the loop: problems are
`ToolError`s that the loop turns into observations the model can react to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Generic, Protocol, TypeVar

import psycopg
from pydantic import BaseModel

from corpus.embedder import Embedder
from corpus.ids import parse_arxiv_id


class ToolError(Exception):
    """A problem the model should read and work around (unknown id, first chunk, ...)."""


class TextModel(Protocol):
    """The part of an LLM that tools need: one prompt in, text out."""

    name: str

    def complete(self, system: str, user: str, max_tokens: int = 400) -> str: ...


class ToolResult(BaseModel):
    def to_observation(self) -> str:
        raise NotImplementedError

    def paper_ids(self) -> list[str]:
        """Papers this result shows, so answers may cite them."""
        return []

    def chunk_ids(self) -> list[str]:
        """Passages this result shows, most relevant first: what a citation of the paper points at."""
        return []


@dataclass
class ToolContext:
    connect: Callable[[], psycopg.Connection]
    embedder: Embedder
    llm: TextModel | None = None
    level: str = "MSc"
    notes: dict = field(default_factory=dict)


In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=ToolResult)


class Tool(Generic[In, Out]):
    name: ClassVar[str]
    description: ClassVar[str]
    input_model: ClassVar[type[BaseModel]]

    def run(self, ctx: ToolContext, args: In) -> Out:
        raise NotImplementedError


def resolve_paper_id(text: str) -> str:
    """Any common form ('2301.01234v2', 'arXiv:2301.01234', 'cs/0112017', a local id) -> stored id."""
    text = text.strip()
    if text.startswith("local:"):
        return text
    parsed = parse_arxiv_id(text)
    if parsed is None:
        raise ToolError(f"'{text}' is not an arXiv id (expected e.g. 1706.03762 or cs/0112017)")
    return parsed.paper_id


def parse_chunk_id(text: str) -> tuple[str, int]:
    paper, sep, seq = text.strip().rpartition("#")
    if not sep or not seq.isdigit():
        raise ToolError(f"'{text}' is not a chunk id (expected PAPER_ID#N, e.g. 1706.03762#12)")
    return resolve_paper_id(paper), int(seq)


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
