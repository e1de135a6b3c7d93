"""What a turn emits, in order. The terminal chat, the SSE stream and the eval runner all consume
these same events."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from agent.turn import TurnState


class LevelDecided(BaseModel):
    type: Literal["level"] = "level"
    level: str
    reason: str


class StepStarted(BaseModel):
    type: Literal["step_started"] = "step_started"
    index: int
    thought: str
    tool: str
    arguments: dict[str, Any]


class StepFinished(BaseModel):
    type: Literal["step_finished"] = "step_finished"
    index: int
    thought: str = ""  # the step's thought again: a saved step has only this event
    tool: str
    arguments: dict[str, Any]
    observation: str  # a digest; the model saw the full text
    duration_ms: float
    error: bool = False
    chunk_ids: list[str] = []  # passages the tool showed, most relevant first


class Token(BaseModel):
    type: Literal["token"] = "token"
    text: str


class Source(BaseModel):
    """A numbered source of an answer, as its card shows it."""

    n: int
    paper_id: str
    title: str
    authors: list[str] = []
    year: int | None = None
    url: str
    passage: str | None = None  # the chunk id the citation points at


class Grounding(BaseModel):
    """How much of an answer its passages support: sentences that state something checkable, and
    those of them no cited or returned passage supports."""

    checked: int
    supported: int
    unsupported: list[str] = []
    # The revision: the draft's sentences no passage supported are left out of the answer shown
    # (listed here), and passages are quoted when too little of the draft held.
    left_out: list[str] = []
    quoted: bool = False
    draft_checked: int | None = None
    draft_supported: int | None = None


class Final(BaseModel):
    type: Literal["final"] = "final"
    answer: str
    level: str
    citations: list[str]
    removed_citations: list[str] = []
    passages: dict[str, str] = {}  # cited paper -> the chunk id the citation points at
    steps: list[StepFinished] = []
    tokens_in: int | None = None
    tokens_out: int | None = None
    forced: bool = False  # the step cap or a broken model ended the loop
    abstained: bool = False  # the corpus does not cover the question, and the answer says so
    stopped: bool = False  # the person stopped it: the answer is what had been written
    sources: list[Source] = []  # the cited papers, numbered as the answer cites them
    grounding: Grounding | None = None
    model: str | None = None  # which model wrote it, and how long the whole turn took: set by the
    seconds: float | None = None  # chat session, shown under the answer and saved with it
    question_id: int | None = None  # the saved question and answer (set by the chat session):
    message_id: int | None = None  # what an edit or a regeneration of this turn names
    # Everything the turn gathered (evidence, papers, passages): for the caller, not the wire.
    state: TurnState | None = Field(default=None, exclude=True)


class ErrorEvent(BaseModel):
    type: Literal["error"] = "error"
    message: str


AgentEvent = Annotated[
    LevelDecided | StepStarted | StepFinished | Token | Final | ErrorEvent, Field(discriminator="type")
]
