"""The systems an evaluation compares, each answering one question at a time.

`chatpapers`: the research agent with its level-adaptation instructions; `chatpapers-noprompt`:
the same agent without them; `llm-only`: the same LLM with no tools or retrieval (the paper's
GPT-4 comparison)."""

from __future__ import annotations

import time
from collections.abc import Callable

from pydantic import BaseModel

from agent.events import ErrorEvent, Final
from agent.llm.base import ChatMessage, ChatModel, LLMError
from agent.loop import ResearchAgent
from agent.tools import ToolContext
from eval.questions import EvalQuestion

SYSTEMS = ("chatpapers", "chatpapers-noprompt", "llm-only")
LLM_ONLY_PROMPT = "You are a helpful research assistant for computer science. Answer the question."


class Answered(BaseModel):
    """One system's answer to one question, with what it retrieved (for RAGAS) and how."""

    qid: str
    system: str
    topic: str
    level: str
    question: str
    answer: str = ""
    contexts: list[str] = []
    steps: list[dict] = []
    citations: list[str] = []
    judged_level: str | None = None
    seconds: float = 0.0
    tokens_in: int | None = None
    tokens_out: int | None = None
    error: str | None = None


class AgentSystem:
    def __init__(
        self,
        name: str,
        model: ChatModel,
        ctx_factory: Callable[[], ToolContext],
        max_steps: int,
        level_instructions: bool,
        reader: str = "narrow",
    ) -> None:
        self.name = name
        self.model = model
        self.ctx_factory = ctx_factory
        self.max_steps = max_steps
        self.level_instructions = level_instructions
        self.reader = reader

    def answer(self, q: EvalQuestion) -> Answered:
        record = Answered(qid=q.qid, system=self.name, topic=q.topic, level=q.level, question=q.question)
        agent = ResearchAgent(
            self.model,
            self.ctx_factory(),
            max_steps=self.max_steps,
            level_instructions=self.level_instructions,
            reader=self.reader,
        )
        started = time.perf_counter()
        for event in agent.run(q.question):  # the level is judged from the question, as in a chat
            if isinstance(event, Final):
                record.contexts = list(event.state.evidence) if event.state else []
                record.answer = event.answer
                record.citations = event.citations
                record.judged_level = event.level
                record.steps = [
                    s.model_dump(include={"tool", "arguments", "observation"}) for s in event.steps
                ]
                record.tokens_in, record.tokens_out = event.tokens_in, event.tokens_out
            elif isinstance(event, ErrorEvent):
                record.error = event.message
        record.seconds = time.perf_counter() - started
        return record


class LLMOnlySystem:
    name = "llm-only"

    def __init__(self, model: ChatModel) -> None:
        self.model = model

    def answer(self, q: EvalQuestion) -> Answered:
        record = Answered(qid=q.qid, system=self.name, topic=q.topic, level=q.level, question=q.question)
        started = time.perf_counter()
        try:
            reply = self.model.chat(
                [
                    ChatMessage(role="system", content=LLM_ONLY_PROMPT),
                    ChatMessage(role="user", content=q.question),
                ],
                max_tokens=400,
            )
            record.answer = reply.text.strip()
            record.tokens_in, record.tokens_out = reply.tokens_in, reply.tokens_out
        except LLMError as exc:
            record.error = str(exc)
        record.seconds = time.perf_counter() - started
        return record


def build_systems(
    names: list[str],
    model: ChatModel,
    ctx_factory: Callable[[], ToolContext],
    max_steps: int,
    reader: str = "narrow",
):
    systems = []
    for name in names:
        if name == "chatpapers":
            systems.append(AgentSystem(name, model, ctx_factory, max_steps, True, reader))
        elif name == "chatpapers-noprompt":
            systems.append(AgentSystem(name, model, ctx_factory, max_steps, False, reader))
        elif name == "llm-only":
            systems.append(LLMOnlySystem(model))
        else:
            raise ValueError(f"unknown system {name!r}; choose from {', '.join(SYSTEMS)}")
    return systems
