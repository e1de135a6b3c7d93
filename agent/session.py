"""One chat turn end to end: load the chat, run the agent, persist the turn. Used by the terminal
chat, the web API and eval alike."""

from __future__ import annotations

from collections.abc import Iterator
from uuid import UUID

from agent.events import AgentEvent, Final
from agent.llm.base import ChatModel
from agent.loop import ResearchAgent, Turn
from agent.tools import ToolContext
from corpus import chats as chat_store
from corpus.db import Database
from corpus.embedder import Embedder


class ChatNotFound(LookupError):
    """No such chat for this owner (somebody else's chat is not found either)."""


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
    ) -> None:
        self.db = db
        self.embedder = embedder
        self.model = model
        self.max_steps = max_steps
        self.level_instructions = level_instructions
        self.hybrid = hybrid

    def agent(self) -> ResearchAgent:
        ctx = ToolContext(
            connect=self.db.pooled,  # type: ignore[arg-type]
            embedder=self.embedder,
            llm=self.model,
            hybrid=self.hybrid,
        )
        return ResearchAgent(
            self.model, ctx, max_steps=self.max_steps, level_instructions=self.level_instructions
        )

    def ask(self, chat_id: UUID, owner: str, question: str) -> Iterator[AgentEvent]:
        """Events of one turn; the turn is saved when the agent finishes, whoever is listening."""
        with self.db.pooled() as conn:
            chat = chat_store.get_chat(conn, chat_id, owner)
            if chat is None:
                raise ChatNotFound(chat_id)
            past = chat_store.messages(conn, chat_id)
        history = [
            Turn(user=q.content, assistant=a.content)
            for q, a in zip(past[::2], past[1::2], strict=False)
            if q.role == "user" and a.role == "assistant"
        ]
        earlier = {paper: chunk for m in past for paper, chunk in m.passages.items()}
        turn = self.agent().run(
            question, history=history, level=chat.level, allowed=set(chat.allowed_papers),
            earlier_passages=earlier,
        )  # fmt: skip
        for event in turn:
            if isinstance(event, Final):
                with self.db.pooled() as conn:
                    chat_store.save_turn(
                        conn,
                        chat_id,
                        question,
                        saved_answer(event, self.model.name),
                        event.state.allowed if event.state else set(chat.allowed_papers),
                        title=title_from(question) if not past else None,
                    )
            yield event


def saved_answer(final: Final, model: str) -> chat_store.SavedAnswer:
    return chat_store.SavedAnswer(
        content=final.answer,
        level=final.level,
        steps=[s.model_dump() for s in final.steps],
        citations=final.citations,
        passages=final.passages,
        tokens_in=final.tokens_in,
        tokens_out=final.tokens_out,
        model=model,
        forced=final.forced,
    )
