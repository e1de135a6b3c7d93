"""Scores of one answer: readability (Flesch-Kincaid, Coleman-Liau, distance from the level's
target grade) and RAGAS (answer relevancy, context relevance, faithfulness, their harmonic mean).

RAGAS runs fully offline: its "collections" metrics ask the judge for structured output, which
any configured chat model gives through `RagasJudge` (the local model with a JSON-schema grammar,
so even a 1.5B model answers in the format the metric prompts expect), and the embeddings are the
local MiniLM."""

from __future__ import annotations

import asyncio
import math
import os
import re
import time
from typing import Any, TypeVar

from pydantic import BaseModel

from agent.level import TARGET_GRADE
from agent.llm.base import ChatMessage, ChatModel
from agent.llm.bounds import bounded
from agent.llm.json_text import json_object
from agent.readability import coleman_liau, flesch_kincaid
from corpus.embedder import Embedder

JUDGE_CONTEXT_CHARS = 6000  # what the judge reads of the retrieved contexts: fits a small model's window
# Bounds of the judge's answers (see agent.llm.bounds; one faithfulness call had repeated a
# statement until its token budget ran out). Reasons are not scored: room for a short one only.
REASON_CHARS = 100
TEXT_CHARS = 300  # a generated question, an answer's statement
MAX_ITEMS = 8  # faithfulness checks at most the first 8 statements of an answer
# A link's text may hold brackets of its own: the agent cites as "[[1]](https://arxiv.org/abs/ID)".
_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])+)\]\((?:https?://)?[^()\s]+\)")
# A URL ends before a closing bracket and a sentence's last mark: eating "). " merged two sentences
# into one and raised every cited answer's grade by several years (Table II of 2026-12-05).
_URL = re.compile(r"https?://[^\s()\[\]<>]*[^\s()\[\]<>.,;:!?]")
_CITE = re.compile(r"\[?arXiv:[\w./-]+\]?")
_MARKER = re.compile(r"\[\[?\d+(?:\s*[,–-]\s*\d+)*\]?\]")  # [1], [[2]], [1, 3]: not words


def plain_text(answer: str) -> str:
    """The prose of an answer: links, URLs, arXiv ids, citation numbers and the Sources line would
    skew the grades."""
    kept = [line for line in answer.splitlines() if not line.strip().lower().startswith("sources:")]
    text = _LINK.sub(r"\1", "\n".join(kept))
    text = _URL.sub("", text)
    text = _CITE.sub("", text)
    text = _MARKER.sub("", text)
    text = re.sub(r"[ \t]+([.,;:!?])", r"\1", text)  # "error [1]." -> "error."
    return re.sub(r"[*_`#>]", "", text).strip()


class Readability(BaseModel):
    question_fk: float
    question_cl: float
    answer_fk: float | None
    answer_cl: float | None
    target: float
    fk_distance: float | None  # answer FK minus the level's target grade


def readability(question: str, answer: str, level: str) -> Readability:
    prose = plain_text(answer)
    fk = flesch_kincaid(prose) if prose else None
    return Readability(
        question_fk=flesch_kincaid(question),
        question_cl=coleman_liau(question),
        answer_fk=fk,
        answer_cl=coleman_liau(prose) if prose else None,
        target=TARGET_GRADE[level],
        fk_distance=None if fk is None else fk - TARGET_GRADE[level],
    )


class JudgeCall(BaseModel):
    output: str  # the response model the metric asked for
    seconds: float
    tokens_in: int | None = None
    tokens_out: int | None = None
    reply: str | None = None  # the judge's JSON, so a surprising score can be traced to its verdicts


class RagasScores(BaseModel):
    answer_relevancy: float | None = None
    context_relevance: float | None = None
    faithfulness: float | None = None
    ragas: float | None = None  # harmonic mean of the three; None when one is missing
    error: str | None = None
    judge_calls: list[JudgeCall] = []  # where the scoring time went


def harmonic_mean(values: list[float | None]) -> float | None:
    if not values or any(v is None or math.isnan(v) for v in values):
        return None
    if any(v <= 0 for v in values):  # type: ignore[operator]
        return 0.0
    return len(values) / sum(1.0 / v for v in values)  # type: ignore[operator]


T = TypeVar("T", bound=BaseModel)


def _ragas_base():
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    from ragas.embeddings.base import BaseRagasEmbedding
    from ragas.llms.base import InstructorBaseRagasLLM

    return InstructorBaseRagasLLM, BaseRagasEmbedding


def make_judge(model: ChatModel, max_tokens: int = 1200):
    """A ragas LLM over any chat model: the metric's response model becomes the JSON schema."""
    base, _ = _ragas_base()

    class RagasJudge(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            self.model = model
            self.calls: list[JudgeCall] = []

        def generate(self, prompt: str, response_model: type[T]) -> T:
            schema = bounded(
                response_model.model_json_schema(), TEXT_CHARS, MAX_ITEMS, per_name={"reason": REASON_CHARS}
            )
            t0 = time.perf_counter()
            reply = model.chat(
                [ChatMessage(role="user", content=prompt)],
                json_schema=schema,
                max_tokens=max_tokens,
                # a local model judges in its own context: alternating with the agent in one
                # would make every answer re-read the agent's whole system prompt
                role="judge",
            )
            text = json_object(reply.text)
            self.calls.append(
                JudgeCall(
                    output=response_model.__name__,
                    seconds=time.perf_counter() - t0,
                    tokens_in=reply.tokens_in,
                    tokens_out=reply.tokens_out,
                    reply=text,
                )
            )
            return response_model.model_validate_json(text)

        async def agenerate(self, prompt: str, response_model: type[T]) -> T:
            return self.generate(prompt, response_model)

    return RagasJudge()


def make_embeddings(embedder: Embedder):
    """ragas embeddings over the local MiniLM."""
    _, base = _ragas_base()

    class MiniLM(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__(cache=None)

        def embed_text(self, text: str, **kwargs: Any) -> list[float]:
            return embedder.embed([text])[0].tolist()

        async def aembed_text(self, text: str, **kwargs: Any) -> list[float]:
            return self.embed_text(text)

        def embed_texts(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
            return embedder.embed(texts).tolist()

        async def aembed_texts(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
            return self.embed_texts(texts)

    return MiniLM()


class RagasScorer:
    """The three RAGAS metrics of the ChatPapers paper, on the contexts the system retrieved."""

    def __init__(self, judge_model: ChatModel, embedder: Embedder) -> None:
        os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
        from ragas.metrics.collections import AnswerRelevancy, ContextRelevance, Faithfulness

        self.judge = make_judge(judge_model)
        embeddings = make_embeddings(embedder)
        # strictness 1: the judge runs at temperature 0, so more generated questions would be copies
        self.answer_relevancy = AnswerRelevancy(llm=self.judge, embeddings=embeddings, strictness=1)
        self.context_relevance = ContextRelevance(llm=self.judge)
        self.faithfulness = Faithfulness(llm=self.judge)

    def score(self, question: str, answer: str, contexts: list[str]) -> RagasScores:
        first = len(self.judge.calls)
        scores = asyncio.run(self._score(question, plain_text(answer) or answer, _clip(contexts)))
        scores.judge_calls = self.judge.calls[first:]
        return scores

    async def _score(self, question: str, answer: str, contexts: list[str]) -> RagasScores:
        scores = RagasScores()
        problems = []
        try:
            scores.answer_relevancy = _value(
                await self.answer_relevancy.ascore(user_input=question, response=answer)
            )
        except Exception as exc:  # a judge that cannot answer in format: recorded, the run goes on
            problems.append(f"answer relevancy: {exc}")
        if contexts:
            try:
                result = await self.context_relevance.ascore(user_input=question, retrieved_contexts=contexts)
                scores.context_relevance = _value(result)
            except Exception as exc:
                problems.append(f"context relevance: {exc}")
            try:
                result = await self.faithfulness.ascore(
                    user_input=question, response=answer, retrieved_contexts=contexts
                )
                scores.faithfulness = _value(result)
            except Exception as exc:
                problems.append(f"faithfulness: {exc}")
        scores.ragas = harmonic_mean([scores.answer_relevancy, scores.context_relevance, scores.faithfulness])
        scores.error = "; ".join(problems)[:500] or None
        return scores


def _value(result) -> float | None:
    value = float(result.value)
    return None if math.isnan(value) else value


def _clip(contexts: list[str]) -> list[str]:
    """The contexts in retrieval order, up to JUDGE_CONTEXT_CHARS in all."""
    out, left = [], JUDGE_CONTEXT_CHARS
    for text in contexts:
        if left <= 0:
            break
        out.append(text[:left])
        left -= len(out[-1])
    return out
