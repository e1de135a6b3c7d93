"""Interview a paper: a journalist agent asks the questions a newcomer would not know to ask, and
the author agent answers each one from the paper's own passages only, citing them. The person may
put their own question instead of the journalist's at any round.

One round at a time (`PaperInterview.round`), from the transcript so far: the terminal and the
web page keep the transcript and drive the rounds, so the server holds no interview state."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Literal

from pydantic import BaseModel, Field

from agent import tracing
from agent.events import Token
from agent.grounding import check, unsupported
from agent.llm.base import ChatMessage, Stopped
from agent.streaming import streamed
from agent.tools import ToolContext
from agent.tools.base import shorten
from agent.tools.paper import InformationFromPaper, InformationInput, known_paper
from corpus.ids import abs_url
from corpus.models import PaperRecord
from corpus.text import Storable

Asker = Literal["journalist", "you"]
DEFAULT_ROUNDS = 5
QUESTION_TOKENS = 60  # one sentence
ANSWER_TOKENS = 180  # three or four sentences: about 20 s on 2 cores
PASSAGES = 3
PASSAGE_CHARS = 1000  # a whole chunk: cut shorter, the figures the answer needed were cut off and invented
EARLIER_ROUNDS = 3  # the journalist rereads the last few answers; all earlier questions, briefly
SAME_QUESTION = 0.85  # MiniLM similarity above which a question repeats an earlier one

# What a newcomer would not know to ask, by round: the journalist moves through them in order
# (a 1.5B model asked the same kind of question every round when left to choose).
ANGLES = (
    "the problem the paper solves and why it was hard before",
    "the key idea of the method, in plain words",
    "an assumption the method relies on, and when it would fail",
    "what the main result means in practice, and how it was measured",
    "a limitation the authors admit or an open question they leave",
    "how it compares with the earlier approach it replaces",
    "what a reader should try or read next",
)


class Passage(BaseModel):
    n: int
    chunk_id: Storable
    page: int | None = None
    text: Storable


class Exchange(BaseModel):
    """One round: the question (whose), the author's answer and the passages it was written from."""

    asker: Asker
    question: Storable = Field(min_length=1, max_length=2000)
    answer: Storable = Field("", max_length=20000)
    passages: list[Passage] = Field(default_factory=list, max_length=12)
    unsupported: list[Storable] = Field(default_factory=list, max_length=50)  # sentences no passage supports
    stopped: bool = False


class QuestionAsked(BaseModel):
    type: Literal["question"] = "question"
    asker: Asker
    text: str


class AnswerGiven(BaseModel):
    type: Literal["answer"] = "answer"
    exchange: Exchange


InterviewEvent = QuestionAsked | Token | AnswerGiven


