"""One chat turn end to end: load the chat, run the agent, persist the turn. Used by the terminal
chat, the web API and eval alike."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from uuid import UUID

from opentelemetry.trace import StatusCode

from agent import tracing
from agent.events import AgentEvent, ErrorEvent, Final
from agent.llm.base import ChatModel
from agent.llm.stoppable import Stoppable
from agent.loop import ResearchAgent, Turn
from agent.references import ChatPaper
from agent.tools import ToolContext
from corpus import chats as chat_store
from corpus import papers
from corpus.db import Database
from corpus.embedder import Embedder
from corpus.ids import paper_of_chunk, stored_paper_id, submitted_year


class ChatNotFound(LookupError):
    """No such chat for this owner (somebody else's chat is not found either)."""


class QuestionNotFound(LookupError):
    """The question to replace is not one of this chat's questions."""


def title_from(question: str) -> str:
    words = question.split()
    return " ".join(words[:8]) + ("…" if len(words) > 8 else "")


class ChatService:
    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        model: ChatModel,
        max_steps: int = 6,
        level_instructions: bool = True,
        hybrid: bool = True,
        reader: str = "narrow",
    ) -> None:
        self.db = db
        self.embedder = embedder
        self.model = model
        self.max_steps = max_steps
        self.level_instructions = level_instructions
        self.hybrid = hybrid
        self.reader = reader

    def agent(self) -> ResearchAgent:
        model = Stoppable(self.model)  # a stop reaches every model call of the turn
        ctx = ToolContext(
            connect=self.db.pooled,  # type: ignore[arg-type]
            embedder=self.embedder,
            llm=model,
            hybrid=self.hybrid,
        )
        return ResearchAgent(
            model,
            ctx,
            max_steps=self.max_steps,
            level_instructions=self.level_instructions,
            reader=self.reader,
        )

    def ask(
        self,
        chat_id: UUID,
        owner: str,
        question: str,
        stop: threading.Event | None = None,
        replacing: int | None = None,
    ) -> Iterator[AgentEvent]:
        """Events of one turn; the turn is saved when the agent finishes, whoever is listening.
        `stop`: set it to end the answer early (what was written is saved, marked stopped).
        `replacing`: the id of one of the chat's questions that this one replaces (edit and
        resend, regenerate): the turn is answered as if that question and all after it had never
        been asked, and they are deleted only when the new answer is saved."""
        started = time.monotonic()
        with self.db.pooled() as conn:
            chat = chat_store.get_chat(conn, chat_id, owner)
            if chat is None:
                raise ChatNotFound(chat_id)
            past = chat_store.messages(conn, chat_id)
            if replacing is not None:
                if not any(m.message_id == replacing and m.role == "user" for m in past):
                    raise QuestionNotFound(replacing)
                past = [m for m in past if m.message_id < replacing]
            last = next((m for m in reversed(past) if m.role == "assistant"), None)
            previous, chat_papers = chat_sources(conn, in_play(past), cited_in(past))
        history = [
            Turn(user=q.content, assistant=a.content)
            for q, a in zip(past[::2], past[1::2], strict=False)
            if q.role == "user" and a.role == "assistant"
        ]
        earlier = {paper: chunk for m in past for paper, chunk in m.passages.items()}
        span = tracing.start(
            "chatpapers.turn",
            **{
                "chatpapers.chat_id": str(chat_id),
                "chatpapers.turn.earlier_turns": len(history),
                "chatpapers.turn.question_chars": len(question),
                "gen_ai.request.model": self.model.name,
                "input.value": tracing.content(question),
            },
        )
        turn = self.agent().run(
            question, history=history, level=chat.level, allowed=set(chat.allowed_papers),
            earlier_passages=earlier, previous=previous, focus=focus_of(last) if last else [],
            chat_papers=chat_papers, stop=stop,
        )  # fmt: skip
        try:
            for event in tracing.during(span, turn):
                if (
                    isinstance(event, Final)
                    and event.stopped
                    and replacing is not None
                    and not event.answer.strip()
                ):
                    # an edit or a regeneration stopped before it wrote anything: the chat stays as it was
                    tracing.set_attributes(span, **_turn_attributes(event))
                elif isinstance(event, Final):
                    seconds = round(time.monotonic() - started, 1)
                    event = event.model_copy(update={"model": self.model.name, "seconds": seconds})
                    with self.db.pooled() as conn:
                        question_id, message_id = chat_store.save_turn(
                            conn,
                            chat_id,
                            question,
                            saved_answer(event, self.model.name),
                            event.state.allowed if event.state else set(chat.allowed_papers),
                            title=title_from(question) if not past else None,
                            replacing=replacing,
                        )
                    event = event.model_copy(update={"question_id": question_id, "message_id": message_id})
                    tracing.set_attributes(span, **_turn_attributes(event))
                elif isinstance(event, ErrorEvent):
                    span.set_status(StatusCode.ERROR, event.message)
                yield event
        except Exception as exc:
            span.record_exception(exc)
            span.set_status(StatusCode.ERROR, type(exc).__name__)
            raise
        finally:
            span.end()