class PaperInterview:
    def __init__(self, ctx: ToolContext, paper_id: str, level: str = "MSc") -> None:
        if ctx.llm is None:
            raise ValueError("an interview needs a language model")
        self.ctx = ctx
        self.model = ctx.llm
        self.paper: PaperRecord = known_paper(ctx, paper_id)  # ToolError: not in the corpus, no text
        self.level = level

    def round(
        self, earlier: list[Exchange], question: str | None = None, stop: threading.Event | None = None
    ) -> Iterator[InterviewEvent]:
        """One round: the journalist's question (or the person's own `question`), then the author's
        answer streamed as tokens, then the whole exchange."""
        with tracing.span("chatpapers.interview.round", **{"chatpapers.paper_id": self.paper.paper_id}):
            asker: Asker = "you" if question and question.strip() else "journalist"
            if asker == "journalist":
                question = self._journalist(earlier, stop)
            assert question is not None
            yield QuestionAsked(asker=asker, text=question.strip())
            yield from self._author(asker, question.strip(), stop)

    def _journalist(self, earlier: list[Exchange], stop: threading.Event | None) -> str:
        angle = ANGLES[len(earlier) % len(ANGLES)]
        asked = "\n".join(f"- {e.question}" for e in earlier) or "- (none yet)"
        recent = "\n".join(f"Q: {e.question}\nA: {shorten(e.answer, 300)}" for e in earlier[-EARLIER_ROUNDS:])
        messages = [
            ChatMessage(
                role="system",
                content="You are a science journalist interviewing an author of a research paper for "
                f"readers at {self.level} level. Ask exactly one short question (one sentence, under 25 "
                "words) that a newcomer would not think to ask but should. Write only the question.",
            ),
            ChatMessage(
                role="user",
                content=f'Paper: "{self.paper.title}"\n'
                f"Abstract: {shorten(self.paper.abstract or '', 900)}\n\n{recent}\n\n"
                f"Questions already asked:\n{asked}\n\n"
                f"Ask a new question about {angle}.",
            ),
        ]
        if stop is not None and stop.is_set():
            raise Stopped
        text = _one_question(self.model.chat(messages, max_tokens=QUESTION_TOKENS, role="tools").text)
        # a 1.5B journalist asks the same question again more often than not: then the angle's own
        if not text or self._repeats(text, [e.question for e in earlier]):
            return f"Could you explain {angle}?"
        return text

    def _repeats(self, question: str, earlier: list[str]) -> bool:
        if not earlier:
            return False
        target = self.ctx.embedder.embed_query(question)
        return max(float(self.ctx.embedder.embed_query(q) @ target) for q in earlier) >= SAME_QUESTION

    def _author(self, asker: Asker, question: str, stop: threading.Event | None) -> Iterator[InterviewEvent]:
        found = InformationFromPaper().run(
            self.ctx, InformationInput(paper_id=self.paper.paper_id, query=question, k=PASSAGES)
        )
        passages = [
            Passage(n=n, chunk_id=c.chunk_id, page=c.page, text=c.text) for n, c in enumerate(found.chunks, 1)
        ]
        numbered = "\n\n".join(f"[{p.n}] (page {p.page}) {shorten(p.text, PASSAGE_CHARS)}" for p in passages)
        messages = [
            ChatMessage(
                role="system",
                content=f'You are an author of the paper "{self.paper.title}", interviewed for readers at '
                f"{self.level} level. Answer in two to four sentences using only the numbered passages "
                "from the paper, and cite each passage you use as [1], [2]. If the passages do not "
                "answer the question, say so plainly instead of guessing.",
            ),
            ChatMessage(role="user", content=f"Passages:\n{numbered}\n\nQuestion: {question}"),
        ]
        exchange = Exchange(asker=asker, question=question, passages=passages)
        try:
            completion = yield from streamed(
                lambda on_token: self.model.chat(
                    messages, max_tokens=ANSWER_TOKENS, on_token=on_token, role="tools"
                ),
                stop,
            )
            exchange.answer = completion.text.strip()
        except Stopped as stopped:
            exchange.answer, exchange.stopped = stopped.text.strip(), True
        if not exchange.stopped:
            self._check(exchange)
        # passages the answer cites first; the others stay listed (they were read)
        cited = [int(n) for n in re.findall(r"\[(\d+)\]", exchange.answer) if 0 < int(n) <= len(passages)]
        exchange.passages.sort(key=lambda p: (p.n not in cited, p.n))
        yield AnswerGiven(exchange=exchange)

    def _check(self, exchange: Exchange) -> None:
        """The chat's grounding check on the author's answer: sentences no passage supports are
        flagged; an answer that cites nothing gets the passages that support it."""
        texts = [p.text for p in exchange.passages]
        _, missing = unsupported(exchange.answer, texts, self.ctx.embedder)
        exchange.unsupported = [c.text for c in missing]
        if exchange.answer and not re.search(r"\[\d+\]", exchange.answer):
            holding = [
                p.n
                for p in exchange.passages
                if check(exchange.answer, [p.text], self.ctx.embedder).supported
            ]
            if holding:
                exchange.answer = exchange.answer.rstrip() + " " + "".join(f"[{n}]" for n in holding)


_LEAD = re.compile(r"^\s*(?:\*\*)?(?:Q(?:uestion)?\s*\d*[:.]|Journalist:|-)\s*(?:\*\*)?")


def _one_question(text: str) -> str:
    """The model's question alone: its first line ending in '?', without a 'Q:' or quotes."""
    for line in text.strip().splitlines():
        line = re.sub(r"^\s*(?:\*\*)?(?:Q(?:uestion)?\s*\d*[:.]|Journalist:|-)\s*(?:\*\*)?", "", line).strip(
            ' "*'
        )
        if line.endswith("?") and len(line) > 8:
            return line
    first = text.strip().split("\n")[0].strip(' "*')
    return first if len(first) > 8 else ""


def to_markdown(paper: PaperRecord, exchanges: list[Exchange]) -> str:
    """The transcript: each question (whose), the author's answer, and the passages it read."""
    lines = [
        f"# Interview: {paper.title}",
        "",
        f"arXiv:{paper.paper_id} · {abs_url(paper.paper_id)}",
        "",
        "_The journalist and the author are chatpapers' agents; every answer is written only from the "
        "passages listed under it._",
        "",
    ]
    for i, e in enumerate(exchanges, 1):
        who = "You" if e.asker == "you" else "Journalist"
        lines += [f"## {i}. {who}: {e.question}", "", f"**Author:** {e.answer or '_(no answer)_'}", ""]
        if e.stopped:
            lines += ["_(stopped: unfinished)_", ""]
        if e.unsupported:
            lines += ["_Not supported by the passages below:_", "", *(f"- {u}" for u in e.unsupported), ""]
        for p in e.passages:
            page = f", page {p.page}" if p.page else ""
            lines.append(f"> [{p.n}] ({p.chunk_id}{page}) {shorten(p.text, 500)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