def _turn_attributes(final: Final) -> dict:
    return {
        "chatpapers.turn.level": final.level,
        "chatpapers.turn.citations": len(final.citations),
        "chatpapers.turn.steps": len(final.steps),
        "chatpapers.turn.abstained": final.abstained,
        "chatpapers.turn.stopped": final.stopped,
        "chatpapers.turn.seconds": final.seconds,
        "gen_ai.usage.input_tokens": final.tokens_in,
        "gen_ai.usage.output_tokens": final.tokens_out,
        "output.value": tracing.content(final.answer),
    }


READING_TOOLS = ("get_information_from_paper", "ask_paper_question", "get_full_paper_summary")


FRONT_MATTER_CHARS = 600  # of a paper's first passage: its title, authors and affiliations


def chat_sources(conn, in_play: list[str], cited: list[str]) -> tuple[list[ChatPaper], list[ChatPaper]]:
    """The papers a follow-up may name, numbered as the answers numbered them ([1], [2], ...), with
    what identifies them: authors, abstract, and the front page, where "the Google one" or "the
    one from DeepMind" is written (affiliations are in no metadata). Both lists in one query."""
    wanted = list(dict.fromkeys([*in_play, *cited]))
    found = papers.get_papers(conn, wanted)
    front = papers.front_matter(conn, wanted, FRONT_MATTER_CHARS)

    def numbered(ids: list[str]) -> list[ChatPaper]:
        return [
            ChatPaper(
                n=n,
                paper_id=pid,
                title=found[pid].title,
                authors=found[pid].authors,
                year=found[pid].published.year if found[pid].published else submitted_year(pid),
                about=" ".join(
                    [", ".join(found[pid].authors[:6]) + ".", found[pid].abstract or "", front.get(pid, "")]
                ),
            )
            for n, pid in enumerate(ids, 1)
            if pid in found
        ]

    return numbered(in_play), numbered(cited)


def in_play(past: list[chat_store.MessageRecord]) -> list[str]:
    """The numbered papers a follow-up may refer to: the previous answer's sources; but when that
    answer was about one paper of an earlier list ("the third one: how ...?"), that list, so that
    "the other one" or "the finch study" in the next question still finds its paper; and when
    an answer cited one paper of the listing its search showed, that listing after it."""
    answers = [m for m in past if m.role == "assistant"]
    if not answers:
        return []
    last = answers[-1]
    if len(last.citations) >= 2:
        return last.citations
    listing = next((a for a in reversed(answers[:-1]) if len(a.citations) >= 2), None)
    if listing and set(last.citations) <= set(listing.citations):
        return listing.citations
    if len(last.citations) < 2:
        # An answer that cited one paper of the listing its steps showed: the user saw the rest of
        # that listing too ("the third one", "the finch study"); its cited paper keeps number 1.
        shown = [paper_of_chunk(c) for step in last.steps if step.get("tool") == "search"
                 for c in step.get("chunk_ids") or []]  # fmt: skip
        return list(dict.fromkeys([*last.citations, *shown]))
    return last.citations


def cited_in(past: list[chat_store.MessageRecord]) -> list[str]:
    """Every paper the chat's answers cited, most recent answer first."""
    answers = [m for m in past if m.role == "assistant"]
    return list(dict.fromkeys(pid for m in reversed(answers) for pid in m.citations))


def focus_of(answer: chat_store.MessageRecord) -> list[str]:
    """The paper(s) an answer was about: those its steps read inside, else its only citation."""
    read = [
        pid
        for step in answer.steps
        if step.get("tool") in READING_TOOLS
        and (pid := stored_paper_id(str(step.get("arguments", {}).get("paper_id", ""))))
    ]
    # of several papers read, those the answer kept (the narrow reader reads up to four for a
    # listing and lists only those whose own sentences answer)
    kept = [pid for pid in read if pid in answer.citations] or read
    if kept:
        return list(dict.fromkeys(kept))
    return answer.citations[:1] if len(answer.citations) == 1 else []


def saved_answer(final: Final, model: str) -> chat_store.SavedAnswer:
    return chat_store.SavedAnswer(
        content=final.answer,
        level=final.level,
        steps=[s.model_dump() for s in final.steps],
        citations=final.citations,
        passages=final.passages,
        sources=[s.model_dump() for s in final.sources],
        grounding=final.grounding.model_dump() if final.grounding else None,
        abstained=final.abstained,
        tokens_in=final.tokens_in,
        tokens_out=final.tokens_out,
        model=model,
        forced=final.forced,
        seconds=final.seconds,
        stopped=final.stopped,
    )
